/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "sandbox_flags.h"
#include "process_flags.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"
#include "../util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENV_FILE_MAX (1u << 20)
#define HOSTNAME_MAX 64 /* HOST_NAME_MAX, what sethostname takes */

int
ar_sandbox_load_profile (const char *name, ar_profile **out, ar_error_t **err)
{
  ar_profile *profile = NULL;
  if (ar_profile_load (name ? name : "agent", &profile, err) < 0)
    return ar_error_prefix (err, "sandbox: --profile");
  if (!ar_profile_has_overlay (profile))
    {
      ar_error_set (
          err, 0,
          "sandbox: profile \"%s\" has no overlay, and a sandbox keeps its workspace and every write in one: use a profile with the overlay (the default, agent)",
          ar_profile_name (profile));
      ar_profile_free (profile);
      return -1;
    }
  ar_profile_trust_caller (profile);
  *out = profile;
  return 0;
}

/* Which flag makes which run.agentrun.* annotation (sandbox.c). */
static const struct
{
  const char *suffix;
  const char *flag;
} annotation_flags[] = {
  { "workspace", "--workspace" },
  { "workspace.readOnly", "--read-only-workspace" },
  { "output", "--output" },
  { "timeout", "--timeout" },
  { "memory", "--memory" },
  { "pids", "--pids" },
  { "audit", "--audit" },
  { "overlay.size", "--overlay-size" },
  { "overlay.from", "--from" },
  { "egress.allow", "--allow-net" },
  { "approver", "--approver" },
  { "secrets.ask", "--ask-secrets" },
  { "programs.ask", "--ask-program" },
  { "hide", "--hide" },
  { "unhide", "--unhide" },
};

static char *
flag_of (const char *suffix)
{
  if (strncmp (suffix, "secret.", strlen ("secret.")) == 0)
    return xasprintf ("--secret %s", suffix + strlen ("secret."));
  for (size_t i = 0; i < sizeof annotation_flags / sizeof *annotation_flags;
       i++)
    if (strcmp (suffix, annotation_flags[i].suffix) == 0)
      return xstrdup (annotation_flags[i].flag);
  return xasprintf ("annotation %s%s", AR_AGENT_ANNOTATION_PREFIX, suffix);
}

int
ar_sandbox_check_annotations (const ar_profile *profile, const oci_spec *spec,
                              ar_error_t **err)
{
  const size_t prefix_len = strlen (AR_AGENT_ANNOTATION_PREFIX);
  for (size_t i = 0; i < spec->annotations.len; i++)
    {
      const oci_kv *kv = &spec->annotations.items[i];
      if (strncmp (kv->key, AR_AGENT_ANNOTATION_PREFIX, prefix_len) != 0)
        continue;
      const char *suffix = kv->key + prefix_len;
      if (ar_policy_check_annotation (profile, suffix, kv->value, err) < 0)
        {
          cleanup_free char *flag = flag_of (suffix);
          return ar_error_prefix (err, "sandbox: %s", flag);
        }
    }
  return 0;
}

int
ar_sandbox_host_file (const char *flag, const char *given, char **out,
                      ar_error_t **err)
{
  const char *slash = strrchr (given, '/');
  const char *base = slash ? slash + 1 : given;
  if (*base == '\0' || strcmp (base, ".") == 0 || strcmp (base, "..") == 0)
    return ar_error_set (err, 0, "sandbox: %s `%s`: expected a file name", flag,
                         given);
  cleanup_free char *dir
      = slash == given ? xstrdup ("/")
        : slash        ? xasprintf ("%.*s", (int) (slash - given), given)
                       : xstrdup (".");
  char buf[PATH_MAX];
  struct stat st;
  if (realpath (dir, buf) == NULL || stat (buf, &st) < 0)
    return ar_error_set (err, errno, "sandbox: %s `%s`", flag, given);
  if (!S_ISDIR (st.st_mode))
    return ar_error_set (err, ENOTDIR, "sandbox: %s `%s`", flag, given);
  *out = xasprintf ("%s/%s", strcmp (buf, "/") == 0 ? "" : buf, base);
  return 0;
}

/* ------------------------------------------------------------------ */
/* The environment.                                                     */

/* NAME=VALUE as given; NAME alone takes the host's value, and is left
 * out when the host has none (as docker does). */
static void
env_add (oci_strv *env, const char *entry)
{
  if (strchr (entry, '=') != NULL)
    {
      oci_env_set (env, entry);
      return;
    }
  const char *host = getenv (entry);
  if (host == NULL)
    return;
  cleanup_free char *kv = xasprintf ("%s=%s", entry, host);
  oci_env_set (env, kv);
}

static bool
env_name_valid (const char *name, size_t len)
{
  if (len == 0)
    return false;
  for (size_t i = 0; i < len; i++)
    if (name[i] == ' ' || name[i] == '\t' || name[i] == '\v' || name[i] == '\f'
        || name[i] == '\r')
      return false;
  return true;
}

