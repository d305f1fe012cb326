/* SPDX-License-Identifier: Apache-2.0 */
/* agentrun's launcher, installed as `agentrun`: it starts the runtime,
 * agentrun-runtime in the same directory, with the same arguments and
 * environment.
 *
 * A command that runs a process of ours inside a container must run from
 * a sealed memfd copy of the runtime (CVE-2019-5736; see
 * src/util/sealed_exe.c). The runtime makes that copy itself and executes
 * it, which costs a second start of a dynamically linked program: on a
 * virtual machine, where every page fault exits to the hypervisor, that
 * start is most of what a `run` costs beyond crun's. So for those commands
 * this launcher, which has no libc and so almost no start of its own,
 * makes the copy first and the runtime starts once. The runtime still
 * checks where it runs from: a command this file misjudges costs a second
 * start, never the protection.
 *
 * And real root's take from a pool (`sandbox --pool NAME -- COMMAND`) it
 * does itself up to the command's start (take.c): the command then waits
 * for no start of the runtime at all; so too the `start` of a created
 * container when that is all there is to it (start.c). */
#define AR_LAUNCHER_ENTRY /* _start is this file's */
#include "start.h"
#include "sys.h"
#include "take.h"
#include "text.h"

#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/memfd.h>

#define RUNTIME_NAME "agentrun-runtime"
#define SIZE_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW)

/* main.c's global options that take their value as the next argument.
 * tests/launcher.bats compares this list with `agentrun help --completion`. */
static const char *const options_with_value[]
    = { "root",     "profile",         "log",  "log-format",
        "rootless", "rootless-limits", "criu", 0 };

/* main.c's commands that run a process of ours in a container (its
 * enters_container). */
static const char *const entering_commands[]
    = { "create", "run", "exec", "pool", "rollback", 0 };

static int
listed (const char *word, const char *const *list)
{
  for (; *list; list++)
    if (same (word, *list))
      return 1;
  return 0;
}

/* The command word, as main.c's parse_globals finds it: flags start with
 * one or two dashes, and those in options_with_value without `=VALUE`
 * take the next argument. Its index, or 0 when there is none. */
static int
command_index (int argc, char **argv)
{
  int i = 1;
  while (i < argc && argv[i][0] == '-')
    {
      const char *name = argv[i] + 1 + (argv[i][1] == '-');
      int inline_value = 0;
      for (const char *p = name; *p; p++)
        inline_value |= *p == '=';
      i += listed (name, options_with_value) && !inline_value ? 2 : 1;
    }
  return i < argc ? i : 0;
}

/* `sandbox` is not among them: its command runs in a user namespace of
 * its own that holds no id able to write the binary, except where its
 * profile or flags say otherwise, which only the runtime reads; it makes
 * the copy then. */
static int
enters_container (int argc, char **argv)
{
  int c = command_index (argc, argv);
  return c && listed (argv[c], entering_commands);
}

/* Real root: uid 0 with the initial user namespace's whole-range map.
 * Root of another user namespace (rootless Podman's runtime) is left to
 * the runtime, which copies only when that namespace could write the
 * binary. */
static int
real_root (void)
{
  if (sys (__NR_geteuid, 0, 0, 0, 0, 0) != 0)
    return 0;
  long fd = sys (__NR_openat, AT_FDCWD, (long) "/proc/self/uid_map",
                 O_RDONLY | O_CLOEXEC, 0, 0);
  if (fd < 0)
    return 0;
  char map[128];
  long n = sys (__NR_read, fd, (long) map, sizeof map - 1, 0, 0);
  sys (__NR_close, fd, 0, 0, 0, 0);
  if (n <= 0)
    return 0;
  map[n] = '\0';
  const char *p = map;
  unsigned long long inside, outside, count;
  return read_number (&p, &inside) && read_number (&p, &outside)
         && read_number (&p, &count) && *p == '\n' && p[1] == '\0'
         && inside == 0 && outside == 0 && count == 4294967295UL;
}

static const char *
errno_text (long e)
{
  switch (e)
    {
    case -ENOENT:
      return "not found";
    case -EACCES:
      return "permission denied";
    case -ENOEXEC:
      return "not an executable this machine can run";
    case -ENAMETOOLONG:
      return "path too long";
    default:
      return "cannot run it";
    }
}

