/* SPDX-License-Identifier: Apache-2.0 */
/* The agent policy without root: profiles (built-in, files, extends,
 * errors), ar_policy_apply as spec in → spec out, annotations, host path
 * rules, the default seccomp filter (validated, round-tripped, and loaded
 * into a forked child to see that it blocks what it should), and the
 * plan's save/load round trip. */
#include "config.h"
#include "unit.h"
#include "../../oci/oci.h"
#include "../../src/agent/agent.h"
#include "../../src/agent/policy_internal.h"
#include "../../src/agent/seccomp_default.h"
#include "../../src/core/seccomp.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char config_dir[64];

#ifdef SYS_clone3
#define SYS_clone3_nr SYS_clone3
#else
#define SYS_clone3_nr 435 /* the same on every architecture */
#endif

/* ---- helpers ---------------------------------------------------------- */

static int
remove_entry (const char *path, const struct stat *st, int type,
              struct FTW *ftw)
{
  (void) st, (void) type, (void) ftw;
  return remove (path);
}

static void
write_text (const char *path, const char *text)
{
  ar_error_t *err = NULL;
  if (ar_write_file_atomic_at (AT_FDCWD, path, text, strlen (text), 0644, &err)
      < 0)
    {
      fprintf (stderr, "%s\n", ar_error_text (err));
      exit (2);
    }
}

/* Write <config dir>/profiles/<name>.json. */
static void
write_profile (const char *name, const char *json)
{
  cleanup_free char *path = xasprintf ("%s/profiles/%s.json", config_dir, name);
  write_text (path, json);
}

static void
remove_profile (const char *name)
{
  cleanup_free char *path = xasprintf ("%s/profiles/%s.json", config_dir, name);
  unlink (path);
}

static oci_spec *
spec_from (const char *json)
{
  oci_spec *spec = NULL;
  ar_error_t *err = NULL;
  if (oci_spec_parse (json, strlen (json), "config.json", &spec, &err) < 0)
    {
      fprintf (stderr, "bad test spec: %s\n", ar_error_text (err));
      exit (2);
    }
  return spec;
}

static ar_profile *
profile (const char *name)
{
  ar_profile *p = NULL;
  ar_error_t *err = NULL;
  if (ar_profile_load (name, &p, &err) < 0)
    {
      fprintf (stderr, "profile %s: %s\n", name ? name : "(default)",
               ar_error_text (err));
      ar_error_free (err);
      return NULL;
    }
  return p;
}

/* The error message of loading a profile, or NULL when it loads. */
static char *
profile_error (const char *name)
{
  ar_profile *p = NULL;
  ar_error_t *err = NULL;
  if (ar_profile_load (name, &p, &err) == 0)
    {
      ar_profile_free (p);
      return NULL;
    }
  char *msg = xstrdup (ar_error_text (err));
  ar_error_free (err);
  return msg;
}

/* Apply `profile_name` to `spec`; the plan, or NULL with *msg set. */
static ar_agent_plan *
apply (const char *profile_name, oci_spec *spec, char **msg)
{
  cleanup_profile ar_profile *p = profile (profile_name);
  ar_agent_plan *plan = NULL;
  ar_error_t *err = NULL;
  *msg = NULL;
  if (p == NULL)
    {
      *msg = xstrdup ("profile did not load");
      return NULL;
    }
  if (ar_policy_apply (spec, p, NULL, &plan, &err) < 0)
    {
      *msg = xstrdup (ar_error_text (err));
      ar_error_free (err);
    }
  return plan;
}

/* The error of applying `profile_name` to a spec with these annotations
 * (a JSON object's members), checking that a refusal changes nothing. */
static char *
annotation_error (const char *profile_name, const char *annotations)
{
  cleanup_free char *json
      = xasprintf ("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
                   "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
                   "\"annotations\":{%s}}",
                   annotations);
  oci_spec *spec = spec_from (json);
  cleanup_free char *before = oci_spec_to_json (spec, false);
  char *msg = NULL;
  ar_agent_plan *plan = apply (profile_name, spec, &msg);
  cleanup_free char *after = oci_spec_to_json (spec, false);
  if (msg)
    CHECK_STR (after, before);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
  return msg;
}

static bool
strv_has (const oci_strv *v, const char *s)
{
  for (size_t i = 0; i < v->len; i++)
    if (strcmp (v->items[i], s) == 0)
      return true;
  return false;
}

static size_t
strv_count (const oci_strv *v, const char *s)
{
  size_t n = 0;
  for (size_t i = 0; i < v->len; i++)
    n += strcmp (v->items[i], s) == 0;
  return n;
}

static const char *const minimal_spec
    = "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
      "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\","
      "\"capabilities\":{"
      "\"bounding\":[\"CAP_CHOWN\",\"CAP_KILL\",\"CAP_MKNOD\"],"
      "\"effective\":[\"CAP_KILL\",\"CAP_MKNOD\"],"
      "\"permitted\":[\"CAP_CHOWN\",\"CAP_KILL\",\"CAP_MKNOD\"],"
      "\"inheritable\":[\"CAP_KILL\"],\"ambient\":[\"CAP_KILL\"]}},"
      "\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"mount\"}],"
      "\"maskedPaths\":[\"/proc/kcore\"]}}";

/* ---- value parsers ---------------------------------------------------- */

static oci_process *
process_from (const char *json)
{
  oci_process *p = NULL;
  cleanup_error ar_error_t *err = NULL;
  if (oci_process_parse (json, strlen (json), NULL, &p, &err) < 0)
    return NULL;
  return p;
}

/* An exec under the policy: never more than the container's process. */
/* A pod's timeout holds for its containers, never for its pause one. */
static void
test_pod_sandbox_has_no_timeout (void)
{
  static const char *const kinds[][2] = {
    { "io.kubernetes.cri.container-type", "sandbox" },
    { "io.kubernetes.cri-o.ContainerType", "sandbox" },
    { "io.kubernetes.cri.container-type", "container" },
  };
  for (size_t i = 0; i < 3; i++)
    {
      cleanup_free char *json = xasprintf (
          "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
          "\"linux\":{\"namespaces\":[{\"type\":\"network\"}]},"
          "\"annotations\":{\"%s\":\"%s\",\"run.agentrun.timeout\":\"4s\"}}",
          kinds[i][0], kinds[i][1]);
      oci_spec *spec = spec_from (json);
      cleanup_free char *msg = NULL;
      ar_agent_plan *plan = apply ("agent", spec, &msg);
      CHECK_STR (msg, NULL);
      if (CHECK (plan))
        CHECK_INT (plan->wall_clock_seconds, i < 2 ? 0 : 4);
      ar_agent_plan_free (plan);
      oci_spec_free (spec);
    }
}

static void
test_confine_exec (void)
{
  oci_process *own = process_from (
      "{\"cwd\": \"/\", \"args\": [\"sh\"], \"noNewPrivileges\": true,"
      " \"capabilities\": {\"bounding\": [\"CAP_CHOWN\", \"CAP_KILL\"],"
      " \"effective\": [\"CAP_CHOWN\"], \"permitted\": [\"CAP_CHOWN\"]}}");
  oci_process *exec = process_from (
      "{\"cwd\": \"/\", \"args\": [\"id\"],"
      " \"capabilities\": {\"bounding\": [\"CAP_SYS_ADMIN\", \"CAP_KILL\"],"
      " \"effective\": [\"CAP_SYS_ADMIN\", \"CAP_CHOWN\"], \"permitted\": [\"CAP_CHOWN\"],"
      " \"ambient\": [\"CAP_KILL\"]}}");
  CHECK (own != NULL && exec != NULL);
  if (own == NULL || exec == NULL)
    return;
  ar_policy_confine_exec (exec, own);
  CHECK (exec->no_new_privileges);
  CHECK_INT ((int) exec->capabilities->bounding.len, 1);
  CHECK_STR (exec->capabilities->bounding.items[0], "CAP_KILL");
  CHECK_INT ((int) exec->capabilities->effective.len, 1);
  CHECK_STR (exec->capabilities->effective.items[0], "CAP_CHOWN");
  CHECK_INT ((int) exec->capabilities->ambient.len, 0);
  /* A container process without capabilities leaves the exec none. */
  oci_process *bare = process_from ("{\"cwd\": \"/\", \"args\": [\"sh\"]}");
  oci_process *exec2 = process_from (
      "{\"cwd\": \"/\", \"args\": [\"id\"], \"capabilities\": {\"bounding\": [\"CAP_KILL\"]}}");
  CHECK (bare != NULL && exec2 != NULL);
  if (bare && exec2)
    {
      ar_policy_confine_exec (exec2, bare);
      CHECK_INT ((int) exec2->capabilities->bounding.len, 0);
      CHECK (!exec2->no_new_privileges);
    }
  oci_process_free (own);
  oci_process_free (exec);
  oci_process_free (bare);
  oci_process_free (exec2);
}

