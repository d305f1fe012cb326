/* SPDX-License-Identifier: Apache-2.0 */
/* Which workspace paths may have changed, from the overlay's upper layer
 * alone: what the agent wrote is there, what it deleted is a whiteout
 * or an opaque directory over the original. Fast whatever the size of
 * the workspace: only the original trees under deletions are walked. */
#ifndef AR_AGENT_WS_CHANGES_H
#define AR_AGENT_WS_CHANGES_H

#include "../util/error.h"
#include <stddef.h>

typedef struct
{
  char **paths; /* relative to the workspace, sorted, each once */
  size_t n;
} ar_path_list;

void ar_path_list_clear (ar_path_list *l);
#define cleanup_path_list __attribute__ ((cleanup (ar_path_list_clear)))

void ar_path_list_add (ar_path_list *l, const char *path);

/* Every path that is not a directory and may differ between the original
 * workspace (`lower_fd`) and what the agent left (the layer `upper_fd`):
 * more is fine (the caller compares), less is not. Nothing under a
 * directory named ".git". */
int ar_ws_changed_paths (int upper_fd, int lower_fd, ar_path_list *out,
                         ar_error_t **err);

#endif
