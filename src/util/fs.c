/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "fs.h"
#include "cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int
ar_write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t n = write (fd, p, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      p += n;
      len -= (size_t) n;
    }
  return 0;
}

ssize_t
ar_read_all (int fd, void *buf, size_t max)
{
  size_t got = 0;
  while (got < max)
    {
      ssize_t n = read (fd, (char *) buf + got, max - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      if (n == 0)
        break;
      got += (size_t) n;
    }
  return (ssize_t) got;
}

static int
too_large (ar_error_t **err, const char *path, size_t max)
{
  return ar_error_set (err, 0, "`%s`: larger than %zu bytes", path, max);
}

int
ar_read_file_at (int dirfd, const char *path, size_t max, char **out,
                 size_t *len, ar_error_t **err)
{
  cleanup_close int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return ar_error_set (err, errno, "open `%s`", path);

  /* A regular file's size sizes the buffer, but is not trusted as the
   * end: the file may still grow. Pipes and /proc files say 0. */
  struct stat st;
  size_t cap = 4096, used = 0;
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_size > 0)
    {
      if ((uint64_t) st.st_size > max)
        return too_large (err, path, max);
      cap = (size_t) st.st_size + 1;
    }
  cleanup_free char *buf = xmalloc (cap + 1);
  for (;;)
    {
      if (used == cap)
        {
          if (cap > max)
            return too_large (err, path, max);
          cap *= 2;
          buf = xrealloc (buf, cap + 1);
        }
      ssize_t n = read (fd, buf + used, cap - used);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return ar_error_set (err, errno, "read `%s`", path);
      if (n == 0)
        break;
      used += (size_t) n;
    }
  if (used > max)
    return too_large (err, path, max);
  buf[used] = '\0';
  if (len)
    *len = used;
  *out = steal_pointer (&buf);
  return 0;
}

/* The temporary is written, flocked when `held` asks for it (so the file
 * never appears unlocked), then renamed over `path`. */
static int
write_file_atomic (int dirfd, const char *path, const char *data, size_t len,
                   mode_t mode, int *held, ar_error_t **err)
{
  cleanup_free char *tmp = xasprintf ("%s.tmp", path);
  cleanup_close int fd
      = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0)
    return ar_error_set (err, errno, "create `%s`", tmp);
  const char *failed = NULL;
  if (ar_write_all (fd, data, len) < 0)
    failed = "write";
  else if (held && flock (fd, LOCK_EX) < 0)
    failed = "lock";
  else if (renameat (dirfd, tmp, dirfd, path) < 0)
    failed = "rename";
  if (failed)
    {
      int saved = errno;
      unlinkat (dirfd, tmp, 0);
      return ar_error_set (err, saved, "%s `%s`", failed, tmp);
    }
  if (held)
    *held = steal_fd (&fd);
  return 0;
}

int
ar_write_file_atomic_at (int dirfd, const char *path, const char *data,
                         size_t len, mode_t mode, ar_error_t **err)
{
  return write_file_atomic (dirfd, path, data, len, mode, NULL, err);
}

int
ar_mkdir_p (const char *path, mode_t mode, ar_error_t **err)
{
  cleanup_free char *copy = xstrdup (path);
  for (char *p = copy + 1; *p; p++)
    {
      if (*p != '/')
        continue;
      *p = '\0';
      if (mkdir (copy, mode) < 0 && errno != EEXIST)
        return ar_error_set (err, errno, "mkdir `%s`", copy);
      *p = '/';
    }
  if (mkdir (copy, mode) < 0 && errno != EEXIST)
    return ar_error_set (err, errno, "mkdir `%s`", copy);
  return 0;
}

int
ar_write_pid_file (const char *path, pid_t pid, ar_error_t **err)
{
  if (path == NULL)
    return 0;
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%d", (int) pid);
  return ar_write_file_atomic_at (AT_FDCWD, path, buf, (size_t) n, 0644, err);
}

