/* SPDX-License-Identifier: Apache-2.0 */
/* Whole directory trees: a faithful copy and a removal. The copy keeps
 * what an overlay layer is made of, so a layer copied with it reads as the
 * same layer: every file type (a whiteout is a character device 0:0),
 * modes, owners, extended attributes (overlayfs's opaque marks among
 * them), times, and hard links inside the tree. */
#ifndef AR_UTIL_TREE_H
#define AR_UTIL_TREE_H

#include "error.h"
#include "idshift.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct
{
  /* In: give the destination directory the source directory's own mode,
   * owner, extended attributes and times too (else only what is below). */
  bool root_metadata;
  /* In: owners moved by this shift (NULL: kept as they are). */
  const ar_id_shift *shift;
  /* Out: what was made. */
  uint64_t entries;
  uint64_t bytes;
} ar_tree_copy_stats;

/* Copy everything below the directory src_fd into the directory dst_fd,
 * which should be empty. Errors name the entry, relative to the source.
 * On failure what was copied stays: the caller removes its destination. */
int ar_tree_copy (int src_fd, int dst_fd, ar_tree_copy_stats *stats,
                  ar_error_t **err);

/* rm -rf of `name` in dir_fd, never following a symlink; best effort:
 * what cannot go stays (the caller checks, if it cares). */
void ar_tree_remove_at (int dir_fd, const char *name);

#endif
