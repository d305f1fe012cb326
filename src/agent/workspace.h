/* SPDX-License-Identifier: Apache-2.0 */
/* The sandbox's workspace overlay (see workspace.c). */
#ifndef AR_AGENT_WORKSPACE_H
#define AR_AGENT_WORKSPACE_H

#include "agent.h"

/* At create, after the overlay tmpfs exists: the workspace's upper and
 * work dirs in it, and the overlay mount added to spec->mounts. */
int ar_workspace_prepare (const ar_agent_plan *plan, const char *state_dir,
                          oci_spec *spec, ar_error_t **err);

#endif
