/* SPDX-License-Identifier: Apache-2.0 */
/* ar_policy_apply: profile + the container's run.agentrun.* annotations →
 * a rewritten spec and a plan for the host side. Pure: no syscalls, no
 * files; the profile is already loaded.
 *
 * Rules that keep it safe to run on any spec:
 *  - everything is checked before anything is changed, so a refused
 *    annotation leaves the spec as it was;
 *  - limits only tighten: a stricter value already in the spec stays;
 *  - capabilities only shrink: never more than the spec asked for;
 *  - host paths from annotations must lie under a directory the profile
 *    allows, judged lexically with ".." refused outright (symlinks on the
 *    host are the export code's business, at the time it opens them). */
#include "config.h"
#include "policy_internal.h"
#include "pod.h"
#include "seccomp_default.h"
#include "../../oci/json.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"
#include "../util/path.h"
#include "../util/userns.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* cgroup cpu bandwidth period that quotas are expressed against, and the
 * smallest quota the kernel takes. */
#define CPU_PERIOD_US 100000
#define CPU_QUOTA_MIN_US 1000

/* Seconds the egress hook may take (veth, nftables, the resolver). */
#define AR_EGRESS_HOOK_TIMEOUT 10

/* The limits that go into linux.resources, after annotations. */
typedef struct
{
  uint64_t memory_bytes;
  int64_t pids;
  uint64_t millicpus;
  bool egress_mode_annotated;
  bool approver_annotated;
  bool egress_allow_annotated;
} policy_limits;

/* ------------------------------------------------------------------ */
/* The plan, as the profile alone describes it.                        */

static char *
dup_or_null (const char *s)
{
  return s ? xstrdup (s) : NULL;
}

static void
add_secret (ar_agent_plan *plan, const char *name, const char *host_path)
{
  for (size_t i = 0; i < plan->n_secrets; i++)
    if (strcmp (plan->secrets[i].name, name) == 0)
      {
        free (plan->secrets[i].host_path);
        plan->secrets[i].host_path = xstrdup (host_path);
        return;
      }
  plan->secrets
      = xrealloc (plan->secrets, (plan->n_secrets + 1) * sizeof *plan->secrets);
  plan->secrets[plan->n_secrets++]
      = (ar_secret){ xstrdup (name), xstrdup (host_path) };
}

static void
set_egress_allow (ar_agent_plan *plan, char **entries, size_t n)
{
  for (size_t i = 0; i < plan->n_egress_allow; i++)
    free (plan->egress_allow[i]);
  free (plan->egress_allow);
  plan->egress_allow = entries;
  plan->n_egress_allow = n;
}

static void
strv_push (oci_strv *v, const char *item)
{
  v->items = xrealloc (v->items, (v->len + 2) * sizeof *v->items);
  v->items[v->len++] = xstrdup (item);
  v->items[v->len] = NULL;
}

static char **
strv_copy (const oci_strv *v)
{
  char **items = xcalloc (v->len + 1, sizeof *items);
  for (size_t i = 0; i < v->len; i++)
    items[i] = xstrdup (v->items[i]);
  return items;
}

static ar_agent_plan *
plan_from_profile (const ar_profile *profile)
{
  ar_agent_plan *plan = xcalloc (1, sizeof *plan);
  plan->profile = xstrdup (profile->name);
  plan->overlay = profile->overlay;
  plan->overlay_size_bytes = profile->overlay_size_bytes;
  plan->overlay_inodes = profile->overlay_inodes;
  if (profile->secrets)
    {
      plan->secrets_path = xstrdup (profile->secrets_path);
      plan->secrets_main_only = profile->secrets_main_only;
      plan->secrets_ask = profile->secrets_ask;
      for (size_t i = 0; i < profile->secret_files.len; i++)
        add_secret (plan, profile->secret_files.items[i].key,
                    profile->secret_files.items[i].value);
    }
  for (size_t i = 0; i < profile->programs_ask.len; i++)
    ar_strv_append_unique (&plan->programs_ask, profile->programs_ask.items[i]);
  if (profile->output)
    {
      plan->output_path = xstrdup (profile->output_path);
      plan->output_max_bytes = profile->output_max_bytes;
      plan->output_max_files = profile->output_max_files;
    }
  if (profile->userns)
    {
      plan->userns = true;
      plan->userns_user = xstrdup (profile->userns_user);
      plan->userns_size = profile->userns_size;
      for (size_t i = 0; i < profile->userns_limits.len; i++)
        ar_map_set (&plan->userns_limits, profile->userns_limits.items[i].key,
                    profile->userns_limits.items[i].value);
    }
  plan->audit_path = dup_or_null (profile->audit_path);
  plan->wall_clock_seconds = profile->wall_clock_seconds;
  plan->egress = profile->egress;
  plan->approver = dup_or_null (profile->approver);
  plan->ask_timeout = profile->ask_timeout;
  set_egress_allow (plan, strv_copy (&profile->egress_allow),
                    profile->egress_allow.len);
  return plan;
}

/* ------------------------------------------------------------------ */
/* Annotations.                                                        */

typedef struct
{
  const ar_profile *profile;
  ar_agent_plan *plan;
  policy_limits *limits;
  const char *suffix; /* the key after "run.agentrun." */
  oci_strv hide;      /* run.agentrun.hide: added to the profile's list */
  oci_strv unhide;    /* run.agentrun.unhide: taken out of it */
} annotation_target;

typedef int (*annotation_handler) (annotation_target *t, const char *value,
                                   ar_error_t **err);

static int
invalid_value (const char *value, const char *what, ar_error_t **err)
{
  cleanup_free char *quoted = oj_quote (value, strlen (value));
  return ar_error_set (err, 0, "invalid value %s (want %s)", quoted, what);
}