static void
test_value_parsers (void)
{
  uint64_t u = 0;
  int64_t i = 0;
  CHECK (ar_parse_size ("1G", &u) && u == 1ull << 30);
  CHECK (ar_parse_size ("512m", &u) && u == 512ull << 20);
  CHECK (ar_parse_size ("4kib", &u) && u == 4096);
  CHECK (ar_parse_size ("2GB", &u) && u == 2ull << 30);
  CHECK (ar_parse_size ("1t", &u) && u == 1ull << 40);
  CHECK (ar_parse_size ("4096", &u) && u == 4096);
  CHECK (!ar_parse_size ("", &u));
  CHECK (!ar_parse_size ("-1G", &u));
  CHECK (!ar_parse_size (" 1G", &u));
  CHECK (!ar_parse_size ("1X", &u));
  CHECK (!ar_parse_size ("1.5G", &u));
  CHECK (!ar_parse_size ("99999999999999999999", &u));
  CHECK (!ar_parse_size ("17179869184G", &u));

  CHECK (ar_parse_duration ("1h", &i) && i == 3600);
  CHECK (ar_parse_duration ("15m", &i) && i == 900);
  CHECK (ar_parse_duration ("90s", &i) && i == 90);
  CHECK (ar_parse_duration ("90", &i) && i == 90);
  CHECK (!ar_parse_duration ("1d", &i));
  CHECK (!ar_parse_duration ("h", &i));

  CHECK (ar_parse_cpus ("2", &u) && u == 2000);
  CHECK (ar_parse_cpus ("0.5", &u) && u == 500);
  CHECK (ar_parse_cpus ("1.25", &u) && u == 1250);
  CHECK (!ar_parse_cpus ("1.2345", &u));
  CHECK (!ar_parse_cpus ("1.", &u));
  CHECK (!ar_parse_cpus ("-1", &u));

  CHECK (ar_profile_name_valid ("my-profile_2"));
  CHECK (!ar_profile_name_valid ("../agent"));
  CHECK (!ar_profile_name_valid ("Agent"));
  CHECK (!ar_profile_name_valid (""));
  CHECK (ar_secret_name_valid ("GH_TOKEN.v2"));
  CHECK (!ar_secret_name_valid (".."));
  CHECK (!ar_secret_name_valid ("a/b"));

  CHECK (ar_egress_entry_valid ("10.0.0.0/8"));
  CHECK (ar_egress_entry_valid ("fd00::/8"));
  CHECK (ar_egress_entry_valid ("pypi.org:443"));
  CHECK (ar_egress_entry_valid ("*.npmjs.org"));
  CHECK (ar_egress_entry_valid ("[::1]:53"));
  CHECK (!ar_egress_entry_valid ("a*.org"));
  CHECK (!ar_egress_entry_valid ("pypi.org/8"));
  CHECK (!ar_egress_entry_valid ("10.0.0.0/"));
  CHECK (!ar_egress_entry_valid ("host name"));
  CHECK (!ar_egress_entry_valid (""));
  CHECK (!ar_egress_entry_valid ("10.0.0.0/33"));
  CHECK (!ar_egress_entry_valid ("host:0"));
  CHECK (!ar_egress_entry_valid ("*."));
}

/* ---- profiles --------------------------------------------------------- */

static void
test_default_profile_selection (void)
{
  cleanup_free char *main_config = xasprintf ("%s/agentrun.json", config_dir);
  unlink (main_config);
  cleanup_profile ar_profile *none = profile (NULL);
  CHECK (none && strcmp (ar_profile_name (none), "oci") == 0);

  write_text (main_config, "{\"profile\": \"agent\", \"other\": 1}");
  cleanup_profile ar_profile *agent = profile (NULL);
  CHECK (agent && strcmp (ar_profile_name (agent), "agent") == 0);

  write_text (main_config, "{}");
  cleanup_profile ar_profile *empty = profile (NULL);
  CHECK (empty && strcmp (ar_profile_name (empty), "oci") == 0);

  write_text (main_config, "{\"profile\": 3}");
  cleanup_free char *msg = profile_error (NULL);
  cleanup_free char *want
      = xasprintf ("%s: .profile: expected string, got number 3", main_config);
  CHECK_STR (msg, want);
  unlink (main_config);
}

static void
test_profile_errors (void)
{
  cleanup_free char *file = xasprintf ("%s/profiles/bad.json", config_dir);
  struct
  {
    const char *json;
    const char *want; /* after "FILE: " */
  } cases[] = {
    { "{\"limits\": {\"memory\": \"lots\"}}",
      ".limits.memory: expected size (bytes, or a string like \"512M\"), got "
      "string \"lots\"" },
    { "{\"overlay\": {\"sise\": \"1G\"}}", ".overlay.sise: unknown key" },
    { "{\"capabilities\": [\"CAP_CHOWN\", \"chown\"]}",
      ".capabilities[1]: expected capability name (CAP_...), got string "
      "\"chown\"" },
    { "{\"seccomp\": \"strict\"}",
      ".seccomp: expected \"default\", \"spec\" or \"none\", got string "
      "\"strict\"" },
    { "{\"network\": {\"egress\": \"none\", \"allow\": [\"a b\"]}}",
      ".network.allow[0]: expected CIDR, host, host:port or *.domain, got "
      "string \"a b\"" },
    { "{\"output\": {\"path\": \"output\"}}",
      ".output.path: expected absolute path without \"..\", got string "
      "\"output\"" },
    { "{\"secrets\": {\"allowedHostDirs\": [\"/etc/../root\"]}}",
      ".secrets.allowedHostDirs[0]: expected absolute path without \"..\", "
      "got string \"/etc/../root\"" },
    { "{\"annotations\": [\"memory\", \"memroy\"]}",
      ".annotations[1]: expected known annotation (without run.agentrun.) "
      "or a prefix ending in *, got string \"memroy\"" },
    { "{\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": 1, "
      "\"soft\": 2}]}",
      ".rlimits[0]: soft limit above the hard limit" },
    { "{\"audit\": {}}", ".audit: path: missing (an audit log needs a file)" },
    { "{\"extends\": 1}", ".extends: expected string, got number 1" },
    { "[]", "expected object, got array" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      write_profile ("bad", cases[i].json);
      cleanup_free char *msg = profile_error ("bad");
      cleanup_free char *want = xasprintf ("%s: %s", file, cases[i].want);
      CHECK_STR (msg, want);
    }

  write_profile ("bad", "{\"extends\": \"nope\"}");
  cleanup_free char *msg = profile_error ("bad");
  cleanup_free char *want = xasprintf (
      "%s: .extends: profile \"nope\": not found (no built-in profile and "
      "no %s/profiles/nope.json)",
      file, config_dir);
  CHECK_STR (msg, want);

  write_profile ("bad", "{\"limits\": ");
  cleanup_free char *syntax = profile_error ("bad");
  CHECK (syntax && strncmp (syntax, file, strlen (file)) == 0);
  remove_profile ("bad");

  cleanup_free char *bad_name = profile_error ("Bad Name");
  CHECK_STR (bad_name, "profile \"Bad Name\": invalid name (want [a-z0-9_-]+)");
  /* A path is not a name: where the file goes instead. */
  cleanup_free char *path = profile_error ("../etc/passwd");
  CHECK (path
         && strncmp (path,
                     "profile \"../etc/passwd\": a profile is named, not "
                     "given by path: put it in ",
                     strlen ("profile \"../etc/passwd\": a profile is named, "
                             "not given by path: put it in "))
                == 0
         && strstr (path, "/profiles/NAME.json and give NAME"));
  cleanup_free char *missing = profile_error ("missing");
  CHECK (missing && strstr (missing, "profile \"missing\": not found"));

  write_profile ("loop-a", "{\"extends\": \"loop-b\"}");
  write_profile ("loop-b", "{\"extends\": \"loop-a\"}");
  cleanup_free char *loop = profile_error ("loop-a");
  CHECK (loop && strstr (loop, "nested deeper than"));
  remove_profile ("loop-a");
  remove_profile ("loop-b");

  write_profile ("selfish", "{\"extends\": \"selfish\"}");
  cleanup_free char *self = profile_error ("selfish");
  CHECK (self && strstr (self, ".extends: a profile cannot extend itself"));
  remove_profile ("selfish");
}

static void
test_profile_extends (void)
{
  write_profile ("big", "{\"extends\": \"agent\", \"description\": \"x\","
                        " \"limits\": {\"memory\": \"4G\"},"
                        " \"output\": {\"allowedHostDirs\": [\"/srv/out/\"]},"
                        " \"audit\": {\"path\": \"/var/log/a.log\"}}");
  cleanup_profile ar_profile *big = profile ("big");
  if (CHECK (big))
    {
      CHECK_STR (big->name, "big");
      CHECK_INT (big->memory_bytes, 4ull << 30);
      CHECK_INT (big->pids, 1024);
      CHECK_STR (big->output_path, "/output");
      CHECK_INT (big->output_allowed_host_dirs.len, 1);
      CHECK_STR (big->output_allowed_host_dirs.items[0], "/srv/out");
      CHECK_STR (big->audit_path, "/var/log/a.log");
      CHECK (big->seccomp == AR_PROFILE_SECCOMP_DEFAULT);
    }
  remove_profile ("big");

  /* A file named agent replaces the built-in, and may start from it. */
  write_profile ("agent",
                 "{\"extends\": \"agent\", \"limits\": {\"pids\": 10}}");
  cleanup_profile ar_profile *agent = profile ("agent");
  CHECK (agent && agent->pids == 10 && agent->memory_bytes == 2ull << 30);
  remove_profile ("agent");

  /* Without "extends" nothing is on. */
  write_profile ("bare", "{\"noNewPrivileges\": true}");
  cleanup_profile ar_profile *bare = profile ("bare");
  CHECK (bare && !bare->overlay && !bare->output && !bare->secrets
         && bare->egress == AR_EGRESS_OPEN && bare->memory_bytes == 0
         && bare->seccomp == AR_PROFILE_SECCOMP_SPEC);
  remove_profile ("bare");

  /* "oci" is always the plain runtime, whatever the config dir holds. */
  write_profile ("oci", "{\"noNewPrivileges\": true}");
  cleanup_profile ar_profile *oci = profile ("oci");
  CHECK (oci && oci->plain_oci);
  remove_profile ("oci");
}

/* ---- policy ----------------------------------------------------------- */

static void
test_oci_profile_changes_nothing (void)
{
  cleanup_free char *json = oci_spec_default_json (false, 0, 0);
  oci_spec *spec = spec_from (json);
  /* Even annotations agentrun would refuse: a plain runtime ignores them. */
  spec->annotations.items
      = xrealloc (spec->annotations.items, sizeof *spec->annotations.items);
  spec->annotations.items[0]
      = (oci_kv){ xstrdup ("run.agentrun.bogus"), xstrdup ("1") };
  spec->annotations.len = 1;
  cleanup_free char *before = oci_spec_to_json (spec, true);
  char *msg = NULL;
  ar_agent_plan *plan = apply ("oci", spec, &msg);
  cleanup_free char *after = oci_spec_to_json (spec, true);
  CHECK (plan == NULL);
  CHECK_STR (msg, NULL);
  CHECK_STR (after, before);
  oci_spec_free (spec);
}

static void
test_agent_profile_defaults (void)
{
  cleanup_free char *json = oci_spec_default_json (false, 0, 0);
  oci_spec *spec = spec_from (json);
  cleanup_free char *msg = NULL;
  ar_agent_plan *plan = apply ("agent", spec, &msg);
  CHECK_STR (msg, NULL);
  if (!CHECK (plan))
    {
      oci_spec_free (spec);
      return;
    }
  CHECK_STR (plan->profile, "agent");
  CHECK (plan->overlay);
  /* the default spec's root is read-only, and stays so over the overlay */
  CHECK (spec->root_readonly);
  CHECK_INT (plan->overlay_size_bytes, 1ull << 30);
  CHECK_INT (plan->overlay_inodes, 262144);
  CHECK_STR (plan->secrets_path, "/run/secrets");
  CHECK (!plan->secrets_main_only);
  CHECK_INT (plan->n_secrets, 0);
  CHECK_STR (plan->output_path, "/output");
  CHECK_STR (plan->output_host_dir, NULL);
  CHECK_INT (plan->output_max_bytes, 1ull << 30);
  CHECK_INT (plan->output_max_files, 10000);
  CHECK_STR (plan->audit_path, NULL);
  CHECK_INT (plan->wall_clock_seconds, 3600);
  CHECK (plan->egress == AR_EGRESS_NONE);
  CHECK_INT (plan->n_egress_allow, 0);
  CHECK (plan->egress_allow && plan->egress_allow[0] == NULL);

  oci_resources *r = spec->linux_cfg->resources;
  CHECK (r->memory && r->memory->limit.set
         && r->memory->limit.value == 2ll << 30);
  CHECK (r->pids_limit.set && r->pids_limit.value == 1024);
  CHECK (r->cpu && r->cpu->quota.value == 200000
         && r->cpu->period.value == 100000);

  oci_process *p = spec->process;
  CHECK (p->no_new_privileges);
  /* The default spec asks AUDIT_WRITE, KILL, NET_BIND_SERVICE; the agent
   * profile has no AUDIT_WRITE. */
  CHECK_INT (p->capabilities->bounding.len, 2);
  CHECK (strv_has (&p->capabilities->bounding, "CAP_KILL"));
  CHECK (strv_has (&p->capabilities->effective, "CAP_NET_BIND_SERVICE"));
  CHECK (!strv_has (&p->capabilities->permitted, "CAP_AUDIT_WRITE"));

  oci_linux *l = spec->linux_cfg;
  CHECK (l->seccomp
         && strcmp (l->seccomp->default_action, "SCMP_ACT_ERRNO") == 0);
  CHECK (oci_spec_find_namespace (spec, OCI_NS_NETWORK) != NULL);
  CHECK_INT (strv_count (&l->masked_paths, "/proc/kcore"), 1);
  CHECK_INT (strv_count (&l->masked_paths, "/proc/sched_debug"), 1);
  CHECK_INT (strv_count (&l->readonly_paths, "/proc/sys"), 1);

  /* The result is still a spec the parser takes. */
  cleanup_free char *out = oci_spec_to_json (spec, false);
  oci_spec *again = spec_from (out);
  oci_spec_free (again);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
}

static void
test_capabilities_never_widened (void)
{
  oci_spec *spec = spec_from (minimal_spec);
  cleanup_free char *msg = NULL;
  ar_agent_plan *plan = apply ("agent", spec, &msg);
  CHECK_STR (msg, NULL);
  oci_capabilities *caps = spec->process->capabilities;
  CHECK_INT (caps->bounding.len, 2); /* CHOWN, KILL: MKNOD dropped */
  CHECK (strv_has (&caps->bounding, "CAP_CHOWN"));
  CHECK (!strv_has (&caps->bounding, "CAP_MKNOD"));
  CHECK_INT (caps->effective.len, 1); /* KILL only: CHOWN was not asked */
  CHECK_STR (caps->effective.items[0], "CAP_KILL");
  CHECK_INT (caps->permitted.len, 2);
  CHECK_INT (caps->inheritable.len, 0);
  CHECK_INT (caps->ambient.len, 0);
  /* A new network namespace was added next to the spec's two. */
  CHECK_INT (spec->linux_cfg->n_namespaces, 3);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);

  /* No capabilities asked: none granted. */
  oci_spec *bare
      = spec_from ("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
                   "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"}}");
  plan = apply ("agent", bare, &msg);
  CHECK (bare->process->capabilities == NULL);
  ar_agent_plan_free (plan);
  oci_spec_free (bare);
}

