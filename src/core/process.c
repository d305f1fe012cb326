/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "process.h"
#include "caps.h"
#include "../util/cleanup.h"
#include "../util/proc.h"
#include "../util/fs.h"

#include <ctype.h>
#include <poll.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>

#define DEFAULT_PATH                                                           \
  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define DEFAULT_UMASK 0022

/* ---- name tables ------------------------------------------------------ */

typedef struct
{
  const char *name;
  int value;
} named_value;

static const named_value rlimit_names[] = {
  { "RLIMIT_AS", RLIMIT_AS },
  { "RLIMIT_CORE", RLIMIT_CORE },
  { "RLIMIT_CPU", RLIMIT_CPU },
  { "RLIMIT_DATA", RLIMIT_DATA },
  { "RLIMIT_FSIZE", RLIMIT_FSIZE },
  { "RLIMIT_LOCKS", RLIMIT_LOCKS },
  { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
  { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
  { "RLIMIT_NICE", RLIMIT_NICE },
  { "RLIMIT_NOFILE", RLIMIT_NOFILE },
  { "RLIMIT_NPROC", RLIMIT_NPROC },
  { "RLIMIT_RSS", RLIMIT_RSS },
  { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
  { "RLIMIT_RTTIME", RLIMIT_RTTIME },
  { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
  { "RLIMIT_STACK", RLIMIT_STACK },
  { NULL, 0 },
};

/* The kernel's numbers; <sched.h> does not define all of them. */
static const named_value sched_policy_names[] = {
  { "SCHED_OTHER", 0 },    { "SCHED_FIFO", 1 }, { "SCHED_RR", 2 },
  { "SCHED_BATCH", 3 },    { "SCHED_ISO", 4 },  { "SCHED_IDLE", 5 },
  { "SCHED_DEADLINE", 6 }, { NULL, 0 },
};

static const named_value sched_flag_names[] = {
  { "SCHED_FLAG_RESET_ON_FORK", 0x01 },  { "SCHED_FLAG_RECLAIM", 0x02 },
  { "SCHED_FLAG_DL_OVERRUN", 0x04 },     { "SCHED_FLAG_KEEP_POLICY", 0x08 },
  { "SCHED_FLAG_KEEP_PARAMS", 0x10 },    { "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
  { "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 }, { NULL, 0 },
};

static const named_value ioprio_class_names[] = {
  { "IOPRIO_CLASS_RT", 1 },
  { "IOPRIO_CLASS_BE", 2 },
  { "IOPRIO_CLASS_IDLE", 3 },
  { NULL, 0 },
};

static bool
lookup (const named_value *table, const char *name, int *value)
{
  for (; name && table->name; table++)
    if (strcmp (table->name, name) == 0)
      {
        *value = table->value;
        return true;
      }
  return false;
}

/* ---- validation ------------------------------------------------------- */

#define CONFIG_PATH "config.json: .process"

static int
validate_rlimits (const oci_process *process, ar_error_t **err)
{
  bool seen[RLIM_NLIMITS] = { false };
  for (size_t i = 0; i < process->n_rlimits; i++)
    {
      const oci_rlimit *rl = &process->rlimits[i];
      int resource;
      if (!lookup (rlimit_names, rl->type, &resource))
        return ar_error_set (err, 0,
                             CONFIG_PATH ".rlimits[%zu].type: "
                                         "unknown rlimit \"%s\"",
                             i, rl->type ? rl->type : "");
      if (seen[resource])
        return ar_error_set (err, 0,
                             CONFIG_PATH ".rlimits[%zu].type: "
                                         "duplicate rlimit \"%s\"",
                             i, rl->type);
      seen[resource] = true;
      if (rl->soft > rl->hard)
        return ar_error_set (err, 0,
                             CONFIG_PATH ".rlimits[%zu]: soft limit "
                                         "%" PRIu64
                                         " is above hard limit %" PRIu64,
                             i, rl->soft, rl->hard);
    }
  return 0;
}

/* Validate one name at a time so the error can point at its JSON path. */
static int
validate_cap_set (const oci_strv *set, const char *set_name, ar_error_t **err)
{
  for (size_t i = 0; i < set->len; i++)
    {
      char *one[] = { set->items[i], NULL };
      oci_capabilities single = { .bounding = { one, 1 } };
      if (ar_caps_validate (&single, err) < 0)
        return ar_error_prefix (err, CONFIG_PATH ".capabilities.%s[%zu]",
                                set_name, i);
    }
  return 0;
}

static int
validate_capabilities (const oci_capabilities *caps, ar_error_t **err)
{
  if (caps == NULL)
    return 0;
  if (validate_cap_set (&caps->bounding, "bounding", err) < 0
      || validate_cap_set (&caps->effective, "effective", err) < 0
      || validate_cap_set (&caps->inheritable, "inheritable", err) < 0
      || validate_cap_set (&caps->permitted, "permitted", err) < 0
      || validate_cap_set (&caps->ambient, "ambient", err) < 0)
    return -1;
  return 0;
}

static int
validate_scheduler (const oci_scheduler *sched, ar_error_t **err)
{
  int value;
  if (sched == NULL)
    return 0;
  if (sched->policy == NULL)
    return ar_error_set (err, 0, CONFIG_PATH ".scheduler.policy: required");
  if (!lookup (sched_policy_names, sched->policy, &value))
    return ar_error_set (err, 0,
                         CONFIG_PATH ".scheduler.policy: unknown "
                                     "policy \"%s\"",
                         sched->policy);
  if (sched->nice.set && (sched->nice.value < -20 || sched->nice.value > 19))
    return ar_error_set (
        err, 0, CONFIG_PATH ".scheduler.nice: %" PRId64 " is outside -20..19",
        sched->nice.value);
  for (size_t i = 0; i < sched->flags.len; i++)
    if (!lookup (sched_flag_names, sched->flags.items[i], &value))
      return ar_error_set (err, 0,
                           CONFIG_PATH ".scheduler.flags[%zu]: "
                                       "unknown flag \"%s\"",
                           i, sched->flags.items[i]);
  return 0;
}

static int
validate_io_priority (const oci_io_priority *io, ar_error_t **err)
{
  int value;
  if (io == NULL)
    return 0;
  if (!lookup (ioprio_class_names, io->class, &value))
    return ar_error_set (err, 0,
                         CONFIG_PATH ".ioPriority.class: unknown "
                                     "class \"%s\"",
                         io->class ? io->class : "");
  if (io->priority < 0 || io->priority > 7)
    return ar_error_set (
        err, 0, CONFIG_PATH ".ioPriority.priority: %" PRId64 " is outside 0..7",
        io->priority);
  return 0;
}

int
ar_process_validate (const oci_process *process, ar_error_t **err)
{
  if (process == NULL)
    return 0;
  if (process->args.len == 0 || process->args.items == NULL
      || process->args.items[0] == NULL || process->args.items[0][0] == '\0')
    return ar_error_set (err, 0, CONFIG_PATH ".args: must not be empty");
  if (process->cwd == NULL || process->cwd[0] != '/')
    return ar_error_set (err, 0,
                         CONFIG_PATH ".cwd: \"%s\" is not an "
                                     "absolute path",
                         process->cwd ? process->cwd : "");
  if (process->oom_score_adj.set
      && (process->oom_score_adj.value < -1000
          || process->oom_score_adj.value > 1000))
    return ar_error_set (
        err, 0, CONFIG_PATH ".oomScoreAdj: %" PRId64 " is outside -1000..1000",
        process->oom_score_adj.value);
  if (validate_rlimits (process, err) < 0
      || validate_capabilities (process->capabilities, err) < 0
      || validate_scheduler (process->scheduler, err) < 0
      || validate_io_priority (process->io_priority, err) < 0)
    return -1;
  return 0;
}

/* ---- finding the executable ------------------------------------------- */

/* Go's error strings are lower case ("no such file or directory"); runc
 * users and tests grep for them, so follow that style here. */
static char *
lowercase_strerror (int errno_value)
{
  char *reason = xstrdup (strerror (errno_value));
  reason[0] = (char) tolower ((unsigned char) reason[0]);
  return reason;
}

/* 0 if `path` is a file we may execute, else -1 with errno set. */
static int
check_executable (const char *path)
{
  struct stat st;
  if (stat (path, &st) < 0)
    return -1;
  if (S_ISDIR (st.st_mode))
    {
      errno = EISDIR;
      return -1;
    }
  if (faccessat (AT_FDCWD, path, X_OK, AT_EACCESS) < 0)
    return -1;
  /* root passes X_OK for any file with one x bit; a file with none is
   * still not something execve will run. */
  if ((st.st_mode & 0111) == 0)
    {
      errno = EACCES;
      return -1;
    }
  return 0;
}

static char *
find_by_path (const char *arg0, ar_error_t **err)
{
  struct stat st;
  bool exists = stat (arg0, &st) == 0;
  if (exists && check_executable (arg0) == 0)
    return xstrdup (arg0);

  int saved = errno;
  cleanup_free char *reason = lowercase_strerror (saved);
  if (exists)
    ar_error_set_errno_said (err, saved, "exec: \"%s\": %s", arg0, reason);
  else
    ar_error_set_errno_said (err, saved, "exec: \"%s\": stat %s: %s", arg0,
                             arg0, reason);
  if (*err)
    (*err)->code
        = exists ? AR_ERR_COMMAND_NOT_RUNNABLE : AR_ERR_COMMAND_NOT_FOUND;
  return NULL;
}

/* The PATH the process will see; the last assignment wins, as it would
 * once the environment is applied one entry at a time. */
static const char *
path_from_env (const oci_strv *env)
{
  const char *path = NULL;
  for (size_t i = 0; i < env->len && env->items[i]; i++)
    if (strncmp (env->items[i], "PATH=", 5) == 0)
      path = env->items[i] + 5;
  return path ? path : DEFAULT_PATH;
}

static char *
search_path (const char *arg0, const char *path)
{
  cleanup_free char *copy = xstrdup (path);
  /* Split by hand: strtok would skip empty entries, which mean ".". */
  for (char *dir = copy, *next; dir; dir = next)
    {
      next = strchr (dir, ':');
      if (next)
        *next++ = '\0';
      cleanup_free char *candidate
          = xasprintf ("%s/%s", *dir ? dir : ".", arg0);
      if (check_executable (candidate) == 0)
        return steal_pointer (&candidate);
    }
  return NULL;
}

char *
ar_process_find_executable (const oci_process *process, ar_error_t **err)
{
  if (process == NULL || process->args.len == 0 || process->args.items == NULL
      || process->args.items[0] == NULL || process->args.items[0][0] == '\0')
    {
      ar_error_set (err, 0, "exec: no command given");
      return NULL;
    }
  const char *arg0 = process->args.items[0];
  if (strchr (arg0, '/'))
    return find_by_path (arg0, err);

  char *found = search_path (arg0, path_from_env (&process->env));
  if (found == NULL)
    ar_error_set_code (err, AR_ERR_COMMAND_NOT_FOUND, 0,
                       "exec: \"%s\": executable file not found in $PATH",
                       arg0);
  return found;
}

/* ---- environment ------------------------------------------------------ */

static bool
env_has (const oci_strv *env, const char *key)
{
  size_t len = strlen (key);
  if (env->items == NULL)
    return false;
  for (size_t i = 0; i < env->len && env->items[i]; i++)
    if (strncmp (env->items[i], key, len) == 0 && env->items[i][len] == '=')
      return true;
  return false;
}

/* The user's home from the container's own /etc/passwd, read as a file:
 * getpwuid would load NSS modules, and those would be the container's. */
static char *
home_of (uid_t uid)
{
  cleanup_file FILE *f = fopen ("/etc/passwd", "re");
  if (f == NULL)
    return NULL;
  struct passwd *pw;
  while ((pw = fgetpwent (f)) != NULL)
    if (pw->pw_uid == uid && pw->pw_dir && pw->pw_dir[0])
      return xstrdup (pw->pw_dir);
  return NULL;
}

char **
ar_process_exec_env (const oci_process *process)
{
  size_t n = process->env.items ? process->env.len : 0;
  char **env = xcalloc (n + 2, sizeof *env);
  for (size_t i = 0; i < n; i++)
    env[i] = process->env.items[i];
  if (!env_has (&process->env, "HOME"))
    {
      cleanup_free char *home = home_of (process->user.uid);
      env[n] = xasprintf ("HOME=%s", home ? home : "/");
    }
  return env;
}

char **
ar_process_env_add_listen_fds (char **envp, int n)
{
  size_t len = 0, kept = 0;
  while (envp[len])
    len++;
  char **out = xcalloc (len + 3, sizeof *out);
  for (size_t i = 0; i < len; i++)
    if (strncmp (envp[i], "LISTEN_FDS=", 11) != 0
        && strncmp (envp[i], "LISTEN_PID=", 11) != 0)
      out[kept++] = envp[i];
  out[kept++] = xasprintf ("LISTEN_FDS=%d", n);
  out[kept] = xasprintf ("LISTEN_PID=%d", (int) getpid ());
  free (envp);
  return out;
}

/* ---- rlimits ---------------------------------------------------------- */

static void
format_limit (char *buf, size_t size, uint64_t value)
{
  if (value == (uint64_t) RLIM_INFINITY)
    snprintf (buf, size, "unlimited");
  else
    snprintf (buf, size, "%" PRIu64, value);
}

/* RLIMIT_NOFILE cannot exceed fs.nr_open, not even with CAP_SYS_RESOURCE;
 * 0 when unknown. */
static uint64_t
read_nr_open (void)
{
  cleanup_free char *text = NULL;
  ar_error_t *ignored = NULL;
  if (ar_read_file_at (AT_FDCWD, "/proc/sys/fs/nr_open", 64, &text, NULL,
                       &ignored)
      < 0)
    {
      ar_error_free (ignored);
      return 0;
    }
  return strtoull (text, NULL, 10);
}

static int
explain_rlimit_failure (const oci_rlimit *rl, int resource, int saved_errno,
                        ar_error_t **err)
{
  char soft[32], hard[32], current[32];
  struct rlimit now;
  format_limit (soft, sizeof soft, rl->soft);
  format_limit (hard, sizeof hard, rl->hard);

  uint64_t nr_open = read_nr_open ();
  if (saved_errno == EPERM && resource == RLIMIT_NOFILE && nr_open > 0
      && rl->hard > nr_open)
    return ar_error_set (err, saved_errno,
                         "setrlimit %s (soft %s, hard %s): the hard limit is "
                         "above fs.nr_open (%" PRIu64 ")",
                         rl->type, soft, hard, nr_open);
  if (saved_errno == EPERM && getrlimit (resource, &now) == 0
      && rl->hard > (uint64_t) now.rlim_max)
    {
      format_limit (current, sizeof current, now.rlim_max);
      return ar_error_set (err, saved_errno,
                           "setrlimit %s (soft %s, hard %s): the hard limit "
                           "can only be raised above the current %s with "
                           "CAP_SYS_RESOURCE, which this process does not "
                           "have",
                           rl->type, soft, hard, current);
    }
  return ar_error_set (err, saved_errno, "setrlimit %s (soft %s, hard %s)",
                       rl->type, soft, hard);
}

int
ar_process_set_rlimits (const oci_process *process, ar_error_t **err)
{
  if (process == NULL)
    return 0;
  for (size_t i = 0; i < process->n_rlimits; i++)
    {
      const oci_rlimit *rl = &process->rlimits[i];
      int resource;
      if (!lookup (rlimit_names, rl->type, &resource))
        return ar_error_set (err, 0, "unknown rlimit \"%s\"",
                             rl->type ? rl->type : "");
      struct rlimit limit = { .rlim_cur = rl->soft, .rlim_max = rl->hard };
      if (setrlimit (resource, &limit) < 0)
        return explain_rlimit_failure (rl, resource, errno, err);
    }
  return 0;
}

/* ---- attributes: oom_score_adj, scheduler, ioPriority, umask ---------- */

int
ar_process_set_oom_score_adj (const oci_process *process, pid_t pid,
                              ar_error_t **err)
{
  if (process == NULL || !process->oom_score_adj.set)
    return 0;
  char buf[32];
  int len
      = snprintf (buf, sizeof buf, "%" PRId64, process->oom_score_adj.value);
  cleanup_free char *path
      = pid ? xasprintf ("/proc/%d/oom_score_adj", (int) pid)
            : xstrdup ("/proc/self/oom_score_adj");
  cleanup_error ar_error_t *write_err = NULL;
  if (ar_proc_write (AT_FDCWD, path, buf, (size_t) len, &write_err) == 0)
    return 0;
  int e = write_err->errno_value;
  if (e == EACCES || e == EPERM)
    return ar_error_set (err, e,
                         "set oom_score_adj to %s: lowering it "
                         "needs CAP_SYS_RESOURCE, which this process does "
                         "not have",
                         buf);
  return ar_error_set (err, 0, "set oom_score_adj to %s: %s", buf,
                       ar_error_text (write_err));
}

/* The kernel's struct sched_attr (SCHED_ATTR_SIZE_VER0). glibc gained a
 * wrapper only in 2.41, and <linux/sched/types.h> clashes with <sched.h>. */
struct ar_sched_attr
{
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
};

static int
set_scheduler (const oci_scheduler *sched, ar_error_t **err)
{
  if (sched == NULL)
    return 0;
  struct ar_sched_attr attr = { .size = sizeof attr };
  int value;
  if (!lookup (sched_policy_names, sched->policy, &value))
    return ar_error_set (err, 0, "unknown scheduler policy \"%s\"",
                         sched->policy ? sched->policy : "");
  attr.sched_policy = (uint32_t) value;
  for (size_t i = 0; i < sched->flags.len; i++)
    {
      if (!lookup (sched_flag_names, sched->flags.items[i], &value))
        return ar_error_set (err, 0, "unknown scheduler flag \"%s\"",
                             sched->flags.items[i]);
      attr.sched_flags |= (uint64_t) value;
    }
  attr.sched_nice = (int32_t) (sched->nice.set ? sched->nice.value : 0);
  attr.sched_priority
      = (uint32_t) (sched->priority.set ? sched->priority.value : 0);
  attr.sched_runtime = sched->runtime.set ? sched->runtime.value : 0;
  attr.sched_deadline = sched->deadline.set ? sched->deadline.value : 0;
  attr.sched_period = sched->period.set ? sched->period.value : 0;

  if (syscall (SYS_sched_setattr, 0, &attr, 0) < 0)
    return ar_error_set (err, errno, "sched_setattr %s", sched->policy);
  return 0;
}

#define AR_IOPRIO_WHO_PROCESS 1
#define AR_IOPRIO_CLASS_SHIFT 13

static int
set_io_priority (const oci_io_priority *io, ar_error_t **err)
{
  if (io == NULL)
    return 0;
  int class;
  if (!lookup (ioprio_class_names, io->class, &class))
    return ar_error_set (err, 0, "unknown ioPriority class \"%s\"",
                         io->class ? io->class : "");
  int ioprio = (class << AR_IOPRIO_CLASS_SHIFT) | (int) io->priority;
  if (syscall (SYS_ioprio_set, AR_IOPRIO_WHO_PROCESS, 0, ioprio) < 0)
    return ar_error_set (err, errno, "ioprio_set %s %" PRId64, io->class,
                         io->priority);
  return 0;
}

int
ar_process_set_attributes (const oci_process *process, ar_error_t **err)
{
  if (process == NULL)
    return 0;
  if (set_scheduler (process->scheduler, err) < 0
      || set_io_priority (process->io_priority, err) < 0)
    return -1;
  umask (process->user.umask.set ? (mode_t) (process->user.umask.value & 0777)
                                 : DEFAULT_UMASK);
  return 0;
}

/* ---- user ------------------------------------------------------------- */

/* In a user namespace whose owner wrote "deny" to /proc/PID/setgroups,
 * setgroups always fails; the groups we have are then the only ones. */
static bool
setgroups_denied (void)
{
  cleanup_free char *content = NULL;
  ar_error_t *ignored = NULL;
  if (ar_read_file_at (AT_FDCWD, "/proc/self/setgroups", 64, &content, NULL,
                       &ignored)
      < 0)
    {
      ar_error_free (ignored);
      return false;
    }
  return strncmp (content, "deny", 4) == 0;
}

static int
set_groups (const oci_user *user, ar_error_t **err)
{
  /* Like runc, go on without additional gids rather than fail: the
   * process ends up with fewer groups, never more. */
  if (setgroups_denied ())
    return 0;
  if (setgroups (user->n_additional_gids, user->additional_gids) < 0)
    return ar_error_set (err, errno, "setgroups");
  return 0;
}

int
ar_process_set_user (const oci_process *process, ar_error_t **err)
{
  if (process == NULL)
    return 0;
  const oci_user *user = &process->user;
  if (set_groups (user, err) < 0)
    return -1;
  if (setresgid (user->gid, user->gid, user->gid) < 0)
    return ar_error_set (err, errno, "setresgid %" PRIu32, user->gid);
  /* Keep the permitted set across the uid change so ar_caps_apply can
   * pick the container's capabilities from it. */
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return ar_error_set (err, errno, "prctl PR_SET_KEEPCAPS");
  if (setresuid (user->uid, user->uid, user->uid) < 0)
    return ar_error_set (err, errno, "setresuid %" PRIu32, user->uid);
  return 0;
}

int
ar_process_die_with_parent (int parent_fd, ar_error_t **err)
{
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0)
    return ar_error_set (err, errno, "set the parent-death signal");
  struct pollfd p = { .fd = parent_fd, .events = POLLRDHUP };
  if (poll (&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP)))
    return ar_error_set (err, 0,
                         "the runtime died before the container started");
  return 0;
}
