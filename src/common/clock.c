/* The monotonic clock every timing in the library reads. */
#include <time.h>

#include "common.h"

double pt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
