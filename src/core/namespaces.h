/* SPDX-License-Identifier: Apache-2.0 */
/* Namespaces of the container: which to create, which to join by path. */
#ifndef AR_CORE_NAMESPACES_H
#define AR_CORE_NAMESPACES_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include <stdbool.h>
#include <sys/types.h>

/* Namespace fds to join, indexed by oci_ns_type; -1 where none. */
typedef struct
{
  int fd[OCI_NS_COUNT];
} ar_ns_joins;

/* CLONE_NEW* flag of a type. */
int ar_ns_clone_flag (oci_ns_type type);

/* Its name under /proc/PID/ns/ ("net" for network). */
const char *ar_ns_proc_name (oci_ns_type type);

/* True when the spec lists no mount namespace: the container then shares
 * the runtime's, so its mounts land in the host's namespace under the
 * rootfs and it enters the rootfs by chroot (see host_mounts.h). */
bool ar_ns_host_mounts (const oci_spec *spec);

/* CLONE_NEW* flags of the namespaces the spec asks to create. */
int ar_ns_new_flags (const oci_spec *spec);

/* Open every namespace path in the spec (O_RDONLY|O_CLOEXEC) and check it
 * is a namespace of the listed type; errors name the JSON path. */
int
ar_ns_open_joins (const oci_spec *spec, ar_ns_joins *joins, ar_error_t **err);
void ar_ns_close_joins (ar_ns_joins *joins);

/* Clone the init (ar_clone_pidfd's `flags`, `pidfd`, `cgroup_fd`,
 * `in_cgroup`) as pid 1 of a new pid namespace owned by the user namespace
 * it joins, joins->fd[OCI_NS_USER], as runc's double fork does: one made by
 * the parent would be the host's, and the init could not mount its /proc.
 * A helper that joined the user namespace clones it as our child; the
 * init starts in the user namespace. Returns as ar_clone_pidfd. */
pid_t ar_ns_clone_in_user_pid (ar_ns_joins *joins, uint64_t flags, int *pidfd,
                               int cgroup_fd, bool *in_cgroup);

/* In the init, before anything else: join the user namespace (if given),
 * then every other namespace the parent did not join before the clone
 * (pid and time, which only affect children, and with another user
 * namespace those it could no longer join: see create.c). */
int ar_ns_join_in_child (ar_ns_joins *joins, ar_error_t **err);

/* In a new network namespace: bring the loopback interface up, as a
 * container expects 127.0.0.1 to work. */
int ar_ns_loopback_up (ar_error_t **err);

/* Write /proc/self/timens_offsets for a time namespace just unshared. */
int ar_ns_write_time_offsets (const oci_linux *lnx, ar_error_t **err);

#endif
