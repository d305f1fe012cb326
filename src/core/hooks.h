/* SPDX-License-Identifier: Apache-2.0 */
/* OCI hooks: each runs with the container state on stdin. */
#ifndef AR_CORE_HOOKS_H
#define AR_CORE_HOOKS_H

#include "../../oci/spec.h"
#include "../util/error.h"

/* Run `hooks` in order; `phase` ("prestart", ...) names the hook in errors.
 * The hook gets state_json on stdin, its args and env as given (empty env
 * when none), and is killed after its timeout. A hook that fails or times
 * out fails the call: "prestart hook #0 (/bin/foo): exit status 1". Hook
 * output goes to the runtime's stderr. */
int ar_hooks_run (const oci_hook_list *hooks, const char *phase,
                  const char *state_json, ar_error_t **err);
/* The same for one hook, #index of its phase. */
int ar_hooks_run_one (const oci_hook *hook, const char *phase, size_t index,
                      const char *state_json, ar_error_t **err);

#endif
