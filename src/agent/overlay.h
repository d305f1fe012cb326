/* SPDX-License-Identifier: Apache-2.0 */
/* The ephemeral layer: the rootfs is the read-only lower layer of an
 * overlay whose upper layer lives in a size- and inode-limited tmpfs under
 * the state dir. At delete the changes are listed for the audit log and
 * the whole layer is unmounted and dropped. */
#ifndef AR_AGENT_OVERLAY_H
#define AR_AGENT_OVERLAY_H

#include "secrets.h"
#include "../util/error.h"
#include "userns.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#define AR_OVERLAY_DIR "overlay" /* below the state dir */
/* The sandbox workspace's upper layer, below AR_OVERLAY_DIR. */
#define AR_OVERLAY_WS_UPPER "ws-upper"
/* In a user namespace of its own, below AR_OVERLAY_DIR: the idmapped
 * copy of the workspace and the workspace's overlay, both mounted on the
 * host (the root's copies: layers.h). */
#define AR_OVERLAY_WS_LOWER "ws-lower"
#define AR_OVERLAY_WS_MERGED "ws-merged"

/* Most changes recorded in the audit log, and most bytes of paths; beyond
 * either the event says "truncated": true. */
#define AR_OVERLAY_MAX_CHANGES 10000
#define AR_OVERLAY_MAX_CHANGE_BYTES (1u << 20)

/* Mount <state_dir>/overlay (tmpfs: size_bytes, inodes; 0 leaves tmpfs's
 * default) and the overlay at <state_dir>/overlay/merged with `rootfs` as
 * its lower layer; its upper layer starts as a copy of the root layer of
 * the snapshot in `from` (NULL: empty). For a container with a user
 * namespace of its own (`lease`, NULL: none) a `rootfs` other than the
 * host's is seen through idmapped copies of its layers (layers.h: its
 * root is container root), and the snapshot's owners are moved to the
 * lease's ids. *merged is the merged path (caller frees). On failure
 * nothing is left mounted. */
int ar_overlay_prepare (const char *state_dir, const char *rootfs,
                        const ar_userns_lease *lease, uint64_t size_bytes,
                        uint64_t inodes, const char *from, char **merged,
                        ar_error_t **err);

/* The upper layer's changes as the inside of a JSON object:
 * "created":[...],"modified":[...],"deleted":[...],"replaced":[...],
 * "truncated":false — paths as the container saw them, names that contain
 * a secret shown as "[redacted]". `mount_points` (NULL-terminated, may be
 * NULL) are the directories the runtime made for its own mounts (secrets,
 * output): not the container's doing, so not listed while empty.
 * The workspace's own layer (`workspace_host_dir`, NULL: none) is walked
 * too, its paths under that directory.
 * *fields_json is NULL when there is no layer (nothing prepared, or
 * already torn down). */
int
ar_overlay_changes_json (const char *state_dir, const char *workspace_host_dir,
                         const ar_secret_set *secrets,
                         const char *const *mount_points, char **fields_json,
                         ar_error_t **err);

/* The rootfs under the overlay whose tmpfs is `overlay_dir`
 * (<state>/overlay), as it was mounted; NULL when there is none. */
char *ar_overlay_lower_path (const char *overlay_dir);

/* In an upper layer: a whiteout (a deleted entry), an opaque directory
 * (one that hides everything below it in the lower layer). */
bool ar_overlay_is_whiteout (const struct stat *st);
bool ar_overlay_is_opaque_dir (int dirfd);

/* The root overlay of a container whose processes are all gone, set back
 * to the snapshot in `from`: unmounted, its upper layer replaced by a
 * copy of the snapshot's root layer (top directory included), its work
 * dir emptied, and mounted again on the same lower layer. */
int
ar_overlay_remount (const char *state_dir, const char *from, ar_error_t **err);

/* Unmount the overlay and its tmpfs, remove the directories. Safe when
 * nothing or only part is there. */
int ar_overlay_teardown (const char *state_dir, ar_error_t **err);

#endif
