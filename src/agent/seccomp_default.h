/* SPDX-License-Identifier: Apache-2.0 */
/* The agent profile's default seccomp filter, as an oci_seccomp so that it
 * goes through the same validation, compilation and cache as a filter
 * from config.json (src/core/seccomp.c). */
#ifndef AR_AGENT_SECCOMP_DEFAULT_H
#define AR_AGENT_SECCOMP_DEFAULT_H

#include "../../oci/spec.h"

/* A new heap copy of the default filter; free with ar_seccomp_free (or as
 * part of the spec it is put into, with oci_spec_free). */
oci_seccomp *ar_seccomp_default_new (void);

void ar_seccomp_free (oci_seccomp *seccomp);

#endif