static int
feature_off (annotation_target *t, const char *feature, ar_error_t **err)
{
  return ar_error_set (err, 0, "%s is off in profile \"%s\"", feature,
                       t->profile->name);
}

static int
set_size (const char *value, uint64_t *out, ar_error_t **err)
{
  if (!ar_parse_size (value, out))
    return invalid_value (value, "a size like \"512M\" or \"2G\"", err);
  return 0;
}

static int
set_unsigned_count (const char *value, uint64_t *out, ar_error_t **err)
{
  int64_t n;
  if (!ar_parse_count (value, &n))
    return invalid_value (value, "a non-negative integer", err);
  *out = (uint64_t) n;
  return 0;
}

static int
on_overlay_size (annotation_target *t, const char *value, ar_error_t **err)
{
  if (!t->plan->overlay)
    return feature_off (t, "the overlay", err);
  return set_size (value, &t->plan->overlay_size_bytes, err);
}

static int
on_overlay_inodes (annotation_target *t, const char *value, ar_error_t **err)
{
  if (!t->plan->overlay)
    return feature_off (t, "the overlay", err);
  return set_unsigned_count (value, &t->plan->overlay_inodes, err);
}

static int
on_secrets_main_only (annotation_target *t, const char *value, ar_error_t **err)
{
  if (t->plan->secrets_path == NULL)
    return feature_off (t, "secrets", err);
  if (strcmp (value, "true") != 0 && strcmp (value, "false") != 0)
    return invalid_value (value, "true or false", err);
  t->plan->secrets_main_only = strcmp (value, "true") == 0;
  return 0;
}

/* Only ever turned on: a container's author may ask for more questions,
 * never for fewer than its profile's. */
static int
on_secrets_ask (annotation_target *t, const char *value, ar_error_t **err)
{
  if (t->plan->secrets_path == NULL)
    return feature_off (t, "secrets", err);
  if (strcmp (value, "true") != 0)
    return invalid_value (value, "true (a profile's ask cannot be turned off)",
                          err);
  t->plan->secrets_ask = true;
  return 0;
}

/* "a, b, c" → the dirs as one string for an error message. */
static char *
join_dirs (const oci_strv *dirs)
{
  if (dirs->len == 0)
    return xstrdup ("the profile allows none");
  size_t size = 1;
  for (size_t i = 0; i < dirs->len; i++)
    size += strlen (dirs->items[i]) + 2;
  char *out = xmalloc (size);
  char *p = out;
  for (size_t i = 0; i < dirs->len; i++)
    p = stpcpy (stpcpy (p, i ? ", " : ""), dirs->items[i]);
  return out;
}

/* A host path from an annotation, accepted only inside one of `allowed`
 * (equal to it too when `dir_itself_ok`). *clean is the normalised path. */
static int
check_host_path (const char *value, const oci_strv *allowed, bool dir_itself_ok,
                 bool trusted, char **clean, ar_error_t **err)
{
  cleanup_free char *quoted = oj_quote (value, strlen (value));
  if (value[0] != '/')
    return ar_error_set (err, 0, "%s is not an absolute path", quoted);
  if (ar_path_has_dotdot (value))
    return ar_error_set (err, 0, "%s: \"..\" is not allowed in host paths",
                         quoted);
  cleanup_free char *path = ar_path_clean (value);
  if (trusted)
    {
      *clean = steal_pointer (&path);
      return 0;
    }
  for (size_t i = 0; i < allowed->len; i++)
    if (ar_path_is_within (path, allowed->items[i])
        && (dir_itself_ok || strcmp (path, allowed->items[i]) != 0))
      {
        *clean = steal_pointer (&path);
        return 0;
      }
  cleanup_free char *dirs = join_dirs (allowed);
  return ar_error_set (err, 0, "%s is not under an allowed host directory (%s)",
                       quoted, dirs);
}

static int
on_secret (annotation_target *t, const char *value, ar_error_t **err)
{
  const char *name = t->suffix + strlen ("secret.");
  if (t->plan->secrets_path == NULL)
    return feature_off (t, "secrets", err);
  if (!ar_secret_name_valid (name))
    return ar_error_set (err, 0, "invalid secret name (want [A-Za-z0-9._-]+)");
  cleanup_free char *host_path = NULL;
  if (check_host_path (value, &t->profile->secrets_allowed_host_dirs, false,
                       t->profile->trust_caller, &host_path, err)
      < 0)
    return -1;
  add_secret (t->plan, name, host_path);
  return 0;
}

static int
on_output (annotation_target *t, const char *value, ar_error_t **err)
{
  if (t->plan->output_path == NULL)
    return feature_off (t, "output", err);
  cleanup_free char *host_dir = NULL;
  if (check_host_path (value, &t->profile->output_allowed_host_dirs, true,
                       t->profile->trust_caller, &host_dir, err)
      < 0)
    return -1;
  free (t->plan->output_host_dir);
  t->plan->output_host_dir = steal_pointer (&host_dir);
  return 0;
}

static int
on_output_max_bytes (annotation_target *t, const char *value, ar_error_t **err)
{
  if (t->plan->output_path == NULL)
    return feature_off (t, "output", err);
  return set_size (value, &t->plan->output_max_bytes, err);
}

static int
on_output_max_files (annotation_target *t, const char *value, ar_error_t **err)
{
  if (t->plan->output_path == NULL)
    return feature_off (t, "output", err);
  return set_unsigned_count (value, &t->plan->output_max_files, err);
}

/* Limits from annotations must be positive: 0 would mean "no limit",
 * and lifting a limit is the profile's decision, not the container's. */

