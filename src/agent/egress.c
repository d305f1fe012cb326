/* SPDX-License-Identifier: Apache-2.0 */
/* The runtime's side of egress control; the hook (hooks/agentrun-egress)
 * does the rest.
 *
 * resolv.conf: the hook's resolver listens on 127.0.0.53 inside the
 * container's own netns, the same address for every container, so the
 * file's content is known before the hook runs. It has to be: the bind
 * mount is made by the init before createRuntime hooks run. So prepare
 * writes it into the container's state dir and adds the mount; it goes
 * with the state dir at delete. */
#include "config.h"
#include "egress.h"
#include "../../hooks/egress.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define RESOLV_CONF_FILE "resolv.conf"
#define NSSWITCH_FILE "nsswitch.conf"
#define NSSWITCH_MAX 65536
#define RESOLV_CONF_TEXT "nameserver 127.0.0.53\noptions edns0\n"
/* Mode ask: a lookup may wait for a person; a client gives up after 30 s
 * at most (glibc's cap), once. */
#define RESOLV_CONF_ASK_TEXT                                                   \
  "nameserver 127.0.0.53\noptions edns0 timeout:30 attempts:1\n"

static char *
beside (const char *binary_path)
{
  char resolved[PATH_MAX];
  if (realpath (binary_path, resolved) == NULL)
    return NULL;
  char *slash = strrchr (resolved, '/');
  if (slash == NULL)
    return NULL;
  *slash = '\0';
  char *candidate = xasprintf ("%s/" AR_EGRESS_HOOK_NAME, resolved);
  if (access (candidate, X_OK) == 0)
    return candidate;
  free (candidate);
  return NULL;
}

/* argv[0] without a slash was found on PATH: find it the same way. */
static char *
beside_path_lookup (const char *name)
{
  const char *path = getenv ("PATH");
  cleanup_free char *copy
      = xstrdup (path ? path : "/usr/local/sbin:/usr/sbin:/usr/bin");
  char *save = NULL;
  for (char *dir = strtok_r (copy, ":", &save); dir;
       dir = strtok_r (NULL, ":", &save))
    {
      cleanup_free char *exe = xasprintf ("%s/%s", dir, name);
      if (access (exe, X_OK) == 0)
        return beside (exe);
    }
  return NULL;
}

/* The runtime may run from a sealed memfd copy (/proc/self/exe leads
 * nowhere useful then), so the name it was started by is the guide. */
char *
ar_egress_hook_find (void)
{
  const char *env = secure_getenv ("AGENTRUN_EGRESS_HOOK");
  if (env && *env)
    return xstrdup (env);
  const char *argv0 = program_invocation_name;
  char *found = NULL;
  if (argv0 && strchr (argv0, '/'))
    found = beside (argv0);
  else if (argv0 && *argv0)
    found = beside_path_lookup (argv0);
  if (found == NULL)
    found = beside ("/proc/self/exe");
  return found ? found : xstrdup (AR_EGRESS_HOOK_DEFAULT);
}

bool
ar_egress_hook_is_own (const oci_hook *hook, const char *own_path)
{
  return hook->path && own_path && strcmp (hook->path, own_path) == 0
         && hook->args.len >= 2
         && strcmp (hook->args.items[0], AR_EGRESS_HOOK_NAME) == 0;
}

int
ar_egress_hook_run_here (const oci_hook *hook, const char *state_json,
                         bool caller_stays, ar_error_t **err)
{
  return egress_hook_run ((int) hook->args.len, hook->args.items, state_json,
                          caller_stays, err);
}

static bool
spec_has_own_netns (const oci_spec *spec)
{
  return oci_spec_find_namespace (spec, OCI_NS_NETWORK) != NULL;
}

/* `text` (an nsswitch.conf) with its hosts line cut to the sources that
 * need no network: /etc/hosts ("files") and the host's own name. */
static char *
hosts_without_network (const char *text)
{
  char *out = xstrdup ("");
  for (const char *line = text; *line;)
    {
      size_t len = strcspn (line, "\n");
      const char *p = line + strspn (line, " \t");
      cleanup_free char *kept = xstrndup (line, len);
      char *next;
      if (strncmp (p, "hosts:", 6) != 0)
        next = xasprintf ("%s%s\n", out, kept);
      else
        next = xasprintf ("%shosts: files%s\n", out,
                          strstr (kept, "myhostname") ? " myhostname" : "");
      free (out);
      out = next;
      line += len + (line[len] == '\n');
    }
  return out;
}

