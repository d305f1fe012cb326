/* SPDX-License-Identifier: Apache-2.0 */
/* Exact renames among the workspace's changed paths, as git finds them
 * at 100% similarity: a path only the original has and one only the
 * agent's view has, with the same mode and the same bytes. In the diff
 * such a pair is four header lines instead of a deletion and a creation
 * that both carry the whole file. */
#ifndef AR_AGENT_WS_RENAMES_H
#define AR_AGENT_WS_RENAMES_H

#include "ws_changes.h"
#include <stdint.h>

#define AR_WS_NOT_RENAMED SIZE_MAX
#define AR_WS_RENAMED_AWAY (SIZE_MAX - 1)

/* For each path i (paths->n entries), renamed_from[i] is the index of
 * the path it was renamed from when it is a rename's new name,
 * AR_WS_RENAMED_AWAY when it is one's old name, else AR_WS_NOT_RENAMED.
 * Cheap: only files of the same kind
 * and size as a new one are read. A path that cannot be read is left
 * unpaired (the diff reports it). */
void ar_ws_find_renames (int a_fd, int b_fd, const ar_path_list *paths,
                         size_t *renamed_from);

#endif