static void
test_limits_only_tighten (void)
{
  oci_spec *strict
      = spec_from ("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
                   "\"linux\":{\"resources\":{\"memory\":{\"limit\":536870912},"
                   "\"pids\":{\"limit\":100},"
                   "\"cpu\":{\"quota\":50000,\"period\":100000}}}}");
  cleanup_free char *msg = NULL;
  ar_agent_plan *plan = apply ("agent", strict, &msg);
  oci_resources *r = strict->linux_cfg->resources;
  CHECK_INT (r->memory->limit.value, 536870912);
  CHECK_INT (r->pids_limit.value, 100);
  CHECK_INT (r->cpu->quota.value, 50000);
  CHECK_INT (r->cpu->period.value, 100000);
  ar_agent_plan_free (plan);
  oci_spec_free (strict);

  /* Looser or unlimited values are brought down to the profile's. A quota
   * of 50000 per 10000 is five cpus. */
  oci_spec *loose = spec_from (
      "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
      "\"linux\":{\"resources\":{\"memory\":{\"limit\":8589934592},"
      "\"pids\":{\"limit\":-1},"
      "\"cpu\":{\"quota\":50000,\"period\":10000}}}}");
  plan = apply ("agent", loose, &msg);
  r = loose->linux_cfg->resources;
  CHECK_INT (r->memory->limit.value, 2ll << 30);
  CHECK_INT (r->pids_limit.value, 1024);
  CHECK_INT (r->cpu->quota.value, 200000);
  CHECK_INT (r->cpu->period.value, 100000);
  ar_agent_plan_free (plan);
  oci_spec_free (loose);

  /* Annotations may change the profile's value, never the spec's
   * stricter one. */
  oci_spec *annotated = spec_from (
      "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
      "\"annotations\":{\"run.agentrun.memory\":\"8G\","
      "\"run.agentrun.pids\":\"50\",\"run.agentrun.cpus\":\"0.5\"},"
      "\"linux\":{\"resources\":{\"memory\":{\"limit\":1073741824}}}}");
  plan = apply ("agent", annotated, &msg);
  CHECK_STR (msg, NULL);
  r = annotated->linux_cfg->resources;
  CHECK_INT (r->memory->limit.value, 1ll << 30);
  CHECK_INT (r->pids_limit.value, 50);
  CHECK_INT (r->cpu->quota.value, 50000);
  ar_agent_plan_free (plan);
  oci_spec_free (annotated);
}

static void
test_profile_rlimits (void)
{
  write_profile ("files", "{\"extends\": \"agent\", \"rlimits\": ["
                          "{\"type\": \"RLIMIT_NOFILE\", \"hard\": 4096,"
                          " \"soft\": 1024},"
                          "{\"type\": \"RLIMIT_CORE\", \"hard\": 0,"
                          " \"soft\": 0}]}");
  oci_spec *spec = spec_from (
      "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
      "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\",\"rlimits\":["
      "{\"type\":\"RLIMIT_NOFILE\",\"hard\":1048576,\"soft\":512}]}}");
  cleanup_free char *msg = NULL;
  ar_agent_plan *plan = apply ("files", spec, &msg);
  CHECK_STR (msg, NULL);
  oci_process *p = spec->process;
  CHECK_INT (p->n_rlimits, 2);
  CHECK_INT (p->rlimits[0].hard, 4096);
  CHECK_INT (p->rlimits[0].soft, 512);
  CHECK_STR (p->rlimits[1].type, "RLIMIT_CORE");
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
  remove_profile ("files");
}

