/* SPDX-License-Identifier: Apache-2.0 */
/* One table for the exit status of a command that failed (README's "Exit
 * status"). */
#ifndef AR_CMD_FAILURE_STATUS_H
#define AR_CMD_FAILURE_STATUS_H

#include "../util/error.h"

/* The exit status of `verb` failing with `err`: a command that run or
 * sandbox could not find is 127, one it could not execute 126, as shells
 * and Docker have it; exec's own failure is 255 whatever it was, as
 * runc's, so a shim tells it from the process's status (engines map the
 * message to 126/127 themselves); every other failure is 1. */
int ar_cmd_failure_status (const char *verb, const ar_error_t *err);

#endif
