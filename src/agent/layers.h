/* SPDX-License-Identifier: Apache-2.0 */
/* The lower layers a container's root overlay sits on. */
#ifndef AR_AGENT_LAYERS_H
#define AR_AGENT_LAYERS_H

#include "userns.h"
#include "../util/error.h"
#include <stddef.h>

/* Below the overlay's tmpfs: the idmapped copies, attached as 0, 1, ... */
#define AR_LAYERS_DIR "layers"

/* Open fds of the layers, top first. */
typedef struct
{
  int *fds;
  size_t n;
} ar_layers;

/* Is the root of a container with `lease` (NULL: none) seen through
 * idmapped copies? Not without a lease, nor the host's own root. */
bool ar_layers_idmapped (const char *rootfs, const ar_userns_lease *lease);

/* Without a user namespace of its own (`lease` NULL), or on the host's
 * root: the rootfs itself. With one, idmapped copies in which on-disk
 * ids 0.. are the lease's: of the rootfs, a directory; or, where it is
 * an overlay mount (an engine's image), which cannot be idmapped whole,
 * of each of its layers, its upper dir on top. The copies are attached
 * below `overlay_dir` (AR_LAYERS_DIR): overlayfs before Linux 6.x takes
 * no detached layer (the Debian 6.1 kernel says EINVAL). */
int
ar_layers_open (const char *overlay_dir, const char *rootfs,
                const ar_userns_lease *lease, ar_layers *out, ar_error_t **err);

/* The copies an earlier ar_layers_open attached (a remount), else as
 * ar_layers_open. */
int ar_layers_reopen (const char *overlay_dir, const char *rootfs,
                      const ar_userns_lease *lease, ar_layers *out,
                      ar_error_t **err);

/* "/proc/self/fd/A:/proc/self/fd/B", for lowerdir= (malloc'd): no
 * escaping of ',' ':' or '\', and nothing swapped in between. */
char *ar_layers_lowerdir (const ar_layers *layers);

void ar_layers_clear (ar_layers *layers);
#define cleanup_layers __attribute__ ((cleanup (ar_layers_clear)))

/* Unmount and remove the attached copies (after the overlay on them). */
int ar_layers_teardown (const char *overlay_dir, ar_error_t **err);

#endif
