/* SPDX-License-Identifier: Apache-2.0 */
/* The agent policy's side of the core's stage steps (the callbacks of
 * src/core/policy_stage.h, wired by src/cmd/agent_stage.c): each takes
 * the plan the policy made, never NULL, except apply and load, which
 * make one. */
#ifndef AR_AGENT_STAGE_H
#define AR_AGENT_STAGE_H

#include "agent.h"

int ar_agent_stage_apply (const char *profile_name, bool trust_caller,
                          const char *state_root, oci_spec *spec,
                          ar_agent_plan **plan, ar_error_t **err);
/* sandbox --print-policy: the policy's result for `spec` as JSON; nothing
 * is created. */
int ar_agent_stage_describe (const char *profile_name, bool trust_caller,
                             oci_spec *spec, char **json, ar_error_t **err);
int ar_agent_stage_load (int state_fd, ar_agent_plan **plan, ar_error_t **err);
void
ar_agent_stage_keep_audit_head (ar_agent_plan *plan, const char *state_dir);
int ar_agent_stage_prepare (const ar_agent_plan *plan, int state_fd,
                            const char *state_dir, const char *rootfs,
                            oci_spec *spec, ar_error_t **err);
void ar_agent_stage_confine_exec (const ar_agent_plan *plan,
                                  const oci_spec *spec, oci_process *proc);
bool ar_agent_stage_has_overlay (const ar_agent_plan *plan);
int64_t ar_agent_stage_wall_clock_seconds (const ar_agent_plan *plan);
bool ar_agent_stage_audits (const ar_agent_plan *plan);
int ar_agent_stage_start_gates (const ar_agent_plan *plan, const char *id,
                                pid_t init_pid, ar_error_t **err);
void ar_agent_stage_audit (const ar_agent_plan *plan, const char *id,
                           const char *event, const char *fields_json);
void ar_agent_stage_audit_process (const ar_agent_plan *plan,
                                   const char *state_dir, const char *id,
                                   const char *event, const oci_process *proc,
                                   char *const *command_line,
                                   const char *more_fields);
bool
ar_agent_stage_hook_is_own (const ar_agent_plan *plan, const oci_hook *hook);
bool ar_agent_stage_secrets_main_only (const ar_agent_plan *plan);
int ar_agent_stage_hide_secrets (const ar_agent_plan *plan, ar_error_t **err);
int ar_agent_stage_finish (const ar_agent_plan *plan, const char *state_dir,
                           const char *id, bool started, ar_error_t **err);

#endif
