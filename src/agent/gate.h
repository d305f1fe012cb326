/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AR_AGENT_GATE_H
#define AR_AGENT_GATE_H

#include "agent.h"

#include <sys/types.h>

/* create, once the init has mounted the secrets and before it runs the
 * user's program: with secrets.ask or programs.ask, hold each open of a
 * secret, or each exec of a program the profile names, for the plan's
 * approver, in a daemon (comm agentrun-gate) that ends with the init.
 * Nothing to do (0) otherwise. */
int ar_gate_start (const ar_agent_plan *plan, const char *id, pid_t init_pid,
                   ar_error_t **err);

#endif
