/* SPDX-License-Identifier: Apache-2.0 */
/* Monotonic time for deadlines and polling. */
#ifndef AR_UTIL_CLOCK_H
#define AR_UTIL_CLOCK_H

/* Milliseconds on CLOCK_MONOTONIC (not wall time: never jumps). */
long long ar_now_ms (void);

/* Microseconds on the same clock. */
long long ar_now_us (void);

/* Sleep `ms` milliseconds, resuming after signals. */
void ar_sleep_ms (long ms);

#endif
