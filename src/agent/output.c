/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "output.h"
#include "hostfs.h"
#include "../util/cleanup.h"
#include "../util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#define MAX_EXPORT_DEPTH 128
#define COPY_CHUNK (64u * 1024)
/* Inodes beyond the file quota: the root and some directories. */
#define EXTRA_INODES 16
/* A manifest lists at most the file quota's files, a few hundred bytes each. */
#define MANIFEST_MAX (256u << 20)

int
ar_output_prepare (const char *state_dir, uint64_t max_bytes,
                   uint64_t max_files, uid_t uid, gid_t gid, ar_error_t **err)
{
  cleanup_free char *dir = ar_hostfs_join (state_dir, AR_OUTPUT_DIR);
  /* A quota of 0 means none: then tmpfs's defaults bound it. */
  cleanup_free char *size
      = max_bytes > 0 ? xasprintf (",size=%llu", (unsigned long long) max_bytes)
                      : xstrdup ("");
  cleanup_free char *inodes
      = max_files > 0 ? xasprintf (
            ",nr_inodes=%llu", (unsigned long long) (max_files + EXTRA_INODES))
                      : xstrdup ("");
  cleanup_free char *data = xasprintf ("mode=0755%s%s", size, inodes);
  if (ar_hostfs_mount_tmpfs (dir, MS_NOSUID | MS_NODEV | MS_NOEXEC, data, err)
      < 0)
    return ar_error_prefix (err, "output");
  if (chown (dir, uid, gid) < 0)
    {
      int saved = errno;
      ar_output_teardown (state_dir, NULL);
      return ar_error_set (err, saved, "output: chown `%s`", dir);
    }
  return 0;
}

int
ar_output_teardown (const char *state_dir, ar_error_t **err)
{
  cleanup_free char *dir = ar_hostfs_join (state_dir, AR_OUTPUT_DIR);
  if (ar_hostfs_unmount_and_remove (dir, err) < 0)
    return ar_error_prefix (err, "output");
  return 0;
}

/* ---- the export ------------------------------------------------------- */

typedef struct
{
  ar_output_report *report;
  const ar_secret_set *secrets;
  uint64_t max_bytes, max_files;
  uid_t owner_uid;
  gid_t owner_gid;
  char path[PATH_MAX]; /* of the entry at hand, relative */
  size_t path_len;
} export_ctx;

/* Record an entry that stays behind; returns 0 so callers can go on. */
static int
withhold (export_ctx *x, const char *reason)
{
  ar_output_report *r = x->report;
  r->withheld
      = xrealloc (r->withheld, (r->n_withheld + 1) * sizeof *r->withheld);
  r->withheld[r->n_withheld++] = (ar_output_withheld){
    .path = xstrdup (x->path),
    .reason = xstrdup (reason),
  };
  return 0;
}

static void
add_file (export_ctx *x, uint64_t size, const char *sha256)
{
  ar_output_report *r = x->report;
  r->files = xrealloc (r->files, (r->n_files + 1) * sizeof *r->files);
  ar_output_file *f = &r->files[r->n_files++];
  f->path = xstrdup (x->path);
  f->size = size;
  memcpy (f->sha256, sha256, AR_SHA256_HEX_SIZE);
  r->bytes += size;
}

/* Append "/name" (or "name" at the top) to x->path; false when too long.
 * `shown` is what goes into the report: not always the real name. */
static bool
push_path (export_ctx *x, const char *shown, size_t *mark)
{
  *mark = x->path_len;
  size_t len = strlen (shown) + (x->path_len > 0 ? 1 : 0);
  if (x->path_len + len >= sizeof x->path)
    return false;
  if (x->path_len > 0)
    x->path[x->path_len++] = '/';
  strcpy (x->path + x->path_len, shown);
  x->path_len += strlen (shown);
  return true;
}

static void
pop_path (export_ctx *x, size_t mark)
{
  x->path_len = mark;
  x->path[mark] = '\0';
}

static const char *
special_file_reason (mode_t mode)
{
  switch (mode & S_IFMT)
    {
    case S_IFLNK:
      return "symlink";
    case S_IFCHR:
    case S_IFBLK:
      return "device node";
    case S_IFIFO:
      return "fifo";
    case S_IFSOCK:
      return "socket";
    default:
      return "not a regular file";
    }
}

