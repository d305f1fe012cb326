/* SPDX-License-Identifier: Apache-2.0 */
/* One side of a workspace path: the entry in one view (the original
 * workspace or what the agent left), opened without following it, and
 * what git sees of it. Directories, devices, fifos and sockets are not
 * there for git (mode 0). */
#ifndef AR_AGENT_WS_SIDE_H
#define AR_AGENT_WS_SIDE_H

#include "git_patch.h"
#include "../util/error.h"
#include <limits.h>

typedef struct
{
  int entry_fd; /* O_PATH, not followed; -1: nothing there */
  ar_git_blob blob;
  void *map;
  char target[PATH_MAX]; /* a symlink's target, which blob.data points at */
} ar_ws_side;

#define AR_WS_SIDE_NONE                                                        \
  {                                                                            \
    .entry_fd = -1, .blob = {.fd = -1 }                                        \
  }

/* Load `path` of the view `view_fd`. Nothing there is no error. */
int ar_ws_side_load (int view_fd, const char *path, ar_ws_side *s,
                     ar_error_t **err);

void ar_ws_side_clear (ar_ws_side *s);
#define cleanup_ws_side __attribute__ ((cleanup (ar_ws_side_clear)))

#endif