/* docker's --env-file: NAME=VALUE lines (the value as it is, no quotes
 * removed), NAME alone for the host's value, '#' comments and blank lines
 * skipped, blanks before a line ignored. */
static int
env_file_line (const char *file, size_t line_no, char *line, oci_strv *env,
               ar_error_t **err)
{
  line += strspn (line, " \t");
  size_t len = strlen (line);
  if (len > 0 && line[len - 1] == '\r')
    line[--len] = '\0';
  if (len == 0 || line[0] == '#')
    return 0;
  const char *eq = strchr (line, '=');
  size_t name_len = eq ? (size_t) (eq - line) : len;
  if (!eq)
    while (name_len > 0
           && (line[name_len - 1] == ' ' || line[name_len - 1] == '\t'))
      line[--name_len] = '\0';
  if (!env_name_valid (line, name_len))
    return ar_error_set (
        err, 0,
        "sandbox: --env-file `%s`: line %zu: expected NAME=VALUE or NAME (a name without blanks), got `%s`",
        file, line_no, line);
  env_add (env, line);
  return 0;
}

static int
env_file_read (const char *file, oci_strv *env, ar_error_t **err)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (ar_read_file_at (AT_FDCWD, file, ENV_FILE_MAX, &text, &len, err) < 0)
    return ar_error_prefix (err, "sandbox: --env-file");
  if (memchr (text, '\0', len) != NULL)
    return ar_error_set (err, 0, "sandbox: --env-file `%s`: holds a NUL byte",
                         file);
  size_t line_no = 0;
  char *save = NULL;
  for (char *line = text; line; line = save)
    {
      save = strchr (line, '\n');
      if (save)
        *save++ = '\0';
      line_no++;
      if (env_file_line (file, line_no, line, env, err) < 0)
        return -1;
    }
  return 0;
}

/* ------------------------------------------------------------------ */
/* User, cwd, hostname.                                                 */

static int
set_user (const ar_sandbox_process_flags *f, oci_user *user, ar_error_t **err)
{
  user->uid = 0;
  user->gid = 0;
  if (f->user == NULL)
    return 0;
  if (ar_user_flag_apply ("sandbox", f->user, user, err) < 0)
    return -1;
  if (f->rootless && (user->uid != 0 || user->gid != 0))
    return ar_error_set (
        err, 0,
        "sandbox: --user %s: without root the sandbox's user namespace maps only your own ids, as 0:0",
        f->user);
  return 0;
}

static int
set_hostname (const char *given, oci_spec *spec, ar_error_t **err)
{
  const char *name = given ? given : "sandbox";
  size_t len = strlen (name);
  if (len == 0 || len > HOSTNAME_MAX || name[0] == '-' || name[0] == '.'
      || strspn (
             name,
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
             != len)
    return ar_error_set (
        err, 0,
        "sandbox: --hostname `%s`: expected letters, digits, '-' and '.', at most %d",
        name, HOSTNAME_MAX);
  free (spec->hostname);
  spec->hostname = xstrdup (name);
  return 0;
}

/* --workdir: a path in the sandbox; a relative one is below the
 * workspace. */
static int
set_cwd (const ar_sandbox_process_flags *f, oci_process *proc, ar_error_t **err)
{
  const char *dir = f->workdir ? f->workdir : f->workspace;
  if (*dir == '\0')
    return ar_error_set (err, 0, "sandbox: --workdir: expected a directory");
  free (proc->cwd);
  proc->cwd
      = dir[0] == '/' ? xstrdup (dir) : xasprintf ("%s/%s", f->workspace, dir);
  return 0;
}

/* --env-file, then each -e: -e wins. */
static int
add_env (const ar_sandbox_process_flags *f, oci_strv *env, ar_error_t **err)
{
  if (f->env_file && env_file_read (f->env_file, env, err) < 0)
    return -1;
  for (size_t i = 0; i < f->n_env; i++)
    {
      const char *eq = strchr (f->env[i], '=');
      if (!env_name_valid (f->env[i],
                           eq ? (size_t) (eq - f->env[i]) : strlen (f->env[i])))
        return ar_error_set (err, 0,
                             "sandbox: --env `%s`: expected NAME=VALUE or NAME",
                             f->env[i]);
      env_add (env, f->env[i]);
    }
  return 0;
}

int
ar_sandbox_set_process (const ar_sandbox_process_flags *f, oci_spec *spec,
                        ar_error_t **err)
{
  oci_process *proc = spec->process;
  if (set_user (f, &proc->user, err) < 0
      || set_hostname (f->hostname, spec, err) < 0
      || set_cwd (f, proc, err) < 0)
    return -1;
  /* as docker: root's home, or / for a user without a passwd entry */
  oci_env_set (&proc->env, proc->user.uid == 0 ? "HOME=/root" : "HOME=/");
  return add_env (f, &proc->env, err);
}

int
ar_sandbox_env_entries (const ar_sandbox_process_flags *f, oci_strv *env,
                        ar_error_t **err)
{
  return add_env (f, env, err);
}