typedef struct
{
  uint64_t bytes;
  char sha256[AR_SHA256_HEX_SIZE];
  const char *secret; /* found in the file, NULL when clean */
  bool over_quota;
} copy_result;

/* Stream one file: hash, secret scan and quota in the same pass, so a
 * file need not fit in memory and growing it cannot beat the quota. */
static int
copy_stream (export_ctx *x, int in, int out, copy_result *res, ar_error_t **err)
{
  ar_sha256_ctx sha;
  ar_secret_scanner scan;
  uint8_t digest[AR_SHA256_DIGEST_SIZE];
  cleanup_free unsigned char *buf = xmalloc (COPY_CHUNK);
  int ret = 0;
  ar_sha256_init (&sha);
  ar_secret_scanner_init (&scan, x->secrets);
  for (;;)
    {
      ssize_t n = read (in, buf, COPY_CHUNK);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          ret = ar_error_set (err, errno, "output: read `%s`", x->path);
          break;
        }
      if (n == 0)
        break;
      res->bytes += (uint64_t) n;
      if (x->report->bytes + res->bytes > x->max_bytes)
        {
          res->over_quota = true;
          break;
        }
      ar_sha256_update (&sha, buf, (size_t) n);
      ar_secret_scanner_feed (&scan, buf, (size_t) n);
      if (ar_write_all (out, buf, (size_t) n) < 0)
        {
          ret = ar_error_set (err, errno, "output: write `%s`", x->path);
          break;
        }
    }
  res->secret = scan.found;
  ar_secret_scanner_clear (&scan);
  ar_sha256_final (&sha, digest);
  ar_sha256_to_hex (digest, res->sha256);
  return ret;
}