/* Whether `env` sets `key`, in any case (npm reads its settings from the
 * environment so). */
static bool
env_sets (const oci_strv *env, const char *key)
{
  size_t len = strlen (key);
  for (size_t i = 0; i < env->len; i++)
    if (strncasecmp (env->items[i], key, len) == 0 && env->items[i][len] == '=')
      return true;
  return false;
}

/* npm and pip retry a failed lookup as they retry a lost connection (npm
 * 11 for 70 s, pip 23 for 8 s, measured), and with no network a retry
 * cannot help: they are told not to, unless the spec says otherwise. */
static void
no_retries (oci_spec *spec)
{
  static const char *const settings[][2] = {
    { "npm_config_fetch_retries", "npm_config_fetch_retries=0" },
    { "PIP_RETRIES", "PIP_RETRIES=0" },
  };
  if (spec->process == NULL)
    return;
  for (size_t i = 0; i < sizeof settings / sizeof *settings; i++)
    if (!env_sets (&spec->process->env, settings[i][0]))
      oci_strv_push (&spec->process->env, settings[i][1]);
}

/* Mode none: a lookup has nowhere to go, and fails at once; as a
 * temporary failure (EAI_AGAIN, nothing answers), clients retry it (npm
 * for 72 s, pip for 10 s). Told that names come from /etc/hosts alone,
 * glibc and Go answer "no such name" (EAI_NONAME), as a refused name
 * gets in allowlist mode. A rootfs without nsswitch.conf (musl) is left
 * as it is. Its file is the image's: read beneath the root, and only a
 * regular file. */
static int
prepare_no_lookups (const char *state_dir, oci_spec *spec, ar_error_t **err)
{
  cleanup_close int root_fd
      = open (spec->root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_error ar_error_t *ignored = NULL;
  cleanup_close int fd
      = root_fd < 0 ? -1
                    : ar_path_open_in_root (root_fd, "/etc/" NSSWITCH_FILE,
                                            O_PATH, &ignored);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return 0;
  cleanup_free char *via = xasprintf ("/proc/self/fd/%d", fd);
  cleanup_free char *text = NULL;
  if (ar_read_file_at (AT_FDCWD, via, NSSWITCH_MAX, &text, NULL, err) < 0)
    return ar_error_prefix (err, "egress: /etc/" NSSWITCH_FILE);
  cleanup_free char *cut = hosts_without_network (text);
  cleanup_free char *path = xasprintf ("%s/" NSSWITCH_FILE, state_dir);
  if (ar_write_file_atomic_at (AT_FDCWD, path, cut, strlen (cut), 0644, err)
      < 0)
    return ar_error_prefix (err, "egress");
  const char *const options[]
      = { "rbind", "ro", "nosuid", "nodev", "noexec", NULL };
  oci_spec_append_mount (spec, "bind", path, "/etc/" NSSWITCH_FILE, options);
  return 0;
}

int
ar_egress_prepare (const ar_agent_plan *plan, const char *state_dir,
                   oci_spec *spec, ar_error_t **err)
{
  if (!spec_has_own_netns (spec))
    return 0;
  if (plan->egress == AR_EGRESS_NONE)
    {
      no_retries (spec);
      return prepare_no_lookups (state_dir, spec, err);
    }
  cleanup_free char *path = xasprintf ("%s/" RESOLV_CONF_FILE, state_dir);
  const char *text
      = plan->egress == AR_EGRESS_ASK ? RESOLV_CONF_ASK_TEXT : RESOLV_CONF_TEXT;
  if (ar_write_file_atomic_at (AT_FDCWD, path, text, strlen (text), 0644, err)
      < 0)
    return ar_error_prefix (err, "egress");
  const char *const options[]
      = { "rbind", "ro", "nosuid", "nodev", "noexec", NULL };
  oci_spec_append_mount (spec, "bind", path, "/etc/resolv.conf", options);
  return 0;
}

void
ar_egress_teardown (const char *state_dir)
{
  static const char *const files[] = { RESOLV_CONF_FILE, NSSWITCH_FILE };
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    {
      cleanup_free char *path = xasprintf ("%s/%s", state_dir, files[i]);
      if (unlink (path) < 0 && errno != ENOENT)
        fprintf (stderr, "agentrun: warning: egress: unlink `%s`: %s\n", path,
                 strerror (errno));
    }
}
