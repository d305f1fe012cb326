/* SPDX-License-Identifier: Apache-2.0 */
/* checkpoint and restore through CRIU's command line (Debian's criu).
 * What of a container lies outside it — bind mounts from the host, a
 * network namespace it joined by path, the init's stdio from the caller —
 * is named to criu as external at the dump and handed back at the
 * restore, so the restored container is connected to the new caller's
 * stdio and namespaces, as with runc. */
#ifndef AR_CORE_CRIU_H
#define AR_CORE_CRIU_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include <stdbool.h>
#include <sys/types.h>

/* runc's flags of the two verbs. */
typedef struct ar_criu_options
{
  const char *image_path;  /* the images: written by a dump, read back */
  const char *work_path;   /* criu's logs and work files; NULL: image_path */
  const char *parent_path; /* checkpoint: a pre-dump's images */
  const char *manage_cgroups_mode; /* soft (default) or ignore */
  char *const *empty_ns;           /* "network": its contents left out */
  const char *lsm_profile;         /* restore */
  const char *lsm_mount_context;   /* restore */
  const char *console_socket;      /* restore: a new terminal's master */
  bool leave_running;
  bool pre_dump;
  bool tcp_established;
  bool ext_unix_sk;
  bool shell_job;
  bool file_locks;
  bool auto_dedup;
} ar_criu_options;

/* Dump the running container `id` into image_path. Unless leave_running
 * or pre_dump, criu ends its processes and the container is deleted, as
 * runc does. A container with an agent profile is refused: its egress
 * lease, gates and overlay are host state an image does not carry. */
int ar_container_checkpoint (const char *root, const char *id,
                             const ar_criu_options *o, ar_error_t **err);

/* A restore in two steps, for create: begin forks the process that will
 * run criu, in a mount namespace of its own where `rootfs` is a mount
 * point, and holds it; the caller puts it into the container's cgroup
 * (criu's children, the restored processes, are born there) and then
 * finish lets it run criu, waits, and gives the restored init's pid. */
typedef struct
{
  pid_t pid; /* the criu process, > 0 while held or running */
  int go_fd; /* releases it */
  char *work_path;
  int pty_master, pty_slave; /* the init's new terminal, when it has one */
  const char *console_socket;
} ar_criu_restore;

int ar_criu_restore_begin (const ar_criu_options *o, const oci_spec *spec,
                           const char *bundle, const char *rootfs,
                           ar_criu_restore *r, ar_error_t **err);

/* `cg`: the container's cgroup (NULL: none), which criu is told to use
 * as the root of the cgroups in the image. */
struct ar_cgroup;
int ar_criu_restore_finish (ar_criu_restore *r, const struct ar_cgroup *cg,
                            pid_t *init, ar_error_t **err);

/* Kill a held or running criu; safe after finish and twice. */
void ar_criu_restore_clear (ar_criu_restore *r);

/* Refuse what checkpoint/restore does not carry: an agent profile's
 * plan, hooks that need the moment before the process runs. */
int ar_criu_check_spec (const char *verb, const oci_spec *spec, bool has_plan,
                        ar_error_t **err);

#endif