static void
test_seccomp_modes (void)
{
  static const char *const with_filter
      = "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
        "\"linux\":{\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\"}}}";
  cleanup_free char *msg = NULL;

  /* default: the spec's own filter wins when it has one. */
  oci_spec *spec = spec_from (with_filter);
  ar_agent_plan *plan = apply ("agent", spec, &msg);
  CHECK_STR (spec->linux_cfg->seccomp->default_action, "SCMP_ACT_ALLOW");
  ar_agent_plan_free (plan);
  oci_spec_free (spec);

  write_profile ("noseccomp",
                 "{\"extends\": \"agent\", \"seccomp\": \"none\"}");
  spec = spec_from (with_filter);
  plan = apply ("noseccomp", spec, &msg);
  CHECK (spec->linux_cfg->seccomp == NULL);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
  remove_profile ("noseccomp");

  write_profile ("specseccomp",
                 "{\"extends\": \"agent\", \"seccomp\": \"spec\"}");
  spec = spec_from (minimal_spec);
  plan = apply ("specseccomp", spec, &msg);
  CHECK (spec->linux_cfg->seccomp == NULL);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
  remove_profile ("specseccomp");
}

static void
test_network_namespace (void)
{
  /* A namespace joined by path is kept: egress is filtered inside it. */
  oci_spec *spec
      = spec_from ("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
                   "\"linux\":{\"namespaces\":[{\"type\":\"network\","
                   "\"path\":\"/run/netns/pod\"}]}}");
  cleanup_free char *msg = NULL;
  ar_agent_plan *plan = apply ("agent", spec, &msg);
  CHECK_INT (spec->linux_cfg->n_namespaces, 2); /* + a mount namespace */
  CHECK_STR (spec->linux_cfg->namespaces[0].path, "/run/netns/pod");
  ar_agent_plan_free (plan);
  oci_spec_free (spec);

  /* Open egress leaves the namespaces as the spec has them. */
  write_profile ("open", "{\"extends\": \"agent\","
                         " \"network\": {\"egress\": \"open\"}}");
  spec = spec_from (minimal_spec);
  plan = apply ("open", spec, &msg);
  CHECK_INT (spec->linux_cfg->n_namespaces, 2);
  CHECK (plan && plan->egress == AR_EGRESS_OPEN);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
  remove_profile ("open");
}

/* The agent profile's mounts (overlay, secrets, /output) never go to the
 * host's mount namespace: a spec without one gets a new one; the oci
 * profile leaves it out, as the spec says. */
static void
test_mount_namespace (void)
{
  static const char *const no_namespaces
      = "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
        "\"linux\":{\"namespaces\":[]}}";
  cleanup_free char *msg = NULL;
  oci_spec *spec = spec_from (no_namespaces);
  ar_agent_plan *plan = apply ("agent", spec, &msg);
  CHECK_STR (msg, NULL);
  const oci_namespace *mnt = oci_spec_find_namespace (spec, OCI_NS_MOUNT);
  CHECK (mnt != NULL && mnt->path == NULL);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);

  /* One joined by path is kept, and not doubled. */
  spec = spec_from ("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
                    "\"linux\":{\"namespaces\":[{\"type\":\"mount\","
                    "\"path\":\"/proc/42/ns/mnt\"}]}}");
  plan = apply ("agent", spec, &msg);
  mnt = oci_spec_find_namespace (spec, OCI_NS_MOUNT);
  CHECK (mnt != NULL && mnt->path
         && strcmp (mnt->path, "/proc/42/ns/mnt") == 0);
  size_t n_mount = 0;
  for (size_t i = 0; i < spec->linux_cfg->n_namespaces; i++)
    n_mount += spec->linux_cfg->namespaces[i].type == OCI_NS_MOUNT;
  CHECK_INT (n_mount, 1);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);

  spec = spec_from (no_namespaces);
  plan = apply ("oci", spec, &msg);
  CHECK (plan == NULL);
  CHECK (oci_spec_find_namespace (spec, OCI_NS_MOUNT) == NULL);
  oci_spec_free (spec);
}

/* ---- egress hooks ------------------------------------------------------ */

static bool
hook_args_are (const oci_hook_list *list, const char *const *want)
{
  if (list->len != 1)
    return false;
  const oci_strv *args = &list->items[0].args;
  size_t n = 0;
  while (want[n])
    n++;
  if (args->len != n)
    return false;
  for (size_t i = 0; i < n; i++)
    if (strcmp (args->items[i], want[i]) != 0)
      return false;
  return true;
}

/* Inbound ports: each one an --ingress of the hook, checked first. */
static void
test_ingress_annotation (void)
{
  oci_spec *spec = spec_from (
      "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
      "\"annotations\":{\"run.agentrun.ingress\":\"8080, 53/udp\"}}");
  cleanup_free char *msg = NULL;
  ar_agent_plan *plan = apply ("agent", spec, &msg);
  CHECK_STR (msg, NULL);
  static const char *const create[]
      = { "agentrun-egress", "create", "--mode",    "none",
          "--ingress",       "8080",   "--ingress", "53/udp",
          "--netns-owned",   NULL };
  CHECK (hook_args_are (&spec->hooks.create_runtime, create));
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
  spec
      = spec_from ("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
                   "\"annotations\":{\"run.agentrun.ingress\":\"8080/sctp\"}}");
  free (msg);
  msg = NULL;
  CHECK (apply ("agent", spec, &msg) == NULL);
  CHECK_STR (msg, "annotation run.agentrun.ingress: port `8080/sctp`: want "
                  "PORT, PORT/tcp or PORT/udp");
  oci_spec_free (spec);
}

/* A pod's container without a netns is a hostNetwork pod: refused, not
 * given one of its own; a plain bundle without one gets its own. */
static void
test_host_network_pod_refused (void)
{
  oci_spec *spec = spec_from (
      "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
      "\"annotations\":{\"io.kubernetes.cri.container-type\":\"sandbox\"}}");
  cleanup_free char *msg = NULL;
  CHECK (apply ("agent", spec, &msg) == NULL);
  CHECK_STR (msg, "the agent profile needs the pod's own network namespace "
                  "(hostNetwork: true): use RuntimeClass agentrun for "
                  "host-network pods");
  oci_spec_free (spec);
  spec = spec_from (minimal_spec);
  free (msg);
  msg = NULL;
  ar_agent_plan *plan = apply ("agent", spec, &msg);
  CHECK_STR (msg, NULL);
  CHECK (oci_spec_find_namespace (spec, OCI_NS_NETWORK) != NULL);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
}

/* A pod's container in the pod's netns, under the plan of its pod's
 * sandbox: the pod's filter serves it (no hook of its own) when it asks
 * for the pod's egress, in any order; any other egress is refused, by
 * annotation, with both values. */
static void
test_pod_container_joins_pod_filter (void)
{
  static const char *const json
      = "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
        "\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"]},"
        "\"linux\":{\"namespaces\":[{\"type\":\"network\",\"path\":"
        "\"/var/run/netns/cni-1\"}]},\"annotations\":{"
        "\"io.kubernetes.cri.container-type\":\"%s\","
        "\"io.kubernetes.cri.sandbox-id\":\"pod1\"%s}}";
  cleanup_free char *pod_json
      = xasprintf (json, "sandbox",
                   ",\"run.agentrun.egress.allow\":\"a.example,10.0.0.0/8\"");
  oci_spec *spec = spec_from (pod_json);
  cleanup_free char *msg = NULL;
  ar_agent_plan *pod = apply ("agent", spec, &msg);
  CHECK_STR (msg, NULL);
  CHECK (spec->hooks.create_runtime.len == 1);
  oci_spec_free (spec);
  if (!CHECK (pod))
    return;

  static const struct
  {
    const char *annotations;
    const char *error; /* NULL: joins the pod's filter */
  } cases[] = {
    { ",\"run.agentrun.egress.allow\":\"10.0.0.0/8,a.example\"", NULL },
    { ",\"run.agentrun.egress.allow\":\"a.example\"",
      "annotation run.agentrun.egress.allow: the container asks for `a.example`, its "
      "pod has `a.example,10.0.0.0/8`: a pod's containers share its network "
      "namespace and the pod's egress filter; set it on the pod "
      "(containerd's pod_annotations pass it to every container)" },
    { "",
      "annotation run.agentrun.egress: the container asks for `none`, its pod has "
      "`allowlist`: a pod's containers share its network namespace and "
      "the pod's egress filter; set it on the pod (containerd's "
      "pod_annotations pass it to every container)" },
    { ",\"run.agentrun.egress.allow\":\"a.example,10.0.0.0/8\","
      "\"run.agentrun.ingress\":\"8080\"",
      "annotation run.agentrun.ingress: the container asks for `8080`, its pod has ``: "
      "a pod's containers share its network namespace and the pod's egress "
      "filter; set it on the pod (containerd's pod_annotations pass it to "
      "every container)" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      cleanup_free char *ctr_json
          = xasprintf (json, "container", cases[i].annotations);
      spec = spec_from (ctr_json);
      cleanup_profile ar_profile *p = profile ("agent");
      ar_agent_plan *plan = NULL;
      cleanup_error ar_error_t *err = NULL;
      int r = ar_policy_apply (spec, p, pod, &plan, &err);
      CHECK_STR (r < 0 ? ar_error_text (err) : NULL, cases[i].error);
      CHECK_INT (spec->hooks.create_runtime.len, 0);
      CHECK_INT (spec->hooks.poststop.len, 0);
      ar_agent_plan_free (plan);
      oci_spec_free (spec);
    }
  /* Without its pod's plan (a sandbox under no plan, or not ours), the
   * container filters the namespace itself, as before. */
  cleanup_free char *alone = xasprintf (json, "container", "");
  spec = spec_from (alone);
  ar_agent_plan *plan = apply ("agent", spec, &msg);
  CHECK_STR (msg, NULL);
  CHECK_INT (spec->hooks.create_runtime.len, 1);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
  ar_agent_plan_free (pod);
}

/* What an engine gives by default is taken down to the profile's
 * quietly; what the spec adds beyond that is refused, by name. */
