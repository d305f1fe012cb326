/* SPDX-License-Identifier: Apache-2.0 */
/* Profiles: the built-in "oci" and "agent", and files under
 * <config dir>/profiles/<name>.json that add profiles or replace "agent".
 * A file may start from another profile ("extends") and change only some
 * keys; nested objects merge key by key, lists replace. Unknown keys are
 * errors: a typo in a security setting must not pass silently. */
#include "config.h"
#include "policy_internal.h"
#include "../../hooks/egress.h"
#include "../../oci/json.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The agent defaults. Kept as profile JSON so that the built-in profile
 * goes through the same parser and checks as a file, and docs/profiles.md
 * can show it verbatim. */
const char ar_builtin_agent_profile_json[]
    = "{\n"
      "  \"overlay\": {\"enabled\": true, \"size\": \"1G\", \"inodes\": 262144},\n"
      "  \"secrets\": {\"path\": \"/run/secrets\", \"mainOnly\": false,\n"
      "              \"allowedHostDirs\": [\"/etc/agentrun/secrets\",\n"
      "                                  \"/run/agentrun-secrets\"]},\n"
      "  \"output\": {\"path\": \"/output\", \"maxBytes\": \"1G\",\n"
      "             \"maxFiles\": 10000,\n"
      "             \"allowedHostDirs\": [\"/var/lib/agentrun/output\"]},\n"
      "  \"limits\": {\"memory\": \"2G\", \"pids\": 1024, \"cpus\": 2,\n"
      "             \"wallClock\": \"1h\"},\n"
      "  \"seccomp\": \"default\",\n"
      "  \"capabilities\": [\"CAP_CHOWN\", \"CAP_DAC_OVERRIDE\", \"CAP_FOWNER\",\n"
      "                   \"CAP_FSETID\", \"CAP_KILL\", \"CAP_SETGID\",\n"
      "                   \"CAP_SETUID\", \"CAP_SETPCAP\",\n"
      "                   \"CAP_NET_BIND_SERVICE\"],\n"
      "  \"noNewPrivileges\": true,\n"
      "  \"maskedPaths\": [\"/proc/acpi\", \"/proc/asound\", \"/proc/kcore\",\n"
      "                  \"/proc/keys\", \"/proc/latency_stats\",\n"
      "                  \"/proc/timer_list\", \"/proc/timer_stats\",\n"
      "                  \"/proc/sched_debug\", \"/proc/kallsyms\",\n"
      "                  \"/proc/scsi\", \"/sys/firmware\",\n"
      "                  \"/sys/devices/virtual/powercap\"],\n"
      "  \"readonlyPaths\": [\"/proc/bus\", \"/proc/fs\", \"/proc/irq\",\n"
      "                    \"/proc/sys\", \"/proc/sysrq-trigger\"],\n"
      "  \"network\": {\"egress\": \"none\", \"allow\": []},\n"
      "  \"userNamespace\": {\"subidUser\": \"agentrun\", \"size\": 65536,\n"
      "                    \"limits\": {\"max_inotify_instances\": 128,\n"
      "                               \"max_inotify_watches\": 65536,\n"
      "                               \"max_user_namespaces\": 64,\n"
      "                               \"max_mnt_namespaces\": 64,\n"
      "                               \"max_pid_namespaces\": 64,\n"
      "                               \"max_net_namespaces\": 64,\n"
      "                               \"max_ipc_namespaces\": 64,\n"
      "                               \"max_uts_namespaces\": 64,\n"
      "                               \"max_cgroup_namespaces\": 64,\n"
      "                               \"max_time_namespaces\": 64}},\n"
      "  \"hideHostPaths\": {\n"
      "    \"/root\": \"root's home: keys, tokens, shell history\",\n"
      "    \"/home/*\": \"users' homes (the workspace itself stays visible)\",\n"
      "    \"/etc/shadow\": \"password hashes\",\n"
      "    \"/etc/shadow-\": \"backup of /etc/shadow\",\n"
      "    \"/etc/gshadow\": \"group password hashes\",\n"
      "    \"/etc/gshadow-\": \"backup of /etc/gshadow\",\n"
      "    \"/etc/ssh/*_key\": \"SSH host private keys\",\n"
      "    \"/var/lib/docker\": \"Docker images, volumes and their secrets\",\n"
      "    \"/var/lib/containerd\": \"containerd images and snapshots\",\n"
      "    \"/var/lib/containers\": \"Podman and CRI-O images and volumes\",\n"
      "    \"/run/docker.sock\": \"Docker daemon socket (root on the host)\",\n"
      "    \"/var/run/docker.sock\": \"Docker daemon socket (root on the host)\",\n"
      "    \"/run/docker\": \"Docker runtime state and sockets\",\n"
      "    \"/run/containerd\": \"containerd socket (root on the host) and state\",\n"
      "    \"/run/podman\": \"Podman socket (root on the host)\",\n"
      "    \"/run/agentrun\": \"agentrun's containers: their specs, environment and audit heads\",\n"
      "    \"/run/agentrun-secrets\": \"the agent profile's secret store\",\n"
      "    \"/etc/agentrun/secrets\": \"the agent profile's secret store\",\n"
      "    \"/run/agentrun-egress\": \"other sandboxes' egress state\",\n"
      "    \"/run/agentrun-ids\": \"other sandboxes' id ranges\",\n"
      "    \"/var/lib/agentrun\": \"other sandboxes' exported artifacts\",\n"
      "    \"~/.ssh\": \"SSH keys and agent config\",\n"
      "    \"~/.aws\": \"AWS credentials\",\n"
      "    \"~/.config/gcloud\": \"Google Cloud credentials\",\n"
      "    \"~/.docker\": \"registry credentials\",\n"
      "    \"~/.kube\": \"Kubernetes credentials\",\n"
      "    \"~/.npmrc\": \"npm registry tokens\",\n"
      "    \"~/.netrc\": \"login passwords for hosts\",\n"
      "    \"~/.git-credentials\": \"git passwords and tokens\",\n"
      "    \"~/.config/gh\": \"GitHub CLI tokens\",\n"
      "    \"~/.pypirc\": \"PyPI upload tokens\",\n"
      "    \"~/.cargo/credentials\": \"crates.io tokens\",\n"
      "    \"~/.cargo/credentials.toml\": \"crates.io tokens\"\n"
      "  },\n"
      "  \"annotations\": [\"overlay.size\", \"overlay.inodes\", \"secret.*\",\n"
      "                  \"secrets.mainOnly\", \"secrets.ask\", \"output\",\n"
      "                  \"output.maxBytes\", \"output.maxFiles\", \"timeout\",\n"
      "                  \"memory\", \"pids\", \"cpus\", \"egress\", \"egress.allow\",\n"
      "                  \"ingress\", \"hide\", \"programs.ask\"]\n"
      "}\n";

