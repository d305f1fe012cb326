/* SPDX-License-Identifier: Apache-2.0 */
/* What git knows about a workspace that is a git repository: which of
 * the changed paths it ignores, and the commits the agent made (and
 * whether they hold a secret).
 *
 * git never runs on the agent's .git: its config, hooks, attributes and
 * fsmonitor could run commands on the host. It runs on a shadow git dir
 * of our own instead (our config; copies of HEAD, the ref HEAD names,
 * packed-refs, the index and info/exclude; the objects read through
 * alternates), with no system or global config. */
#ifndef AR_AGENT_WS_GIT_H
#define AR_AGENT_WS_GIT_H

#include "secrets.h"
#include "ws_changes.h"
#include "../util/error.h"
#include <stdbool.h>

#define AR_GIT_ID_SIZE 41 /* 40 hex digits and a NUL */

typedef struct
{
  char *dir;       /* the shadow git dir */
  char *work_tree; /* the view it stands for */
} ar_git_shadow;

/* The view (`view_fd`, at `view`) has a .git directory at its root. */
bool ar_ws_git_is_repo (int view_fd);

/* Is git on PATH? */
bool ar_ws_git_available (void);

/* Make the shadow at `dir` (a new directory) for the view. */
int ar_git_shadow_make (const char *dir, const char *view, int view_fd,
                        ar_git_shadow *out, ar_error_t **err);
/* Remove the shadow dir and free. */
void ar_git_shadow_clear (ar_git_shadow *g);
#define cleanup_git_shadow __attribute__ ((cleanup (ar_git_shadow_clear)))

/* Drop the paths git ignores (.gitignore files of the view, its
 * info/exclude); a path in the index is never ignored. Only the paths
 * with `ask[i]` are asked about (git refuses one below a symlink of the
 * view); the others are kept. */
int ar_git_drop_ignored (const ar_git_shadow *g, ar_path_list *paths,
                         const bool *ask, ar_error_t **err);

/* HEAD's commit ("" when it has none yet). */
int
ar_git_head (const ar_git_shadow *g, char id[AR_GIT_ID_SIZE], ar_error_t **err);

/* HEAD has a commit, and it is neither `since` (a commit id, "" for
 * none) nor behind it: there is something to bundle. */
int ar_git_moved_ahead (const ar_git_shadow *g, const char *since, bool *ahead,
                        ar_error_t **err);

/* What a bundle from `since` would carry that is new, looked for the
 * secrets' bytes: every object HEAD reaches and `since` does not (the
 * commits, their messages and authors; the trees, their names; the
 * blobs) and the name of HEAD's branch. *found: the secret's name, NULL
 * when there is none (or no secrets). */
int ar_git_find_secret (const ar_git_shadow *g, const char *since,
                        const ar_secret_set *secrets, const char **found,
                        ar_error_t **err);

/* The commits from `since` to HEAD, as a git bundle at `path` with HEAD
 * and the branch HEAD names. */
int ar_git_bundle (const ar_git_shadow *g, const char *since, const char *path,
                   ar_error_t **err);

#endif
