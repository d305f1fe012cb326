/* The container's seccomp filter, built with libseccomp from linux.seccomp. */
#ifndef AR_CORE_SECCOMP_H
#define AR_CORE_SECCOMP_H

#include "../../oci/spec.h"
#include "../util/error.h"

/* Check names of actions, architectures, operators and flags without
 * loading anything, so a bad profile fails create before any resource
 * exists. Unknown syscall names are ignored, as runc does. */
int ar_seccomp_validate (const oci_seccomp *seccomp, ar_error_t **err);

/* Build and load the filter into the calling process (the container init,
 * just before exec). When the profile uses SCMP_ACT_NOTIFY the listener fd
 * is sent to listenerPath with the container state, as the spec says;
 * `state_json` is that state. */
int ar_seccomp_load (const oci_seccomp *seccomp, const char *state_json,
                     ar_error_t **err);

#endif
