/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "sealed_exe.h"
#include "cleanup.h"
#include "prefault.h"
#include "userns.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

#define SIZE_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW)

static bool
running_sealed (int self_fd)
{
  int seals = fcntl (self_fd, F_GET_SEALS);
  return seals >= 0 && (seals & SIZE_SEALS) == SIZE_SEALS
         && (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) != 0;
}

/* F_SEAL_WRITE waits for every page of the copy to drop its extra
   references, and fails with EBUSY when a page still sits in another
   CPU's LRU batch after the write.  Nothing maps the copy, so
   F_SEAL_FUTURE_WRITE (5.1) forbids the same writes without that wait.  */
static int
seal_copy (int fd)
{
  if (fcntl (fd, F_ADD_SEALS, SIZE_SEALS | F_SEAL_WRITE) == 0)
    return 0;
  if (errno != EBUSY)
    return -1;
  return fcntl (fd, F_ADD_SEALS, SIZE_SEALS | F_SEAL_FUTURE_WRITE);
}

static int
copy_all (int from, int to, off_t size)
{
  off_t off = 0;
  while (off < size)
    {
      ssize_t n = sendfile (to, from, &off, (size_t) (size - off));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
    }
  return 0;
}

/* The copy keeps a container from writing the binary through
   /proc/PID/exe.  Without root a container holds only ids this caller
   could map: its own, ranges of /etc/subuid, never real root.  A binary
   that no group or other may write, owned by real root (seen as 0 from
   the initial namespace, or as an id not mapped here from another), is
   out of its reach already, and the copy would only cost time.  */
static bool
container_could_write (const struct stat *st)
{
  if (st->st_mode & (S_IWGRP | S_IWOTH))
    return true;
  if (ar_userns_is_initial ())
    return geteuid () == 0 || st->st_uid != 0;
  return ar_userns_uid_mapped (st->st_uid);
}

int
ar_ensure_sealed_exe (char **argv, char **envp, ar_error_t **err)
{
  cleanup_close int self = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (self < 0)
    return ar_error_set (err, errno, "open /proc/self/exe");
  if (running_sealed (self))
    return 0;

  struct stat st;
  if (fstat (self, &st) < 0)
    return ar_error_set (err, errno, "stat /proc/self/exe");
  if (!container_could_write (&st))
    return 0;
  cleanup_close int copy
      = memfd_create ("agentrun", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (copy < 0)
    return ar_error_set (err, errno, "memfd_create");
  if (copy_all (self, copy, st.st_size) < 0)
    return ar_error_set (err, errno, "copy the runtime binary");
  if (seal_copy (copy) < 0)
    return ar_error_set (err, errno, "seal the runtime binary copy");
  syscall (SYS_execveat, copy, "", argv, envp, AT_EMPTY_PATH);
  return ar_error_set (err, errno, "re-exec the sealed runtime binary");
}

int
ar_prepare_container_command (char **argv, char **envp, ar_error_t **err)
{
  if (ar_ensure_sealed_exe (argv, envp, err) < 0)
    return -1;
  ar_prefault_heap_and_stack ();
  return 0;
}
