/* SPDX-License-Identifier: Apache-2.0 */
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
#include <stdint.h>
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
  /* The systemd driver: the transient scope that holds the cgroup (its
   * one path); systemd, not agentrun, removes the directory. */
  char *unit;
} ar_cgroup;

typedef enum
{
  AR_CGROUP_CGROUPFS, /* directories under /sys/fs/cgroup, made by us */
  AR_CGROUP_SYSTEMD,  /* a transient systemd unit (--systemd-cgroup) */
} ar_cgroup_driver;

/* Root of the cgroup filesystem; tests may point it elsewhere. */
#define AR_CGROUP_ROOT "/sys/fs/cgroup"

/* Resolve cgroupsPath (absent: "/<id>"; relative: under the caller's own
 * cgroup), create the directories in every mounted hierarchy, apply
 * linux.resources, and move `pid` in (none when 0). An existing leaf that
 * is frozen is refused. On failure everything created is removed again.
 * With the systemd driver, cgroupsPath is "slice:prefix:name" and the
 * cgroup is a transient scope unit. */
int
ar_cgroup_create (const char *id, const oci_spec *spec, ar_cgroup_driver driver,
                  pid_t pid, ar_cgroup **out, ar_error_t **err);

/* Without root: whether the user's systemd instance is there to hand out
 * a delegated cgroup (systemd runs, cgroup v2 only, the user bus socket
 * at $XDG_RUNTIME_DIR/bus), so that --systemd-cgroup can enforce limits. */
bool ar_cgroup_user_systemd_available (void);

/* The limits linux.resources asks for, as their JSON names joined by ", "
 * ("memory, pids"; malloc'd), or NULL when it asks for none. Device rules
 * do not count: they limit nothing a user namespace could reach. */
char *ar_cgroup_requested_limits (const oci_resources *r);

/* Move pid into an existing container cgroup (exec). */
int ar_cgroup_enter (const ar_cgroup *cg, pid_t pid, ar_error_t **err);

/* For clone3's CLONE_INTO_CGROUP: an O_PATH descriptor of the container's
 * cgroup v2 directory, or -1 when it has none. */
int ar_cgroup_open_v2_dir (const ar_cgroup *cg);

/* Move pid into the container's cgroups of the versions `which` names
 * (AR_CGROUP_V1 | AR_CGROUP_V2): a process cloned into the v2 one, or one
 * that moves itself into the v1 ones, needs only the rest. */
enum
{
  AR_CGROUP_V1 = 1,
  AR_CGROUP_V2 = 2,
};
int ar_cgroup_enter_only (const ar_cgroup *cg, pid_t pid, unsigned which,
                          ar_error_t **err);

/* On cgroup v1 a move takes the kernel's global threadgroup lock, whose
 * first taking after a quiet spell waits for an RCU grace period (5-14 ms
 * here), unless a single thread moves itself: writing "0" to `tasks`.
 * The parent opens the container's v1 `tasks` files (root's credentials
 * are the ones the kernel checks); the child writes. fds[i] belongs to
 * dirs[i], -1 for a v2 directory. */
typedef struct
{
  int *fds;
  const char *const *dirs; /* the cgroup's paths, not owned */
  size_t n;
} ar_cgroup_self_move;

int ar_cgroup_self_move_open (const ar_cgroup *cg, ar_cgroup_self_move *out,
                              ar_error_t **err);
/* In the child, single-threaded: moves the caller, closes the fds. */
int ar_cgroup_move_self (ar_cgroup_self_move *m, ar_error_t **err);
void ar_cgroup_self_move_close (ar_cgroup_self_move *m);

/* exec --cgroup: move pid into existing sub-cgroups (relative, no "..")
 * of the container's cgroup; a missing one fails, named. `specs` are
 * "[<controller>:]<sub>" (runc's format). Plain
 * ones apply to every hierarchy, controller ones override them there, and
 * hierarchies nobody names get the container's cgroup itself. All are
 * checked before pid moves anywhere. */
int ar_cgroup_enter_subs (const ar_cgroup *cg, char *const *specs, size_t n,
                          pid_t pid, ar_error_t **err);

/* Pids in the container's cgroup (from the first hierarchy that lists any). */
int
ar_cgroup_pids (const ar_cgroup *cg, pid_t **pids, size_t *n, ar_error_t **err);

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

/* The directory of that freezer, and its file (*file: "freezer.state" or
 * "cgroup.freeze"); NULL when there is neither. */
const char *ar_cgroup_freezer (const ar_cgroup *cg, const char **file);

