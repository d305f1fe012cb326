/* SPDX-License-Identifier: Apache-2.0 */
/* Snapshots of a container's ephemeral layers. A snapshot is a copy of
 * the overlay's upper layer (the files that changed, never the rootfs
 * below) and of the workspace's, kept read-only in the same size-limited
 * tmpfs: <state>/overlay/snapshots/NAME/{root,workspace,info.json}. A
 * fork's layers start as a copy of one (ar_snapshot_seed). The caller
 * freezes the container around ar_snapshot_take. */
#ifndef AR_AGENT_SNAPSHOT_H
#define AR_AGENT_SNAPSHOT_H

#include "userns.h"
#include "../util/error.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>

#define AR_SNAPSHOT_ROOT_LAYER "root"
#define AR_SNAPSHOT_WORKSPACE_LAYER "workspace"

typedef struct
{
  char *name;
  char *created;   /* RFC 3339 */
  char *rootfs;    /* the lower layer the root layer sits on */
  char *workspace; /* the workspace's host directory; NULL: none */
  uint64_t entries;
  uint64_t bytes;
  /* The container's own user namespace: its lease (the host ids of its
   * root, `size` ids); size 0: none, its files carry host ids. */
  ar_userns_lease ids;
} ar_snapshot_info;

void ar_snapshot_info_clear (ar_snapshot_info *info);
/* The record as a JSON object (info.json, snapshot ls --format json). */
void ar_snapshot_info_gen (yajl_gen g, const ar_snapshot_info *info);

/* Copy the upper layers of the container whose state dir is `state_dir`
 * into snapshot `name` (made whole or not at all). `workspace` is the
 * plan's workspace host dir (NULL: none); `created` the time to record.
 * *out gets what was recorded. */
int ar_snapshot_take (const char *state_dir, const char *name,
                      const char *workspace, const char *created,
                      ar_snapshot_info *out, ar_error_t **err);

/* Every snapshot of the container, oldest first. */
int ar_snapshot_list (const char *state_dir, ar_snapshot_info **out, size_t *n,
                      ar_error_t **err);
void ar_snapshot_list_free (ar_snapshot_info *list, size_t n);

int
ar_snapshot_remove (const char *state_dir, const char *name, ar_error_t **err);

/* Snapshot `name`'s directory and record; an unknown name is an error
 * that names the container `id`. */
int ar_snapshot_find (const char *state_dir, const char *id, const char *name,
                      char **dir, ar_snapshot_info *info, ar_error_t **err);

/* Copy the layer `layer` of the snapshot in `snapshot_dir` into the
 * upper directory `upper` (empty), with the layer's own top directory's
 * mode, owner and attributes when `top_metadata`. Owners move from the
 * snapshot's container's ids to those of the one it seeds (`lease`;
 * NULL: host ids). */
int ar_snapshot_seed (const char *snapshot_dir, const char *layer,
                      const char *upper, bool top_metadata,
                      const ar_userns_lease *lease, ar_error_t **err);

#endif