static int
open_source_file (int src_dir, const char *name, const struct stat *seen)
{
  cleanup_close int fd = openat (
      src_dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return -1;
  /* Still the file that was checked: regular, one link. */
  if (!S_ISREG (st.st_mode) || st.st_dev != seen->st_dev
      || st.st_ino != seen->st_ino || st.st_nlink > 1)
    return -1;
  return steal_fd (&fd);
}

static int
export_file (export_ctx *x, int src_dir, int dst_dir, const char *name,
             const struct stat *st, ar_error_t **err)
{
  if (st->st_nlink > 1)
    return withhold (x, "hard link");
  if (x->report->n_files >= x->max_files)
    return withhold (x, "file count quota exceeded");
  if (x->report->bytes + (uint64_t) st->st_size > x->max_bytes)
    return withhold (x, "byte quota exceeded");

  cleanup_close int in = open_source_file (src_dir, name, st);
  if (in < 0)
    return withhold (x, "changed while exporting");
  cleanup_close int out
      = openat (dst_dir, name,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return ar_error_set (err, errno, "output: create `%s`", x->path);

  copy_result res = { 0 };
  int ret = copy_stream (x, in, out, &res, err);
  const char *reason = NULL;
  cleanup_free char *secret_reason = NULL;
  if (ret == 0 && res.over_quota)
    reason = "byte quota exceeded";
  else if (ret == 0 && res.secret)
    {
      secret_reason = xasprintf ("contains secret %s", res.secret);
      reason = secret_reason;
    }
  if (ret < 0 || reason)
    {
      /* Truncate first: the bytes go even if the name cannot. */
      if (ftruncate (out, 0) < 0 || unlinkat (dst_dir, name, 0) < 0)
        return ar_error_set (err, errno, "output: remove `%s`", x->path);
      if (reason)
        withhold (x, reason);
      return ret;
    }
  if (fchmod (out, st->st_mode & 0777) < 0
      || fchown (out, x->owner_uid, x->owner_gid) < 0)
    return ar_error_set (err, errno, "output: set owner and mode of `%s`",
                         x->path);
  add_file (x, res.bytes, res.sha256);
  return 0;
}

static int export_tree (export_ctx *x, int src_dir, int dst_dir, int depth,
                        ar_error_t **err);

static int
export_dir (export_ctx *x, int src_dir, int dst_dir, const char *name,
            const struct stat *st, int depth, ar_error_t **err)
{
  if (depth >= MAX_EXPORT_DEPTH)
    return withhold (x, "nested too deeply");
  cleanup_close int src
      = openat (src_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (src < 0)
    return withhold (x, "changed while exporting");
  if (mkdirat (dst_dir, name, 0700) < 0)
    return ar_error_set (err, errno, "output: mkdir `%s`", x->path);
  cleanup_close int dst
      = openat (dst_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dst < 0)
    return ar_error_set (err, errno, "output: open `%s`", x->path);
  if (export_tree (x, src, dst, depth + 1, err) < 0)
    return -1;
  /* The owner keeps rwx on directories, so the export can always be
   * looked through and removed by them. */
  if (fchmod (dst, (st->st_mode & 0777) | 0700) < 0
      || fchown (dst, x->owner_uid, x->owner_gid) < 0)
    return ar_error_set (err, errno, "output: set owner and mode of `%s`",
                         x->path);
  return 0;
}

/* Entries withheld for their name alone: NULL when the name is fine.
 * *shown is what the report calls the entry. */
static const char *
name_problem (export_ctx *x, const char *name, int depth, const char **shown,
              char **why_owned)
{
  *shown = "[withheld name]";
  if ((*why_owned = ar_secret_name_problem (x->secrets, name)) != NULL)
    return *why_owned;
  *shown = name;
  if (depth == 0 && strcmp (name, AR_OUTPUT_MANIFEST) == 0)
    return "reserved name";
  return NULL;
}

static int
export_entry (export_ctx *x, int src_dir, int dst_dir, const char *name,
              int depth, ar_error_t **err)
{
  const char *shown;
  cleanup_free char *why_owned = NULL;
  const char *why = name_problem (x, name, depth, &shown, &why_owned);
  size_t mark;
  if (!push_path (x, shown, &mark))
    {
      withhold (x, "path too long");
      return 0;
    }
  int ret = 0;
  struct stat st;
  if (why)
    withhold (x, why);
  else if (fstatat (src_dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    withhold (x, "changed while exporting");
  else if (S_ISDIR (st.st_mode))
    ret = export_dir (x, src_dir, dst_dir, name, &st, depth, err);
  else if (S_ISREG (st.st_mode))
    ret = export_file (x, src_dir, dst_dir, name, &st, err);
  else
    withhold (x, special_file_reason (st.st_mode));
  pop_path (x, mark);
  return ret;
}

/* Directory fds on both sides, entries opened with O_NOFOLLOW relative to
 * them: no path string from the container is ever resolved. */
static int
export_tree (export_ctx *x, int src_dir, int dst_dir, int depth,
             ar_error_t **err)
{
  size_t n;
  cleanup_strv char **names = ar_hostfs_sorted_names (src_dir, &n);
  if (names == NULL)
    return ar_error_set (err, errno, "output: read `%s`", x->path);
  for (size_t i = 0; i < n; i++)
    if (export_entry (x, src_dir, dst_dir, names[i], depth, err) < 0)
      return -1;
  return 0;
}

static void
gen_key (yajl_gen gen, const char *key)
{
  yajl_gen_string (gen, (const unsigned char *) key, strlen (key));
}

void
ar_output_gen_withheld (yajl_gen gen, const ar_output_withheld *items, size_t n)
{
  gen_key (gen, "withheld");
  yajl_gen_array_open (gen);
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen_map_open (gen);
      gen_key (gen, "path");
      ar_hostfs_gen_name (gen, items[i].path);
      gen_key (gen, "reason");
      ar_hostfs_gen_name (gen, items[i].reason);
      yajl_gen_map_close (gen);
    }
  yajl_gen_array_close (gen);
}

static void
gen_report (yajl_gen gen, const ar_output_report *r)
{
  gen_key (gen, "files");
  yajl_gen_array_open (gen);
  for (size_t i = 0; i < r->n_files; i++)
    {
      yajl_gen_map_open (gen);
      gen_key (gen, "path");
      ar_hostfs_gen_name (gen, r->files[i].path);
      gen_key (gen, "size");
      yajl_gen_integer (gen, (long long) r->files[i].size);
      gen_key (gen, "sha256");
      gen_key (gen, r->files[i].sha256);
      yajl_gen_map_close (gen);
    }
  yajl_gen_array_close (gen);
  ar_output_gen_withheld (gen, r->withheld, r->n_withheld);
}

/* The whole document in `gen`, a line. */
static char *
take_json (yajl_gen gen)
{
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (gen, &buf, &len);
  char *s = xasprintf ("%.*s\n", (int) len, (const char *) buf);
  yajl_gen_free (gen);
  return s;
}

char *
ar_output_report_fields_json (const ar_output_report *r)
{
  yajl_gen gen = yajl_gen_alloc (NULL);
  yajl_gen_map_open (gen);
  gen_key (gen, "destination");
  ar_hostfs_gen_name (gen, r->destination ? r->destination : "");
  gen_report (gen, r);
  yajl_gen_map_close (gen);
  return ar_hostfs_json_members (gen);
}

static int
write_manifest (export_ctx *x, int dest_fd, ar_error_t **err)
{
  yajl_gen gen = yajl_gen_alloc (NULL);
  yajl_gen_config (gen, yajl_gen_beautify, 1);
  yajl_gen_map_open (gen);
  gen_report (gen, x->report);
  yajl_gen_map_close (gen);
  cleanup_free char *json = take_json (gen);

  cleanup_close int fd
      = openat (dest_fd, AR_OUTPUT_MANIFEST,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 || ar_write_all (fd, json, strlen (json)) < 0
      || fchown (fd, x->owner_uid, x->owner_gid) < 0)
    return ar_error_set (err, errno, "output: write the manifest");
  return 0;
}

static bool
container_id_is_safe (const char *id)
{
  return id != NULL && id[0] != '\0' && strchr (id, '/') == NULL
         && strcmp (id, ".") != 0 && strcmp (id, "..") != 0
         && ar_hostfs_name_is_clean (id);
}

/* The destination <host_dir>/<id>: made here, so nothing in it predates
 * the export; 0700 until it is complete. */
static int
make_destination (const char *host_dir, const char *id, struct stat *owner,
                  ar_error_t **err)
{
  if (!container_id_is_safe (id))
    return ar_error_set (err, 0,
                         "output: container id `%s` is not usable "
                         "as a directory name",
                         id ? id : "");
  cleanup_close int host_fd
      = open (host_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (host_fd < 0 || fstat (host_fd, owner) < 0)
    return ar_error_set (err, errno, "output: open `%s`", host_dir);
  if (mkdirat (host_fd, id, 0700) < 0)
    return ar_error_set (err, errno, "output: create `%s/%s`", host_dir, id);
  int fd
      = openat (host_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return ar_error_set (err, errno, "output: open `%s/%s`", host_dir, id);
  return fd;
}

int
ar_output_export (const char *state_dir, const char *host_dir,
                  const char *container_id, uint64_t max_bytes,
                  uint64_t max_files, const ar_secret_set *secrets,
                  ar_output_report *report, ar_error_t **err)
{
  memset (report, 0, sizeof *report);
  cleanup_free char *src = ar_hostfs_join (state_dir, AR_OUTPUT_DIR);
  if (!ar_hostfs_is_mountpoint (src))
    return 0;
  cleanup_close int src_fd
      = open (src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (src_fd < 0)
    return ar_error_set (err, errno, "output: open `%s`", src);

  struct stat owner;
  cleanup_close int dest_fd
      = make_destination (host_dir, container_id, &owner, err);
  if (dest_fd < 0)
    return -1;
  report->destination = xasprintf ("%s/%s", host_dir, container_id);

  export_ctx x = {
    .report = report,
    .secrets = secrets,
    /* 0: no quota beyond the tmpfs's own size. */
    .max_bytes = max_bytes > 0 ? max_bytes : UINT64_MAX,
    .max_files = max_files > 0 ? max_files : UINT64_MAX,
    .owner_uid = owner.st_uid,
    .owner_gid = owner.st_gid,
  };
  if (export_tree (&x, src_fd, dest_fd, 0, err) < 0
      || write_manifest (&x, dest_fd, err) < 0)
    return -1;
  if (fchmod (dest_fd, 0755) < 0
      || fchown (dest_fd, owner.st_uid, owner.st_gid) < 0)
    return ar_error_set (err, errno, "output: set owner and mode of `%s`",
                         report->destination);
  return 0;
}

char *
ar_output_kept_dir (const char *state_root)
{
  return xasprintf ("%s/.output-kept", state_root);
}

int
ar_output_export_kept (const char *state_dir, const char *container_id,
                       uint64_t max_bytes, uint64_t max_files,
                       const ar_secret_set *secrets, const ar_error_t *why,
                       ar_output_report *report, ar_error_t **err)
{
  cleanup_free char *root = xstrdup (state_dir);
  char *slash = strrchr (root, '/');
  if (slash == NULL || slash == root)
    return ar_error_set (err, 0, "output: no state root above `%s`", state_dir);
  *slash = '\0';
  cleanup_free char *dir = ar_output_kept_dir (root);
  if (mkdir (dir, 0700) < 0 && errno != EEXIST)
    return ar_error_set (err, errno, "output: mkdir `%s`", dir);
  if (ar_output_export (state_dir, dir, container_id, max_bytes, max_files,
                        secrets, report, err)
      < 0)
    return -1;
  cleanup_free char *why_path = xasprintf ("%s/%s.why", dir, container_id);
  cleanup_free char *text = xasprintf ("%s\n", ar_error_text (why));
  return ar_write_file_atomic_at (AT_FDCWD, why_path, text, strlen (text), 0600,
                                  err);
}

int
ar_output_exported (const char *host_dir, const char *container_id,
                    ar_output_report *out, ar_error_t **err)
{
  *out = (ar_output_report){ .destination = NULL };
  cleanup_free char *dest = xasprintf ("%s/%s", host_dir, container_id);
  cleanup_free char *manifest = xasprintf ("%s/" AR_OUTPUT_MANIFEST, dest);
  cleanup_free char *json = NULL;
  if (access (manifest, F_OK) < 0 && errno == ENOENT)
    return 0;
  if (ar_read_file_at (AT_FDCWD, manifest, MANIFEST_MAX, &json, NULL, err) < 0)
    return -1;
  char problem[256] = "";
  yajl_val root = yajl_tree_parse (json, problem, sizeof problem);
  const char *files_key[] = { "files", NULL };
  const char *withheld_key[] = { "withheld", NULL };
  const char *path_key[] = { "path", NULL };
  const char *reason_key[] = { "reason", NULL };
  yajl_val files = root ? yajl_tree_get (root, files_key, yajl_t_array) : NULL;
  if (!YAJL_IS_ARRAY (files))
    {
      yajl_tree_free (root);
      return ar_error_set (
          err, 0, "output: `%s`: expected an object with \"files\": [...]",
          manifest);
    }
  out->n_files = YAJL_GET_ARRAY (files)->len;
  yajl_val withheld = yajl_tree_get (root, withheld_key, yajl_t_array);
  size_t n = YAJL_IS_ARRAY (withheld) ? YAJL_GET_ARRAY (withheld)->len : 0;
  out->withheld = n ? xcalloc (n, sizeof *out->withheld) : NULL;
  for (size_t i = 0; i < n; i++)
    {
      yajl_val item = YAJL_GET_ARRAY (withheld)->values[i];
      const char *path
          = YAJL_GET_STRING (yajl_tree_get (item, path_key, yajl_t_string));
      const char *reason
          = YAJL_GET_STRING (yajl_tree_get (item, reason_key, yajl_t_string));
      if (path == NULL)
        continue;
      out->withheld[out->n_withheld].path = xstrdup (path);
      out->withheld[out->n_withheld++].reason
          = xstrdup (reason ? reason : "withheld");
    }
  yajl_tree_free (root);
  out->destination = steal_pointer (&dest);
  return 0;
}

void
ar_output_report_clear (ar_output_report *r)
{
  for (size_t i = 0; r->files && i < r->n_files; i++) /* see exported */
    free (r->files[i].path);
  for (size_t i = 0; i < r->n_withheld; i++)
    {
      free (r->withheld[i].path);
      free (r->withheld[i].reason);
    }
  free (r->files);
  free (r->withheld);
  free (r->destination);
  memset (r, 0, sizeof *r);
}
