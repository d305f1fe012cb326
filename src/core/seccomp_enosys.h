/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTRUN_SECCOMP_ENOSYS_H
#define AGENTRUN_SECCOMP_ENOSYS_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>

/* Prepends to a compiled filter the check runc adds: on each of the
 * filter's architectures (libseccomp tokens, the audit arch values), a
 * syscall numbered above every syscall the profile names returns ENOSYS
 * instead of the default action, so that libc falls back from a call the
 * profile is too old to know (clone3, faccessat2, openat2...). Replaces
 * *insns and *n_insns; fails when the result would pass max_insns. */
int
ar_seccomp_enosys_stub (const oci_seccomp *seccomp, const uint32_t *arches,
                        size_t n_arches, struct sock_filter **insns,
                        size_t *n_insns, size_t max_insns, ar_error_t **err);

#endif
