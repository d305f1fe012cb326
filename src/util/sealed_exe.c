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
   /proc/PID/exe.  A binary that a group or others may write is in reach
   of anyone.  Else only its owner's id writes it: a container in a user
   namespace of its own holds `held` alone; one without holds the caller's
   ids, which without root are its own and ranges of /etc/subuid, never
   real root (seen as 0 from the initial namespace, or as an id not mapped
   here from another).  */
static bool
container_could_write (const struct stat *st, const ar_held_uids *held,
                       size_t n)
{
  if (st->st_mode & (S_IWGRP | S_IWOTH))
    return true;
  if (!ar_userns_is_initial ())
    return ar_userns_uid_mapped (st->st_uid);
  if (n == 0)
    return geteuid () == 0 || st->st_uid != 0;
  for (size_t i = 0; i < n; i++)
    if (st->st_uid >= held[i].first
        && st->st_uid - held[i].first < held[i].count)
      return true;
  return false;
}

/* 0 and the binary's stat when it runs from its file, 1 when from a
 * sealed copy, -1 on failure. A process runs from what it was exec'd
 * from until it execs again: once seen sealed, it stays so (create asks
 * again after main made sure, and need not look). */
static int
unsealed_exe (int *self, struct stat *st, ar_error_t **err)
{
  static bool seen_sealed;
  if (seen_sealed)
    return 1;
  *self = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (*self < 0)
    return ar_error_set (err, errno, "open /proc/self/exe");
  if ((seen_sealed = running_sealed (*self)))
    return 1;
  if (fstat (*self, st) < 0)
    return ar_error_set (err, errno, "stat /proc/self/exe");
  return 0;
}

bool
ar_exe_reachable (const ar_held_uids *held, size_t n)
{
  cleanup_close int self = -1;
  struct stat st;
  cleanup_error ar_error_t *ignored = NULL;
  int r = unsealed_exe (&self, &st, &ignored);
  return r < 0 || (r == 0 && container_could_write (&st, held, n));
}

int
ar_ensure_sealed_exe (const ar_held_uids *held, size_t n, char **argv,
                      char **envp, ar_error_t **err)
{
  cleanup_close int self = -1;
  struct stat st;
  int r = unsealed_exe (&self, &st, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (!container_could_write (&st, held, n))
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
ar_prepare_container_command (const ar_held_uids *held, size_t n, char **argv,
                              char **envp, ar_error_t **err)
{
  if (ar_ensure_sealed_exe (held, n, argv, envp, err) < 0)
    return -1;
  ar_prefault_heap_and_stack ();
  return 0;
}
