/* SPDX-License-Identifier: Apache-2.0 */
/* The last step before exec, shared by the container init and `exec`:
 * LSM labels, seccomp, user, capabilities and no_new_privs, in the order
 * that lets each one still be done. */
#ifndef AR_CORE_PRIVILEGES_H
#define AR_CORE_PRIVILEGES_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include "seccomp.h"

/* `seccomp` is the container's filter compiled before clone (NULL: none);
 * a seccomp listener fd goes to the runtime over `sync_fd`
 * (AR_SYNC_SECCOMP), which hands it to listenerPath on the host side. With
 * `die_with_parent` the process is to die with the runtime
 * (ar_process_die_with_parent on `sync_fd`): set after the last change of
 * credentials, before a no_new_privs filter. */
int
ar_privileges_drop (const oci_process *proc, const ar_seccomp_program *seccomp,
                    int sync_fd, bool die_with_parent, ar_error_t **err);

/* The runtime's half of the listener hand-off: `notify_fd` (from an
 * AR_SYNC_SECCOMP message, closed here) of process `pid` goes to the
 * profile's listenerPath with the container's `state`, then the child hears AR_SYNC_SECCOMP_DONE. */
int ar_privileges_pass_listener (int sync_fd, int notify_fd,
                                 const oci_seccomp *seccomp, pid_t pid,
                                 const oci_state *state, ar_error_t **err);

#endif