#define DEFAULT_SECRETS_PATH "/run/secrets"
#define DEFAULT_OUTPUT_PATH "/output"

/* ------------------------------------------------------------------ */
/* Small value languages, shared with annotations.                     */

static bool
is_digit (char ch)
{
  return ch >= '0' && ch <= '9';
}

/* Leading decimal digits of `text` into *n; *end after them. No sign, no
 * spaces: strtoull alone would take both. */
static bool
leading_number (const char *text, uint64_t *n, const char **end)
{
  if (!is_digit (text[0]))
    return false;
  uint64_t value = 0;
  const char *p = text;
  for (; is_digit (*p); p++)
    {
      unsigned digit = (unsigned) (*p - '0');
      if (value > (UINT64_MAX - digit) / 10)
        return false;
      value = value * 10 + digit;
    }
  *n = value;
  *end = p;
  return true;
}

bool
ar_parse_size (const char *text, uint64_t *out)
{
  uint64_t n;
  const char *p;
  if (!leading_number (text, &n, &p))
    return false;
  unsigned shift = 0;
  switch (*p)
    {
    case 'k':
    case 'K':
      shift = 10;
      break;
    case 'm':
    case 'M':
      shift = 20;
      break;
    case 'g':
    case 'G':
      shift = 30;
      break;
    case 't':
    case 'T':
      shift = 40;
      break;
    default:
      break;
    }
  if (shift)
    {
      p++;
      if (*p == 'i')
        p++;
    }
  if (*p == 'b' || *p == 'B')
    p++;
  if (*p != '\0' || (shift && n > (UINT64_MAX >> shift)))
    return false;
  *out = n << shift;
  return true;
}

bool
ar_parse_duration (const char *text, int64_t *out)
{
  uint64_t n;
  const char *p;
  if (!leading_number (text, &n, &p))
    return false;
  uint64_t unit = 1;
  if (*p == 's')
    p++;
  else if (*p == 'm')
    unit = 60, p++;
  else if (*p == 'h')
    unit = 3600, p++;
  if (*p != '\0' || n > (uint64_t) INT64_MAX / unit)
    return false;
  *out = (int64_t) (n * unit);
  return true;
}

/* A million cpus is more than any machine has; the bound keeps the cgroup
 * quota arithmetic far from overflow. */
#define MAX_CPUS 1000000

bool
ar_parse_cpus (const char *text, uint64_t *millicpus)
{
  uint64_t whole;
  const char *p;
  if (!leading_number (text, &whole, &p) || whole > MAX_CPUS)
    return false;
  uint64_t thousandths = 0;
  if (*p == '.')
    {
      p++;
      unsigned digits = 0;
      for (; is_digit (*p) && digits < 3; p++, digits++)
        thousandths = thousandths * 10 + (uint64_t) (*p - '0');
      if (digits == 0)
        return false;
      for (; digits < 3; digits++)
        thousandths *= 10;
    }
  if (*p != '\0')
    return false;
  *millicpus = whole * 1000 + thousandths;
  return true;
}

bool
ar_parse_count (const char *text, int64_t *out)
{
  uint64_t n;
  const char *p;
  if (!leading_number (text, &n, &p) || *p != '\0' || n > INT64_MAX)
    return false;
  *out = (int64_t) n;
  return true;
}

/* Every byte of `s` in `set`, and 1..max_len of them. */
static bool
only_chars (const char *s, const char *set, size_t max_len)
{
  size_t len = strlen (s);
  return len > 0 && len <= max_len && strspn (s, set) == len;
}

#define LOWER "abcdefghijklmnopqrstuvwxyz"
#define UPPER "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define DIGITS "0123456789"

bool
ar_profile_name_valid (const char *name)
{
  return only_chars (name, LOWER DIGITS "_-", 64);
}

bool
ar_secret_name_valid (const char *name)
{
  return only_chars (name, LOWER UPPER DIGITS "._-", 255)
         && strcmp (name, ".") != 0 && strcmp (name, "..") != 0;
}

/* In full, as the egress hook reads it (hooks/egress_entries.c). */
int
ar_egress_entry_check (const char *what, const char *entry, ar_error_t **err)
{
  egress_entry e;
  if (egress_entry_parse (what, entry, &e, err) < 0)
    return -1;
  free (e.text);
  return 0;
}

int
ar_ingress_entry_check (const char *what, const char *entry, ar_error_t **err)
{
  egress_ingress in;
  return egress_ingress_parse (what, entry, &in, err);
}

bool
ar_egress_entry_valid (const char *entry)
{
  return ar_egress_entry_check ("allow entry", entry, NULL) == 0;
}

static bool
covered_by_any (const oci_strv *list, const egress_entry *e)
{
  for (size_t i = 0; i < list->len; i++)
    {
      egress_entry outer;
      if (egress_entry_parse ("entry", list->items[i], &outer, NULL) < 0)
        continue; /* checked when the profile was read */
      bool covers = egress_entry_covers (&outer, e);
      free (outer.text);
      if (covers)
        return true;
    }
  return false;
}

int
ar_profile_check_annotated_allow (const ar_profile *profile, const char *entry,
                                  ar_error_t **err)
{
  if (!profile->egress_may_allow_set)
    return 0;
  egress_entry e;
  if (egress_entry_parse ("entry", entry, &e, err) < 0)
    return -1;
  bool covered = covered_by_any (&profile->egress_allow, &e)
                 || covered_by_any (&profile->egress_may_allow, &e);
  free (e.text);
  if (covered)
    return 0;
  return ar_error_set (err, 0,
                       "entry `%s` is beyond what profile \"%s\" lets an "
                       "annotation allow (network.allow and "
                       "network.annotationsMayAllow)",
                       entry, profile->name);
}

