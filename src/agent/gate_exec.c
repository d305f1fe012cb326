/* SPDX-License-Identifier: Apache-2.0 */
/* programs.ask: an exec of a program the profile names ("git push",
 * "curl", "rm -rf /workspace") waits for the approver. Every mount of the
 * container is marked for fanotify's FAN_OPEN_EXEC_PERM, so the kernel
 * holds the exec at the open of the very file that will run: the path the
 * approver sees is the file executed, with nothing to swap after the
 * check (seccomp's user notification would have the kernel read the path
 * again after the answer). The arguments are read from the caller's
 * memory while it is held; when another task could write that memory (a
 * thread, a CLONE_VM sibling) they are not trusted: the question names the
 * program only, and a rule's arguments no longer let it pass unasked.
 *
 * A rule is words: the first matches the file's name or argv[0]'s last
 * component (a pattern with a '/' the file's path), each next word the
 * argument at its place; '*' and '?' glob. It is a tripwire against an
 * agent's mistakes: a renamed copy of a program is another program. */
#include "config.h"
#include "gate_internal.h"
#include "../util/cleanup.h"
#include "../util/mountinfo.h"
#include "../util/path.h"
#include "../util/proc_execve.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARGS_MAX 64
#define ARGS_BYTES_MAX 4096
#define WHERE_MAX 1024
#define PEERS_MAX 2048

bool
gate_exec_wanted (const ar_agent_plan *plan)
{
  return plan->programs_ask.len > 0;
}

static ino_t
mount_ns_of (pid_t pid)
{
  char path[64];
  struct stat st;
  snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int) pid);
  return stat (path, &st) == 0 ? st.st_ino : 0;
}

/* The container's processes: those in the init's mount namespace. */
static size_t
container_pids (const gate *g, pid_t *out, size_t max)
{
  cleanup_dir DIR *proc = opendir ("/proc");
  size_t n = 0;
  for (struct dirent *d; proc && n < max && (d = readdir (proc));)
    {
      char *end;
      long pid = strtol (d->d_name, &end, 10);
      if (*end == '\0' && pid > 0 && mount_ns_of ((pid_t) pid) == g->mnt_ns)
        out[n++] = (pid_t) pid;
    }
  return n;
}

static const char *
last_component (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash ? slash + 1 : path;
}

/* The target of /proc/PID/NAME (cwd, fd/N); NULL when unreadable. */
static char *
proc_link (pid_t pid, const char *name)
{
  char link[64];
  snprintf (link, sizeof link, "/proc/%d/%s", (int) pid, name);
  return ar_readlink (link);
}

static char *
cwd_of (pid_t pid)
{
  char *cwd = proc_link (pid, "cwd");
  return cwd ? cwd : xstrdup ("?");
}

/* Is the held file the one the call named, not an interpreter or the
 * dynamic loader the kernel opens after it? Only then is argv[0] its
 * name (a multi-call program: /bin/rm -> busybox, argv[0] "rm"). The name
 * is resolved in the container's root, from its cwd or the call's dirfd,
 * and compared by identity. */