static void
test_added_capabilities_refused (void)
{
  static const char *const json
      = "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
        "\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"],\"capabilities\":"
        "{\"bounding\":[\"CAP_CHOWN\",\"CAP_NET_RAW\",\"CAP_MKNOD\"%s],"
        "\"effective\":[\"CAP_CHOWN\"%s]}}}";
  cleanup_free char *plain = xasprintf (json, "", "");
  oci_spec *spec = spec_from (plain);
  cleanup_free char *msg = NULL;
  ar_agent_plan *plan = apply ("agent", spec, &msg);
  CHECK_STR (msg, NULL);
  CHECK_INT (spec->process->capabilities->bounding.len, 1);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
  cleanup_free char *added = xasprintf (json, ",\"CAP_SYS_ADMIN\"",
                                        ",\"CAP_NET_ADMIN\",\"CAP_SYS_ADMIN\"");
  spec = spec_from (added);
  CHECK (apply ("agent", spec, &msg) == NULL);
  CHECK_STR (msg, "process.capabilities: the agent profile does not grant "
                  "CAP_SYS_ADMIN, CAP_NET_ADMIN (privileged or "
                  "capabilities.add): use the runtime agentrun, which "
                  "applies no profile");
  oci_spec_free (spec);
}

static void
test_egress_hooks (void)
{
  /* An allowlist: the hook before the process runs, and after it stops. */
  oci_spec *spec = spec_from (
      "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
      "\"annotations\":{\"run.agentrun.egress.allow\":\"pypi.org:443,10.0.0.0/8\"}}");
  cleanup_free char *msg = NULL;
  ar_agent_plan *plan = apply ("agent", spec, &msg);
  CHECK_STR (msg, NULL);
  static const char *const create[] = {
    "agentrun-egress", "create",  "--mode",     "allowlist",     "--allow",
    "pypi.org:443",    "--allow", "10.0.0.0/8", "--netns-owned", NULL
  };
  static const char *const delete[] = { "agentrun-egress", "delete", NULL };
  CHECK (hook_args_are (&spec->hooks.create_runtime, create));
  CHECK (hook_args_are (&spec->hooks.poststop, delete));
  if (CHECK (spec->hooks.create_runtime.len == 1))
    {
      CHECK_STR (spec->hooks.create_runtime.items[0].path,
                 AR_EGRESS_HOOK_DEFAULT);
      CHECK (spec->hooks.create_runtime.items[0].timeout.set);
    }
  CHECK (oci_spec_find_namespace (spec, OCI_NS_NETWORK) != NULL);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);

  /* none in a fresh netns is filtered too: an engine may wire it later
   * (Docker's prestart hook, ctr --cni, docker network connect). */
  spec = spec_from (minimal_spec);
  plan = apply ("agent", spec, &msg);
  static const char *const create_fresh_none[] = { "agentrun-egress", "create",
                                                   "--mode",          "none",
                                                   "--netns-owned",   NULL };
  CHECK (hook_args_are (&spec->hooks.create_runtime, create_fresh_none));
  CHECK (hook_args_are (&spec->hooks.poststop, delete));
  ar_agent_plan_free (plan);
  oci_spec_free (spec);

  /* none in a netns someone else wired (an engine's): filtered there; the
   * netns is not the container's own (no --netns-owned: its veth would
   * not go with the container). */
  spec = spec_from ("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
                    "\"linux\":{\"namespaces\":[{\"type\":\"network\","
                    "\"path\":\"/run/netns/pod\"}]}}");
  plan = apply ("agent", spec, &msg);
  static const char *const create_none[]
      = { "agentrun-egress", "create", "--mode", "none", NULL };
  CHECK (hook_args_are (&spec->hooks.create_runtime, create_none));
  ar_agent_plan_free (plan);
  oci_spec_free (spec);

  /* The runtime names the hook; a profile names the upstream and may let
   * annotations open egress. */
  write_profile (
      "egressy",
      "{\"extends\": \"agent\", \"network\": {"
      "\"upstream\": \"10.0.0.53:5353\", \"annotationsMayOpen\": true}}");
  cleanup_profile ar_profile *p = profile ("egressy");
  if (CHECK (p))
    {
      ar_profile_set_egress_hook (p, "/opt/agentrun/agentrun-egress");
      spec = spec_from (
          "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
          "\"annotations\":{\"run.agentrun.egress\":\"open\"},"
          "\"linux\":{\"namespaces\":[{\"type\":\"network\"}]}}");
      ar_error_t *err = NULL;
      CHECK (ar_policy_apply (spec, p, NULL, &plan, &err) == 0);
      static const char *const create_open[]
          = { "agentrun-egress", "create",         "--mode",        "open",
              "--upstream",      "10.0.0.53:5353", "--netns-owned", NULL };
      CHECK (hook_args_are (&spec->hooks.create_runtime, create_open));
      if (CHECK (spec->hooks.create_runtime.len == 1))
        CHECK_STR (spec->hooks.create_runtime.items[0].path,
                   "/opt/agentrun/agentrun-egress");
      ar_error_free (err);
      ar_agent_plan_free (plan);
      oci_spec_free (spec);
    }
  remove_profile ("egressy");

  /* Open with the host's network: nothing to filter, no hook. */
  write_profile (
      "open", "{\"extends\": \"agent\", \"network\": {\"egress\": \"open\"}}");
  spec = spec_from (minimal_spec);
  plan = apply ("open", spec, &msg);
  CHECK_INT (spec->hooks.create_runtime.len, 0);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
  remove_profile ("open");
}

static void
test_annotations_accepted (void)
{
  oci_spec *spec = spec_from (
      "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
      "\"annotations\":{\"org.example\":\"kept\","
      "\"run.agentrun.overlay.size\":\"256M\","
      "\"run.agentrun.overlay.inodes\":\"1000\","
      "\"run.agentrun.timeout\":\"10m\","
      "\"run.agentrun.egress.allow\":\"pypi.org:443, 10.0.0.0/8\","
      "\"run.agentrun.output\":\"/var/lib/agentrun/output/./job-1/\","
      "\"run.agentrun.output.maxBytes\":\"10M\","
      "\"run.agentrun.output.maxFiles\":\"5\","
      "\"run.agentrun.secret.GH_TOKEN\":\"/etc/agentrun/secrets/gh\","
      "\"run.agentrun.secret.npmrc\":\"/run/agentrun-secrets/c1/npmrc\","
      "\"run.agentrun.secrets.mainOnly\":\"true\"}}");
  cleanup_free char *msg = NULL;
  ar_agent_plan *plan = apply ("agent", spec, &msg);
  CHECK_STR (msg, NULL);
  if (CHECK (plan))
    {
      CHECK_INT (plan->overlay_size_bytes, 256ull << 20);
      CHECK_INT (plan->overlay_inodes, 1000);
      CHECK_INT (plan->wall_clock_seconds, 600);
      CHECK (plan->egress == AR_EGRESS_ALLOWLIST);
      CHECK_INT (plan->n_egress_allow, 2);
      CHECK_STR (plan->egress_allow[0], "pypi.org:443");
      CHECK_STR (plan->egress_allow[1], "10.0.0.0/8");
      CHECK (plan->egress_allow[2] == NULL);
      CHECK_STR (plan->output_host_dir, "/var/lib/agentrun/output/job-1");
      CHECK_INT (plan->output_max_bytes, 10ull << 20);
      CHECK_INT (plan->output_max_files, 5);
      CHECK_INT (plan->n_secrets, 2);
      CHECK_STR (plan->secrets[0].name, "GH_TOKEN");
      CHECK_STR (plan->secrets[0].host_path, "/etc/agentrun/secrets/gh");
      CHECK_STR (plan->secrets[1].host_path, "/run/agentrun-secrets/c1/npmrc");
      CHECK (plan->secrets_main_only);
    }
  ar_agent_plan_free (plan);
  oci_spec_free (spec);

  /* An explicit mode wins over the implied allowlist. */
  spec = spec_from ("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"r\"},"
                    "\"annotations\":{\"run.agentrun.egress\":\"none\","
                    "\"run.agentrun.egress.allow\":\"pypi.org\"}}");
  plan = apply ("agent", spec, &msg);
  CHECK (plan && plan->egress == AR_EGRESS_NONE);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
}