int
ar_program_rule_check (const char *what, const char *rule, ar_error_t **err)
{
  size_t len = strlen (rule), words = 0;
  const char *why = NULL;
  for (size_t i = 0; why == NULL && i < len; i++)
    {
      unsigned char ch = (unsigned char) rule[i];
      if (ch < 0x20 || ch == 0x7f || ch == ',')
        why = "a ',' or a control character";
      else if (ch != ' ' && (i == 0 || rule[i - 1] == ' '))
        words++;
    }
  if (why == NULL && len > AR_PROGRAM_RULE_MAX)
    why = "longer than 256 bytes";
  if (why == NULL && (words == 0 || words > AR_PROGRAM_RULE_WORDS_MAX))
    why = "expected 1 to 16 words, a program and its leading arguments "
          "(\"git push\")";
  if (why == NULL)
    return 0;
  cleanup_free char *quoted = oj_quote (rule, len);
  return ar_error_set (err, 0, "%s %s: %s", what, quoted, why);
}

bool
ar_program_rule_valid (const char *rule)
{
  return ar_program_rule_check ("rule", rule, NULL) == 0;
}

static const char *const egress_mode_names[] = {
  [AR_EGRESS_OPEN] = "open",
  [AR_EGRESS_NONE] = "none",
  [AR_EGRESS_ALLOWLIST] = "allowlist",
  [AR_EGRESS_ASK] = "ask",
};

const char *
ar_egress_mode_name (ar_egress_mode mode)
{
  return egress_mode_names[mode];
}

bool
ar_egress_mode_parse (const char *text, ar_egress_mode *out)
{
  for (size_t i = 0; i < sizeof egress_mode_names / sizeof *egress_mode_names;
       i++)
    if (strcmp (text, egress_mode_names[i]) == 0)
      {
        *out = (ar_egress_mode) i;
        return true;
      }
  return false;
}

/* The run.agentrun.* annotations policy.c understands; "secret." is a
 * prefix followed by the secret's name. */
static const char *const known_annotations[] = {
  "overlay.size",
  "overlay.inodes",
  "secrets.mainOnly",
  "secrets.ask",
  "output",
  "output.maxBytes",
  "output.maxFiles",
  "timeout",
  "memory",
  "pids",
  "cpus",
  "egress",
  "egress.allow",
  "ingress",
  "audit",
  "workspace",
  "workspace.readOnly",
  "hide",
  "unhide",
  "overlay.from",
  "approver",
  "programs.ask",
};
#define SECRET_ANNOTATION_PREFIX "secret."

bool
ar_annotation_known (const char *suffix)
{
  if (strncmp (suffix, SECRET_ANNOTATION_PREFIX,
               strlen (SECRET_ANNOTATION_PREFIX))
      == 0)
    return suffix[strlen (SECRET_ANNOTATION_PREFIX)] != '\0';
  for (size_t i = 0; i < sizeof known_annotations / sizeof *known_annotations;
       i++)
    if (strcmp (suffix, known_annotations[i]) == 0)
      return true;
  return false;
}

bool
ar_annotation_pattern_matches (const char *pattern, const char *suffix)
{
  size_t len = strlen (pattern);
  if (len > 0 && pattern[len - 1] == '*')
    return strncmp (pattern, suffix, len - 1) == 0;
  return strcmp (pattern, suffix) == 0;
}

