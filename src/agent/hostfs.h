/* SPDX-License-Identifier: Apache-2.0 */
/* Host-side filesystem helpers shared by the overlay, secrets and output
 * parts of the agent profile: private tmpfs mounts under the state dir,
 * checks that make teardown idempotent, and JSON-safe names. */
#ifndef AR_AGENT_HOSTFS_H
#define AR_AGENT_HOSTFS_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <yajl/yajl_gen.h>

/* Create `path` (mode 0700, an existing directory is fine), mount a tmpfs
 * on it with `flags` and tmpfs options `data`, and make it MS_PRIVATE so
 * mounts below it (and the unmount) stay ours. */
int ar_hostfs_mount_tmpfs (const char *path, unsigned long flags,
                           const char *data, ar_error_t **err);

/* Is `path` the root of a mount? False when it does not exist. */
bool ar_hostfs_is_mountpoint (const char *path);

/* Detach the mount at `path` with every mount below it, in one lazy
 * unmount (stacked ones too), then remove the directory. */
int ar_hostfs_detach_and_remove (const char *path, ar_error_t **err);

/* Unmount everything stacked on `path` (a lazy detach when the mount is
 * busy), then remove the directory. Nothing mounted or no directory is
 * fine: teardown runs after partial set-ups and twice. */
int ar_hostfs_unmount_and_remove (const char *path, ar_error_t **err);

/* An O_PATH fd of the directory `path`; the error names it. */
int ar_hostfs_open_dir (const char *path, ar_error_t **err);

/* The object in `gen` without its outer braces (what an audit event
 * wraps), and `gen` freed. */
char *ar_hostfs_json_members (yajl_gen gen);

/* "<dir>/<name>", for paths below the state dir. */
char *ar_hostfs_join (const char *dir, const char *name);

/* Map a uid/gid of the container to the host through the user namespace
 * mappings (none: the identity). -1 with *err when it is not mapped. */
int ar_hostfs_map_id (const oci_id_mapping *mappings, size_t n, uint32_t id,
                      uint32_t *host_id, ar_error_t **err);

/* Create, in the root at `root` (as the container will see it), every
 * destination of spec->mounts that is missing: a directory, or an empty
 * file for a bind of a file. For a container whose root cannot make them
 * itself (the host's own root, in a user namespace of its own). */
int ar_hostfs_make_mount_points (const char *root, const oci_spec *spec,
                                 ar_error_t **err);

/* The host uid and gid that own the container process's files: the
 * process user (root when the spec has no process) through the mappings. */
int ar_hostfs_process_owner (const oci_spec *spec, uid_t *uid, gid_t *gid,
                             ar_error_t **err);

/* Emit `s` as a JSON string, invalid UTF-8 bytes replaced by U+FFFD:
 * paths from a container are arbitrary bytes, the logs must stay JSON. */
void ar_hostfs_gen_name (yajl_gen gen, const char *s);

/* Valid UTF-8 without control characters: a name safe to show to the
 * host's user and to hand to their tools. */
bool ar_hostfs_name_is_clean (const char *s);

/* The names in an open directory (without "." and ".."), sorted so that
 * what is walked, listed and cut by a quota does not depend on the order
 * the filesystem returns. NULL-terminated; NULL when it cannot be read. */
char **ar_hostfs_sorted_names (int dirfd, size_t *n);

#endif