static void
test_annotations_refused (void)
{
  struct
  {
    const char *profile;
    const char *annotations;
    const char *want;
  } cases[] = {
    { "agent", "\"run.agentrun.foo\":\"1\"",
      "annotation run.agentrun.foo: unknown agentrun annotation" },
    { "agent", "\"run.agentrun.secret.\":\"/etc/agentrun/secrets/x\"",
      "annotation run.agentrun.secret.: unknown agentrun annotation" },
    { "strict", "\"run.agentrun.pids\":\"10\"",
      "annotation run.agentrun.pids: not allowed by profile \"strict\"" },
    { "strict",
      "\"run.agentrun.memory\":\"1G\",\"run.agentrun.egress\":\"open\"",
      "annotation run.agentrun.egress: not allowed by profile \"strict\"" },
    { "agent", "\"run.agentrun.memory\":\"lots\"",
      "annotation run.agentrun.memory: invalid value \"lots\" (want a size "
      "like \"512M\" or \"2G\")" },
    { "agent", "\"run.agentrun.cpus\":\"-1\"",
      "annotation run.agentrun.cpus: invalid value \"-1\" (want a number of "
      "cpus like \"2\" or \"0.5\")" },
    { "agent", "\"run.agentrun.pids\":\"0\"",
      "annotation run.agentrun.pids: invalid value \"0\" (want a positive "
      "integer)" },
    { "agent", "\"run.agentrun.memory\":\"0G\"",
      "annotation run.agentrun.memory: invalid value \"0G\" (want a size "
      "like \"512M\" or \"2G\")" },
    { "agent", "\"run.agentrun.egress\":\"open\"",
      "annotation run.agentrun.egress: \"open\" is not allowed by profile "
      "\"agent\" (network.annotationsMayOpen)" },
    { "agent", "\"run.agentrun.egress\":\"some\"",
      "annotation run.agentrun.egress: invalid value \"some\" (want none, "
      "allowlist, open or ask)" },
    { "agent", "\"run.agentrun.egress\":\"ask\"",
      "egress mode ask needs an approver (profile \"agent\": "
      "approver.socket, or sandbox --approver SOCKET)" },
    { "agent", "\"run.agentrun.programs.ask\":\"git push,curl\"",
      "programs.ask needs an approver (profile \"agent\": "
      "approver.socket, or sandbox --approver SOCKET)" },
    { "agent", "\"run.agentrun.programs.ask\":\"git\\npush\"",
      "annotation run.agentrun.programs.ask: rule \"git\\x0apush\": a ',' "
      "or a control character" },
    { "agent",
      "\"run.agentrun.programs.ask\":\"a b c d e f g h i j k l m n o p q\"",
      "annotation run.agentrun.programs.ask: rule \"a b c d e f g h i j k l m "
      "n o p q\": expected 1 to 16 words, a program and its leading arguments "
      "(\"git push\")" },
    { "agent", "\"run.agentrun.approver\":\"/run/a.sock\"",
      "annotation run.agentrun.approver: not allowed by profile "
      "\"agent\"" },
    { "agent", "\"run.agentrun.egress.allow\":\"ok.org,bad host\"",
      "annotation run.agentrun.egress.allow: entry `bad host`: byte 0x20 (an "
      "entry has letters, digits and . : / * [ ] - _)" },
    { "agent", "\"run.agentrun.egress.allow\":\"10.0.0.0/33\"",
      "annotation run.agentrun.egress.allow: entry `10.0.0.0/33`: prefix /33 "
      "is longer than the address's 32 bits" },
    { "agent", "\"run.agentrun.egress.allow\":\"pypi.org:99999\"",
      "annotation run.agentrun.egress.allow: entry `pypi.org:99999`: port "
      "`99999` is not a number from 1 to 65535" },
    { "agent", "\"run.agentrun.secrets.mainOnly\":\"yes\"",
      "annotation run.agentrun.secrets.mainOnly: invalid value \"yes\" (want "
      "true or false)" },
    { "agent", "\"run.agentrun.timeout\":\"1d\"",
      "annotation run.agentrun.timeout: invalid value \"1d\" (want a "
      "duration like \"90s\", \"15m\", \"2h\")" },
    { "agent", "\"run.agentrun.bad\\nkey\":\"1\"",
      "annotation \"run.agentrun.bad\\x0akey\": unknown agentrun "
      "annotation" },
    { "strict", "\"run.agentrun.overlay.size\":\"1G\"",
      "annotation run.agentrun.overlay.size: the overlay is off in profile "
      "\"strict\"" },
    { "ceiling", "\"run.agentrun.egress.allow\":\"pypi.org:443,evil.example\"",
      "annotation run.agentrun.egress.allow: entry `evil.example` is beyond "
      "what profile \"ceiling\" lets an annotation allow (network.allow and "
      "network.annotationsMayAllow)" },
    { "ceiling", "\"run.agentrun.egress.allow\":\"files.pythonhosted.org\"",
      "annotation run.agentrun.egress.allow: entry `files.pythonhosted.org` "
      "is beyond what profile \"ceiling\" lets an annotation allow "
      "(network.allow and network.annotationsMayAllow)" },
    { "ceiling", "\"run.agentrun.egress.allow\":\"10.0.0.0/7\"",
      "annotation run.agentrun.egress.allow: entry `10.0.0.0/7` is beyond "
      "what profile \"ceiling\" lets an annotation allow (network.allow and "
      "network.annotationsMayAllow)" },
    { "ceiling", "\"run.agentrun.egress.allow\":\"*.npmjs.org\"",
      "annotation run.agentrun.egress.allow: entry `*.npmjs.org` is beyond "
      "what profile \"ceiling\" lets an annotation allow (network.allow and "
      "network.annotationsMayAllow)" },
    { "ceiling", "\"run.agentrun.egress.allow\":\"pypi.org\"",
      "annotation run.agentrun.egress.allow: entry `pypi.org` is beyond what "
      "profile \"ceiling\" lets an annotation allow (network.allow and "
      "network.annotationsMayAllow)" },
  };
  /* What an annotation may open: the profile's own allow entries and
   * annotationsMayAllow, each with what lies inside it. */
  write_profile ("ceiling",
                 "{\"extends\": \"agent\", \"network\": {\"egress\": "
                 "\"allowlist\", \"allow\": [\"10.0.0.0/8\"], "
                 "\"annotationsMayAllow\": [\"pypi.org:443\", "
                 "\"*.registry.npmjs.org\", \"fd00::/8\"]}}");
  static const char *const within[] = {
    "pypi.org:443",
    "10.1.2.3",
    "10.128.0.0/9",
    "a.registry.npmjs.org",
    "*.registry.npmjs.org:443",
    "*.b.registry.npmjs.org",
    "[fd00::1]:443",
    "fd00:1::/32",
  };
  for (size_t i = 0; i < sizeof within / sizeof *within; i++)
    {
      cleanup_free char *annotations
          = xasprintf ("\"run.agentrun.egress.allow\":\"%s\"", within[i]);
      cleanup_free char *msg = annotation_error ("ceiling", annotations);
      CHECK_STR (msg, NULL);
    }
  write_profile ("strict", "{\"limits\": {\"memory\": \"1G\"},"
                           " \"annotations\": [\"memory\", \"overlay.*\"]}");
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      cleanup_free char *msg
          = annotation_error (cases[i].profile, cases[i].annotations);
      /* Without root (a user namespace of its own) the gate is refused
       * before its approver is asked for. */
      const char *want = cases[i].want;
      if (ar_userns_unprivileged ()
          && strncmp (want, "programs.ask needs an approver", 30) == 0)
        want = "programs.ask needs root (fanotify's permission events)";
      CHECK_STR (msg, want);
    }
  remove_profile ("strict");
}

/* The check sandbox runs on its flags: the handler's own error, without
 * the annotation's name; nothing else applied. */
static void
test_check_annotation (void)
{
  write_profile ("bare", "{\"description\": \"no overlay\"}");
  struct
  {
    const char *profile, *suffix, *value, *want;
    bool trust;
  } cases[] = {
    { "agent", "timeout", "x",
      "invalid value \"x\" (want a duration like \"90s\", \"15m\", \"2h\")",
      true },
    { "agent", "timeout", "90s", NULL, true },
    { "agent", "overlay.size", "64m", NULL, true },
    { "agent", "overlay.size", "12q",
      "invalid value \"12q\" (want a size like \"512M\" or \"2G\")", true },
    { "agent", "workspace.readOnly", "true", NULL, true },
    { "agent", "workspace.readOnly", "yes",
      "invalid value \"yes\" (want true or false)", true },
    { "agent", "workspace.readOnly", "true", "not allowed by profile \"agent\"",
      false },
    { "agent", "audit", "log.jsonl", "\"log.jsonl\" is not an absolute path",
      true },
    { "agent", "nonsense", "1", "unknown agentrun annotation nonsense", true },
    { "oci", "timeout", "90s", "profile \"oci\" applies no agent policy",
      true },
    { "bare", "workspace.readOnly", "true",
      "the overlay is off in profile \"bare\"", true },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      ar_profile *profile = NULL;
      ar_error_t *err = NULL;
      if (!CHECK (ar_profile_load (cases[i].profile, &profile, &err) == 0))
        continue;
      if (cases[i].trust)
        ar_profile_trust_caller (profile);
      int r = ar_policy_check_annotation (profile, cases[i].suffix,
                                          cases[i].value, &err);
      CHECK (r == (cases[i].want ? -1 : 0));
      CHECK_STR (err ? ar_error_text (err) : NULL, cases[i].want);
      ar_error_free (err);
      ar_profile_free (profile);
    }
  const char *overlay[][2]
      = { { "agent", "1" }, { "oci", "0" }, { "bare", "0" } };
  for (size_t i = 0; i < 3; i++)
    {
      ar_profile *profile = NULL;
      ar_error_t *err = NULL;
      if (CHECK (ar_profile_load (overlay[i][0], &profile, &err) == 0))
        CHECK (ar_profile_has_overlay (profile) == (overlay[i][1][0] == '1'));
      ar_profile_free (profile);
    }
  remove_profile ("bare");
}