/* The runtime's own exit status for a failure (src/cmd/failure_status.h):
 * runc's 255 for an `exec` that never ran its process, 125 for run's and
 * sandbox's, 1 for the rest. */
static int
failure_status (int argc, char **argv)
{
  int c = command_index (argc, argv);
  if (c && same (argv[c], "exec"))
    return 255;
  return c && (same (argv[c], "run") || same (argv[c], "sandbox")) ? 125 : 1;
}

static long
fail (int argc, char **argv, const char *what, long e)
{
  say ("agentrun: ");
  say (what);
  say (": ");
  say (errno_text (e));
  say ("\n");
  return failure_status (argc, argv);
}

/* The runtime's path: this program's directory, then RUNTIME_NAME. */
static long
runtime_path (char *path)
{
  long n = sys (__NR_readlinkat, AT_FDCWD, (long) "/proc/self/exe", (long) path,
                PATH_BYTES, 0);
  if (n < 0)
    return n;
  while (n > 0 && path[n - 1] != '/')
    n--;
  const char *name = RUNTIME_NAME;
  if (n == 0 || n + (long) length (name) >= PATH_BYTES)
    return -ENAMETOOLONG;
  for (unsigned long i = 0; name[i]; i++)
    path[n++] = name[i];
  path[n] = '\0';
  return 0;
}

/* F_SEAL_WRITE can fail with EBUSY while a page of the copy is still
 * referenced elsewhere; nothing maps the copy, so F_SEAL_FUTURE_WRITE
 * forbids the same writes (as src/util/sealed_exe.c does). */
static long
seal (long fd)
{
  long r = sys (__NR_fcntl, fd, F_ADD_SEALS, SIZE_SEALS | F_SEAL_WRITE, 0, 0);
  if (r != -EBUSY)
    return r;
  return sys (__NR_fcntl, fd, F_ADD_SEALS, SIZE_SEALS | F_SEAL_FUTURE_WRITE, 0,
              0);
}

/* Executes a sealed memfd copy of the runtime; returns only when one could
 * not be made, and the runtime is then executed from its file. */
static void
exec_sealed_copy (const char *path, char **argv, char **envp)
{
  long from
      = sys (__NR_openat, AT_FDCWD, (long) path, O_RDONLY | O_CLOEXEC, 0, 0);
  if (from < 0)
    return;
  long copy = sys (__NR_memfd_create, (long) "agentrun",
                   MFD_CLOEXEC | MFD_ALLOW_SEALING, 0, 0, 0);
  long n = copy < 0 ? -1 : 1;
  while (n > 0)
    n = sys (__NR_sendfile, copy, from, 0, 1L << 30, 0);
  sys (__NR_close, from, 0, 0, 0, 0);
  if (n == 0 && seal (copy) == 0)
    sys (__NR_execveat, copy, (long) "", (long) argv, (long) envp,
         AT_EMPTY_PATH);
  if (copy >= 0)
    sys (__NR_close, copy, 0, 0, 0, 0);
}

__attribute__ ((noreturn, used)) void
launcher_main (const long *sp)
{
  int argc = (int) sp[0];
  char **argv = (char **) (sp + 1);
  char **envp = argv + argc + 1;
  char path[PATH_BYTES];
  long r = runtime_path (path);
  if (r < 0)
    r = fail (argc, argv, "find " RUNTIME_NAME " beside /proc/self/exe", r);
  else
    {
      int root = real_root ();
      if (root && enters_container (argc, argv))
        exec_sealed_copy (path, argv, envp);
      else if (root)
        {
          take_from_pool (argc, argv, envp, path);
          if ((r = start_created (argc, argv)) >= 0)
            for (;;)
              sys (__NR_exit_group, r, 0, 0, 0, 0);
        }
      r = sys (__NR_execve, (long) path, (long) argv, (long) envp, 0, 0);
      r = fail (argc, argv, path, r);
    }
  for (;;)
    sys (__NR_exit_group, r, 0, 0, 0, 0);
}
