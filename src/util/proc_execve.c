/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "proc_execve.h"
#include "cleanup.h"
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* /proc/PID/NAME, whole; NULL when it cannot be read. */
static char *
read_proc_file (pid_t pid, const char *name)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, name);
  char *text = NULL;
  return ar_read_file_at (AT_FDCWD, path, 65536, &text, NULL, NULL) == 0 ? text
                                                                         : NULL;
}

/* /proc/PID/syscall of a blocked task. The kernel answers "running" when
 * it catches the task awake, and a task held by fanotify wakes whenever
 * any event of its group is answered, then sleeps again: asked again. */
static char *
read_syscall_line (pid_t pid)
{
  char *line = NULL;
  for (int tries = 0; tries < 50; tries++)
    {
      free (line);
      line = read_proc_file (pid, "syscall");
      if (line == NULL || strncmp (line, "running", 7) != 0)
        break;
      usleep (1000);
    }
  return line;
}

typedef struct
{
  uint64_t filename, argv;
} execve_call;

/* The call's arguments, from "NR ARG0 ... ARG5 SP PC"; `out` gets the
 * dirfd and flags of execveat. */
static int
read_call (pid_t pid, execve_call *call, ar_execve_args *out, ar_error_t **err)
{
  cleanup_free char *line = read_syscall_line (pid);
  if (line == NULL)
    return ar_error_set (err, errno, "/proc/%d/syscall", (int) pid);
  long nr;
  uint64_t a[5];
  if (sscanf (line,
              "%ld %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64,
              &nr, &a[0], &a[1], &a[2], &a[3], &a[4])
      != 6)
    return ar_error_set (err, 0, "/proc/%d/syscall: not in a system call",
                         (int) pid);
  out->dirfd = AT_FDCWD;
  if (nr == SYS_execve)
    *call = (execve_call){ .filename = a[0], .argv = a[1] };
  else if (nr == SYS_execveat)
    {
      *call = (execve_call){ .filename = a[1], .argv = a[2] };
      out->dirfd = (int) a[0];
      out->flags = (int) a[4];
    }
  else
    return ar_error_set (err, 0, "/proc/%d/syscall: call %ld is no execve",
                         (int) pid, nr);
  return 0;
}

/* One NUL-terminated string at `addr`, at most `room` bytes with its NUL:
 * NULL when it does not end within them. */
static char *
read_string (int mem, uint64_t addr, size_t room)
{
  char buf[512];
  cleanup_free char *s = NULL;
  size_t len = 0;
  while (len < room)
    {
      /* Never across a 4 KiB boundary: the string may end just before an
       * unmapped page, and a read into it fails as a whole. */
      size_t want = 4096 - (size_t) ((addr + len) & 4095);
      if (want > sizeof buf)
        want = sizeof buf;
      if (want > room - len)
        want = room - len;
      ssize_t n = pread (mem, buf, want, (off_t) (addr + len));
      if (n <= 0)
        return NULL;
      char *nul = memchr (buf, '\0', (size_t) n);
      size_t take = nul ? (size_t) (nul - buf) : (size_t) n;
      s = xrealloc (s, len + take + 1);
      memcpy (s + len, buf, take);
      len += take;
      s[len] = '\0';
      if (nul)
        return steal_pointer (&s);
    }
  return NULL;
}

int
ar_proc_execve_args (pid_t pid, size_t max_args, size_t max_bytes,
                     ar_execve_args *out, ar_error_t **err)
{
  *out = (ar_execve_args){ 0 };
  execve_call call;
  if (read_call (pid, &call, out, err) < 0)
    return -1;
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/mem", (int) pid);
  cleanup_close int mem = open (path, O_RDONLY | O_CLOEXEC);
  if (mem < 0)
    return ar_error_set (err, errno, "%s", path);
  out->filename = read_string (mem, call.filename, PATH_MAX);
  out->argv = xcalloc (max_args + 1, sizeof *out->argv);
  uint64_t argv_at = call.argv;
  size_t bytes = 0;
  for (; argv_at != 0; argv_at += sizeof (uint64_t))
    {
      uint64_t at;
      if (pread (mem, &at, sizeof at, (off_t) argv_at) != (ssize_t) sizeof at)
        {
          ar_execve_args_clear (out);
          return ar_error_set (err, errno ? errno : EIO, "%s: argv", path);
        }
      if (at == 0)
        break;
      char *word = out->argc < max_args && bytes < max_bytes
                       ? read_string (mem, at, max_bytes - bytes)
                       : NULL;
      if (word == NULL)
        {
          out->truncated = true;
          break;
        }
      bytes += strlen (word) + 1;
      out->argv[out->argc++] = word;
    }
  return 0;
}

void
ar_execve_args_clear (ar_execve_args *a)
{
  for (size_t i = 0; i < a->argc; i++)
    free (a->argv[i]);
  free (a->argv);
  free (a->filename);
  *a = (ar_execve_args){ 0 };
}

static long
thread_count (pid_t pid)
{
  cleanup_free char *status = read_proc_file (pid, "status");
  const char *t = status ? strstr (status, "\nThreads:") : NULL;
  return t ? strtol (t + strlen ("\nThreads:"), NULL, 10) : -1;
}

/* A vfork parent: one thread, blocked in the call that made the child.
 * It stays blocked until the child's exec has copied its arguments (or
 * the child is gone): it cannot write the memory meanwhile. */
static bool
waits_for_vfork_child (pid_t pid)
{
  if (thread_count (pid) != 1)
    return false;
  cleanup_free char *line = read_syscall_line (pid);
  long nr;
  return line && sscanf (line, "%ld ", &nr) == 1
         && (nr == SYS_vfork || nr == SYS_clone
#ifdef SYS_clone3
             || nr == SYS_clone3
#endif
         );
}

bool
ar_proc_memory_shared (pid_t pid, const pid_t *peers, size_t n_peers,
                       char **why)
{
  long threads = thread_count (pid);
  if (threads != 1)
    {
      *why = xasprintf ("%ld threads", threads);
      return true;
    }
  for (size_t i = 0; i < n_peers; i++)
    {
      if (peers[i] == pid)
        continue;
      long same = syscall (SYS_kcmp, pid, peers[i], KCMP_VM, 0, 0);
      int kcmp_errno = errno;
      if (same == 1 || same == 2 || (same < 0 && kcmp_errno == ESRCH))
        continue; /* another memory, or gone */
      if (same == 0 && waits_for_vfork_child (peers[i]))
        continue;
      cleanup_free char *line = read_proc_file (peers[i], "syscall");
      if (line)
        line[strcspn (line, " \n")] = '\0';
      *why = same < 0 ? xasprintf ("kcmp with pid %d: %s", (int) peers[i],
                                   strerror (kcmp_errno))
                      : xasprintf ("pid %d shares it (threads %ld, call %s)",
                                   (int) peers[i], thread_count (peers[i]),
                                   line ? line : "?");
      return true;
    }
  return false;
}
