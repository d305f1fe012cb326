/* SPDX-License-Identifier: Apache-2.0 */
/* --diff withholds what /output withholds: a changed workspace file that
 * holds a secret's bytes (before or after the change), a symlink whose
 * target does, and a path that spells a secret are replaced in the diff
 * by one line saying so. The secrets are looked for with the same
 * helpers the export uses (secrets.h). */
#ifndef AR_AGENT_DIFF_WITHHOLD_H
#define AR_AGENT_DIFF_WITHHOLD_H

#include "output.h"
#include "secrets.h"
#include "../util/error.h"

typedef struct
{
  ar_output_withheld *withheld; /* the path or "[withheld name]", why */
  size_t n;
} ar_diff_withheld_list;

/* Check one changed path (relative to the workspace): its name, then
 * what is at it in the changed and the original view (`b_fd`, `a_fd`:
 * O_PATH fds of the entries, not followed; -1: none there). When it
 * must be withheld it is added to `list` and returned; NULL otherwise,
 * and always without secrets. */
const ar_output_withheld *
ar_diff_withhold_path (const ar_secret_set *secrets, const char *path, int a_fd,
                       int b_fd, ar_diff_withheld_list *list);

/* Add what is no workspace path (the commits' bundle) under `name`, as
 * it is, and why (`reason`, taken over). */
const ar_output_withheld *
ar_diff_withhold_named (ar_diff_withheld_list *list, const char *name,
                        char *reason);

void ar_diff_withheld_list_clear (ar_diff_withheld_list *list);
#define cleanup_diff_withheld                                                  \
  __attribute__ ((cleanup (ar_diff_withheld_list_clear)))

#endif
