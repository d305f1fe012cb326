/* SPDX-License-Identifier: Apache-2.0 */
/* The command a pooled sandbox is given when it is taken (take.h): its
 * args, and what it changes of the container's process: env entries
 * (NAME=VALUE, set over the process's env) and a cwd (absolute, or below
 * the process's cwd), carried over a socket as one buffer. Pure: no
 * syscalls. */
#ifndef AR_CORE_TAKE_COMMAND_H
#define AR_CORE_TAKE_COMMAND_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include <stddef.h>

/* What one buffer may hold at most: the kernel's own bound on argv and
 * envp together is about this much on a default stack limit. */
#define AR_TAKE_COMMAND_MAX (2u << 20)

typedef struct
{
  oci_strv args; /* at least one */
  oci_strv env;  /* set over the process's env */
  char *cwd;     /* NULL: the process's; relative: below it */
} ar_take_command;

void ar_take_command_free (ar_take_command *cmd);
#define cleanup_take_command __attribute__ ((cleanup (ar_take_command_free)))

/* Each string prefixed by its kind ('a' argument, 'e' NAME=VALUE, 'c'
 * cwd) and ended by a NUL byte; *len is the whole buffer's. */
char *ar_take_command_encode (const ar_take_command *cmd, size_t *len);

/* The reverse; errors say what is wrong with the buffer ("the command
 * has no argument", "entry 3: unknown kind"). */
int ar_take_command_decode (const char *buf, size_t len, ar_take_command *cmd,
                            ar_error_t **err);

#endif