bool
ar_path_is_within (const char *path, const char *dir)
{
  if (strcmp (dir, "/") == 0)
    return path[0] == '/';
  size_t n = strlen (dir);
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool
ar_path_has_dotdot (const char *path)
{
  for (const char *p = path; *p;)
    {
      const char *end = strchrnul (p, '/');
      if (end - p == 2 && p[0] == '.' && p[1] == '.')
        return true;
      p = *end ? end + 1 : end;
    }
  return false;
}

const char *
ar_agent_config_dir (void)
{
  /* secure_getenv: were agentrun ever setuid, the caller must not pick
   * the profile that confines it. */
  const char *dir = secure_getenv (AR_AGENT_CONFIG_DIR_ENV);
  return dir && *dir ? dir : AR_AGENT_CONFIG_DIR;
}

/* ------------------------------------------------------------------ */
/* Profile objects.                                                    */

static void
free_rlimits (oci_rlimit *rlimits, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (rlimits[i].type);
  free (rlimits);
}

void
ar_profile_free (ar_profile *p)
{
  if (p == NULL)
    return;
  free (p->name);
  free (p->secrets_path);
  oj_strv_clear (&p->secrets_allowed_host_dirs);
  oj_map_clear (&p->secret_files);
  free (p->output_path);
  oj_strv_clear (&p->output_allowed_host_dirs);
  oj_strv_clear (&p->capabilities);
  oj_strv_clear (&p->masked_paths);
  oj_strv_clear (&p->readonly_paths);
  oj_map_clear (&p->hide_host_paths);
  free (p->userns_user);
  oj_map_clear (&p->userns_limits);
  free_rlimits (p->rlimits, p->n_rlimits);
  oj_strv_clear (&p->egress_allow);
  oj_strv_clear (&p->egress_may_allow);
  oj_strv_clear (&p->programs_ask);
  free (p->egress_upstream);
  free (p->approver);
  free (p->egress_hook_path);
  free (p->audit_path);
  oj_strv_clear (&p->annotations);
  free (p);
}

const char *
ar_profile_name (const ar_profile *profile)
{
  return profile->name;
}

bool
ar_profile_has_overlay (const ar_profile *profile)
{
  return !profile->plain_oci && profile->overlay;
}

/* A profile with nothing turned on: the base of a file without
 * "extends". Unlike "oci" it still yields a plan. */
static ar_profile *
empty_profile (const char *name)
{
  ar_profile *p = xcalloc (1, sizeof *p);
  p->name = xstrdup (name);
  p->seccomp = AR_PROFILE_SECCOMP_SPEC;
  p->egress = AR_EGRESS_OPEN;
  p->ask_timeout = EGRESS_ASK_TIMEOUT_DEFAULT;
  return p;
}

/* ------------------------------------------------------------------ */
/* Reading profile JSON. Readers follow oj_reader (oci/json.h).        */

static int
check_keys (oj_ctx *c, const oj_value *obj, const char *const *known)
{
  for (size_t i = 0; i < obj->len; i++)
    {
      const oj_member *m = &obj->members[i];
      bool found = false;
      for (const char *const *k = known; *k && !found; k++)
        found
            = strlen (*k) == m->key_len && memcmp (*k, m->key, m->key_len) == 0;
      if (!found)
        {
          size_t mark = oj_path_push_key (&c->path, m->key, m->key_len);
          oj_fail (c, "unknown key");
          oj_path_pop (&c->path, mark);
          return -1;
        }
    }
  return 0;
}

/* An object with only the given keys. */
static int
expect_object_with (oj_ctx *c, const oj_value *v, const char *const *known)
{
  if (oj_expect_object (c, v) < 0)
    return -1;
  return check_keys (c, v, known);
}

/* Sizes: a number of bytes, or a string with a binary suffix. */
static int
read_size (oj_ctx *c, const oj_value *v, void *out)
{
  if (v->type == OJ_NUMBER)
    return oj_read_u64 (c, v, out);
  if (v->type != OJ_STRING || !ar_parse_size (v->text, out))
    return oj_fail_type (c, v, "size (bytes, or a string like \"512M\")");
  return 0;
}

/* Durations: a number of seconds, or a string like "90s", "15m", "1h". */
static int
read_duration (oj_ctx *c, const oj_value *v, void *out)
{
  uint64_t seconds;
  if (v->type == OJ_NUMBER)
    {
      if (oj_read_u64 (c, v, &seconds) < 0)
        return -1;
      if (seconds > INT64_MAX)
        return oj_fail_type (c, v, "duration");
      *(int64_t *) out = (int64_t) seconds;
      return 0;
    }
  if (v->type != OJ_STRING || !ar_parse_duration (v->text, out))
    return oj_fail_type (c, v, "duration (seconds, or a string like \"1h\")");
  return 0;
}

static int
read_cpus (oj_ctx *c, const oj_value *v, void *out)
{
  if ((v->type != OJ_NUMBER && v->type != OJ_STRING)
      || !ar_parse_cpus (v->text, out))
    return oj_fail_type (c, v, "number of cpus (like 2 or 0.5)");
  return 0;
}

static int
read_count (oj_ctx *c, const oj_value *v, void *out)
{
  uint64_t n;
  if (oj_read_u64 (c, v, &n) < 0)
    return -1;
  if (n > INT64_MAX)
    return oj_fail_type (c, v, "count");
  *(int64_t *) out = (int64_t) n;
  return 0;
}

/* An absolute path without ".." components, stored clean. `/` itself is
 * refused: nothing here may be mounted over or exported from the root. */
static int
read_abs_path (oj_ctx *c, const oj_value *v, void *out)
{
  cleanup_free char *raw = NULL;
  if (oj_read_string (c, v, &raw) < 0)
    return -1;
  if (raw[0] != '/' || ar_path_has_dotdot (raw))
    return oj_fail_type (c, v, "absolute path without \"..\"");
  char **dest = out;
  free (*dest);
  *dest = ar_path_clean (raw);
  if (strcmp (*dest, "/") == 0)
    return oj_fail (c, "\"/\" is not allowed here");
  return 0;
}

/* A string list whose entries each pass `valid`. */
static int
read_checked_strv (oj_ctx *c, const oj_value *v, oci_strv *out,
                   bool (*valid) (const char *), const char *what)
{
  if (oj_read_strv (c, v, out) < 0)
    return -1;
  for (size_t i = 0; i < out->len; i++)
    if (!valid (out->items[i]))
      {
        size_t mark = oj_path_push_index (&c->path, i);
        oj_fail_type (c, &v->items[i], what);
        oj_path_pop (&c->path, mark);
        return -1;
      }
  return 0;
}

static bool
is_clean_abs_path (const char *path)
{
  return path[0] == '/' && !ar_path_has_dotdot (path);
}

static int
read_abs_path_list (oj_ctx *c, const oj_value *v, void *out)
{
  oci_strv *list = out;
  if (read_checked_strv (c, v, list, is_clean_abs_path,
                         "absolute path without \"..\"")
      < 0)
    return -1;
  for (size_t i = 0; i < list->len; i++)
    {
      char *clean = ar_path_clean (list->items[i]);
      free (list->items[i]);
      list->items[i] = clean;
    }
  return 0;
}

/* A hideHostPaths key: an absolute path without "..", or "~/..." (below
 * every home); '*' may stand for part of a component. */
static bool
is_hide_pattern (const char *path)
{
  if (strncmp (path, "~/", 2) == 0)
    path++;
  return is_clean_abs_path (path) && strcmp (path, "/") != 0;
}

bool
ar_map_remove (oci_map *m, const char *key)
{
  for (size_t i = 0; i < m->len; i++)
    if (strcmp (m->items[i].key, key) == 0)
      {
        free (m->items[i].key);
        free (m->items[i].value);
        memmove (&m->items[i], &m->items[i + 1],
                 (m->len - i - 1) * sizeof *m->items);
        m->len--;
        return true;
      }
  return false;
}

void
ar_map_set (oci_map *m, const char *key, const char *value)
{
  ar_map_remove (m, key);
  m->items = xrealloc (m->items, (m->len + 1) * sizeof *m->items);
  m->items[m->len++] = (oci_kv){ xstrdup (key), xstrdup (value) };
}

/* {"PATH": "reason", "PATH": false}: merged into the inherited list key by
 * key, as objects are; false takes an inherited entry out. */
static int
read_hide_member (oj_ctx *c, const oj_member *m, void *out)
{
  oci_map *hide = out;
  cleanup_free char *key = xasprintf ("%.*s", (int) m->key_len, m->key);
  if (strlen (key) != m->key_len || !is_hide_pattern (key))
    return oj_fail (c, "expected an absolute path without \"..\" (or ~/PATH)");
  bool in_homes = key[0] == '~';
  cleanup_free char *path = ar_path_clean (key + in_homes);
  cleanup_free char *clean = xasprintf ("%s%s", in_homes ? "~" : "", path);
  if (m->value.type == OJ_BOOL && !m->value.boolean)
    ar_map_remove (hide, clean);
  else if (m->value.type == OJ_STRING)
    ar_map_set (hide, clean, m->value.text);
  else
    return oj_fail_type (c, &m->value, "reason (string), or false to remove");
  return 0;
}

static int
read_hide_paths (oj_ctx *c, const oj_value *v, void *out)
{
  return oj_each_member (c, v, read_hide_member, out);
}

static bool
is_capability_name (const char *name)
{
  return strncmp (name, "CAP_", 4) == 0
         && only_chars (name + 4, UPPER DIGITS "_", 64);
}

static int
read_capabilities (oj_ctx *c, const oj_value *v, void *out)
{
  ar_profile *p = out;
  p->capabilities_set = true;
  return read_checked_strv (c, v, &p->capabilities, is_capability_name,
                            "capability name (CAP_...)");
}

/* An allow-list entry: a known annotation, or a prefix ending in '*'. */
static bool
is_annotation_pattern (const char *pattern)
{
  size_t len = strlen (pattern);
  if (len > 0 && pattern[len - 1] == '*')
    return strchr (pattern, '*') == pattern + len - 1;
  return ar_annotation_known (pattern);
}

static int
read_annotation_patterns (oj_ctx *c, const oj_value *v, void *out)
{
  return read_checked_strv (c, v, out, is_annotation_pattern,
                            "known annotation (without run.agentrun.) or a "
                            "prefix ending in *");
}

static int
read_egress_allow (oj_ctx *c, const oj_value *v, void *out)
{
  return read_checked_strv (c, v, out, ar_egress_entry_valid,
                            "CIDR, host, host:port or *.domain");
}

static int
read_program_rules (oj_ctx *c, const oj_value *v, void *out)
{
  oci_strv *rules = out;
  if (read_checked_strv (c, v, rules, ar_program_rule_valid,
                         "a program and its leading arguments, words "
                         "without ',' (\"git push\", \"curl\")")
      < 0)
    return -1;
  if (rules->len > AR_PROGRAM_RULES_MAX)
    return oj_fail (c, "%zu rules: at most %d", rules->len,
                    AR_PROGRAM_RULES_MAX);
  return 0;
}

static int
read_programs (oj_ctx *c, const oj_value *v, void *out)
{
  static const char *const keys[] = { "ask", NULL };
  ar_profile *p = out;
  return expect_object_with (c, v, keys) < 0
                 || oj_field (c, v, "ask", read_program_rules, &p->programs_ask)
                        < 0
             ? -1
             : 0;
}

static int
read_egress_mode (oj_ctx *c, const oj_value *v, void *out)
{
  if (v->type != OJ_STRING || !ar_egress_mode_parse (v->text, out))
    return oj_fail_type (c, v, "\"none\", \"allowlist\", \"open\" or \"ask\"");
  return 0;
}

static int
read_seccomp_mode (oj_ctx *c, const oj_value *v, void *out)
{
  static const char *const names[] = {
    [AR_PROFILE_SECCOMP_SPEC] = "spec",
    [AR_PROFILE_SECCOMP_DEFAULT] = "default",
    [AR_PROFILE_SECCOMP_NONE] = "none",
  };
  for (size_t i = 0; v->type == OJ_STRING && i < 3; i++)
    if (strcmp (v->text, names[i]) == 0)
      {
        *(ar_profile_seccomp *) out = (ar_profile_seccomp) i;
        return 0;
      }
  return oj_fail_type (c, v, "\"default\", \"spec\" or \"none\"");
}

static int
read_rlimit (oj_ctx *c, const oj_value *v, void *out)
{
  static const char *const keys[] = { "type", "hard", "soft", NULL };
  oci_rlimit *r = out;
  if (expect_object_with (c, v, keys) < 0
      || oj_required (c, v, "type", oj_read_string, &r->type) < 0
      || oj_required (c, v, "hard", oj_read_u64, &r->hard) < 0
      || oj_required (c, v, "soft", oj_read_u64, &r->soft) < 0)
    return -1;
  if (strncmp (r->type, "RLIMIT_", 7) != 0
      || !only_chars (r->type + 7, UPPER, 32))
    return oj_fail (c, "type: expected RLIMIT_..., got \"%s\"", r->type);
  if (r->soft > r->hard)
    return oj_fail (c, "soft limit above the hard limit");
  return 0;
}

static int
read_rlimits (oj_ctx *c, const oj_value *v, void *out)
{
  ar_profile *p = out;
  free_rlimits (p->rlimits, p->n_rlimits);
  p->rlimits = NULL;
  p->n_rlimits = 0;
  return oj_read_array (c, v, sizeof *p->rlimits, read_rlimit,
                        (void **) &p->rlimits, &p->n_rlimits);
}

/* Secrets the profile itself names: {"name": "/host/file"}. */
static int
read_secret_files (oj_ctx *c, const oj_value *v, void *out)
{
  oci_map *files = out;
  if (oj_read_map (c, v, files) < 0)
    return -1;
  for (size_t i = 0; i < files->len; i++)
    {
      const oci_kv *kv = &files->items[i];
      size_t mark = oj_path_push_key (&c->path, kv->key, strlen (kv->key));
      int r = 0;
      if (!ar_secret_name_valid (kv->key))
        r = oj_fail (c, "invalid secret name (want [A-Za-z0-9._-]+)");
      else if (!is_clean_abs_path (kv->value))
        r = oj_fail (c, "expected absolute host path without \"..\"");
      oj_path_pop (&c->path, mark);
      if (r < 0)
        return r;
    }
  return 0;
}

/* Giving a section turns it on, unless it says "enabled": false. */
static int
read_enabled (oj_ctx *c, const oj_value *v, bool *enabled)
{
  *enabled = true;
  return oj_field (c, v, "enabled", oj_read_bool, enabled);
}

static int
read_overlay (oj_ctx *c, const oj_value *v, void *out)
{
  static const char *const keys[] = { "enabled", "size", "inodes", NULL };
  ar_profile *p = out;
  if (expect_object_with (c, v, keys) < 0
      || read_enabled (c, v, &p->overlay) < 0
      || oj_field (c, v, "size", read_size, &p->overlay_size_bytes) < 0
      || oj_field (c, v, "inodes", oj_read_u64, &p->overlay_inodes) < 0)
    return -1;
  return 0;
}

/* The per-namespace counts the kernel keeps in /proc/sys/user. */
static const char *const userns_limit_names[] = { "max_user_namespaces",
                                                  "max_mnt_namespaces",
                                                  "max_pid_namespaces",
                                                  "max_net_namespaces",
                                                  "max_ipc_namespaces",
                                                  "max_uts_namespaces",
                                                  "max_cgroup_namespaces",
                                                  "max_time_namespaces",
                                                  "max_inotify_instances",
                                                  "max_inotify_watches",
                                                  "max_fanotify_groups",
                                                  "max_fanotify_marks",
                                                  NULL };

static int
read_userns_limit (oj_ctx *c, const oj_member *m, void *out)
{
  oci_map *limits = out;
  cleanup_free char *key = xasprintf ("%.*s", (int) m->key_len, m->key);
  bool known = false;
  for (size_t i = 0; userns_limit_names[i]; i++)
    known |= strcmp (key, userns_limit_names[i]) == 0;
  if (!known)
    return oj_fail (c, "unknown limit (one of max_user_namespaces, "
                       "max_mnt_namespaces, ..., max_inotify_instances, "
                       "max_inotify_watches, max_fanotify_groups, "
                       "max_fanotify_marks)");
  int64_t n;
  if (oj_read_i64 (c, &m->value, &n) < 0)
    return -1;
  if (n < 0 || n > INT32_MAX)
    return oj_fail (c, "expected 0 to 2147483647");
  cleanup_free char *text = xasprintf ("%lld", (long long) n);
  ar_map_set (limits, key, text);
  return 0;
}

static int
read_userns_limits (oj_ctx *c, const oj_value *v, void *out)
{
  return oj_each_member (c, v, read_userns_limit, out);
}

static int
read_subid_user (oj_ctx *c, const oj_value *v, void *out)
{
  char **user = out;
  cleanup_free char *name = NULL;
  if (oj_read_string (c, v, &name) < 0)
    return -1;
  if (name[0] == '\0' || strlen (name) > 32 || strpbrk (name, ":/\n") != NULL)
    return oj_fail (c, "expected a user name");
  free (*user);
  *user = steal_pointer (&name);
  return 0;
}

static int
read_userns (oj_ctx *c, const oj_value *v, void *out)
{
  static const char *const keys[]
      = { "enabled", "subidUser", "size", "limits", NULL };
  ar_profile *p = out;
  if (expect_object_with (c, v, keys) < 0 || read_enabled (c, v, &p->userns) < 0
      || oj_field (c, v, "subidUser", read_subid_user, &p->userns_user) < 0
      || oj_field (c, v, "size", oj_read_u32, &p->userns_size) < 0
      || oj_field (c, v, "limits", read_userns_limits, &p->userns_limits) < 0)
    return -1;
  if (p->userns_user == NULL)
    p->userns_user = xstrdup (AR_USERNS_DEFAULT_USER);
  if (p->userns_size == 0)
    p->userns_size = AR_USERNS_DEFAULT_SIZE;
  if (p->userns_size < 1024)
    return oj_fail (c, "size: expected at least 1024 ids");
  return 0;
}

static int
read_secrets (oj_ctx *c, const oj_value *v, void *out)
{
  static const char *const keys[] = {
    "enabled", "path", "mainOnly", "ask", "allowedHostDirs", "files", NULL
  };
  ar_profile *p = out;
  if (expect_object_with (c, v, keys) < 0
      || read_enabled (c, v, &p->secrets) < 0
      || oj_field (c, v, "path", read_abs_path, &p->secrets_path) < 0
      || oj_field (c, v, "mainOnly", oj_read_bool, &p->secrets_main_only) < 0
      || oj_field (c, v, "ask", oj_read_bool, &p->secrets_ask) < 0
      || oj_field (c, v, "allowedHostDirs", read_abs_path_list,
                   &p->secrets_allowed_host_dirs)
             < 0
      || oj_field (c, v, "files", read_secret_files, &p->secret_files) < 0)
    return -1;
  return 0;
}

static int
read_output (oj_ctx *c, const oj_value *v, void *out)
{
  static const char *const keys[]
      = { "enabled", "path", "maxBytes", "maxFiles", "allowedHostDirs", NULL };
  ar_profile *p = out;
  if (expect_object_with (c, v, keys) < 0 || read_enabled (c, v, &p->output) < 0
      || oj_field (c, v, "path", read_abs_path, &p->output_path) < 0
      || oj_field (c, v, "maxBytes", read_size, &p->output_max_bytes) < 0
      || oj_field (c, v, "maxFiles", oj_read_u64, &p->output_max_files) < 0
      || oj_field (c, v, "allowedHostDirs", read_abs_path_list,
                   &p->output_allowed_host_dirs)
             < 0)
    return -1;
  return 0;
}

static int
read_limits (oj_ctx *c, const oj_value *v, void *out)
{
  static const char *const keys[]
      = { "memory", "pids", "cpus", "wallClock", NULL };
  ar_profile *p = out;
  if (expect_object_with (c, v, keys) < 0
      || oj_field (c, v, "memory", read_size, &p->memory_bytes) < 0
      || oj_field (c, v, "pids", read_count, &p->pids) < 0
      || oj_field (c, v, "cpus", read_cpus, &p->millicpus) < 0
      || oj_field (c, v, "wallClock", read_duration, &p->wall_clock_seconds)
             < 0)
    return -1;
  return 0;
}

/* The egress hook's upstream resolver: an address, optionally :port. */
static int
read_upstream (oj_ctx *c, const oj_value *v, void *out)
{
  char **dst = out;
  if (v->type != OJ_STRING || v->text[0] == '\0'
      || strspn (v->text, "0123456789abcdefABCDEF.:[]") != strlen (v->text))
    return oj_fail_type (
        c, v,
        "resolver address (\"10.0.0.53\", \"10.0.0.53:5353\", \"[fd00::53]:53\")");
  free (*dst);
  *dst = xstrdup (v->text);
  return 0;
}

static int
read_ask_timeout (oj_ctx *c, const oj_value *v, void *out)
{
  int64_t *seconds = out;
  if (read_duration (c, v, seconds) < 0)
    return -1;
  if (*seconds < 1 || *seconds > EGRESS_ASK_TIMEOUT_MAX)
    return oj_fail (c, "expected 1 s to %d s, got %" PRId64 " s",
                    EGRESS_ASK_TIMEOUT_MAX, *seconds);
  return 0;
}

/* Who decides what the profile asks about (egress mode ask, secrets
 * with ask), and how long it has. */
static int
read_approver (oj_ctx *c, const oj_value *v, void *out)
{
  static const char *const keys[] = { "socket", "timeout", NULL };
  ar_profile *p = out;
  if (expect_object_with (c, v, keys) < 0
      || oj_field (c, v, "socket", read_abs_path, &p->approver) < 0
      || oj_field (c, v, "timeout", read_ask_timeout, &p->ask_timeout) < 0)
    return -1;
  return 0;
}

static int
read_may_allow (oj_ctx *c, const oj_value *v, void *out)
{
  ar_profile *p = out;
  p->egress_may_allow_set = true;
  oj_strv_clear (&p->egress_may_allow);
  return read_egress_allow (c, v, &p->egress_may_allow);
}

static int
read_network (oj_ctx *c, const oj_value *v, void *out)
{
  static const char *const keys[] = {
    "egress", "allow", "upstream", "annotationsMayOpen", "annotationsMayAllow",
    NULL
  };
  ar_profile *p = out;
  if (expect_object_with (c, v, keys) < 0
      || oj_field (c, v, "egress", read_egress_mode, &p->egress) < 0
      || oj_field (c, v, "allow", read_egress_allow, &p->egress_allow) < 0
      || oj_field (c, v, "upstream", read_upstream, &p->egress_upstream) < 0

      || oj_field (c, v, "annotationsMayOpen", oj_read_bool,
                   &p->egress_annotations_may_open)
             < 0
      || oj_field (c, v, "annotationsMayAllow", read_may_allow, p) < 0)
    return -1;
  return 0;
}

static int
read_audit (oj_ctx *c, const oj_value *v, void *out)
{
  static const char *const keys[] = { "enabled", "path", NULL };
  ar_profile *p = out;
  bool enabled = true;
  if (expect_object_with (c, v, keys) < 0
      || oj_field (c, v, "enabled", oj_read_bool, &enabled) < 0
      || oj_field (c, v, "path", read_abs_path, &p->audit_path) < 0)
    return -1;
  if (!enabled)
    {
      free (p->audit_path);
      p->audit_path = NULL;
    }
  else if (p->audit_path == NULL)
    return oj_fail (c, "path: missing (an audit log needs a file)");
  return 0;
}

static int
read_profile_document (oj_ctx *c, const oj_value *doc, ar_profile *p)
{
  static const char *const keys[]
      = { "extends",         "description", "overlay",       "secrets",
          "output",          "limits",      "seccomp",       "capabilities",
          "noNewPrivileges", "maskedPaths", "readonlyPaths", "rlimits",
          "network",         "approver",    "audit",         "annotations",
          "hideHostPaths",   "programs",    "userNamespace", NULL };
  if (expect_object_with (c, doc, keys) < 0)
    return -1;
  char *description = NULL;
  int r = oj_field (c, doc, "description", oj_read_string, &description);
  free (description);
  if (r < 0 || oj_field (c, doc, "overlay", read_overlay, p) < 0
      || oj_field (c, doc, "userNamespace", read_userns, p) < 0
      || oj_field (c, doc, "secrets", read_secrets, p) < 0
      || oj_field (c, doc, "output", read_output, p) < 0
      || oj_field (c, doc, "limits", read_limits, p) < 0
      || oj_field (c, doc, "seccomp", read_seccomp_mode, &p->seccomp) < 0
      || oj_field (c, doc, "capabilities", read_capabilities, p) < 0
      || oj_field (c, doc, "noNewPrivileges", oj_read_bool,
                   &p->no_new_privileges)
             < 0
      || oj_field (c, doc, "maskedPaths", read_abs_path_list, &p->masked_paths)
             < 0
      || oj_field (c, doc, "readonlyPaths", read_abs_path_list,
                   &p->readonly_paths)
             < 0
      || oj_field (c, doc, "rlimits", read_rlimits, p) < 0
      || oj_field (c, doc, "network", read_network, p) < 0
      || oj_field (c, doc, "approver", read_approver, p) < 0
      || oj_field (c, doc, "programs", read_programs, p) < 0
      || oj_field (c, doc, "hideHostPaths", read_hide_paths,
                   &p->hide_host_paths)
             < 0
      || oj_field (c, doc, "audit", read_audit, p) < 0
      || oj_field (c, doc, "annotations", read_annotation_patterns,
                   &p->annotations)
             < 0)
    return -1;
  return 0;
}

/* Paths that sections turned on but did not name get their defaults. */
static void
fill_defaults (ar_profile *p)
{
  if (p->secrets && p->secrets_path == NULL)
    p->secrets_path = xstrdup (DEFAULT_SECRETS_PATH);
  if (p->output && p->output_path == NULL)
    p->output_path = xstrdup (DEFAULT_OUTPUT_PATH);
}

/* ------------------------------------------------------------------ */
/* Finding and loading profiles.                                       */

static int load_named (const char *name, unsigned depth, ar_profile **out,
                       ar_error_t **err);

static ar_profile *
oci_profile (void)
{
  ar_profile *p = empty_profile ("oci");
  p->plain_oci = true;
  return p;
}

/* Apply an already parsed document over `base`, which becomes the
 * profile called `name`. */
static int
apply_document (ar_profile *base, const char *name, oj_ctx *c,
                const oj_value *doc)
{
  base->plain_oci = false;
  free (base->name);
  base->name = xstrdup (name);
  if (read_profile_document (c, doc, base) < 0)
    return -1;
  fill_defaults (base);
  return 0;
}

static int
builtin_profile (const char *name, ar_profile **out, ar_error_t **err)
{
  if (strcmp (name, "oci") == 0)
    {
      *out = oci_profile ();
      return 0;
    }
  if (strcmp (name, "agent") != 0)
    return ar_error_set (err, 0,
                         "profile \"%s\": not found (no built-in profile "
                         "and no %s/profiles/%s.json)",
                         name, ar_agent_config_dir (), name);

  const char *file = "built-in profile \"agent\"";
  oj_value doc = { 0 };
  if (oj_parse (ar_builtin_agent_profile_json,
                strlen (ar_builtin_agent_profile_json), file, &doc, err)
      < 0)
    return -1;
  cleanup_profile ar_profile *p = empty_profile (name);
  oj_ctx c = { .file = file, .err = err };
  int r = apply_document (p, name, &c, &doc);
  oj_value_clear (&doc);
  if (r < 0)
    return -1;
  *out = steal_pointer (&p);
  return 0;
}

/* The profile a file starts from: nothing ("extends" absent), the
 * built-in of the same name (a file replacing "agent" that extends
 * "agent"), or any other profile. Errors read "FILE: .extends: ...". */
static int
load_base (oj_ctx *c, const oj_value *doc, const char *name, unsigned depth,
           ar_profile **out)
{
  cleanup_free char *extends = NULL;
  if (oj_field (c, doc, "extends", oj_read_string, &extends) < 0)
    return -1;
  if (extends == NULL)
    {
      *out = empty_profile (name);
      return 0;
    }
  int r;
  if (strcmp (extends, name) != 0)
    r = load_named (extends, depth + 1, out, c->err);
  else if (strcmp (name, "agent") == 0)
    r = builtin_profile (name, out, c->err);
  else
    r = ar_error_set (c->err, 0, "a profile cannot extend itself");
  if (r < 0)
    return ar_error_prefix (c->err, "%s: .extends", c->file);
  return 0;
}

static int
load_file (const char *path, const char *data, size_t len, const char *name,
           unsigned depth, ar_profile **out, ar_error_t **err)
{
  oj_value doc = { 0 };
  if (oj_parse (data, len, path, &doc, err) < 0)
    return -1;
  oj_ctx c = { .file = path, .err = err };
  cleanup_profile ar_profile *p = NULL;
  int r = oj_expect_object (&c, &doc);
  if (r == 0)
    r = load_base (&c, &doc, name, depth, &p);
  if (r == 0)
    r = apply_document (p, name, &c, &doc);
  oj_value_clear (&doc);
  if (r < 0)
    return -1;
  *out = steal_pointer (&p);
  return 0;
}

int
ar_profile_parse (const char *file, const char *data, size_t len,
                  const char *name, ar_profile **out, ar_error_t **err)
{
  return load_file (file, data, len, name, 0, out, err);
}

static int
load_named (const char *name, unsigned depth, ar_profile **out,
            ar_error_t **err)
{
  if (!ar_profile_name_valid (name))
    {
      cleanup_free char *quoted = oj_quote (name, strlen (name));
      if (strchr (name, '/'))
        return ar_error_set (
            err, 0,
            "profile %s: a profile is named, not given by path: put it in %s/profiles/NAME.json and give NAME",
            quoted, ar_agent_config_dir ());
      return ar_error_set (
          err, 0, "profile %s: invalid name (want [a-z0-9_-]+)", quoted);
    }
  /* "oci" always means plain runtime behaviour; no file can change it. */
  if (strcmp (name, "oci") == 0)
    return builtin_profile (name, out, err);
  if (depth >= AR_PROFILE_MAX_DEPTH)
    return ar_error_set (err, 0,
                         "profile \"%s\": \"extends\" nested deeper than %d "
                         "(a cycle?)",
                         name, AR_PROFILE_MAX_DEPTH);

  cleanup_free char *path
      = xasprintf ("%s/profiles/%s.json", ar_agent_config_dir (), name);
  cleanup_free char *data = NULL;
  size_t len = 0;
  cleanup_error ar_error_t *read_err = NULL;
  if (ar_read_file_at (AT_FDCWD, path, AR_PROFILE_MAX_FILE_SIZE, &data, &len,
                       &read_err)
      < 0)
    {
      if (read_err->errno_value == ENOENT)
        return builtin_profile (name, out, err);
      *err = steal_pointer (&read_err);
      return ar_error_prefix (err, "profile \"%s\"", name);
    }
  return load_file (path, data, len, name, depth, out, err);
}

/* The "profile" key of <config dir>/agentrun.json; "oci" without one.
 * Other keys belong to other parts of agentrun and are left alone. */
static int
default_profile_name (char **name, ar_error_t **err)
{
  cleanup_free char *path
      = xasprintf ("%s/agentrun.json", ar_agent_config_dir ());
  cleanup_free char *data = NULL;
  size_t len = 0;
  cleanup_error ar_error_t *read_err = NULL;
  if (ar_read_file_at (AT_FDCWD, path, AR_PROFILE_MAX_FILE_SIZE, &data, &len,
                       &read_err)
      < 0)
    {
      if (read_err->errno_value == ENOENT)
        {
          *name = xstrdup ("oci");
          return 0;
        }
      *err = steal_pointer (&read_err);
      return -1;
    }

  oj_value doc = { 0 };
  if (oj_parse (data, len, path, &doc, err) < 0)
    return -1;
  oj_ctx c = { .file = path, .err = err };
  int r = oj_expect_object (&c, &doc);
  if (r == 0)
    r = oj_field (&c, &doc, "profile", oj_read_string, name);
  oj_value_clear (&doc);
  if (r < 0)
    return -1;
  if (*name == NULL)
    *name = xstrdup ("oci");
  return 0;
}

int
ar_profile_load (const char *name, ar_profile **out, ar_error_t **err)
{
  cleanup_free char *default_name = NULL;
  if (name == NULL)
    {
      if (default_profile_name (&default_name, err) < 0)
        return -1;
      name = default_name;
    }
  return load_named (name, 0, out, err);
}

void
ar_profile_trust_caller (ar_profile *profile)
{
  profile->trust_caller = true;
}

void
ar_profile_set_egress_hook (ar_profile *profile, const char *path)
{
  free (profile->egress_hook_path);
  profile->egress_hook_path = path ? xstrdup (path) : NULL;
}
