/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "clock.h"

#include <errno.h>
#include <time.h>

long long
ar_now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

long long
ar_now_ms (void)
{
  return ar_now_us () / 1000;
}

void
ar_sleep_ms (long ms)
{
  struct timespec ts
      = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}
