/* SPDX-License-Identifier: Apache-2.0 */
/* Capabilities of the container process (libcap). */
#ifndef AR_CORE_CAPS_H
#define AR_CORE_CAPS_H

#include "../../oci/spec.h"
#include "../util/error.h"

/* Check every name in every set is a capability this kernel knows. */
int ar_caps_validate (const oci_capabilities *caps, ar_error_t **err);

/* Apply the five sets to the calling process, which has already switched
 * to the container user with PR_SET_KEEPCAPS: drop everything outside the
 * bounding set, set effective/permitted/inheritable exactly as listed, then
 * raise the ambient ones (only those also permitted and inheritable). NULL
 * caps means: no capabilities at all. */
int ar_caps_apply (const oci_capabilities *caps, ar_error_t **err);

#endif
