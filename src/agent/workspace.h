/* SPDX-License-Identifier: Apache-2.0 */
/* The sandbox's workspace overlay (see workspace.c). */
#ifndef AR_AGENT_WORKSPACE_H
#define AR_AGENT_WORKSPACE_H

#include "agent.h"
#include "userns.h"

/* At create, after the overlay tmpfs exists: the workspace's upper and
 * work dirs in it, and the overlay mount added to spec->mounts; for a
 * container in a user namespace of its own (`lease`, NULL: none), the
 * overlay mounted here on an idmapped copy of the workspace and bound
 * in, a snapshot's owners moved to the lease's ids. */
int ar_workspace_prepare (const ar_agent_plan *plan, const char *state_dir,
                          const ar_userns_lease *lease, oci_spec *spec,
                          ar_error_t **err);

#endif
