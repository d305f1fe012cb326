/* SPDX-License-Identifier: Apache-2.0 */
/* The audit log: JSON lines, each ending in "prev", the sha256 of the line
 * before it (64 zeros for the first), so an edited or cut line breaks the
 * chain. Appends take an exclusive flock, so concurrent runtime processes
 * (create, exec, delete of different containers) chain correctly. */
#include "config.h"
#include "audit_log.h"
#include "cleanup.h"
#include "fs.h"
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <yajl/yajl_gen.h>

#define ZERO_HASH                                                              \
  "0000000000000000000000000000000000000000000000000000000000000000"
#define PREV_PREFIX ",\"prev\":\""
#define PREV_SUFFIX "\"}"
#define PREV_TAIL_LEN                                                          \
  (sizeof PREV_PREFIX - 1 + AR_SHA256_HEX_SIZE - 1 + sizeof PREV_SUFFIX - 1)
#define SCAN_BLOCK 4096

/* Where the last line of the log starts; `end` is its length without the
 * final newline. */
static int
find_last_line (int fd, off_t end, off_t *start)
{
  char buf[SCAN_BLOCK];
  off_t pos = end;
  while (pos > 0)
    {
      size_t n = pos < SCAN_BLOCK ? (size_t) pos : SCAN_BLOCK;
      if (pread (fd, buf, n, pos - (off_t) n) != (ssize_t) n)
        return -1;
      for (size_t i = n; i > 0; i--)
        if (buf[i - 1] == '\n')
          {
            *start = pos - (off_t) n + (off_t) i;
            return 0;
          }
      pos -= (off_t) n;
    }
  *start = 0;
  return 0;
}

static int
hash_range (int fd, off_t start, off_t end, char hex[AR_SHA256_HEX_SIZE])
{
  ar_sha256_ctx ctx;
  uint8_t digest[AR_SHA256_DIGEST_SIZE];
  char buf[SCAN_BLOCK * 4];
  ar_sha256_init (&ctx);
  for (off_t pos = start; pos < end;)
    {
      size_t n
          = end - pos < (off_t) sizeof buf ? (size_t) (end - pos) : sizeof buf;
      ssize_t got = pread (fd, buf, n, pos);
      if (got <= 0)
        return -1;
      ar_sha256_update (&ctx, buf, (size_t) got);
      pos += got;
    }
  ar_sha256_final (&ctx, digest);
  ar_sha256_to_hex (digest, hex);
  return 0;
}

/* The hash of the log's last line. A last line without its newline (a cut
 * write) gets one first, so the new entry starts on a line of its own and
 * verification points at the damaged one. *size is the log's size then,
 * where the new entry goes. */
static int
previous_line_hash (int fd, char hex[AR_SHA256_HEX_SIZE], off_t *size)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return -1;
  *size = st.st_size;
  if (st.st_size == 0)
    {
      memcpy (hex, ZERO_HASH, AR_SHA256_HEX_SIZE);
      return 0;
    }
  char last;
  if (pread (fd, &last, 1, st.st_size - 1) != 1)
    return -1;
  off_t end = st.st_size - 1;
  if (last != '\n')
    {
      if (ar_write_all (fd, "\n", 1) < 0)
        return -1;
      end = st.st_size;
      *size = st.st_size + 1;
    }
  off_t start;
  if (find_last_line (fd, end, &start) < 0)
    return -1;
  return hash_range (fd, start, end, hex);
}

