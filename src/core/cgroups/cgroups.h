/* A container's cgroup, across whatever hierarchies the host has mounted:
 * cgroup v1 (one per controller), v2 (unified), or hybrid (v1 controllers
 * plus a cgroup2 mount, e.g. /sys/fs/cgroup/unified). Only directories
 * agentrun created are ever removed; cgroups that are not ours are never
 * written to except to read parent values. */
#ifndef AR_CORE_CGROUPS_H
#define AR_CORE_CGROUPS_H

#include "../../../oci/spec.h"
#include "../../util/error.h"
#include <stdbool.h>
#include <sys/types.h>

typedef struct ar_cgroup
{
  /* Absolute directories that hold the container, one per hierarchy,
   * e.g. /sys/fs/cgroup/memory/foo, /sys/fs/cgroup/unified/foo. */
  char **paths;
  size_t n_paths;
  /* Directories this container created, parents before children; delete
   * removes them in reverse order. A subset of `paths` and their parents. */
  char **created;
  size_t n_created;
} ar_cgroup;

/* Root of the cgroup filesystem; tests may point it elsewhere. */
#define AR_CGROUP_ROOT "/sys/fs/cgroup"

/* Resolve cgroupsPath (absent: "/<id>"; relative: under the caller's own
 * cgroup), create the directories in every mounted hierarchy, apply
 * linux.resources, and move `pid` in. On failure everything created is
 * removed again. A systemd-style path ("slice:prefix:name") is refused with
 * a clear error since --systemd-cgroup is not supported. */
int ar_cgroup_create (const char *id, const oci_spec *spec, pid_t pid,
                      ar_cgroup **out, ar_error_t **err);

/* Move pid into an existing container cgroup (exec). */
int ar_cgroup_enter (const ar_cgroup *cg, pid_t pid, ar_error_t **err);

/* Pids in the container's cgroup (from the first hierarchy that lists any). */
int ar_cgroup_pids (const ar_cgroup *cg, pid_t **pids, size_t *n,
                    ar_error_t **err);

/* Send `sig` to every process in the cgroup. */
int ar_cgroup_kill_all (const ar_cgroup *cg, int sig, ar_error_t **err);

/* Kill what is left, wait for the cgroup to empty (bounded), remove the
 * created directories. Safe to call twice. */
int ar_cgroup_destroy (ar_cgroup *cg, ar_error_t **err);

void ar_cgroup_free (ar_cgroup *cg);

/* Freeze (pause) or thaw (resume) every process in the container's cgroup
 * and wait, bounded, until the freezer reports the new state: the v1
 * freezer hierarchy when mounted, else cgroup v2's cgroup.freeze. */
int ar_cgroup_freeze (const ar_cgroup *cg, bool frozen, ar_error_t **err);

/* State files keep the cgroup between processes (create, then delete):
 * one "path <dir>" line per entry of `paths`, one "created <dir>" line per
 * entry of `created`, in order. The result is malloc'd. */
char *ar_cgroup_serialize (const ar_cgroup *cg);

/* Parse that text back; every path must be a directory strictly below
 * AR_CGROUP_ROOT without "." or ".." components. */
int ar_cgroup_deserialize (const char *text, ar_cgroup **out,
                           ar_error_t **err);

#endif
