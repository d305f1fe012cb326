/* SPDX-License-Identifier: Apache-2.0 */
/* The agent policy as the core's stage: the one place that knows both. */
#include "config.h"
#include "cmd.h"
#include "../agent/stage.h"
#include "../core/policy_stage.h"

static const ar_stage_ops agent_stage = {
  .apply = ar_agent_stage_apply,
  .load = ar_agent_stage_load,
  .free = ar_agent_plan_free,
  .keep_audit_head = ar_agent_stage_keep_audit_head,
  .prepare = ar_agent_stage_prepare,
  .confine_exec = ar_agent_stage_confine_exec,
  .has_overlay = ar_agent_stage_has_overlay,
  .wall_clock_seconds = ar_agent_stage_wall_clock_seconds,
  .start_gates = ar_agent_stage_start_gates,
  .audits = ar_agent_stage_audits,
  .audit = ar_agent_stage_audit,
  .audit_process = ar_agent_stage_audit_process,
  .hook_is_own = ar_agent_stage_hook_is_own,
  .run_own_hook = ar_egress_hook_run_here,
  .secrets_main_only = ar_agent_stage_secrets_main_only,
  .hide_secrets = ar_agent_stage_hide_secrets,
  .export_diff = ar_workspace_export_diff,
  .finish = ar_agent_stage_finish,
};

void
ar_cmd_install_agent_stage (void)
{
  ar_stage_install (&agent_stage);
}