/* Whether that freezer holds the container frozen now. */
bool ar_cgroup_is_frozen (const ar_cgroup *cg);

/* State files keep the cgroup between processes (create, then delete):
 * one "path <dir>" line per entry of `paths`, one "created <dir>" line per
 * entry of `created`, in order. The result is malloc'd. */
char *ar_cgroup_serialize (const ar_cgroup *cg);

/* Parse that text back; every path must be a directory strictly below
 * AR_CGROUP_ROOT without "." or ".." components. */
int ar_cgroup_deserialize (const char *text, ar_cgroup **out, ar_error_t **err);

/* Apply linux.resources to the existing cgroup of a live container, in
 * every hierarchy it has (v1, v2, hybrid), with the same code create uses.
 * memory.checkBeforeUpdate refuses a memory limit below current usage. */
int ar_cgroup_update (const ar_cgroup *cg, const oci_resources *r,
                      ar_error_t **err);

/* ---- statistics (`events`) ---- */

typedef struct
{
  uint64_t usage, limit, max, failcnt;
} ar_cg_memory_entry;

typedef struct
{
  char *key;
  uint64_t value;
} ar_cg_counter;

typedef struct
{
  unsigned major, minor;
  const char *op; /* "Read", "Write", "Sync", "Async", "Discard", "Total" */
  uint64_t value;
} ar_cg_blkio_entry;

typedef struct
{
  char *page_size; /* "2MB" */
  uint64_t usage, max, failcnt;
} ar_cg_hugetlb_entry;

/* Everything in nanoseconds and bytes. A `has_` flag is false when no
 * hierarchy of the container provides those numbers. */
typedef struct
{
  bool has_cpu;
  uint64_t cpu_total, cpu_kernel, cpu_user;
  uint64_t *cpu_percpu;
  size_t n_cpu_percpu;
  uint64_t throttling_periods, throttled_periods, throttled_time;

  bool has_memory;
  uint64_t memory_cache;
  ar_cg_memory_entry memory, swap;
  bool has_swap;
  ar_cg_counter *memory_raw; /* memory.stat, in file order */
  size_t n_memory_raw;

  bool has_pids;
  uint64_t pids_current, pids_limit; /* limit 0: none */

  ar_cg_blkio_entry *io_service_bytes, *io_serviced;
  size_t n_io_service_bytes, n_io_serviced;

  ar_cg_hugetlb_entry *hugetlb;
  size_t n_hugetlb;
} ar_cgroup_stats;

/* Read the container's statistics from its cgroup files. */
int ar_cgroup_stats_read (const ar_cgroup *cg, ar_cgroup_stats *out,
                          ar_error_t **err);
void ar_cgroup_stats_clear (ar_cgroup_stats *stats);

/* The limits a container ran into, and what they were set to (0: none):
 * for the one line that says why a run ended, and the audit log. */
typedef struct
{
  uint64_t oom_kills; /* v1 memory.oom_control, v2 memory.events */
  uint64_t memory_limit;
  uint64_t refused_forks; /* pids.events "max" */
  uint64_t pids_limit;
} ar_cgroup_limit_hits;

void ar_cgroup_limit_hits_read (const ar_cgroup *cg, ar_cgroup_limit_hits *out);

/* The most memory the container's cgroup has held (v1
 * memory.max_usage_in_bytes, v2 memory.peak); false when no hierarchy of
 * it keeps that number (no memory controller, a v2 kernel before 5.19). */
bool ar_cgroup_memory_peak (const ar_cgroup *cg, uint64_t *bytes);

/* OOM notification: v1 registers an eventfd for memory.oom_control through
 * cgroup.event_control; v2 watches memory.events with inotify and counts
 * oom_kill. `fd` becomes readable when something may have happened. */
typedef struct
{
  int fd;
  int control_fd; /* v1: memory.oom_control, kept open while watched */
  int version;    /* 1 or 2; 0 when the cgroup has no memory controller */
  char *memory_dir;
  uint64_t oom_kills; /* v2: last oom_kill count seen */
} ar_cgroup_oom_watch;

int ar_cgroup_oom_watch_open (const ar_cgroup *cg, ar_cgroup_oom_watch *w,
                              ar_error_t **err);
/* Non-blocking: how many OOM events happened since the last call. */
uint64_t ar_cgroup_oom_watch_take (ar_cgroup_oom_watch *w);
void ar_cgroup_oom_watch_close (ar_cgroup_oom_watch *w);

#endif
