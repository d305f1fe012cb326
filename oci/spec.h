/* SPDX-License-Identifier: Apache-2.0 */
/* The runtime-spec 1.2 model of config.json (Linux), as typed structs.
 * Pure data: parsing and emitting live in oci/parse.c and oci/emit.c.
 * Strings are heap-allocated, NULL when absent. Optional scalars use the
 * oci_opt_* wrappers so "absent" and "zero" stay distinct. Arrays are a
 * pointer plus a count; string lists (oci_strv) are also NULL-terminated
 * so they can go straight to execve(). */
#ifndef AR_OCI_SPEC_H
#define AR_OCI_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct
{
  bool set;
  bool value;
} oci_opt_bool;
typedef struct
{
  bool set;
  int64_t value;
} oci_opt_i64;
typedef struct
{
  bool set;
  uint64_t value;
} oci_opt_u64;
typedef struct
{
  bool set;
  uint32_t value;
} oci_opt_u32;

typedef struct
{
  char **items; /* NULL-terminated; NULL when the field is absent */
  size_t len;
} oci_strv;

typedef struct
{
  char *key;
  char *value;
} oci_kv;

typedef struct
{
  oci_kv *items; /* in document order */
  size_t len;
} oci_map;

typedef struct
{
  uint32_t container_id;
  uint32_t host_id;
  uint32_t size;
} oci_id_mapping;

typedef struct
{
  char *destination;
  char *source;
  char *type;
  oci_strv options;
  oci_id_mapping *uid_mappings;
  size_t n_uid_mappings;
  oci_id_mapping *gid_mappings;
  size_t n_gid_mappings;
  /* Not from JSON: a policy's idmap, which a filesystem that cannot be
   * idmapped leaves a plain bind. */
  bool idmap_optional;
} oci_mount;

typedef struct
{
  char *type; /* "RLIMIT_NOFILE" */
  uint64_t hard;
  uint64_t soft;
} oci_rlimit;

typedef struct
{
  oci_strv bounding, effective, inheritable, permitted, ambient;
} oci_capabilities;

typedef struct
{
  uint32_t uid;
  uint32_t gid;
  oci_opt_u32 umask;
  uint32_t *additional_gids;
  size_t n_additional_gids;
  char *username;
} oci_user;

typedef struct
{
  char *policy; /* SCHED_OTHER, ... */
  oci_opt_i64 nice;
  oci_opt_i64 priority;
  oci_strv flags;
  oci_opt_u64 runtime, deadline, period;
} oci_scheduler;

typedef struct
{
  char *class; /* IOPRIO_CLASS_RT, ... */
  int64_t priority;
} oci_io_priority;

typedef struct
{
  bool terminal;
  oci_opt_u32 console_height;
  oci_opt_u32 console_width;
  oci_user user;
  oci_strv args;
  char *command_line; /* Windows only; parsed and ignored */
  oci_strv env;
  char *cwd;
  oci_capabilities *capabilities; /* NULL when absent */
  oci_rlimit *rlimits;
  size_t n_rlimits;
  bool no_new_privileges;
  char *apparmor_profile;
  oci_opt_i64 oom_score_adj;
  char *selinux_label;
  oci_scheduler *scheduler;     /* NULL when absent */
  oci_io_priority *io_priority; /* NULL when absent */
} oci_process;

typedef struct
{
  char *path;
  oci_strv args;
  oci_strv env;
  oci_opt_i64 timeout; /* seconds; must be > 0 when set */
} oci_hook;

typedef struct
{
  oci_hook *items;
  size_t len;
} oci_hook_list;

typedef struct
{
  oci_hook_list prestart, create_runtime, create_container, start_container,
      poststart, poststop;
} oci_hooks;

typedef enum
{
  OCI_NS_PID,
  OCI_NS_NETWORK,
  OCI_NS_MOUNT,
  OCI_NS_IPC,
  OCI_NS_UTS,
  OCI_NS_USER,
  OCI_NS_CGROUP,
  OCI_NS_TIME,
  OCI_NS_COUNT
} oci_ns_type;

typedef struct
{
  oci_ns_type type;
  char *path; /* join this namespace when set; create a new one otherwise */
} oci_namespace;

typedef struct
{
  char *type; /* "c", "u", "b", "p" */
  char *path;
  int64_t major, minor;
  oci_opt_u32 file_mode;
  oci_opt_u32 uid;
  oci_opt_u32 gid;
} oci_device;

typedef struct
{
  bool allow;
  char *type;               /* "a", "c", "b"; NULL means all */
  oci_opt_i64 major, minor; /* unset means wildcard */
  char *access;             /* "rwm" */
} oci_device_rule;

