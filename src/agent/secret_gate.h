/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AR_AGENT_SECRET_GATE_H
#define AR_AGENT_SECRET_GATE_H

#include "agent.h"

#include <sys/types.h>

/* create, once the init has mounted the secrets: with secrets.ask, hold
 * every open of a secret for the plan's approver, in a daemon that ends
 * with the init. Nothing to do (0) otherwise. */
int ar_secret_gate_start (const ar_agent_plan *plan, const char *id,
                          pid_t init_pid, ar_error_t **err);

#endif
