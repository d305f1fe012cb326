/* SPDX-License-Identifier: Apache-2.0 */
/* What the runtime says and decides about a signal by its number. */
#ifndef AR_UTIL_SIGNALS_H
#define AR_UTIL_SIGNALS_H

#include <stdbool.h>

/* SIGTERM, SIGINT, SIGHUP, SIGQUIT: the signals a shell or a supervisor
 * sends to end a program, which the sandbox passes to all its processes. */
bool ar_signal_ends_program (int sig);

/* "SIGSEGV", "SIGRTMIN+2"; "signal N" for a number with no name. */
char *ar_signal_name (int sig);

#endif