static void
format_now (char buf[64])
{
  struct timespec ts;
  struct tm tm;
  clock_gettime (CLOCK_REALTIME, &ts);
  gmtime_r (&ts.tv_sec, &tm);
  size_t n = strftime (buf, 64, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (buf + n, 64 - n, ".%09ldZ", ts.tv_nsec);
}

static void
gen_string (yajl_gen gen, const char *s)
{
  yajl_gen_string (gen, (const unsigned char *) s, strlen (s));
}

/* "{"time":...,"id":...,"event":..." — without the closing brace. */
static char *
entry_head (const char *container_id, const char *event)
{
  char now[64];
  format_now (now);
  yajl_gen gen = yajl_gen_alloc (NULL);
  yajl_gen_map_open (gen);
  gen_string (gen, "time");
  gen_string (gen, now);
  gen_string (gen, "id");
  if (container_id)
    gen_string (gen, container_id);
  else
    yajl_gen_null (gen);
  gen_string (gen, "event");
  gen_string (gen, event);
  yajl_gen_map_close (gen);
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (gen, &buf, &len);
  char *head = xasprintf ("%.*s", (int) (len - 1), (const char *) buf);
  yajl_gen_free (gen);
  return head;
}

/* Newlines in bytes [from, to) of fd, in *n. With `stop` > 0 the scan
 * ends at the stop-th; *past (when not NULL) is the offset just after the
 * last one counted. */
static int
scan_newlines (int fd, off_t from, off_t to, size_t stop, size_t *n,
               off_t *past)
{
  char buf[SCAN_BLOCK * 4];
  *n = 0;
  for (off_t pos = from; pos < to;)
    {
      size_t want
          = to - pos < (off_t) sizeof buf ? (size_t) (to - pos) : sizeof buf;
      ssize_t got = pread (fd, buf, want, pos);
      if (got <= 0)
        return -1;
      for (const char *p = buf;
           (p = memchr (p, '\n', (size_t) (buf + got - p))); p++)
        {
          (*n)++;
          if (past)
            *past = pos + (p - buf) + 1;
          if (stop > 0 && *n == stop)
            return 0;
        }
      pos += got;
    }
  return 0;
}

/* Lines in the first `size` bytes of fd, a last one without its newline
 * included. */
static int
count_lines (int fd, off_t size, size_t *n)
{
  char last;
  if (scan_newlines (fd, 0, size, 0, n, NULL) < 0
      || (size > 0 && pread (fd, &last, 1, size - 1) != 1))
    return -1;
  *n += size > 0 && last != '\n';
  return 0;
}

/* The log's absolute path; for a log that is not there (moved away to be
 * rotated), its directory's, with its name. */
static char *
log_name (const char *audit_path)
{
  char real[PATH_MAX];
  if (realpath (audit_path, real))
    return xstrdup (real);
  const char *slash = strrchr (audit_path, '/');
  cleanup_free char *dir
      = slash == NULL ? xstrdup (".")
        : slash == audit_path
            ? xstrdup ("/")
            : xasprintf ("%.*s", (int) (slash - audit_path), audit_path);
  const char *base = slash ? slash + 1 : audit_path;
  if (realpath (dir, real) == NULL)
    return xstrdup (audit_path);
  return xasprintf ("%s%s%s", real, strcmp (real, "/") == 0 ? "" : "/", base);
}

/* <heads_dir>/<sha256 of the log's absolute path>. */
static char *
head_file (const char *audit_path, const char *heads_dir)
{
  cleanup_free char *name = log_name (audit_path);
  char hex[AR_SHA256_HEX_SIZE];
  ar_sha256_hex (name, strlen (name), hex);
  return xasprintf ("%s/%s", heads_dir, hex);
}

/* A kept head: line `lines` of the log hashes to `hash` and ends (newline
 * included) at byte `end`. The file is "N:HASH\nEND\n"; heads kept by
 * older builds have no END (-1 here). */
typedef struct
{
  size_t lines;
  char hash[AR_SHA256_HEX_SIZE];
  off_t end;
} kept_head;

static bool
read_kept (const char *file, kept_head *k)
{
  cleanup_free char *text = NULL;
  if (ar_read_file_at (AT_FDCWD, file, 256, &text, NULL, NULL) < 0)
    return false;
  char *p;
  unsigned long long n = strtoull (text, &p, 10);
  if (n == 0 || *p != ':'
      || strspn (p + 1, "0123456789abcdefABCDEF") != AR_SHA256_HEX_SIZE - 1)
    return false;
  k->lines = (size_t) n;
  memcpy (k->hash, p + 1, AR_SHA256_HEX_SIZE - 1);
  k->hash[AR_SHA256_HEX_SIZE - 1] = '\0';
  p += AR_SHA256_HEX_SIZE;
  char *q = p;
  long long end = *p == '\n' ? strtoll (p + 1, &q, 10) : -1;
  k->end = end > 0 && *q == '\n' ? (off_t) end : -1;
  return true;
}

/* Does the line ending (newline included) at `end` hash to `hash`? */
static int
line_at_hashes_to (int fd, off_t end, const char *hash)
{
  char nl;
  off_t start;
  char hex[AR_SHA256_HEX_SIZE];
  if (pread (fd, &nl, 1, end - 1) != 1)
    return -1;
  if (nl != '\n')
    return 0;
  if (find_last_line (fd, end - 1, &start) < 0
      || hash_range (fd, start, end - 1, hex) < 0)
    return -1;
  return strcasecmp (hex, hash) == 0;
}

/* Where the kept head's line ends in the first `size` bytes of the log:
 * 1 and *end, or 0 when it is no longer there (the log was cut or
 * rewritten below it), -1 on a read error. */
static int
kept_line_end (int fd, off_t size, const kept_head *k, off_t *end)
{
  *end = k->end;
  if (*end < 0)
    {
      size_t seen;
      if (scan_newlines (fd, 0, size, k->lines, &seen, end) < 0)
        return -1;
      if (seen < k->lines)
        return 0;
    }
  return *end <= size ? line_at_hashes_to (fd, *end, k->hash) : 0;
}

/* Called with the log locked, right after `line` (newline included) was
 * appended at `before`. The count goes on from the kept head when the log
 * still holds its line, so a long log is not read again at every append;
 * when it does not, the head is not moved to fit what the log became. */
static int
keep_head (int fd, const char *audit_path, const char *heads_dir, off_t before,
           const char *line, char **stale, ar_error_t **err)
{
  cleanup_free char *file = head_file (audit_path, heads_dir);
  kept_head k = { 0 };
  size_t lines = 0, more;
  off_t from = 0;
  if (read_kept (file, &k))
    {
      int there = kept_line_end (fd, before, &k, &from);
      if (there < 0)
        return ar_error_set (err, errno, "audit: read `%s`", audit_path);
      if (there == 0)
        {
          *stale = xasprintf (
              "`%s` no longer holds line %zu, which the head kept under the "
              "state root names (cut or rewritten): appended, the head "
              "stays %zu:%s (see `agentrun audit`)",
              audit_path, k.lines, k.lines, k.hash);
          return 0;
        }
      lines = k.lines;
    }
  if (scan_newlines (fd, from, before, 0, &more, NULL) < 0)
    return ar_error_set (err, errno, "audit: count the lines of `%s`",
                         audit_path);
  char hex[AR_SHA256_HEX_SIZE];
  size_t len = strlen (line);
  ar_sha256_hex (line, len - 1, hex);
  cleanup_free char *head = xasprintf ("%zu:%s\n%lld\n", lines + more + 1, hex,
                                       (long long) before + (long long) len);
  if (ar_mkdir_p (heads_dir, 0700, err) < 0)
    return -1;
  return ar_write_file_atomic_at (AT_FDCWD, file, head, strlen (head), 0600,
                                  err);
}

int
ar_audit_append_with_head (const char *audit_path, const char *heads_dir,
                           const char *container_id, const char *event,
                           const char *fields_json, char **stale,
                           ar_error_t **err)
{
  *stale = NULL;
  if (fields_json && strchr (fields_json, '\n'))
    return ar_error_set (err, 0, "audit: event `%s` spans lines", event);
  cleanup_close int fd = open (
      audit_path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd < 0)
    return ar_error_set (err, errno, "audit: open `%s`", audit_path);
  if (flock (fd, LOCK_EX) < 0)
    return ar_error_set (err, errno, "audit: lock `%s`", audit_path);

  char prev[AR_SHA256_HEX_SIZE];
  off_t before;
  if (previous_line_hash (fd, prev, &before) < 0)
    return ar_error_set (err, errno, "audit: read `%s`", audit_path);

  cleanup_free char *head = entry_head (container_id, event);
  bool has_fields = fields_json && fields_json[0];
  cleanup_free char *line
      = xasprintf ("%s%s%s" PREV_PREFIX "%s" PREV_SUFFIX "\n", head,
                   has_fields ? "," : "", has_fields ? fields_json : "", prev);
  /* One write: with O_APPEND a reader never sees half an entry unless
   * the disk fills, which verification then reports. */
  if (ar_write_all (fd, line, strlen (line)) < 0)
    return ar_error_set (err, errno, "audit: write `%s`", audit_path);
  return heads_dir
             ? keep_head (fd, audit_path, heads_dir, before, line, stale, err)
             : 0;
}

int
ar_audit_append (const char *audit_path, const char *container_id,
                 const char *event, const char *fields_json, ar_error_t **err)
{
  char *stale = NULL;
  return ar_audit_append_with_head (audit_path, NULL, container_id, event,
                                    fields_json, &stale, err);
}

char *
ar_audit_heads_dir (const char *state_root)
{
  return xasprintf ("%s/.audit-heads", state_root);
}

int
ar_audit_stored_head (const char *audit_path, const char *heads_dir,
                      char **head, ar_error_t **err)
{
  *head = NULL;
  cleanup_free char *file = head_file (audit_path, heads_dir);
  if (access (file, F_OK) < 0)
    return 0;
  if (ar_read_file_at (AT_FDCWD, file, 256, head, NULL, err) < 0)
    return -1;
  char *nl = strchr (*head, '\n');
  if (nl)
    *nl = '\0';
  return 0;
}

int
ar_audit_kept_head (const char *audit_path, const char *heads_dir, char **head,
                    ar_error_t **err)
{
  if (ar_audit_stored_head (audit_path, heads_dir, head, err) < 0)
    return -1;
  if (*head == NULL)
    return ar_error_set (err, 0, "audit: no head kept for `%s` under `%s`",
                         audit_path, heads_dir);
  return 0;
}

int
ar_audit_forget_head (const char *audit_path, const char *heads_dir,
                      char **head, ar_error_t **err)
{
  if (ar_audit_kept_head (audit_path, heads_dir, head, err) < 0)
    return -1;
  cleanup_free char *file = head_file (audit_path, heads_dir);
  if (unlink (file) < 0)
    return ar_error_set (err, errno, "audit: remove the head kept for `%s`",
                         audit_path);
  return 0;
}

int
ar_audit_check_head (const char *audit_path, const char *head, char **problem,
                     ar_error_t **err)
{
  *problem = NULL;
  char *end;
  unsigned long long want = strtoull (head, &end, 10);
  if (want == 0 || *end != ':' || strlen (end + 1) != AR_SHA256_HEX_SIZE - 1)
    return ar_error_set (
        err, 0,
        "audit: head `%s`: expected N:SHA256 (a line number and 64 hex digits)",
        head);
  const char *want_hash = end + 1;
  cleanup_file FILE *f = fopen (audit_path, "re");
  if (f == NULL)
    return ar_error_set (err, errno, "audit: open `%s`", audit_path);
  cleanup_free char *line = NULL;
  size_t cap = 0, number = 0;
  ssize_t n;
  while ((n = getline (&line, &cap, f)) > 0 && ++number < want)
    ;
  if (ferror (f))
    return ar_error_set (err, errno, "audit: read `%s`", audit_path);
  if (number < want)
    {
      *problem = xasprintf (
          "truncated: the head says %llu lines, the log has %zu", want, number);
      return 0;
    }
  size_t len = (size_t) n - (line[n - 1] == '\n');
  char hex[AR_SHA256_HEX_SIZE];
  ar_sha256_hex (line, len, hex);
  if (strcasecmp (hex, want_hash) != 0)
    *problem = xasprintf ("line %llu: does not match the head", want);
  return 0;
}

int
ar_audit_head (const char *audit_path, const char *heads_dir, char **head,
               ar_error_t **err)
{
  *head = NULL;
  cleanup_close int fd = open (audit_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return ar_error_set (err, errno, "audit: open `%s`", audit_path);
  /* Shared: an append in progress (exclusive) is either in or not. */
  if (flock (fd, LOCK_SH) < 0 || fstat (fd, &st) < 0)
    return ar_error_set (err, errno, "audit: lock `%s`", audit_path);
  if (st.st_size == 0)
    return 0;
  char last;
  if (pread (fd, &last, 1, st.st_size - 1) != 1)
    return ar_error_set (err, errno, "audit: read `%s`", audit_path);
  off_t end = st.st_size - (last == '\n');
  off_t start;
  char hex[AR_SHA256_HEX_SIZE];
  if (find_last_line (fd, end, &start) < 0
      || hash_range (fd, start, end, hex) < 0)
    return ar_error_set (err, errno, "audit: read `%s`", audit_path);
  /* The kept head, when it names this last line, has its count. */
  cleanup_free char *file
      = heads_dir ? head_file (audit_path, heads_dir) : NULL;
  kept_head k = { 0 };
  size_t lines;
  if (file && read_kept (file, &k) && k.end == st.st_size
      && strcasecmp (k.hash, hex) == 0)
    lines = k.lines;
  else if (count_lines (fd, st.st_size, &lines) < 0)
    return ar_error_set (err, errno, "audit: read `%s`", audit_path);
  *head = xasprintf ("%zu:%s", lines, hex);
  return 0;
}

int
ar_audit_count_lines (const char *audit_path, size_t *n, ar_error_t **err)
{
  cleanup_close int fd = open (audit_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return ar_error_set (err, errno, "audit: open `%s`", audit_path);
  if (count_lines (fd, st.st_size, n) < 0)
    return ar_error_set (err, errno, "audit: read `%s`", audit_path);
  return 0;
}

/* Does the line (without its newline) end in the "prev" we expect? */
static bool
line_links_to (const char *line, size_t len, const char *expected_prev)
{
  if (len < PREV_TAIL_LEN + 1 || line[0] != '{')
    return false;
  const char *tail = line + len - PREV_TAIL_LEN;
  const size_t prefix_len = sizeof PREV_PREFIX - 1;
  return memcmp (tail, PREV_PREFIX, prefix_len) == 0
         && memcmp (tail + prefix_len, expected_prev, AR_SHA256_HEX_SIZE - 1)
                == 0
         && memcmp (tail + prefix_len + AR_SHA256_HEX_SIZE - 1, PREV_SUFFIX,
                    sizeof PREV_SUFFIX - 1)
                == 0;
}

/* A line is bad when its "prev" is not the hash of the line before it,
 * or it has no newline (a cut write). An edit to line N therefore shows
 * at line N+1; the chain alone cannot show the loss of whole lines at
 * the end. *bad_line is 0 when the whole log checks out. */
int
ar_audit_verify (const char *audit_path, size_t *bad_line, ar_error_t **err)
{
  *bad_line = 0;
  int fd = open (audit_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return ar_error_set (err, errno, "audit: open `%s`", audit_path);
  cleanup_file FILE *f = fdopen (fd, "r");
  if (f == NULL)
    {
      close (fd);
      return ar_error_set (err, errno, "audit: open `%s`", audit_path);
    }
  cleanup_free char *line = NULL;
  size_t cap = 0;
  char expected[AR_SHA256_HEX_SIZE] = ZERO_HASH;
  ssize_t n;
  for (size_t number = 1; (n = getline (&line, &cap, f)) > 0; number++)
    {
      size_t len = (size_t) n;
      bool complete = line[len - 1] == '\n';
      if (complete)
        len--;
      if (!complete || !line_links_to (line, len, expected))
        {
          *bad_line = number;
          return 0;
        }
      ar_sha256_hex (line, len, expected);
    }
  if (ferror (f))
    return ar_error_set (err, errno, "audit: read `%s`", audit_path);
  return 0;
}
