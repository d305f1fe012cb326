/* The last step before exec, shared by the container init and `exec`:
 * LSM labels, seccomp, user, capabilities and no_new_privs, in the order
 * that lets each one still be done. */
#ifndef AR_CORE_PRIVILEGES_H
#define AR_CORE_PRIVILEGES_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include "seccomp.h"

/* `seccomp` is the container's filter compiled before clone (NULL: none);
 * `listener_state` is the state JSON sent to a seccomp listener (NULL when
 * the profile has no listenerPath). With `parent_fd` >= 0 the process is
 * to die with the runtime (ar_process_die_with_parent): set after the
 * last change of credentials, before a no_new_privs filter. */
int ar_privileges_drop (const oci_process *proc,
                        const ar_seccomp_program *seccomp,
                        const char *listener_state, int parent_fd,
                        ar_error_t **err);

#endif
