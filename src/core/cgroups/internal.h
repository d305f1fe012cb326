/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between cgroups.c (discovery, paths, lifecycle), v1.c and v2.c
 * (writing linux.resources into one hierarchy). Not a public interface. */
#ifndef AR_CORE_CGROUPS_INTERNAL_H
#define AR_CORE_CGROUPS_INTERNAL_H

#include "cgroups.h"
#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum
{
  AR_CG_V1 = 1,
  AR_CG_V2 = 2,
} ar_cg_version;

/* One mounted hierarchy, as this process sees it. */
typedef struct
{
  ar_cg_version version;
  char *mount_point; /* /sys/fs/cgroup/memory */
  /* v1: the controllers bound to it, including "name=systemd";
   * v2: the contents of cgroup.controllers at the mount point. */
  char **controllers;
  /* The runtime's own cgroup below mount_point, "" for the root, never with
   * a leading or trailing '/'. */
  char *own_path;
} ar_cg_hierarchy;

typedef struct
{
  ar_cg_hierarchy *items;
  size_t len;
} ar_cg_hierarchies;

/* Discovery from /proc/self/mountinfo and /proc/self/cgroup. Only mounts
 * under AR_CGROUP_ROOT count; a hierarchy mounted twice is kept once. */
int ar_cg_discover (ar_cg_hierarchies *out, ar_error_t **err);

/* The same, from given file contents, so parsing can be unit-tested. */
int ar_cg_parse_hierarchies (const char *mountinfo, const char *proc_cgroup,
                             ar_cg_hierarchies *out, ar_error_t **err);

void ar_cg_hierarchies_clear (ar_cg_hierarchies *h);

bool ar_cg_has_controller (const ar_cg_hierarchy *h, const char *name);

/* Lookups of a path under AR_CGROUP_ROOT start from one fd of it (see
 * cgroups.c); ar_cg_at gives that fd and the rest of the path, or
 * AT_FDCWD and the path itself for one elsewhere. */
int ar_cg_at (const char *path, const char **rel);
int ar_cg_open (const char *path, int flags); /* O_CLOEXEC added */
int ar_cg_mkdir (const char *path);           /* mode 0755 */
int ar_cg_rmdir (const char *path);
DIR *ar_cg_opendir (const char *path);

/* Knob access: `dir` is a cgroup directory, `file` a name inside it. */
int ar_cg_open_knob (const char *dir, const char *file, int flags,
                     ar_error_t **err);
/* One write() of value to an open knob; errors name `dir/file`. */
int ar_cg_write_fd (int fd, const char *value, const char *dir,
                    const char *file, ar_error_t **err);
int ar_cg_write (const char *dir, const char *file, const char *value,
                 ar_error_t **err);
int ar_cg_writef (const char *dir, const char *file, ar_error_t **err,
                  const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
/* Whole file, trailing whitespace removed. */
int
ar_cg_read (const char *dir, const char *file, char **out, ar_error_t **err);
/* Limits whose files are the same on v1 and v2. */
int ar_cg_apply_cpuset (const char *dir, const oci_cpu *c, ar_error_t **err);
int
ar_cg_apply_pids (const char *dir, const oci_resources *r, ar_error_t **err);
int
ar_cg_apply_rdma (const char *dir, const oci_resources *r, ar_error_t **err);

/* The controllers linux.resources can ask for: the v1 and v2 name, and the
 * spec's word for it in errors. One table for create and update. */
typedef struct
{
  const char *v1, *v2, *what;
} ar_cg_resource_controller;
extern const ar_cg_resource_controller ar_cg_resource_controllers[];
extern const size_t ar_cg_n_resource_controllers;

bool ar_cg_exists (const char *dir, const char *file);

/* Whether dir lies on a cgroup2 (unified) file system. */
bool ar_cg_on_cgroup2 (const char *dir);

/* v1: make freshly created directories usable before anything joins them
 * (cpuset starts empty). `created` are this hierarchy's new directories,
 * parents first. */
int ar_cg_v1_prepare (const ar_cg_hierarchy *h, char *const *created,
                      size_t n_created, ar_error_t **err);

/* v1: write linux.resources for the controllers bound to `h` into `dir`. */
int ar_cg_v1_apply (const ar_cg_hierarchy *h, const char *dir,
                    const oci_resources *r, ar_error_t **err);

/* v2: enable in the subtree_control of our own new directories (all of
 * `created` but the leaf) the controllers that `r` needs. */
int
ar_cg_v2_prepare (const ar_cg_hierarchy *h, char *const *created,
                  size_t n_created, const oci_resources *r, ar_error_t **err);

/* v2: every controller `r` needs is available in `dir` (its
 * cgroup.controllers), or a one-line error naming the first missing. */
int ar_cg_v2_check_available (const ar_cg_hierarchy *h, const char *dir,
                              const oci_resources *r, ar_error_t **err);

/* v2: write linux.resources (for controllers this hierarchy has) and the
 * `unified` map into `dir`. */
int ar_cg_v2_apply (const ar_cg_hierarchy *h, const char *dir,
                    const oci_resources *r, ar_error_t **err);

/* Whether `r` asks for something from `controller` (v1 and v2 names:
 * "memory", "cpu", "cpuset", "pids", "blkio", "io", "hugetlb", "rdma", "devices",
 * "net_cls", "net_prio"). */
bool ar_cg_wants (const oci_resources *r, const char *controller);

/* Which hierarchy, among all, holds the controller a resource needs;
 * NULL when none does. Used to refuse limits nobody can enforce. */
const ar_cg_hierarchy *
ar_cg_find_controller (const ar_cg_hierarchies *all, const char *name);

/* v1 cpu.shares (2..262144) onto v2 cpu.weight (1..10000), linearly. */
uint64_t ar_cg_shares_to_weight (uint64_t shares);

/* ---- systemd.c: the systemd driver ---- */
typedef struct
{
  char *slice; /* "system.slice" */
  char *unit;  /* "docker-ID.scope" */
  char *dir;   /* /sys/fs/cgroup/system.slice/docker-ID.scope */
} ar_cg_systemd_unit;

/* cgroupsPath "slice:prefix:name" (absent: "system.slice:agentrun:ID";
 * an empty slice is system.slice) as runc reads it. */
int ar_cg_systemd_parse_path (const char *id, const char *cgroups_path,
                              ar_cg_systemd_unit *out, ar_error_t **err);
void ar_cg_systemd_unit_clear (ar_cg_systemd_unit *u);
/* "name.scope" in unit-name characters (a state file's unit line). */
bool ar_cg_systemd_is_scope_name (const char *name);
/* The error for a host without systemd as its init. */
int ar_cg_systemd_check_running (ar_error_t **err);
/* A transient scope with `pid` in it, Delegate=yes, the limits systemd has
 * properties for; returns once systemd's job is done. */
int ar_cg_systemd_start (const ar_cg_systemd_unit *u, const char *id, pid_t pid,
                         const oci_resources *r, ar_error_t **err);
/* SetUnitProperties (runtime) with the limits systemd has properties for:
 * update keeps the unit's view the container's. */
int ar_cg_systemd_set_resources (const char *unit, const oci_resources *r,
                                 ar_error_t **err);
/* Stop the unit (gone already is fine) and reset it if it failed. */
int ar_cg_systemd_stop (const char *unit, ar_error_t **err);

#endif
