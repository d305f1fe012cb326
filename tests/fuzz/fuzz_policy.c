/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the agent policy's parsers: the input is read as
 * a profile file (src/agent/profile.c ar_profile_parse), and as lines
 * "KEY=VALUE" that become run.agentrun.KEY annotations on the default
 * spec, which the policy (src/agent/policy.c ar_policy_apply) applies
 * under the agent profile, as a bundle's author and as the trusted caller
 * (sandbox). No profile files are read: the config dir does not exist.
 * Seeds: tests/fuzz/corpus/fuzz_policy.
 *
 * Checked: every failure is one line; whatever parses is freed (leaks
 * fail the run). */
#include "config.h"
#include "fuzz.h"
#include "../../oci/oci.h"
#include "../../src/agent/policy_internal.h"
#include "../../src/util/cleanup.h"

#include <stdint.h>

static ar_profile *agent, *trusted;
static char *default_json;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
  setenv ("AGENTRUN_CONFIG_DIR", "/nonexistent/agentrun-fuzz", 1);
  if (ar_profile_load ("agent", &agent, NULL) < 0
      || ar_profile_load ("agent", &trusted, NULL) < 0)
    abort ();
  ar_profile_trust_caller (trusted);
  default_json = oci_spec_default_json (false, 0, 0);
  return 0;
}

static void
fuzz_profile (const char *data, size_t size)
{
  ar_profile *p = NULL;
  cleanup_error ar_error_t *err = NULL;
  if (ar_profile_parse ("fuzz.json", data, size, "fuzz", &p, &err) < 0)
    fuzz_check_one_line (err);
  ar_profile_free (p);
}

/* "KEY=VALUE" lines as annotations run.agentrun.KEY. */
static void
annotate (oci_spec *spec, const char *data, size_t size)
{
  cleanup_free char *text = xcalloc (1, size + 1);
  memcpy (text, data, size);
  oci_map *m = &spec->annotations;
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line;
       line = strtok_r (NULL, "\n", &save))
    {
      char *eq = strchr (line, '=');
      if (eq == NULL)
        continue;
      m->items = xrealloc (m->items, (m->len + 1) * sizeof *m->items);
      m->items[m->len].key
          = xasprintf ("run.agentrun.%.*s", (int) (eq - line), line);
      m->items[m->len].value = xstrdup (eq + 1);
      m->len++;
    }
}

static void
fuzz_annotations (const ar_profile *profile, const char *data, size_t size)
{
  oci_spec *spec = NULL;
  if (oci_spec_parse (default_json, strlen (default_json), "default", &spec,
                      NULL)
      < 0)
    abort ();
  annotate (spec, data, size);
  ar_agent_plan *plan = NULL;
  cleanup_error ar_error_t *err = NULL;
  if (ar_policy_apply (spec, profile, NULL, &plan, &err) < 0)
    fuzz_check_one_line (err);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_profile ((const char *) data, size);
  fuzz_annotations (agent, (const char *) data, size);
  fuzz_annotations (trusted, (const char *) data, size);
  return 0;
}