/* /proc/PID/stat from its field 3 (the state) on, in buf; NULL when it
 * cannot be read or the process is a zombie. */
static char *
stat_fields (pid_t pid, char *buf, size_t size)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  ssize_t n = ar_read_all (fd, buf, size - 1);
  if (n <= 0)
    return NULL;
  buf[n] = '\0';
  /* comm may hold spaces and parentheses: fields start after the last ')' */
  char *p = strrchr (buf, ')');
  if (p == NULL || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
    return NULL;
  return p + 2;
}

pid_t
ar_pid_parent (pid_t pid)
{
  char buf[1024];
  const char *p = stat_fields (pid, buf, sizeof buf);
  int ppid = 0;
  return p && sscanf (p, "%*c %d", &ppid) == 1 ? (pid_t) ppid : 0;
}

unsigned long long
ar_pid_start_time (pid_t pid)
{
  char buf[1024];
  char *p = stat_fields (pid, buf, sizeof buf);
  if (p == NULL)
    return 0;
  /* start time is field 22 */
  for (int field = 3; field < 22; field++)
    {
      p = strchr (p, ' ');
      if (p == NULL)
        return 0;
      p++;
    }
  return strtoull (p, NULL, 10);
}

/* The most a record "PID START\n" holds. */
#define PID_RECORD_MAX 64

/* "PID START\n" of `pid`, in `line`; its length. */
static int
pid_record_line (char line[PID_RECORD_MAX], pid_t pid,
                 unsigned long long start_time)
{
  return snprintf (line, PID_RECORD_MAX, "%d %llu\n", (int) pid, start_time);
}

int
ar_pid_record_write_as (int dirfd, const char *name, pid_t pid,
                        unsigned long long start_time, ar_error_t **err)
{
  char line[PID_RECORD_MAX];
  int len = pid_record_line (line, pid, start_time);
  return ar_write_file_atomic_at (dirfd, name, line, (size_t) len, 0600, err);
}

int
ar_pid_record_write (int dirfd, const char *name, pid_t pid, ar_error_t **err)
{
  return ar_pid_record_write_as (dirfd, name, pid, ar_pid_start_time (pid),
                                 err);
}

int
ar_pid_record_write_held (int dirfd, const char *name, int *held,
                          ar_error_t **err)
{
  char line[PID_RECORD_MAX];
  pid_t self = getpid ();
  int len = pid_record_line (line, self, ar_pid_start_time (self));
  return write_file_atomic (dirfd, name, line, (size_t) len, 0600, held, err);
}

static int
open_pid_record (int dirfd, const char *name)
{
  return openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
}

/* The record open at `fd`: its pid while that process lives, 0 once it is
 * gone, -1 when it says nothing readable. */
static pid_t
pid_record_parse (int fd)
{
  /* One byte over the most a record holds: a longer one is no record. */
  char line[PID_RECORD_MAX + 1];
  ssize_t n = ar_read_all (fd, line, sizeof line);
  if (n <= 0 || n > PID_RECORD_MAX)
    return -1;
  line[n] = '\0';
  int pid = 0;
  unsigned long long start = 0;
  if (sscanf (line, "%d %llu", &pid, &start) != 2 || pid <= 0)
    return -1;
  return ar_pid_start_time (pid) == start ? (pid_t) pid : 0;
}

bool
ar_pid_record_gone (int dirfd, const char *name)
{
  cleanup_close int fd = open_pid_record (dirfd, name);
  if (fd < 0)
    return false;
  if (flock (fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK)
    return false;
  return pid_record_parse (fd) == 0;
}

pid_t
ar_pid_record_read (int dirfd, const char *name)
{
  cleanup_close int fd = open_pid_record (dirfd, name);
  return fd < 0 ? -1 : pid_record_parse (fd);
}

void
ar_unlink_files_at (int dirfd)
{
  int fd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_dir DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    if (e->d_type != DT_DIR)
      unlinkat (dirfd, e->d_name, 0);
}