static int
on_timeout (annotation_target *t, const char *value, ar_error_t **err)
{
  int64_t seconds;
  if (!ar_parse_duration (value, &seconds) || seconds == 0)
    return invalid_value (value, "a duration like \"90s\", \"15m\", \"2h\"",
                          err);
  t->plan->wall_clock_seconds = seconds;
  return 0;
}

static int
on_memory (annotation_target *t, const char *value, ar_error_t **err)
{
  uint64_t bytes;
  if (!ar_parse_size (value, &bytes) || bytes == 0)
    return invalid_value (value, "a size like \"512M\" or \"2G\"", err);
  t->limits->memory_bytes = bytes;
  return 0;
}

static int
on_pids (annotation_target *t, const char *value, ar_error_t **err)
{
  int64_t pids;
  if (!ar_parse_count (value, &pids) || pids == 0)
    return invalid_value (value, "a positive integer", err);
  t->limits->pids = pids;
  return 0;
}

static int
on_cpus (annotation_target *t, const char *value, ar_error_t **err)
{
  uint64_t millicpus;
  if (!ar_parse_cpus (value, &millicpus) || millicpus == 0)
    return invalid_value (value, "a number of cpus like \"2\" or \"0.5\"", err);
  t->limits->millicpus = millicpus;
  return 0;
}

/* "open" would lift the profile's filter: only a profile that says so
 * lets a container's annotation do that. */
static int
on_egress (annotation_target *t, const char *value, ar_error_t **err)
{
  ar_egress_mode mode;
  if (!ar_egress_mode_parse (value, &mode))
    return invalid_value (value, "none, allowlist, open or ask", err);
  if (mode == AR_EGRESS_OPEN && t->profile->egress != AR_EGRESS_OPEN
      && !t->profile->egress_annotations_may_open)
    return ar_error_set (
        err, 0,
        "\"open\" is not allowed by profile \"%s\" (network.annotationsMayOpen)",
        t->profile->name);
  t->plan->egress = mode;
  t->limits->egress_mode_annotated = true;
  return 0;
}

/* Comma-separated entries, each passing `check` (blanks around them are
 * ignored), into *out (NULL-terminated). */
static int
split_entries (const char *value, int (*check) (const char *, ar_error_t **),
               oci_strv *out, ar_error_t **err)
{
  cleanup_free char *copy = xstrdup (value);
  oci_strv entries = { .items = xcalloc (1, sizeof (char *)) };
  char *save = NULL;
  for (char *tok = strtok_r (copy, ",", &save); tok;
       tok = strtok_r (NULL, ",", &save))
    {
      tok += strspn (tok, " \t");
      size_t len = strlen (tok);
      while (len > 0 && (tok[len - 1] == ' ' || tok[len - 1] == '\t'))
        tok[--len] = '\0';
      if (len == 0)
        continue;
      if (check (tok, err) < 0)
        {
          oj_strv_clear (&entries);
          return -1;
        }
      strv_push (&entries, tok);
    }
  *out = entries;
  return 0;
}

static int
check_egress_entry (const char *entry, ar_error_t **err)
{
  return ar_egress_entry_check ("entry", entry, err);
}

static int
on_egress_allow (annotation_target *t, const char *value, ar_error_t **err)
{
  oci_strv entries;
  if (split_entries (value, check_egress_entry, &entries, err) < 0)
    return -1;
  for (size_t i = 0; i < entries.len; i++)
    if (ar_profile_check_annotated_allow (t->profile, entries.items[i], err)
        < 0)
      {
        oj_strv_clear (&entries);
        return -1;
      }
  set_egress_allow (t->plan, entries.items, entries.len);
  t->limits->egress_allow_annotated = true;
  return 0;
}

static int
check_ingress_entry (const char *entry, ar_error_t **err)
{
  return ar_ingress_entry_check ("port", entry, err);
}

static int
on_ingress (annotation_target *t, const char *value, ar_error_t **err)
{
  oci_strv entries;
  if (split_entries (value, check_ingress_entry, &entries, err) < 0)
    return -1;
  oj_strv_clear (&t->plan->ingress);
  t->plan->ingress = entries;
  return 0;
}

static int
check_program_rule (const char *rule, ar_error_t **err)
{
  return ar_program_rule_check ("rule", rule, err);
}

/* Rules added to the profile's: a container's author may ask for more
 * questions, never for fewer. */
static int
on_programs_ask (annotation_target *t, const char *value, ar_error_t **err)
{
  oci_strv rules;
  if (split_entries (value, check_program_rule, &rules, err) < 0)
    return -1;
  for (size_t i = 0; i < rules.len; i++)
    ar_strv_append_unique (&t->plan->programs_ask, rules.items[i]);
  oj_strv_clear (&rules);
  if (t->plan->programs_ask.len > AR_PROGRAM_RULES_MAX)
    return invalid_value (value, "at most 64 rules in all", err);
  return 0;
}

static int
check_hide_path (const char *path, ar_error_t **err)
{
  if (path[0] == '/' && !ar_path_has_dotdot (path) && strcmp (path, "/") != 0)
    return 0;
  return invalid_value (path, "absolute paths without \"..\", comma-separated",
                        err);
}

/* Comma-separated absolute host paths ('*' globs a component). */
static int
on_hide_list (const char *value, oci_strv *list, ar_error_t **err)
{
  oci_strv entries;
  if (split_entries (value, check_hide_path, &entries, err) < 0)
    return -1;
  for (size_t i = 0; i < entries.len; i++)
    {
      cleanup_free char *clean = ar_path_clean (entries.items[i]);
      ar_strv_append_unique (list, clean);
    }
  oj_strv_clear (&entries);
  return 0;
}