static void
test_host_paths (void)
{
  struct
  {
    const char *annotations;
    const char *want;
  } cases[] = {
    { "\"run.agentrun.output\":\"/tmp/out\"",
      "annotation run.agentrun.output: \"/tmp/out\" is not under an allowed "
      "host directory (/var/lib/agentrun/output)" },
    { "\"run.agentrun.output\":\"/var/lib/agentrun/output-evil\"",
      "annotation run.agentrun.output: \"/var/lib/agentrun/output-evil\" is "
      "not under an allowed host directory (/var/lib/agentrun/output)" },
    { "\"run.agentrun.output\":\"/var/lib/agentrun/output/../../../etc\"",
      "annotation run.agentrun.output: \"/var/lib/agentrun/output/../../../"
      "etc\": \"..\" is not allowed in host paths" },
    { "\"run.agentrun.output\":\"/var/lib/agentrun/output/a/..\"",
      "annotation run.agentrun.output: \"/var/lib/agentrun/output/a/..\": "
      "\"..\" is not allowed in host paths" },
    { "\"run.agentrun.output\":\"var/lib/agentrun/output/x\"",
      "annotation run.agentrun.output: \"var/lib/agentrun/output/x\" is not "
      "an absolute path" },
    { "\"run.agentrun.secret.key\":\"/etc/shadow\"",
      "annotation run.agentrun.secret.key: \"/etc/shadow\" is not under an "
      "allowed host directory (/etc/agentrun/secrets, "
      "/run/agentrun-secrets)" },
    /* A secret is a file below the directory, never the directory. */
    { "\"run.agentrun.secret.key\":\"/etc/agentrun/secrets/\"",
      "annotation run.agentrun.secret.key: \"/etc/agentrun/secrets/\" is not "
      "under an allowed host directory (/etc/agentrun/secrets, "
      "/run/agentrun-secrets)" },
    { "\"run.agentrun.secret.a/b\":\"/etc/agentrun/secrets/x\"",
      "annotation run.agentrun.secret.a/b: invalid secret name (want "
      "[A-Za-z0-9._-]+)" },
    { "\"run.agentrun.secret..\":\"/etc/agentrun/secrets/x\"",
      "annotation run.agentrun.secret..: invalid secret name (want "
      "[A-Za-z0-9._-]+)" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      cleanup_free char *msg = annotation_error ("agent", cases[i].annotations);
      CHECK_STR (msg, cases[i].want);
    }

  /* The export directory itself is fine for output. */
  cleanup_free char *ok = annotation_error (
      "agent", "\"run.agentrun.output\":\"/var/lib/agentrun/output\"");
  CHECK_STR (ok, NULL);

  write_profile ("nodirs", "{\"extends\": \"agent\","
                           " \"output\": {\"allowedHostDirs\": []}}");
  cleanup_free char *none
      = annotation_error ("nodirs", "\"run.agentrun.output\":\"/srv/x\"");
  CHECK_STR (none, "annotation run.agentrun.output: \"/srv/x\" is not under "
                   "an allowed host directory (the profile allows none)");
  remove_profile ("nodirs");
}

/* ---- default seccomp filter ------------------------------------------- */

static const oci_syscall *
rule_for (const oci_seccomp *s, const char *name)
{
  for (size_t i = 0; i < s->n_syscalls; i++)
    if (strv_has (&s->syscalls[i].names, name))
      return &s->syscalls[i];
  return NULL;
}

static void
test_default_seccomp_profile (void)
{
  oci_seccomp *s = ar_seccomp_default_new ();
  ar_error_t *err = NULL;
  CHECK (ar_seccomp_validate (s, &err) == 0);
  if (err)
    fprintf (stderr, "  %s\n", ar_error_text (err));
  ar_error_free (err);
  err = NULL;

  CHECK_STR (s->default_action, "SCMP_ACT_ERRNO");
  CHECK (s->default_errno_ret.set && s->default_errno_ret.value == EPERM);
  static const char *const denied[] = {
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "swapon",
    "swapoff",
    "reboot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "bpf",
    "perf_event_open",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "open_by_handle_at",
    "name_to_handle_at",
    "keyctl",
    "add_key",
    "request_key",
    "unshare",
    "setns",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "acct",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "iopl",
    "ioperm",
    "quotactl",
    "lookup_dcookie",
    "syslog",
    "vhangup",
    "fanotify_init",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "mount_setattr",
    "pidfd_getfd",
    "create_module",
    "get_kernel_syms",
    "nfsservctl",
    "uselib",
    "ustat",
    "sysfs",
    "_sysctl",
    "sethostname",
    "modify_ldt",
  };
  for (size_t i = 0; i < sizeof denied / sizeof *denied; i++)
    if (!CHECK (rule_for (s, denied[i]) == NULL))
      fprintf (stderr, "  %s is allowed\n", denied[i]);

  const oci_syscall *clone3 = rule_for (s, "clone3");
  CHECK (clone3 && strcmp (clone3->action, "SCMP_ACT_ERRNO") == 0
         && clone3->errno_ret.value == ENOSYS);
  const oci_syscall *clone = rule_for (s, "clone");
  CHECK (clone && clone->n_args == 1
         && strcmp (clone->args[0].op, "SCMP_CMP_MASKED_EQ") == 0
         && clone->args[0].value == 0x7E020000u
         && clone->args[0].value_two == 0);
  CHECK (rule_for (s, "read") && rule_for (s, "execve"));
  /* The native architecture only: no 32-bit ABI is listed. */
  CHECK_INT (s->architectures.len, 0);

  /* Through the spec emitter and parser and back, unchanged. */
  oci_spec *spec = spec_from ("{\"ociVersion\":\"1.2.0\"}");
  spec->linux_cfg = xcalloc (1, sizeof *spec->linux_cfg);
  spec->linux_cfg->seccomp = s;
  cleanup_free char *json = oci_spec_to_json (spec, false);
  oci_spec *again = spec_from (json);
  cleanup_free char *json_again = oci_spec_to_json (again, false);
  CHECK_STR (json_again, json);
  CHECK (strstr (json, "\"defaultErrnoRet\":1") != NULL);
  oci_spec_free (again);
  oci_spec_free (spec);
}

/* In a child: load the default filter and report, one byte per probe,
 * whether each call was refused with the errno we expect. */
static int
probe_errno (long r)
{
  return r < 0 ? errno : 0;
}

static void
run_filter_probes (const ar_seccomp_program *prog, int report_fd)
{
  ar_error_t *err = NULL;
  int notify_fd;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
      || ar_seccomp_load_program (prog, &notify_fd, &err) < 0)
    _exit (3);
  int null_fd = open ("/dev/null", O_RDONLY);
  unsigned char results[] = {
    /* Targets that fail harmlessly should a call get through. */
    (unsigned char) probe_errno (
        mount ("none", "/nonexistent-agentrun", "tmpfs", 0, NULL)),
    (unsigned char) probe_errno (unshare (CLONE_NEWUSER)),
    (unsigned char) probe_errno (
        syscall (SYS_ptrace, 0 /* TRACEME */, 0, 0, 0)),
    (unsigned char) probe_errno (syscall (SYS_clone3_nr, NULL, 0)),
    /* CLONE_THREAD without CLONE_SIGHAND: EINVAL were it allowed. */
    (unsigned char) probe_errno (
        syscall (SYS_clone, CLONE_NEWNET | CLONE_THREAD, 0, 0, 0, 0)),
    (unsigned char) probe_errno (
        syscall (SYS_ioctl, null_fd, 0x100005412ul, 0)),
    (unsigned char) probe_errno (syscall (SYS_ioctl, null_fd, 0x5412ul, 0)),
    (unsigned char) probe_errno (syscall (SYS_ioctl, null_fd, TCGETS, 0)),
    (unsigned char) probe_errno (personality (0xffffffff)),
    (unsigned char) probe_errno (personality (PER_BSD)),
    (unsigned char) probe_errno (getpid ()),
  };
  pid_t child = fork (); /* clone without namespace flags */
  if (child == 0)
    _exit (0);
  int status = 0;
  bool fork_ok = child > 0 && waitpid (child, &status, 0) == child
                 && WIFEXITED (status) && WEXITSTATUS (status) == 0;
  unsigned char fork_result = fork_ok ? 0 : 1;
  if (write (report_fd, results, sizeof results) != (ssize_t) sizeof results
      || write (report_fd, &fork_result, 1) != 1)
    _exit (4);
  _exit (0);
}

static void
test_default_seccomp_blocks (void)
{
  oci_seccomp *s = ar_seccomp_default_new ();
  ar_seccomp_program *prog = NULL;
  ar_error_t *err = NULL;
  int r = ar_seccomp_compile (s, NULL, &prog, &err);
  ar_seccomp_free (s);
  if (!CHECK (r == 0))
    {
      fprintf (stderr, "  %s\n", ar_error_text (err));
      ar_error_free (err);
      return;
    }
  int fds[2];
  if (pipe (fds) < 0)
    abort ();
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (fds[0]);
      run_filter_probes (prog, fds[1]);
    }
  close (fds[1]);
  unsigned char got[12] = { 0 };
  ssize_t n = ar_read_all (fds[0], got, sizeof got);
  close (fds[0]);
  int status = 0;
  waitpid (pid, &status, 0);
  ar_seccomp_program_free (prog);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 3)
    {
      printf ("# seccomp cannot be loaded here: filter probes skipped\n");
      return;
    }
  if (!CHECK_INT (n, sizeof got))
    return;
  CHECK_INT (got[0], EPERM);  /* mount */
  CHECK_INT (got[1], EPERM);  /* unshare */
  CHECK_INT (got[2], EPERM);  /* ptrace */
  CHECK_INT (got[3], ENOSYS); /* clone3: libc falls back to clone */
  CHECK_INT (got[4], EPERM);  /* clone with a namespace flag */
  CHECK_INT (got[5], EPERM);  /* TIOCSTI with a high bit set */
  CHECK_INT (got[6], EPERM);  /* TIOCSTI */
  CHECK_INT (got[7], ENOTTY); /* other ioctls reach the kernel */
  CHECK_INT (got[8], 0);      /* personality query */
  CHECK_INT (got[9], EPERM);  /* personality change */
  CHECK_INT (got[10], 0);     /* getpid */
  CHECK_INT (got[11], 0);     /* fork */
}

/* ---- plan ------------------------------------------------------------- */

