#include <stdio.h>
#include "ptron.h"
int main(void) { puts(PT_VERSION_STRING); return 0; }
