/* SPDX-License-Identifier: Apache-2.0 */
/* One table for the exit status of a command that failed (README's "Exit
 * status"). */
#ifndef AR_CMD_FAILURE_STATUS_H
#define AR_CMD_FAILURE_STATUS_H

#include "../util/error.h"

/* run's and sandbox's own failure, before or after the command (a bad
 * flag, a mount that failed, a diff that could not be written whole):
 * Docker's `docker run` code, which a command seldom uses, so a script
 * tells agentrun's failure from the command's. */
#define AR_EXIT_OWN_FAILURE 125

/* The exit status of `verb` failing with `err`: a command that run or
 * sandbox could not find is 127, one it could not execute 126, as shells
 * and Docker have it, and any other failure of theirs
 * AR_EXIT_OWN_FAILURE; exec's own failure is 255 whatever it was, as
 * runc's, so a shim tells it from the process's status (engines map the
 * message to 126/127 themselves); every other command's failure is 1, as
 * runc's. */
int ar_cmd_failure_status (const char *verb, const ar_error_t *err);

#endif
