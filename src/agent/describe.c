/* SPDX-License-Identifier: Apache-2.0 */
/* sandbox --print-policy: what the policy makes of a spec, as JSON,
 * without creating anything. The host is only read (the hidden paths are
 * expanded as create would expand them). */
#include "config.h"
#include "hide.h"
#include "policy_internal.h"
#include "../../oci/json.h"
#include "../util/cleanup.h"

#include <string.h>

static void
gen_mounts (yajl_gen g, const oci_spec *spec)
{
  oj_gen_key (g, "mounts");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const oci_mount *m = &spec->mounts[i];
      yajl_gen_map_open (g);
      oj_gen_kv_string (g, "destination", m->destination);
      oj_gen_kv_string (g, "type", m->type);
      oj_gen_kv_string (g, "source", m->source);
      oj_gen_kv_strv (g, "options", &m->options);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

/* The limits as they end up in the spec (0: none). */
static void
gen_limits (yajl_gen g, const oci_spec *spec, const ar_agent_plan *plan)
{
  const oci_resources *r = spec->linux_cfg ? spec->linux_cfg->resources : NULL;
  oj_gen_key (g, "limits");
  yajl_gen_map_open (g);
  oj_gen_kv_i64 (g, "memoryBytes",
                 r && r->memory && r->memory->limit.set ? r->memory->limit.value
                                                        : 0);
  oj_gen_kv_i64 (g, "pids", r && r->pids_limit.set ? r->pids_limit.value : 0);
  oj_gen_kv_i64 (g, "cpuQuotaMicros",
                 r && r->cpu && r->cpu->quota.set ? r->cpu->quota.value : 0);
  oj_gen_kv_u64 (g, "cpuPeriodMicros",
                 r && r->cpu && r->cpu->period.set ? r->cpu->period.value : 0);
  oj_gen_kv_i64 (g, "wallClockSeconds", plan ? plan->wall_clock_seconds : 0);
  yajl_gen_map_close (g);
}

int
ar_policy_describe (oci_spec *spec, const ar_profile *profile, char **json,
                    ar_error_t **err)
{
  cleanup_plan ar_agent_plan *plan = NULL;
  if (ar_policy_apply (spec, profile, NULL, &plan, err) < 0)
    return -1;
  cleanup_hide_list ar_hide_list hidden = { 0 };
  if (ar_hide_resolve (plan, spec->root_path, &hidden, err) < 0)
    return -1;
  ar_hide_apply (&hidden, spec);

  yajl_gen g = oj_gen_new (true, "  ");
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "profile", profile->name);
  oj_gen_kv_string (g, "root", spec->root_path);
  oj_gen_key (g, "hidden");
  ar_hide_gen_json (g, &hidden);
  oj_gen_key (g, "plan");
  if (plan)
    ar_agent_plan_gen (g, plan);
  else
    yajl_gen_null (g);
  gen_limits (g, spec, plan);
  gen_mounts (g, spec);
  const oci_linux *l = spec->linux_cfg;
  if (l)
    {
      oj_gen_kv_strv (g, "maskedPaths", &l->masked_paths);
      oj_gen_kv_strv (g, "readonlyPaths", &l->readonly_paths);
    }
  yajl_gen_map_close (g);
  *json = oj_gen_finish (g);
  return 0;
}
