/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "secrets.h"
#include "hostfs.h"
#include "../util/cleanup.h"
#include "../util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#define PAGE_BYTES 4096u
#define SLACK_BYTES (16 * PAGE_BYTES)
#define SCAN_CHUNK (64u * 1024)

static bool
secret_name_is_valid (const char *name)
{
  if (name == NULL || name[0] == '\0' || strcmp (name, ".") == 0
      || strcmp (name, "..") == 0)
    return false;
  return strspn (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                       "0123456789._-")
         == strlen (name);
}

/* Open a secret's source: a regular file, not through a symlink, and not
 * larger than the cap. Errors name the secret and its host path, never a
 * byte of it. */
static int
open_secret_source (int dirfd, const char *path, const char *name,
                    struct stat *st, ar_error_t **err)
{
  /* O_NONBLOCK: a fifo in place of the file must not hang the create. */
  cleanup_close int fd
      = openat (dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return ar_error_set (err, errno, "secret `%s`: open `%s`", name, path);
  if (fstat (fd, st) < 0)
    return ar_error_set (err, errno, "secret `%s`: stat `%s`", name, path);
  if (!S_ISREG (st->st_mode))
    return ar_error_set (err, 0, "secret `%s`: `%s` is not a regular file",
                         name, path);
  if ((uint64_t) st->st_size > AR_SECRET_MAX_BYTES)
    return ar_error_set (err, 0, "secret `%s`: `%s` is larger than %u bytes",
                         name, path, AR_SECRET_MAX_BYTES);
  return steal_fd (&fd);
}

/* Copy up to the cap; the zeroed bounce buffer keeps no trace. */
static int
copy_secret (int from, int to, const char *name, ar_error_t **err)
{
  unsigned char buf[16384];
  size_t total = 0;
  int ret = 0;
  for (;;)
    {
      ssize_t n = read (from, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          ret = ar_error_set (err, errno, "secret `%s`: read", name);
          break;
        }
      if (n == 0)
        break;
      total += (size_t) n;
      if (total > AR_SECRET_MAX_BYTES)
        {
          ret = ar_error_set (err, 0, "secret `%s`: larger than %u bytes", name,
                              AR_SECRET_MAX_BYTES);
          break;
        }
      if (ar_write_all (to, buf, (size_t) n) < 0)
        {
          ret = ar_error_set (err, errno, "secret `%s`: write", name);
          break;
        }
    }
  explicit_bzero (buf, sizeof buf);
  return ret;
}

static int
install_secret (int secrets_fd, int source_fd, const char *name, uid_t uid,
                gid_t gid, ar_error_t **err)
{
  cleanup_close int fd
      = openat (secrets_fd, name,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
  if (fd < 0)
    return ar_error_set (err, errno, "secret `%s`: create", name);
  if (fchown (fd, uid, gid) < 0 || fchmod (fd, 0400) < 0)
    return ar_error_set (err, errno, "secret `%s`: set owner and mode", name);
  return copy_secret (source_fd, fd, name, err);
}

static void
close_all (int *fds, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  free (fds);
}

/* Open and check every source first, so the tmpfs can be sized to fit. */
static int
open_sources (const ar_agent_plan *plan, int **fds_out, uint64_t *bytes,
              ar_error_t **err)
{
  int *fds = xmalloc (plan->n_secrets * sizeof *fds);
  for (size_t i = 0; i < plan->n_secrets; i++)
    fds[i] = -1;
  *bytes = SLACK_BYTES;
  for (size_t i = 0; i < plan->n_secrets; i++)
    {
      const ar_secret *s = &plan->secrets[i];
      struct stat st;
      if (!secret_name_is_valid (s->name))
        {
          close_all (fds, plan->n_secrets);
          return ar_error_set (err, 0,
                               "secret name `%s`: only letters, "
                               "digits, '.', '_' and '-' are allowed",
                               s->name ? s->name : "");
        }
      fds[i] = open_secret_source (AT_FDCWD, s->host_path, s->name, &st, err);
      if (fds[i] < 0)
        {
          close_all (fds, plan->n_secrets);
          return -1;
        }
      *bytes
          += ((uint64_t) st.st_size + PAGE_BYTES - 1) / PAGE_BYTES * PAGE_BYTES;
    }
  *fds_out = fds;
  return 0;
}

static int
fill_secrets (const ar_agent_plan *plan, const char *dir, int *fds, uid_t uid,
              gid_t gid, ar_error_t **err)
{
  cleanup_close int dirfd
      = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0)
    return ar_error_set (err, errno, "open `%s`", dir);
  for (size_t i = 0; i < plan->n_secrets; i++)
    if (install_secret (dirfd, fds[i], plan->secrets[i].name, uid, gid, err)
        < 0)
      return -1;
  /* The process user must be able to list and read, nobody to write. */
  if (fchown (dirfd, uid, gid) < 0 || fchmod (dirfd, 0500) < 0)
    return ar_error_set (err, errno, "set owner and mode of `%s`", dir);
  return 0;
}

int
ar_secrets_prepare (const ar_agent_plan *plan, const char *state_dir, uid_t uid,
                    gid_t gid, ar_error_t **err)
{
  int *fds = NULL;
  uint64_t bytes;
  if (open_sources (plan, &fds, &bytes, err) < 0)
    return -1;

  cleanup_free char *dir = ar_hostfs_join (state_dir, AR_SECRETS_DIR);
  cleanup_free char *data
      = xasprintf ("size=%llu,nr_inodes=%zu,mode=0700",
                   (unsigned long long) bytes, plan->n_secrets + 16);
  int ret = ar_hostfs_mount_tmpfs (dir, MS_NOEXEC | MS_NOSUID | MS_NODEV, data,
                                   err);
  if (ret == 0)
    ret = fill_secrets (plan, dir, fds, uid, gid, err);
  close_all (fds, plan->n_secrets);
  if (ret < 0)
    {
      ar_secrets_teardown (state_dir, NULL);
      return ar_error_prefix (err, "secrets");
    }
  return 0;
}

/* Overwrite a file's bytes with zeros: cheap, and the pages that held the
 * secret do not wait for reuse with their contents. */
static void
zero_file_at (int dirfd, const char *name)
{
  cleanup_close int fd
      = openat (dirfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return;
  static const unsigned char zeros[4096];
  for (off_t done = 0; done < st.st_size;)
    {
      size_t n = st.st_size - done < (off_t) sizeof zeros
                     ? (size_t) (st.st_size - done)
                     : sizeof zeros;
      ssize_t w = pwrite (fd, zeros, n, done);
      if (w <= 0)
        return;
      done += w;
    }
}

static void
zero_secret_files (const char *dir)
{
  int dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0)
    return;
  cleanup_dir DIR *d = fdopendir (dirfd);
  if (d == NULL)
    {
      close (dirfd);
      return;
    }
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    if (e->d_type == DT_REG)
      zero_file_at (dirfd, e->d_name);
}

int
ar_secrets_teardown (const char *state_dir, ar_error_t **err)
{
  cleanup_free char *dir = ar_hostfs_join (state_dir, AR_SECRETS_DIR);
  if (ar_hostfs_is_mountpoint (dir))
    zero_secret_files (dir);
  return ar_hostfs_unmount_and_remove (dir, err);
}

int
ar_secrets_hide (const char *secrets_path, ar_error_t **err)
{
  if (secrets_path == NULL)
    secrets_path = AR_SECRETS_DEFAULT_PATH;
  if (unshare (CLONE_NEWNS) < 0)
    return ar_error_set (err, errno, "hide secrets: unshare mount namespace");
  if (mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
    return ar_error_set (err, errno, "hide secrets: make / rslave");
  if (umount2 (secrets_path, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
    return 0;
  /* A locked mount (inherited from a more privileged namespace) cannot be
   * unmounted, but it can be covered. */
  if (mount ("tmpfs", secrets_path, "tmpfs",
             MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
             "size=4k,nr_inodes=1,mode=0500")
      < 0)
    return ar_error_set (err, errno, "hide secrets at `%s`", secrets_path);
  return 0;
}

/* ---- reading them back, to scan exported files ------------------------ */

static int
read_secret (int dirfd, const char *path, const char *name,
             ar_secret_value *out, ar_error_t **err)
{
  struct stat st;
  cleanup_close int fd = open_secret_source (dirfd, path, name, &st, err);
  if (fd < 0)
    return -1;
  unsigned char *bytes = xmalloc (AR_SECRET_MAX_BYTES);
  ssize_t n = ar_read_all (fd, bytes, AR_SECRET_MAX_BYTES);
  if (n < 0)
    {
      int saved = errno;
      free (bytes);
      return ar_error_set (err, saved, "secret `%s`: read", name);
    }
  out->name = xstrdup (name);
  out->bytes = bytes; /* not shrunk: realloc could leave a copy behind */
  out->len = (size_t) n;
  return 0;
}

int
ar_secrets_load (const ar_agent_plan *plan, const char *state_dir,
                 ar_secret_set *set, ar_error_t **err)
{
  memset (set, 0, sizeof *set);
  if (plan->n_secrets == 0)
    return 0;
  cleanup_free char *dir = ar_hostfs_join (state_dir, AR_SECRETS_DIR);
  cleanup_close int dirfd = -1;
  if (ar_hostfs_is_mountpoint (dir))
    dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  set->items = xcalloc (plan->n_secrets, sizeof *set->items);
  for (size_t i = 0; i < plan->n_secrets; i++)
    {
      const ar_secret *s = &plan->secrets[i];
      if (!secret_name_is_valid (s->name))
        continue;
      ar_secret_value v = { 0 };
      cleanup_error ar_error_t *read_err = NULL;
      int r = dirfd >= 0 ? read_secret (dirfd, s->name, s->name, &v, &read_err)
                         : read_secret (AT_FDCWD, s->host_path, s->name, &v,
                                        &read_err);
      if (r < 0 && read_err->errno_value != ENOENT)
        {
          ar_secret_set_clear (set);
          *err = steal_pointer (&read_err);
          return -1;
        }
      if (r < 0 || v.len == 0)
        {
          free (v.name);
          free (v.bytes);
          continue;
        }
      set->items[set->n++] = v;
      if (v.len > set->longest)
        set->longest = v.len;
    }
  return 0;
}

void
ar_secret_set_clear (ar_secret_set *set)
{
  for (size_t i = 0; i < set->n; i++)
    {
      explicit_bzero (set->items[i].bytes, set->items[i].len);
      free (set->items[i].bytes);
      free (set->items[i].name);
    }
  free (set->items);
  memset (set, 0, sizeof *set);
}

const char *
ar_secret_set_find (const ar_secret_set *set, const void *buf, size_t len)
{
  if (set == NULL)
    return NULL;
  for (size_t i = 0; i < set->n; i++)
    if (memmem (buf, len, set->items[i].bytes, set->items[i].len) != NULL)
      return set->items[i].name;
  return NULL;
}

void
ar_secret_scanner_init (ar_secret_scanner *s, const ar_secret_set *set)
{
  s->set = set;
  s->kept = 0;
  s->found = NULL;
  s->window
      = set != NULL && set->n > 0 ? xmalloc (set->longest + SCAN_CHUNK) : NULL;
}

/* The window holds the last (longest - 1) bytes of what came before, so
 * a secret that straddles two pieces is seen whole. */
static void
scan_piece (ar_secret_scanner *s, const unsigned char *p, size_t len)
{
  memcpy (s->window + s->kept, p, len);
  size_t used = s->kept + len;
  s->found = ar_secret_set_find (s->set, s->window, used);
  size_t keep = s->set->longest - 1;
  if (keep > used)
    keep = used;
  memmove (s->window, s->window + used - keep, keep);
  s->kept = keep;
}

void
ar_secret_scanner_feed (ar_secret_scanner *s, const void *buf, size_t len)
{
  const unsigned char *p = buf;
  while (len > 0 && s->found == NULL && s->window != NULL)
    {
      size_t n = len < SCAN_CHUNK ? len : SCAN_CHUNK;
      scan_piece (s, p, n);
      p += n;
      len -= n;
    }
}

void
ar_secret_scanner_clear (ar_secret_scanner *s)
{
  if (s->window)
    {
      explicit_bzero (s->window, s->set->longest + SCAN_CHUNK);
      free (s->window);
    }
  s->window = NULL;
  s->kept = 0;
}

char *
ar_secret_name_problem (const ar_secret_set *set, const char *name)
{
  const char *secret = ar_secret_set_find (set, name, strlen (name));
  if (secret)
    return xasprintf ("name contains secret %s", secret);
  if (!ar_hostfs_name_is_clean (name))
    return xstrdup ("name is not printable UTF-8");
  return NULL;
}

int
ar_secret_scan_fd (const ar_secret_set *set, int fd, const char **found,
                   ar_error_t **err)
{
  ar_secret_scanner scan;
  cleanup_free unsigned char *buf = xmalloc (SCAN_CHUNK);
  int ret = 0;
  ar_secret_scanner_init (&scan, set);
  for (;;)
    {
      ssize_t n = read (fd, buf, SCAN_CHUNK);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        ret = ar_error_set (err, errno, "read to look for secrets");
      if (n <= 0)
        break;
      ar_secret_scanner_feed (&scan, buf, (size_t) n);
    }
  *found = scan.found;
  ar_secret_scanner_clear (&scan);
  return ret;
}