static void
test_plan_round_trip (void)
{
  char state[] = "/tmp/agentrun-plan-XXXXXX";
  if (!CHECK (mkdtemp (state)))
    return;
  int dirfd = open (state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  ar_agent_plan *missing = (ar_agent_plan *) 1;
  ar_error_t *err = NULL;
  CHECK (ar_agent_plan_load (dirfd, &missing, &err) == 0 && missing == NULL);

  write_profile ("audited",
                 "{\"extends\": \"agent\","
                 " \"audit\": {\"path\": \"/var/log/agentrun.log\"}}");
  oci_spec *spec = spec_from (
      "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"r\"},"
      "\"annotations\":{"
      "\"run.agentrun.secret.GH_TOKEN\":\"/etc/agentrun/secrets/gh\","
      "\"run.agentrun.output\":\"/var/lib/agentrun/output/j\","
      "\"run.agentrun.egress.allow\":\"*.npmjs.org\","
      "\"run.agentrun.ingress\":\"8080,53/udp\"}}");
  cleanup_free char *msg = NULL;
  ar_agent_plan *plan = apply ("audited", spec, &msg);
  CHECK_STR (msg, NULL);
  remove_profile ("audited");
  if (!CHECK (plan))
    return;
  plan->workspace_read_only = true;
  CHECK (ar_agent_plan_save (dirfd, plan, &err) == 0);

  struct stat st;
  CHECK (fstatat (dirfd, AR_AGENT_PLAN_FILE, &st, 0) == 0
         && (st.st_mode & 0777) == 0600);

  ar_agent_plan *loaded = NULL;
  CHECK (ar_agent_plan_load (dirfd, &loaded, &err) == 0);
  if (err)
    fprintf (stderr, "  %s\n", ar_error_text (err));
  if (CHECK (loaded))
    {
      CHECK_STR (loaded->profile, "audited");
      CHECK (loaded->overlay == plan->overlay);
      CHECK_INT (loaded->overlay_size_bytes, plan->overlay_size_bytes);
      CHECK_INT (loaded->overlay_inodes, plan->overlay_inodes);
      CHECK (loaded->workspace_read_only);
      CHECK_INT (loaded->n_secrets, 1);
      CHECK_STR (loaded->secrets[0].name, "GH_TOKEN");
      CHECK_STR (loaded->secrets[0].host_path, "/etc/agentrun/secrets/gh");
      CHECK_STR (loaded->secrets_path, "/run/secrets");
      CHECK (loaded->secrets_main_only == plan->secrets_main_only);
      CHECK_STR (loaded->output_path, "/output");
      CHECK_STR (loaded->output_host_dir, "/var/lib/agentrun/output/j");
      CHECK_INT (loaded->output_max_bytes, plan->output_max_bytes);
      CHECK_INT (loaded->output_max_files, plan->output_max_files);
      CHECK_STR (loaded->audit_path, "/var/log/agentrun.log");
      CHECK_INT (loaded->wall_clock_seconds, 3600);
      CHECK (loaded->egress == AR_EGRESS_ALLOWLIST);
      CHECK_INT (loaded->n_egress_allow, 1);
      CHECK_STR (loaded->egress_allow[0], "*.npmjs.org");
      CHECK (loaded->egress_allow[1] == NULL);
      /* A pod's containers compare theirs with it. */
      CHECK_INT (loaded->ingress.len, 2);
      if (loaded->ingress.len == 2)
        CHECK_STR (loaded->ingress.items[1], "53/udp");
    }
  ar_agent_plan_free (loaded);

  /* A plan from a newer agentrun is refused by version, not misread. */
  const char *future = "{\"version\": 2, \"profile\": \"agent\"}";
  ar_write_file_atomic_at (dirfd, AR_AGENT_PLAN_FILE, future, strlen (future),
                           0600, &err);
  loaded = NULL;
  CHECK (ar_agent_plan_load (dirfd, &loaded, &err) < 0);
  CHECK_STR (err ? ar_error_text (err) : NULL,
             "agent.json: .version: unsupported version 2 (this agentrun "
             "reads 1)");
  ar_error_free (err);

  ar_agent_plan_free (plan);
  oci_spec_free (spec);
  close (dirfd);
  nftw (state, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* ---- hidden host paths -------------------------------------------------- */

static const char *
hidden_reason (const ar_agent_plan *plan, const char *path)
{
  for (size_t i = 0; i < plan->hide.len; i++)
    if (strcmp (plan->hide.items[i].key, path) == 0)
      return plan->hide.items[i].value;
  return NULL;
}

/* Only a root that is the host's gets the list; every secret's source is
 * on it; unhide takes entries out (and keeps other paths for the host
 * side); a profile file adds and removes entries key by key. */
static void
test_hide_host_paths (void)
{
  static const char *const host_root_spec
      = "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"/\"},"
        "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
        "\"annotations\":{\"run.agentrun.secret.tok\":\"/etc/agentrun/secrets/tok\","
        "\"run.agentrun.hide\":\"/srv/keys, /opt//creds/\"}}";
  char *msg = NULL;
  oci_spec *spec = spec_from (host_root_spec);
  ar_agent_plan *plan = apply ("agent", spec, &msg);
  CHECK (plan != NULL && msg == NULL);
  if (plan)
    {
      CHECK_STR (hidden_reason (plan, "/etc/shadow"), "password hashes");
      CHECK_STR (hidden_reason (plan, "~/.ssh"), "SSH keys and agent config");
      CHECK_STR (hidden_reason (plan, "/etc/agentrun/secrets/tok"),
                 "source of secret tok");
      CHECK (hidden_reason (plan, "/srv/keys") != NULL);
      CHECK (hidden_reason (plan, "/opt/creds") != NULL);
    }
  ar_agent_plan_free (plan);
  oci_spec_free (spec);

  /* Another rootfs: nothing to hide. */
  spec = spec_from (minimal_spec);
  plan = apply ("agent", spec, &msg);
  CHECK (plan != NULL && plan->hide.len == 0);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);

  /* unhide is the caller's: a spec's author may not ask for it. */
  cleanup_free char *refused
      = annotation_error ("agent", "\"run.agentrun.unhide\":\"/etc/shadow\"");
  CHECK_STR (
      refused,
      "annotation run.agentrun.unhide: not allowed by profile \"agent\"");
  cleanup_free char *bad
      = annotation_error ("agent", "\"run.agentrun.hide\":\"etc\"");
  CHECK (bad
         && strstr (bad, "annotation run.agentrun.hide: invalid value \"etc\"")
                == bad);

  write_profile ("hider",
                 "{\"extends\": \"agent\", \"hideHostPaths\": "
                 "{\"/etc/shadow\": false, \"~/.config//x/\": \"x tokens\"}}");
  cleanup_profile ar_profile *p = profile ("hider");
  CHECK (p != NULL);
  ar_profile_trust_caller (p);
  spec = spec_from (
      "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"/\"},"
      "\"annotations\":{\"run.agentrun.unhide\":\"/root,/home/u\"}}");
  ar_error_t *err = NULL;
  plan = NULL;
  CHECK (p && ar_policy_apply (spec, p, NULL, &plan, &err) == 0);
  if (plan)
    {
      CHECK (hidden_reason (plan, "/etc/shadow") == NULL);
      CHECK (hidden_reason (plan, "/root") == NULL);
      CHECK_STR (hidden_reason (plan, "~/.config/x"), "x tokens");
      CHECK (plan->unhide.len == 1
             && strcmp (plan->unhide.items[0], "/home/u") == 0);
    }
  ar_error_free (err);
  ar_agent_plan_free (plan);
  oci_spec_free (spec);
  remove_profile ("hider");
  write_profile ("bad", "{\"hideHostPaths\": {\"/a/../b\": \"x\"}}");
  cleanup_free char *perr = profile_error ("bad");
  CHECK (
      perr
      && strstr (perr, ".hideHostPaths[\"/a/../b\"]: expected an absolute path")
             != NULL);
  remove_profile ("bad");
}

int
main (void)
{
  strcpy (config_dir, "/tmp/agentrun-config-XXXXXX");
  if (mkdtemp (config_dir) == NULL)
    {
      perror ("mkdtemp");
      return 2;
    }
  cleanup_free char *profiles = xasprintf ("%s/profiles", config_dir);
  mkdir (profiles, 0755);
  setenv (AR_AGENT_CONFIG_DIR_ENV, config_dir, 1);

  RUN (test_value_parsers);
  RUN (test_confine_exec);
  RUN (test_pod_sandbox_has_no_timeout);
  RUN (test_default_profile_selection);
  RUN (test_profile_errors);
  RUN (test_profile_extends);
  RUN (test_oci_profile_changes_nothing);
  RUN (test_agent_profile_defaults);
  RUN (test_capabilities_never_widened);
  RUN (test_limits_only_tighten);
  RUN (test_profile_rlimits);
  RUN (test_seccomp_modes);
  RUN (test_network_namespace);
  RUN (test_mount_namespace);
  RUN (test_egress_hooks);
  RUN (test_ingress_annotation);
  RUN (test_host_network_pod_refused);
  RUN (test_pod_container_joins_pod_filter);
  RUN (test_added_capabilities_refused);
  RUN (test_annotations_accepted);
  RUN (test_annotations_refused);
  RUN (test_check_annotation);
  RUN (test_host_paths);
  RUN (test_default_seccomp_profile);
  RUN (test_default_seccomp_blocks);
  RUN (test_plan_round_trip);
  RUN (test_hide_host_paths);

  nftw (config_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
  return unit_finish ();
}