typedef struct
{
  oci_opt_i64 limit, reservation, swap, kernel, kernel_tcp;
  oci_opt_u64 swappiness;
  oci_opt_bool disable_oom_killer, use_hierarchy, check_before_update;
} oci_memory;

typedef struct
{
  oci_opt_u64 shares;
  oci_opt_i64 quota;
  oci_opt_u64 burst;
  oci_opt_u64 period;
  oci_opt_i64 realtime_runtime;
  oci_opt_u64 realtime_period;
  char *cpus;
  char *mems;
  oci_opt_i64 idle;
} oci_cpu;

typedef struct
{
  int64_t major, minor;
  oci_opt_u32 weight;      /* weightDevice only */
  oci_opt_u32 leaf_weight; /* weightDevice only */
  uint64_t rate;           /* throttle entries only */
} oci_blkio_device;

typedef struct
{
  oci_opt_u32 weight, leaf_weight;
  oci_blkio_device *weight_device;
  size_t n_weight_device;
  oci_blkio_device *throttle_read_bps, *throttle_write_bps, *throttle_read_iops,
      *throttle_write_iops;
  size_t n_throttle_read_bps, n_throttle_write_bps, n_throttle_read_iops,
      n_throttle_write_iops;
} oci_blkio;

typedef struct
{
  char *page_size; /* "2MB" */
  uint64_t limit;
} oci_hugepage_limit;

typedef struct
{
  char *name;
  uint32_t priority;
} oci_net_priority;

/* linux.resources.rdma["mlx5_1"]: limits on one RDMA device. */
typedef struct
{
  char *device;
  oci_opt_u32 hca_handles, hca_objects;
} oci_rdma_limit;

typedef struct
{
  oci_device_rule *devices;
  size_t n_devices;
  oci_memory *memory; /* each NULL when absent */
  oci_cpu *cpu;
  oci_opt_i64 pids_limit;
  oci_blkio *block_io;
  oci_hugepage_limit *hugepage_limits;
  size_t n_hugepage_limits;
  oci_opt_u32 net_class_id;
  oci_net_priority *net_priorities;
  size_t n_net_priorities;
  oci_rdma_limit *rdma; /* in the order of the JSON object */
  size_t n_rdma;
  oci_map unified;
} oci_resources;

typedef struct
{
  uint32_t index;
  uint64_t value;
  uint64_t value_two;
  char *op; /* SCMP_CMP_EQ, ... */
} oci_seccomp_arg;

typedef struct
{
  oci_strv names;
  char *action; /* SCMP_ACT_ERRNO, ... */
  oci_opt_u32 errno_ret;
  oci_seccomp_arg *args;
  size_t n_args;
} oci_syscall;

typedef struct
{
  char *default_action;
  oci_opt_u32 default_errno_ret;
  oci_strv architectures; /* SCMP_ARCH_X86_64, ... */
  oci_strv flags;         /* SECCOMP_FILTER_FLAG_LOG, ... */
  char *listener_path;
  char *listener_metadata;
  oci_syscall *syscalls;
  size_t n_syscalls;
} oci_seccomp;

typedef struct
{
  oci_opt_i64 secs;
  oci_opt_u32 nanosecs;
} oci_time_offset;

typedef struct
{
  char *domain; /* LINUX, LINUX32 */
  oci_strv flags;
} oci_personality;

typedef struct
{
  oci_id_mapping *uid_mappings;
  size_t n_uid_mappings;
  oci_id_mapping *gid_mappings;
  size_t n_gid_mappings;
  oci_map sysctl;
  oci_resources *resources; /* NULL when absent */
  char *cgroups_path;
  oci_namespace *namespaces;
  size_t n_namespaces;
  oci_device *devices;
  size_t n_devices;
  oci_seccomp *seccomp; /* NULL when absent */
  char *rootfs_propagation;
  oci_strv masked_paths;
  oci_strv readonly_paths;
  char *mount_label;
  oci_personality *personality; /* NULL when absent */
  oci_time_offset time_monotonic, time_boottime;
} oci_linux;

typedef struct
{
  char *oci_version;
  char *root_path;
  bool root_readonly;
  oci_mount *mounts;
  size_t n_mounts;
  oci_process *process; /* NULL when absent (allowed for create) */
  char *hostname;
  char *domainname;
  oci_hooks hooks;
  oci_map annotations;
  oci_linux *linux_cfg; /* NULL when absent ("linux" is a GNU C macro) */
} oci_spec;

#endif
