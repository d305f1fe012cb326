/* SPDX-License-Identifier: Apache-2.0 */
/* The workspace diff, path by path: each side read from its view (the
 * original workspace, what the agent left), compared, and written as a
 * git patch (git_patch.h) or withheld (diff_withhold.h). */
#ifndef AR_AGENT_WS_DIFF_H
#define AR_AGENT_WS_DIFF_H

#include "diff_withhold.h"
#include "git_patch.h"
#include "ws_changes.h"
#include "../util/error.h"

typedef struct
{
  int a_fd, b_fd; /* the views' roots */
  ar_patch_sink sink;
  const ar_secret_set *secrets;
  ar_diff_withheld_list withheld;
  size_t changed;          /* paths (renames) with a patch or a withheld line */
  size_t failed;           /* paths that could not be read */
  ar_error_t *first_error; /* the first of those */
} ar_ws_diff;

/* Add one path (relative to the workspace) to the diff. One that cannot
 * be read is counted and skipped: the rest of the diff is still made. */
void ar_ws_diff_path (ar_ws_diff *d, const char *path);

/* Add every path of the list, an exact rename as one rename (a changed
 * path counts once, a rename once). */
void ar_ws_diff_paths (ar_ws_diff *d, const ar_path_list *paths);

void ar_ws_diff_clear (ar_ws_diff *d);

#endif
