/* Numbers in the C locale: the library reads and writes them the same whatever the program
 * set with setlocale() (a decimal comma would otherwise break every text file). */
#include <pthread.h>

#include "common.h"

static locale_t c_locale_obj;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_init(void)
{
    c_locale_obj = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (c_locale_obj == (locale_t)0) c_locale_obj = LC_GLOBAL_LOCALE; /* cannot happen for "C" */
}

locale_t pt_c_locale(void)
{
    pthread_once(&c_locale_once, c_locale_init);
    return c_locale_obj;
}

locale_t pt_c_locale_enter(void) { return uselocale(pt_c_locale()); }

void pt_c_locale_leave(locale_t old) { uselocale(old); }
