/* SPDX-License-Identifier: Apache-2.0 */
/* Where one command's time went, phase by phase, for --debug. A phase is
 * marked when it ends and lasts from the previous mark. The container's
 * init (a fork, with its own copy of this table) marks its phases too and
 * sends them to the runtime, which shows them inside its own "init". */
#ifndef AR_UTIL_TIMINGS_H
#define AR_UTIL_TIMINGS_H

#include <stdbool.h>

/* Start recording from now (main, or the init just after the fork), with
 * no phase marked yet. Recording is off until the first call. */
void ar_timings_begin (void);

bool ar_timings_on (void);

/* `phase` (a string literal) ended now. */
void ar_timings_mark (const char *phase);

/* This process's phases as "name=MICROSECONDS ..." (the init's report),
 * or NULL when not recording. The caller frees it. */
char *ar_timings_encode (void);

/* The init's report: shown inside the phase marked next. Malformed text
 * is ignored: it is only ever shown. */
void ar_timings_attach (const char *encoded);

/* "parse 0.41 ms, ..., init 5.00 ms (mounts 3.10, ...), total 7.60 ms",
 * or NULL when not recording. The caller frees it. */
char *ar_timings_summary (void);

#endif