static bool
is_named_file (pid_t pid, const ar_execve_args *args, int fd)
{
  struct stat held, named;
  if (args->filename == NULL || fstat (fd, &held) < 0)
    return false;
  if (args->filename[0] == '\0' && (args->flags & AT_EMPTY_PATH))
    {
      cleanup_free char *dir
          = xasprintf ("/proc/%d/fd/%d", (int) pid, args->dirfd);
      return stat (dir, &named) == 0 && named.st_dev == held.st_dev
             && named.st_ino == held.st_ino;
    }
  cleanup_free char *base = NULL;
  if (args->filename[0] == '/')
    base = xstrdup ("");
  else if (args->dirfd == AT_FDCWD)
    base = cwd_of (pid);
  else
    {
      char fd[32];
      snprintf (fd, sizeof fd, "fd/%d", args->dirfd);
      if ((base = proc_link (pid, fd)) == NULL)
        return false;
    }
  cleanup_free char *path = xasprintf ("%s/%s", base, args->filename);
  cleanup_free char *root_link = xasprintf ("/proc/%d/root", (int) pid);
  cleanup_close int root = open (root_link, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_error ar_error_t *err = NULL;
  cleanup_close int file
      = root < 0 ? -1 : ar_path_open_in_root (root, path, O_PATH, &err);
  return file >= 0 && fstat (file, &named) == 0 && named.st_dev == held.st_dev
         && named.st_ino == held.st_ino;
}

static bool
program_matches (const char *pattern, const char *file, const char *argv0)
{
  if (strchr (pattern, '/'))
    return fnmatch (pattern, file, 0) == 0;
  return fnmatch (pattern, last_component (file), 0) == 0
         || (argv0 && fnmatch (pattern, last_component (argv0), 0) == 0);
}

/* Does `rule` name this exec (argv0: NULL, or the name the caller gave
 * the file)? Its arguments count only when `args_hold`. */
static bool
rule_matches (const char *rule, const char *file, const char *argv0,
              const ar_execve_args *args, bool args_hold)
{
  cleanup_free char *words = xstrdup (rule);
  char *save = NULL;
  char *word = strtok_r (words, " ", &save);
  if (word == NULL || !program_matches (word, file, argv0))
    return false;
  if (!args_hold)
    return true;
  size_t i = 1;
  for (word = strtok_r (NULL, " ", &save); word;
       word = strtok_r (NULL, " ", &save), i++)
    if (i >= args->argc || fnmatch (word, args->argv[i], 0) != 0)
      return false;
  return true;
}

static bool
any_rule_matches (const gate *g, const char *file, const char *argv0,
                  const ar_execve_args *args, bool args_hold)
{
  for (size_t i = 0; i < g->plan->programs_ask.len; i++)
    if (rule_matches (g->plan->programs_ask.items[i], file, argv0, args,
                      args_hold))
      return true;
  return false;
}

static char *
joined (const ar_execve_args *args)
{
  char out[WHERE_MAX];
  size_t len = 0;
  out[0] = '\0';
  for (size_t i = 0; i < args->argc && len < sizeof out - 1; i++)
    len += (size_t) snprintf (out + len, sizeof out - len, "%s%s", i ? " " : "",
                              args->argv[i]);
  if (args->truncated || len >= sizeof out - 1)
    return xasprintf ("%.*s ...", (int) (sizeof out - 5), out);
  return xstrdup (out);
}

void
gate_exec_on_exec (gate *g, const struct fanotify_event_metadata *ev)
{
  pid_t pid = ev->pid;
  cleanup_free char *file = ar_fd_real_path (ev->fd);
  if (file == NULL)
    {
      gate_respond (g, ev->fd, false);
      return;
    }
  /* A process of the host that execs through the container's root (the
   * path through /proc/PID/root) is not the container's to ask about. */
  if (mount_ns_of (pid) != g->mnt_ns)
    {
      gate_respond (g, ev->fd, true);
      return;
    }
  ar_execve_args args = { 0 };
  cleanup_error ar_error_t *err = NULL;
  bool readable
      = ar_proc_execve_args (pid, ARGS_MAX, ARGS_BYTES_MAX, &args, &err) == 0;
  const char *argv0 = NULL;
  bool named = any_rule_matches (g, file, NULL, &args, false);
  if (!named && readable && args.argc > 0
      && any_rule_matches (g, file, args.argv[0], &args, false)
      && is_named_file (pid, &args, ev->fd))
    {
      named = true;
      argv0 = args.argv[0];
    }
  bool hold = false;
  cleanup_free char *shared = NULL;
  if (named && readable)
    {
      pid_t peers[PEERS_MAX];
      hold = !ar_proc_memory_shared (
          pid, peers, container_pids (g, peers, PEERS_MAX), &shared);
    }
  if (!named || !any_rule_matches (g, file, argv0, &args, hold))
    {
      ar_execve_args_clear (&args);
      gate_respond (g, ev->fd, true);
      return;
    }
  cleanup_free char *command = joined (&args);
  cleanup_free char *cwd = cwd_of (pid);
  cleanup_free char *where = hold ? xstrdup (command) : xstrdup (file);
  cleanup_free char *detail
      = hold       ? xasprintf ("%s in %s", file, cwd)
        : readable ? xasprintf ("%s in %s; arguments unverified (another task "
                                "shares its memory: %s): %s",
                                file, cwd, shared, command)
                   : xasprintf ("%s in %s; arguments unreadable: %s", file, cwd,
                                ar_error_text (err));
  cleanup_free char *key = xasprintf ("%s\n%s", file, where);
  ar_execve_args_clear (&args);
  if (egress_approved_has (&g->programs, key))
    gate_respond (g, ev->fd, true);
  else
    gate_ask (g, ev->fd, "exec", where, detail, &g->programs, key);
}

/* Every mount of the container, reached through the init's root so the
 * mark lands on the container's mount. procfs refuses permission events
 * (EINVAL); nothing on it can be exec'd but through a link to a file of
 * another mount, which is marked. */
int
gate_exec_mark (gate *g, ar_error_t **err)
{
  g->mnt_ns = mount_ns_of (g->init_pid);
  /* The host's mounts would be marked, and the host's execs judged (the
   * policy gives every container of a profile a mount namespace: this
   * only guards that). */
  if (g->mnt_ns != 0 && g->mnt_ns == mount_ns_of (getpid ()))
    return ar_error_set (err, 0,
                         "programs.ask: the container shares the host's "
                         "mount namespace: give it one of its own");
  cleanup_free char *mountinfo
      = xasprintf ("/proc/%d/mountinfo", (int) g->init_pid);
  cleanup_file FILE *f = fopen (mountinfo, "re");
  if (f == NULL || g->mnt_ns == 0)
    return ar_error_set (err, errno, "programs.ask: `%s`", mountinfo);
  cleanup_free char *line = NULL;
  size_t cap = 0;
  while (getline (&line, &cap, f) > 0)
    {
      ar_mountinfo_entry e;
      if (!ar_mountinfo_parse (line, &e))
        continue;
      cleanup_free char *path
          = xasprintf ("/proc/%d/root%s", (int) g->init_pid, e.mount_point);
      int r = fanotify_mark (g->fan_fd, FAN_MARK_ADD | FAN_MARK_MOUNT,
                             FAN_OPEN_EXEC_PERM, AT_FDCWD, path);
      int saved = errno;
      bool refused
          = r < 0 && !(saved == EINVAL && strcmp (e.fstype, "proc") == 0);
      if (refused)
        ar_error_set (err, saved, "programs.ask: fanotify mark `%s`",
                      e.mount_point);
      ar_mountinfo_entry_clear (&e);
      if (refused)
        return -1;
    }
  return 0;
}