static int
on_hide (annotation_target *t, const char *value, ar_error_t **err)
{
  return on_hide_list (value, &t->hide, err);
}

static int
on_unhide (annotation_target *t, const char *value, ar_error_t **err)
{
  return on_hide_list (value, &t->unhide, err);
}

/* The caller-only keys: a container spec's author never names where the
 * host writes its audit log or which host directory it sees. */
static int
on_audit (annotation_target *t, const char *value, ar_error_t **err)
{
  cleanup_free char *path = NULL;
  if (check_host_path (value, NULL, false, true, &path, err) < 0)
    return -1;
  free (t->plan->audit_path);
  t->plan->audit_path = steal_pointer (&path);
  return 0;
}

static int
on_workspace (annotation_target *t, const char *value, ar_error_t **err)
{
  if (!t->plan->overlay)
    return feature_off (t, "the overlay", err);
  if (strpbrk (value, ",:\\") != NULL)
    return ar_error_set (
        err, 0,
        "the workspace path may not contain ',', ':' or '\\' (overlayfs options)");
  cleanup_free char *path = NULL;
  if (check_host_path (value, NULL, true, true, &path, err) < 0)
    return -1;
  free (t->plan->workspace_host_dir);
  t->plan->workspace_host_dir = steal_pointer (&path);
  return 0;
}

static int
on_workspace_read_only (annotation_target *t, const char *value,
                        ar_error_t **err)
{
  if (!t->plan->overlay)
    return feature_off (t, "the overlay", err);
  if (strcmp (value, "true") != 0 && strcmp (value, "false") != 0)
    return invalid_value (value, "true or false", err);
  t->plan->workspace_read_only = strcmp (value, "true") == 0;
  return 0;
}

/* sandbox --approver: the socket of whoever decides for the container,
 * which its spec's author does not choose. */
static int
on_approver (annotation_target *t, const char *value, ar_error_t **err)
{
  cleanup_free char *path = NULL;
  if (check_host_path (value, NULL, false, true, &path, err) < 0)
    return -1;
  free (t->plan->approver);
  t->plan->approver = steal_pointer (&path);
  t->limits->approver_annotated = true;
  return 0;
}

/* sandbox --from: a snapshot's directory, which only the caller names
 * (its layers are copied from the host side). */
static int
on_overlay_from (annotation_target *t, const char *value, ar_error_t **err)
{
  if (!t->plan->overlay)
    return feature_off (t, "the overlay", err);
  cleanup_free char *path = NULL;
  if (check_host_path (value, NULL, true, true, &path, err) < 0)
    return -1;
  free (t->plan->overlay_from);
  t->plan->overlay_from = steal_pointer (&path);
  return 0;
}

static const struct
{
  const char *suffix;
  annotation_handler handler;
} annotation_handlers[] = {
  { "audit", on_audit },
  { "workspace", on_workspace },
  { "workspace.readOnly", on_workspace_read_only },
  { "overlay.size", on_overlay_size },
  { "overlay.inodes", on_overlay_inodes },
  { "overlay.from", on_overlay_from },
  { "secrets.mainOnly", on_secrets_main_only },
  { "secrets.ask", on_secrets_ask },
  { "programs.ask", on_programs_ask },
  { "output", on_output },
  { "output.maxBytes", on_output_max_bytes },
  { "output.maxFiles", on_output_max_files },
  { "timeout", on_timeout },
  { "memory", on_memory },
  { "pids", on_pids },
  { "cpus", on_cpus },
  { "egress", on_egress },
  { "egress.allow", on_egress_allow },
  { "ingress", on_ingress },
  { "approver", on_approver },
  { "hide", on_hide },
  { "unhide", on_unhide },
};

static annotation_handler
find_handler (const char *suffix)
{
  if (strncmp (suffix, "secret.", strlen ("secret.")) == 0)
    return on_secret;
  for (size_t i = 0;
       i < sizeof annotation_handlers / sizeof *annotation_handlers; i++)
    if (strcmp (suffix, annotation_handlers[i].suffix) == 0)
      return annotation_handlers[i].handler;
  return NULL;
}

static bool
annotation_allowed (const ar_profile *profile, const char *suffix)
{
  /* unhide shows the container what the profile hides from it */
  bool caller_only
      = strcmp (suffix, "audit") == 0 || strcmp (suffix, "workspace") == 0
        || strcmp (suffix, "workspace.readOnly") == 0
        || strcmp (suffix, "overlay.from") == 0
        || strcmp (suffix, "approver") == 0 || strcmp (suffix, "unhide") == 0;
  if (profile->trust_caller)
    return true;
  if (caller_only)
    return false;
  for (size_t i = 0; i < profile->annotations.len; i++)
    if (ar_annotation_pattern_matches (profile->annotations.items[i], suffix))
      return true;
  return false;
}

/* Keys come from whoever created the container: print them as they are
 * only when that cannot garble the one-line message. */
static char *
printable_key (const char *key)
{
  for (const char *p = key; *p; p++)
    if ((unsigned char) *p < 0x20 || *p == 0x7f || *p == '"')
      return oj_quote (key, strlen (key));
  return xstrdup (key);
}

static int
apply_annotation (annotation_target *t, const char *key, const char *value,
                  ar_error_t **err)
{
  annotation_handler handler
      = ar_annotation_known (t->suffix) ? find_handler (t->suffix) : NULL;
  cleanup_free char *shown = printable_key (key);
  if (handler == NULL)
    return ar_error_set (err, 0, "annotation %s: unknown agentrun annotation",
                         shown);
  if (!annotation_allowed (t->profile, t->suffix))
    return ar_error_set (err, 0, "annotation %s: not allowed by profile \"%s\"",
                         shown, t->profile->name);
  if (handler (t, value, err) < 0)
    return ar_error_prefix (err, "annotation %s", shown);
  return 0;
}

