/* SPDX-License-Identifier: Apache-2.0 */
/* Parse and emit runtime-spec documents. No syscalls beyond reading the
 * named file, no globals. Every error names the file and the JSON path:
 *   config.json: .process.args[2]: expected string, got number 3
 */
#ifndef AR_OCI_OCI_H
#define AR_OCI_OCI_H

#include "spec.h"
#include "../src/util/error.h"

#include <sys/types.h>

/* Limits that turn hostile input into an error instead of a crash or hang. */
#define OCI_MAX_FILE_SIZE (16u << 20) /* bytes of config.json */
#define OCI_MAX_DEPTH 64              /* JSON nesting */
#define OCI_MAX_ARRAY 8192            /* elements of any one array */

/* Parse a config.json held in memory (need not be NUL-terminated). */
int oci_spec_parse (const char *data, size_t len, const char *display_name,
                    oci_spec **out, ar_error_t **err);

void oci_spec_free (oci_spec *spec);
void oci_spec_freep (oci_spec **spec);
#define cleanup_oci_spec __attribute__ ((cleanup (oci_spec_freep)))

/* Parse a process.json, as `exec --process` takes (the "process" object
 * of config.json on its own). */
int oci_process_parse (const char *data, size_t len, const char *display_name,
                       oci_process **out, ar_error_t **err);
void oci_process_free (oci_process *process);

/* Parse a linux.resources object on its own, as `update --resources`
 * takes it; errors read "FILE: .memory.limit: ...". */
int oci_resources_parse (const char *data, size_t len, const char *display_name,
                         oci_resources **out, ar_error_t **err);
void oci_resources_free (oci_resources *resources);

/* Emit a spec as JSON (round-trips everything oci_spec_parse reads).
 * Returns a malloc'd NUL-terminated string. */
char *oci_spec_to_json (const oci_spec *spec, bool pretty);

/* The default config.json that `agentrun spec` writes, runc's layout:
 * busybox-friendly `sh`, terminal true, the default mounts, masked and
 * readonly paths. `rootless` adds a user namespace and mappings for the
 * given uid/gid and drops the options a rootless user cannot use. */
char *oci_spec_default_json (bool rootless, uid_t uid, gid_t gid);

/* The state of a container as `agentrun state` prints it. */
typedef struct
{
  const char *oci_version;
  const char *id;
  const char *status; /* creating, created, running, stopped, paused */
  pid_t pid;          /* 0 when stopped: omitted from the output */
  const char *bundle;
  const char *rootfs;  /* runc prints it; NULL to omit */
  const char *created; /* RFC 3339 with nanoseconds; NULL to omit */
  const char *owner;   /* runc prints it; NULL to omit */
  const oci_map *annotations;
} oci_state;

char *oci_state_to_json (const oci_state *state, bool pretty);

/* The runtime-spec's container process state, what a seccomp listener
 * receives with the notify fd: {ociVersion, fds: ["seccompFd"], pid (the
 * process the filter is on), metadata, state}. */
char *oci_container_process_state_to_json (const oci_state *state, pid_t pid,
                                           const char *metadata);

/* features.json (runtime-spec features.md): what a runtime build
 * supports. The caller fills it in; oci/ only writes it out. */
typedef struct
{
  const char *const *items;
  size_t len;
} oci_names;

typedef struct
{
  const char *oci_version_min, *oci_version_max;
  oci_names hooks, mount_options;
  oci_names namespaces, capabilities;
  bool cgroup_v1, cgroup_v2, cgroup_systemd, cgroup_systemd_user, cgroup_rdma;
  bool seccomp_enabled;
  oci_names seccomp_actions, seccomp_operators, seccomp_archs;
  oci_names seccomp_known_flags, seccomp_supported_flags;
  bool apparmor_enabled, selinux_enabled, intel_rdt_enabled;
  bool idmap_mounts_enabled;
  const oci_map *annotations;
} oci_features;

/* Pretty-printed with tabs, as runc prints it. */
char *oci_features_to_json (const oci_features *features);

/* Namespace type names as the spec spells them ("pid", "network", ...). */
const char *oci_ns_type_name (oci_ns_type type);

/* Find a namespace of the given type; NULL when the spec does not list it. */
const oci_namespace *
oci_spec_find_namespace (const oci_spec *spec, oci_ns_type type);

/* A new namespace of `type` unless the spec lists one; one it names by
 * path (a pod's, an engine's) is kept. */
void oci_spec_ensure_namespace (oci_spec *spec, oci_ns_type type);

/* Append a mount of copies of its strings; `options` ends with NULL. */
void
oci_spec_append_mount (oci_spec *spec, const char *type, const char *source,
                       const char *destination, const char *const *options);

/* Replace a string list with copies of `items` / append a copy of one. */
void oci_strv_set (oci_strv *v, char *const *items, size_t n);
void oci_strv_push (oci_strv *v, const char *item);
/* Whether `v` holds a string equal to `s`. */
bool oci_strv_has (const oci_strv *v, const char *s);
/* NAME=VALUE replaces an existing NAME, as runc does; else it is added. */
void oci_env_set (oci_strv *env, const char *kv);

/* Look up an annotation; NULL when absent. */
const char *oci_map_get (const oci_map *map, const char *key);

#endif
