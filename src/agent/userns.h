/* SPDX-License-Identifier: Apache-2.0 */
/* Root inside is nobody outside: a container of the agent policy that real
 * root makes gets a user namespace of its own whose root is an
 * unprivileged host uid range, taken from the subordinate ranges of a
 * system user (/etc/subuid, /etc/subgid) and leased to it alone. */
#ifndef AR_AGENT_USERNS_H
#define AR_AGENT_USERNS_H

#include "agent.h"
#include "../util/idshift.h"

/* One lease file per slot of the range, naming the state dir that holds
 * it; taken and given back under an flock of the dir. A lease whose
 * state dir no longer records that slot is stale (its container was
 * deleted without delete, or its create was killed) and taken again. */
#define AR_USERNS_LEASE_DIR "/run/agentrun-ids"
#define AR_USERNS_RECORD "idrange" /* in the state dir: "SLOT UID GID SIZE" */

typedef struct
{
  unsigned slot;
  uint32_t uid, gid, size; /* container 0 is host uid/gid, `size` ids */
} ar_userns_lease;

/* Before anything else is prepared: when the plan asks for a user
 * namespace and the caller is real root, lease a range and give the spec
 * a new user namespace mapped onto it, and the plan's limits as its
 * "user.*" sysctls. *leased says whether it did. */
int ar_agent_userns_prepare (const ar_agent_plan *plan, const char *state_dir,
                             oci_spec *spec, ar_userns_lease *lease,
                             bool *leased, ar_error_t **err);

/* The lease as a shift: on-disk ids 0.. (an image's) as its host ids. */
ar_id_shift ar_agent_userns_shift (const ar_userns_lease *lease);

/* The lease recorded in the state dir; false when there is none. */
bool ar_agent_userns_recorded (const char *state_dir, ar_userns_lease *lease);

/* Give the lease back (delete, a failed create). Safe twice. */
void ar_agent_userns_release (const char *state_dir);

#endif