static int
apply_annotations (const oci_map *annotations, annotation_target *t,
                   ar_error_t **err)
{
  const size_t prefix_len = strlen (AR_AGENT_ANNOTATION_PREFIX);
  for (size_t i = 0; i < annotations->len; i++)
    {
      const oci_kv *kv = &annotations->items[i];
      if (strncmp (kv->key, AR_AGENT_ANNOTATION_PREFIX, prefix_len) != 0)
        continue;
      t->suffix = kv->key + prefix_len;
      if (apply_annotation (t, kv->key, kv->value, err) < 0)
        return -1;
    }
  /* An allow-list given on its own means: allow these, not "no egress". */
  if (t->limits->egress_allow_annotated && !t->limits->egress_mode_annotated
      && t->plan->egress == AR_EGRESS_NONE && t->plan->n_egress_allow > 0)
    t->plan->egress = AR_EGRESS_ALLOWLIST;
  /* An approver named on its own means: ask it. */
  if (t->limits->approver_annotated && !t->limits->egress_mode_annotated
      && t->plan->egress != AR_EGRESS_OPEN)
    t->plan->egress = AR_EGRESS_ASK;
  if (t->plan->secrets_ask && ar_userns_unprivileged ())
    return ar_error_set (err, 0,
                         "secrets.ask needs root (fanotify's permission "
                         "events); without root, leave the secret out");
  if (t->plan->programs_ask.len > 0 && ar_userns_unprivileged ())
    return ar_error_set (err, 0,
                         "programs.ask needs root (fanotify's permission "
                         "events)");
  const char *asker = t->plan->egress == AR_EGRESS_ASK ? "egress mode ask"
                      : t->plan->secrets_ask           ? "secrets.ask"
                      : t->plan->programs_ask.len > 0  ? "programs.ask"
                                                       : NULL;
  if (asker && t->plan->approver == NULL)
    return ar_error_set (
        err, 0,
        "%s needs an approver (profile \"%s\": approver.socket, or sandbox --approver SOCKET)",
        asker, t->profile->name);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Rewriting the spec. Nothing below can fail.                         */

oci_linux *
ar_spec_ensure_linux (oci_spec *spec)
{
  if (spec->linux_cfg == NULL)
    spec->linux_cfg = xcalloc (1, sizeof *spec->linux_cfg);
  return spec->linux_cfg;
}

static oci_resources *
ensure_resources (oci_linux *l)
{
  if (l->resources == NULL)
    l->resources = xcalloc (1, sizeof *l->resources);
  return l->resources;
}

/* Set `limit` to `want` unless it already holds something stricter;
 * values <= 0 mean "unlimited" in the spec. */
static void
tighten_i64 (oci_opt_i64 *limit, int64_t want)
{
  if (!limit->set || limit->value <= 0 || limit->value > want)
    *limit = (oci_opt_i64){ true, want };
}

static void
apply_memory_limit (oci_resources *r, uint64_t bytes)
{
  if (r->memory == NULL)
    r->memory = xcalloc (1, sizeof *r->memory);
  oci_memory *m = r->memory;
  tighten_i64 (&m->limit, bytes > INT64_MAX ? INT64_MAX : (int64_t) bytes);
  /* memory+swap below the limit already bounds memory tighter, and the
   * cgroup would refuse a limit above it. */
  if (m->swap.set && m->swap.value > 0 && m->swap.value < m->limit.value)
    m->limit.value = m->swap.value;
}

/* Keep the spec's quota when its share of a cpu is no larger than ours. */
static void
apply_cpu_limit (oci_resources *r, uint64_t millicpus)
{
  if (r->cpu == NULL)
    r->cpu = xcalloc (1, sizeof *r->cpu);
  oci_cpu *cpu = r->cpu;
  uint64_t want_quota = millicpus * (CPU_PERIOD_US / 1000);
  if (want_quota < CPU_QUOTA_MIN_US)
    want_quota = CPU_QUOTA_MIN_US;
  if (cpu->quota.set && cpu->quota.value > 0)
    {
      uint64_t period = cpu->period.set && cpu->period.value > 0
                            ? cpu->period.value
                            : CPU_PERIOD_US;
      unsigned __int128 spec_share
          = (unsigned __int128) cpu->quota.value * CPU_PERIOD_US;
      if (spec_share <= (unsigned __int128) want_quota * period)
        return;
    }
  cpu->quota = (oci_opt_i64){ true, (int64_t) want_quota };
  cpu->period = (oci_opt_u64){ true, CPU_PERIOD_US };
}

static void
apply_limits (oci_spec *spec, const policy_limits *limits)
{
  if (limits->memory_bytes == 0 && limits->pids == 0 && limits->millicpus == 0)
    return;
  oci_resources *r = ensure_resources (ar_spec_ensure_linux (spec));
  if (limits->memory_bytes)
    apply_memory_limit (r, limits->memory_bytes);
  if (limits->pids)
    tighten_i64 (&r->pids_limit, limits->pids);
  if (limits->millicpus)
    apply_cpu_limit (r, limits->millicpus);
}

/* Drop from `set` what `keep` does not list, in place. */
static void
restrict_strv (oci_strv *set, const oci_strv *keep)
{
  size_t kept = 0;
  for (size_t i = 0; i < set->len; i++)
    if (oci_strv_has (keep, set->items[i]))
      set->items[kept++] = set->items[i];
    else
      free (set->items[i]);
  if (set->items)
    set->items[kept] = NULL;
  set->len = kept;
}

static void
empty_strv (oci_strv *set)
{
  if (set->items == NULL)
    return; /* absent already means empty */
  oci_strv none = { 0 };
  restrict_strv (set, &none);
}

static const char *const engine_default_caps[]
    = { "CAP_CHOWN",       "CAP_DAC_OVERRIDE", "CAP_FOWNER",
        "CAP_FSETID",      "CAP_KILL",         "CAP_SETGID",
        "CAP_SETUID",      "CAP_SETPCAP",      "CAP_NET_BIND_SERVICE",
        "CAP_NET_RAW",     "CAP_SYS_CHROOT",   "CAP_MKNOD",
        "CAP_AUDIT_WRITE", "CAP_SETFCAP" };

const char *const *
ar_engine_default_caps (size_t *n)
{
  *n = sizeof engine_default_caps / sizeof *engine_default_caps;
  return engine_default_caps;
}

/* The profile drops the defaults it does not grant without a word:
 * nobody asked for them. */
static bool
engine_default_cap (const char *cap)
{
  for (size_t i = 0;
       i < sizeof engine_default_caps / sizeof *engine_default_caps; i++)
    if (strcmp (cap, engine_default_caps[i]) == 0)
      return true;
  return false;
}

/* Capabilities the spec adds beyond the engines' defaults (a pod's
 * privileged or capabilities.add, docker's --privileged or --cap-add)
 * that the profile does not grant: refused, not quietly taken away, so
 * the pod's events or docker's error say why. */
static int
check_capabilities (const oci_spec *spec, const ar_profile *profile,
                    ar_error_t **err)
{
  const oci_capabilities *c
      = spec->process ? spec->process->capabilities : NULL;
  if (!profile->capabilities_set || c == NULL)
    return 0;
  const oci_strv *sets[] = { &c->bounding, &c->effective, &c->permitted,
                             &c->inheritable, &c->ambient };
  oci_strv extra = { 0 };
  for (size_t s = 0; s < sizeof sets / sizeof *sets; s++)
    for (size_t i = 0; i < sets[s]->len; i++)
      {
        const char *cap = sets[s]->items[i];
        if (!engine_default_cap (cap)
            && !oci_strv_has (&profile->capabilities, cap))
          ar_strv_append_unique (&extra, cap);
      }
  if (extra.len == 0)
    return 0;
  cleanup_free char *list = NULL;
  for (size_t i = 0; i < extra.len; i++)
    xappend (&list, ", ", extra.items[i]);
  oj_strv_clear (&extra);
  return ar_error_set (err, 0,
                       "process.capabilities: the agent profile does not "
                       "grant %s (privileged or capabilities.add): use the "
                       "runtime agentrun, which applies no profile",
                       list);
}

static void
apply_capabilities (oci_process *process, const ar_profile *profile)
{
  oci_capabilities *caps = process->capabilities;
  if (!profile->capabilities_set || caps == NULL)
    return; /* no capabilities asked, none granted */
  restrict_strv (&caps->bounding, &profile->capabilities);
  restrict_strv (&caps->effective, &profile->capabilities);
  restrict_strv (&caps->permitted, &profile->capabilities);
  empty_strv (&caps->inheritable);
  empty_strv (&caps->ambient);
}

void
ar_policy_confine_exec (oci_process *exec, const oci_process *container)
{
  if (container == NULL)
    return;
  if (container->no_new_privileges)
    exec->no_new_privileges = true;
  oci_capabilities *caps = exec->capabilities;
  if (caps == NULL)
    return;
  const oci_capabilities *own = container->capabilities;
  oci_strv none = { 0 };
  restrict_strv (&caps->bounding, own ? &own->bounding : &none);
  restrict_strv (&caps->effective, own ? &own->effective : &none);
  restrict_strv (&caps->permitted, own ? &own->permitted : &none);
  restrict_strv (&caps->inheritable, own ? &own->inheritable : &none);
  restrict_strv (&caps->ambient, own ? &own->ambient : &none);
}

static void
apply_rlimit (oci_process *process, const oci_rlimit *want)
{
  for (size_t i = 0; i < process->n_rlimits; i++)
    {
      oci_rlimit *have = &process->rlimits[i];
      if (strcmp (have->type, want->type) != 0)
        continue;
      if (have->hard > want->hard)
        have->hard = want->hard;
      if (have->soft > want->soft)
        have->soft = want->soft;
      if (have->soft > have->hard)
        have->soft = have->hard;
      return;
    }
  process->rlimits = xrealloc (
      process->rlimits, (process->n_rlimits + 1) * sizeof *process->rlimits);
  process->rlimits[process->n_rlimits++]
      = (oci_rlimit){ xstrdup (want->type), want->hard, want->soft };
}

static void
apply_process (oci_spec *spec, const ar_profile *profile)
{
  oci_process *process = spec->process;
  if (process == NULL)
    return;
  if (profile->no_new_privileges)
    process->no_new_privileges = true;
  apply_capabilities (process, profile);
  for (size_t i = 0; i < profile->n_rlimits; i++)
    apply_rlimit (process, &profile->rlimits[i]);
}

static void
apply_seccomp (oci_spec *spec, ar_profile_seccomp mode)
{
  if (mode == AR_PROFILE_SECCOMP_SPEC)
    return;
  oci_linux *l = ar_spec_ensure_linux (spec);
  if (mode == AR_PROFILE_SECCOMP_NONE)
    {
      ar_seccomp_free (l->seccomp);
      l->seccomp = NULL;
    }
  else if (l->seccomp == NULL)
    l->seccomp = ar_seccomp_default_new ();
}

void
ar_strv_append_unique (oci_strv *list, const char *item)
{
  if (!oci_strv_has (list, item))
    strv_push (list, item);
}

static void
apply_paths (oci_spec *spec, const ar_profile *profile)
{
  if (profile->masked_paths.len == 0 && profile->readonly_paths.len == 0)
    return;
  oci_linux *l = ar_spec_ensure_linux (spec);
  for (size_t i = 0; i < profile->masked_paths.len; i++)
    ar_strv_append_unique (&l->masked_paths, profile->masked_paths.items[i]);
  for (size_t i = 0; i < profile->readonly_paths.len; i++)
    ar_strv_append_unique (&l->readonly_paths,
                           profile->readonly_paths.items[i]);
}

static void
append_hook (oci_hook_list *list, const char *path, oci_strv args)
{
  list->items = xrealloc (list->items, (list->len + 1) * sizeof *list->items);
  list->items[list->len++] = (oci_hook){
    .path = xstrdup (path),
    .args = args,
    .timeout = { true, AR_EGRESS_HOOK_TIMEOUT },
  };
}

/* createRuntime: the filter is in place before the container's process
 * runs; poststop: the host side goes with the container. */
static void
add_egress_hooks (oci_spec *spec, const ar_profile *profile,
                  const ar_agent_plan *plan, bool netns_owned)
{
  const char *path = profile->egress_hook_path ? profile->egress_hook_path
                                               : AR_EGRESS_HOOK_DEFAULT;
  oci_strv create = { 0 };
  strv_push (&create, AR_EGRESS_HOOK_NAME);
  strv_push (&create, "create");
  strv_push (&create, "--mode");
  strv_push (&create, ar_egress_mode_name (plan->egress));
  for (size_t i = 0;
       (plan->egress == AR_EGRESS_ALLOWLIST || plan->egress == AR_EGRESS_ASK)
       && i < plan->n_egress_allow;
       i++)
    {
      strv_push (&create, "--allow");
      strv_push (&create, plan->egress_allow[i]);
    }
  if (plan->egress == AR_EGRESS_ASK)
    {
      strv_push (&create, "--approver");
      strv_push (&create, plan->approver);
      char seconds[24];
      snprintf (seconds, sizeof seconds, "%" PRId64, plan->ask_timeout);
      strv_push (&create, "--ask-timeout");
      strv_push (&create, seconds);
    }
  for (size_t i = 0; i < plan->ingress.len; i++)
    {
      strv_push (&create, "--ingress");
      strv_push (&create, plan->ingress.items[i]);
    }
  if (profile->egress_upstream)
    {
      strv_push (&create, "--upstream");
      strv_push (&create, profile->egress_upstream);
    }
  if (plan->audit_path)
    {
      strv_push (&create, "--audit");
      strv_push (&create, plan->audit_path);
    }
  if (netns_owned)
    strv_push (&create, "--netns-owned");
  oci_strv delete = { 0 };
  strv_push (&delete, AR_EGRESS_HOOK_NAME);
  strv_push (&delete, "delete");
  append_hook (&spec->hooks.create_runtime, path, create);
  append_hook (&spec->hooks.poststop, path, delete);
}

/* Every mode but open on the host's network goes through the egress hook,
 * none in a fresh netns too: a fresh netns has only lo when the hook runs,
 * but an engine may wire it afterwards (Docker's prestart hook, ctr
 * --cni between create and start, `docker network connect` at any time).
 * The filter's drop policy holds for interfaces added later. */
static void
apply_network (oci_spec *spec, const ar_profile *profile,
               const ar_agent_plan *plan, bool pod_filters)
{
  const oci_namespace *ns = oci_spec_find_namespace (spec, OCI_NS_NETWORK);
  bool joined = ns != NULL && ns->path != NULL;
  if (pod_filters)
    return; /* its pod's sandbox container set up the filter it joins */
  if (plan->egress == AR_EGRESS_OPEN && ns == NULL)
    return; /* the host's network, as the spec asks */
  /* Filtered egress needs a network namespace of the container's own;
   * in a joined one the egress hook filters there. */
  if (plan->egress != AR_EGRESS_OPEN)
    oci_spec_ensure_namespace (spec, OCI_NS_NETWORK);
  /* A netns made for the container dies with it, and its veth with it. */
  add_egress_hooks (spec, profile, plan, !joined);
}

static void
rewrite_spec (oci_spec *spec, const ar_profile *profile,
              const ar_agent_plan *plan, const policy_limits *limits,
              bool pod_filters)
{
  /* The overlay, secrets and /output are mounts: without a namespace of
   * their own they would be made in the host's. root.readonly is left as
   * the spec says: writes land in the overlay's ephemeral layer, never in
   * the bundle's rootfs, and a root asked to be read-only (a pod's
   * ReadOnlyRootfs, docker run --read-only) stays so, that layer too. */
  oci_spec_ensure_namespace (spec, OCI_NS_MOUNT);
  apply_limits (spec, limits);
  apply_process (spec, profile);
  apply_seccomp (spec, profile->seccomp);
  apply_paths (spec, profile);
  apply_network (spec, profile, plan, pod_filters);
}

/* ------------------------------------------------------------------ */
/* Host paths hidden from a container on the host's root.              */

static bool
root_is_host (const oci_spec *spec)
{
  if (spec->root_path == NULL || spec->root_path[0] != '/')
    return false; /* relative: below the bundle */
  cleanup_free char *root = ar_path_clean (spec->root_path);
  return strcmp (root, "/") == 0;
}

/* The first reason given for a path stays. */
static void
add_hidden (ar_agent_plan *plan, const char *path, const char *reason)
{
  for (size_t i = 0; i < plan->hide.len; i++)
    if (strcmp (plan->hide.items[i].key, path) == 0)
      return;
  ar_map_set (&plan->hide, path, reason);
}

/* The profile's list, what the caller added, every secret's source file;
 * then what the caller took out. An unhidden path that is no entry of
 * the list (a home that a glob over /home matches) is kept for the host side, which
 * leaves that match visible. Only for a root that is the host's: another
 * rootfs has none of these files, and secrets are not read from it. */
static void
build_hide_list (const oci_spec *spec, const ar_profile *profile,
                 ar_agent_plan *plan, const annotation_target *t)
{
  if (!root_is_host (spec))
    return;
  for (size_t i = 0; i < profile->hide_host_paths.len; i++)
    add_hidden (plan, profile->hide_host_paths.items[i].key,
                profile->hide_host_paths.items[i].value);
  for (size_t i = 0; i < t->hide.len; i++)
    add_hidden (plan, t->hide.items[i], "asked for (run.agentrun.hide)");
  for (size_t i = 0; i < plan->n_secrets; i++)
    {
      cleanup_free char *why
          = xasprintf ("source of secret %s", plan->secrets[i].name);
      add_hidden (plan, plan->secrets[i].host_path, why);
    }
  for (size_t i = 0; i < t->unhide.len; i++)
    if (!ar_map_remove (&plan->hide, t->unhide.items[i]))
      strv_push (&plan->unhide, t->unhide.items[i]);
}

static void
annotation_target_clear (annotation_target *t)
{
  oj_strv_clear (&t->hide);
  oj_strv_clear (&t->unhide);
}

/* A pod without a network namespace is a hostNetwork pod: filtered
 * egress would give it one of its own, which is not what the pod asked
 * for (the kubelet's view of its address, ports and probes would be
 * wrong); refused, so the pod's events say why. A plain bundle without
 * one still gets its own. */
static int
check_pod_network (const oci_spec *spec, const ar_agent_plan *plan,
                   ar_error_t **err)
{
  if (ar_pod_container_type (spec) == NULL || plan->egress == AR_EGRESS_OPEN
      || oci_spec_find_namespace (spec, OCI_NS_NETWORK) != NULL)
    return 0;
  return ar_error_set (err, 0,
                       "the agent profile needs the pod's own network "
                       "namespace (hostNetwork: true): use RuntimeClass "
                       "agentrun for host-network pods");
}

/* A container joining the network namespace of a pod whose sandbox
 * container runs under a plan: that sandbox's egress hook filters the
 * namespace for the whole pod, so the container adds no hook of its own
 * (one would replace the pod's filter, and a second resolver could not
 * listen) and must ask for the pod's egress. */
static int
joins_pod_filter (const oci_spec *spec, const ar_agent_plan *container,
                  const ar_agent_plan *pod, bool *joins, ar_error_t **err)
{
  const oci_namespace *ns = oci_spec_find_namespace (spec, OCI_NS_NETWORK);
  *joins = pod != NULL && ns != NULL && ns->path != NULL
           && ar_pod_sandbox_id (spec) != NULL;
  return *joins ? ar_pod_check_egress (container, pod, err) : 0;
}

int
ar_policy_apply (oci_spec *spec, const ar_profile *profile,
                 const ar_agent_plan *pod, ar_agent_plan **plan,
                 ar_error_t **err)
{
  *plan = NULL;
  if (profile->plain_oci)
    return 0;

  cleanup_plan ar_agent_plan *p = plan_from_profile (profile);
  policy_limits limits = { .memory_bytes = profile->memory_bytes,
                           .pids = profile->pids,
                           .millicpus = profile->millicpus };
  annotation_target target
      = { .profile = profile, .plan = p, .limits = &limits };
  int r = apply_annotations (&spec->annotations, &target, err);
  if (r == 0)
    build_hide_list (spec, profile, p, &target);
  annotation_target_clear (&target);
  if (r < 0)
    return -1;
  /* The wall-clock limit bounds the work, not the pod: a pause container
   * ended by a pod's run.agentrun.timeout would take the pod's network
   * with it before its containers had their time. */
  if (ar_pod_is_sandbox (spec))
    p->wall_clock_seconds = 0;
  bool pod_filters = false;
  if (check_pod_network (spec, p, err) < 0
      || joins_pod_filter (spec, p, pod, &pod_filters, err) < 0
      || check_capabilities (spec, profile, err) < 0)
    return -1;
  rewrite_spec (spec, profile, p, &limits, pod_filters);
  *plan = steal_pointer (&p);
  return 0;
}

int
ar_policy_check_annotation (const ar_profile *profile, const char *suffix,
                            const char *value, ar_error_t **err)
{
  if (profile->plain_oci)
    return ar_error_set (err, 0, "profile \"%s\" applies no agent policy",
                         profile->name);
  annotation_handler handler
      = ar_annotation_known (suffix) ? find_handler (suffix) : NULL;
  if (handler == NULL)
    return ar_error_set (err, 0, "unknown agentrun annotation %s", suffix);
  if (!annotation_allowed (profile, suffix))
    return ar_error_set (err, 0, "not allowed by profile \"%s\"",
                         profile->name);
  cleanup_plan ar_agent_plan *plan = plan_from_profile (profile);
  policy_limits limits = { 0 };
  annotation_target t = {
    .profile = profile, .plan = plan, .limits = &limits, .suffix = suffix
  };
  int r = handler (&t, value, err);
  annotation_target_clear (&t);
  return r;
}
