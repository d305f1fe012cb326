/* SPDX-License-Identifier: Apache-2.0 */
/* The runtime's side of egress control (src/agent/egress.c). */
#ifndef AR_AGENT_EGRESS_H
#define AR_AGENT_EGRESS_H

#include "agent.h"

/* At create: when the container has a netns of its own and egress is
 * not "none", write <state_dir>/resolv.conf (the hook's resolver on
 * 127.0.0.53) and bind-mount it onto /etc/resolv.conf. */
int ar_egress_prepare (const ar_agent_plan *plan, const char *state_dir,
                       oci_spec *spec, ar_error_t **err);

/* At delete (and after a failed prepare): remove what prepare wrote. */
void ar_egress_teardown (const char *state_dir);

#endif
