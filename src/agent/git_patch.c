/* SPDX-License-Identifier: Apache-2.0 */
/* The format is git's own (diff.c, apply.c): what `git apply` needs is the
 * "diff --git" line, the mode lines, a full "index" line for binary
 * patches (it checks the preimage and the result against those ids),
 * and hunks whose line counts are exact. */
#include "config.h"
#include "git_patch.h"
#include "../util/base85.h"
#include "../util/cleanup.h"
#include "../util/sha1.h"

#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define NULL_ID "0000000000000000000000000000000000000000"
#define LITERAL_LINE_BYTES 52 /* git's binary patch lines: 52 bytes each */
/* git deflates binary patches at its default level for them, the fastest. */
#define LITERAL_LEVEL Z_BEST_SPEED

void
ar_patch_line (ar_patch_sink *s, const char *line, size_t len)
{
  const char *secret = ar_secret_set_find (s->secrets, line, len);
  if (secret)
    fprintf (s->out, "agentrun: withheld a line (contains secret %s)\n",
             secret);
  else
    fwrite (line, 1, len, s->out);
}

void
ar_patch_printf (ar_patch_sink *s, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *line = NULL;
  int n = vasprintf (&line, fmt, ap);
  va_end (ap);
  if (n < 0)
    abort (); /* out of memory, as xasprintf */
  ar_patch_line (s, line, (size_t) n);
}

static bool
needs_quoting (unsigned char c)
{
  return c < 0x20 || c == '"' || c == '\\' || c >= 0x7f;
}

char *
ar_git_quote_path (const char *prefix, const char *path)
{
  bool quote = false;
  for (const char *p = path; *p && !quote; p++)
    quote = needs_quoting ((unsigned char) *p);
  if (!quote)
    return xasprintf ("%s%s", prefix, path);
  static const char escapes[] = "\a\b\t\n\v\f\r";
  static const char letters[] = "abtnvfr";
  char *out = xmalloc (strlen (prefix) + 4 * strlen (path) + 3);
  char *o = out + sprintf (out, "\"%s", prefix);
  for (const unsigned char *p = (const unsigned char *) path; *p; p++)
    {
      const char *e = *p ? strchr (escapes, *p) : NULL;
      if (e)
        o += sprintf (o, "\\%c", letters[e - escapes]);
      else if (*p == '"' || *p == '\\')
        o += sprintf (o, "\\%c", *p);
      else if (needs_quoting (*p))
        o += sprintf (o, "\\%03o", *p);
      else
        *o++ = (char) *p;
    }
  strcpy (o, "\"");
  return out;
}

static bool
same_content (const ar_git_blob *a, const ar_git_blob *b)
{
  return a->mode && b->mode && a->len == b->len
         && (a->len == 0 || memcmp (a->data, b->data, a->len) == 0);
}

bool
ar_git_blob_differs (const ar_git_blob *a, const ar_git_blob *b)
{
  return a->mode != b->mode || !same_content (a, b);
}

static bool
is_binary (const ar_git_blob *x)
{
  return x->mode && x->mode != AR_GIT_MODE_LINK && x->len > 0
         && memchr (x->data, 0, x->len) != NULL;
}

static void
blob_id (const ar_git_blob *x, char hex[AR_SHA1_HEX_SIZE])
{
  if (x->mode)
    ar_sha1_git_blob_hex (x->data, x->len, hex);
  else
    strcpy (hex, NULL_ID);
}

/* "literal SIZE", the deflated bytes 52 to a line (a length letter, then
 * base85), and an empty line. */
static int
write_literal (ar_patch_sink *s, const ar_git_blob *x, ar_error_t **err)
{
  static const uint8_t nothing[1];
  size_t len = x->mode ? x->len : 0;
  uLongf packed_len = compressBound (len);
  cleanup_free uint8_t *packed = xmalloc (packed_len);
  if (compress2 (packed, &packed_len, len ? x->data : nothing, len,
                 LITERAL_LEVEL)
      != Z_OK)
    return ar_error_set (err, 0, "deflate %zu bytes failed", len);
  ar_patch_printf (s, "literal %zu\n", len);
  for (uLongf off = 0; off < packed_len; off += LITERAL_LINE_BYTES)
    {
      size_t n = packed_len - off < LITERAL_LINE_BYTES ? packed_len - off
                                                       : LITERAL_LINE_BYTES;
      char line[2 + 5 * (LITERAL_LINE_BYTES / 4) + 1];
      line[0] = (char) (n <= 26 ? 'A' + n - 1 : 'a' + n - 27);
      ar_base85_encode (packed + off, n, line + 1);
      size_t used = strlen (line);
      line[used] = '\n';
      ar_patch_line (s, line, used + 1);
    }
  ar_patch_line (s, "\n", 1);
  return 0;
}

static size_t
count_lines (const ar_git_blob *x)
{
  if (!x->mode || x->len == 0)
    return 0;
  size_t n = 0;
  for (const uint8_t *p = x->data, *end = p + x->len; p < end; n++)
    {
      const uint8_t *nl = memchr (p, '\n', (size_t) (end - p));
      p = nl ? nl + 1 : end;
    }
  return n;
}

/* A hunk's range as git writes it: "0,0" when empty, "1" for one line. */
static char *
hunk_range (size_t lines)
{
  if (lines == 0)
    return xstrdup ("0,0");
  return lines == 1 ? xstrdup ("1") : xasprintf ("1,%zu", lines);
}

static void
write_lines (ar_patch_sink *s, char sign, const ar_git_blob *x)
{
  if (!x->mode || x->len == 0)
    return;
  for (const uint8_t *p = x->data, *end = p + x->len; p < end;)
    {
      const uint8_t *nl = memchr (p, '\n', (size_t) (end - p));
      size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);
      cleanup_free char *line = xmalloc (n + 2);
      line[0] = sign;
      memcpy (line + 1, p, n);
      line[n + 1] = '\n';
      ar_patch_line (s, line, n + 2);
      if (nl == NULL)
        ar_patch_line (s, "\\ No newline at end of file\n", 28);
      p = nl ? nl + 1 : end;
    }
}

/* One hunk: every old line out, every new line in. */
static void
write_whole_hunk (ar_patch_sink *s, const ar_git_blob *a, const ar_git_blob *b)
{
  cleanup_free char *old_range = hunk_range (count_lines (a));
  cleanup_free char *new_range = hunk_range (count_lines (b));
  ar_patch_printf (s, "@@ -%s +%s @@\n", old_range, new_range);
  write_lines (s, '-', a);
  write_lines (s, '+', b);
}

static void
write_file_line (ar_patch_sink *s, const char *marker, const char *prefix,
                 const char *path, bool present)
{
  if (!present)
    {
      ar_patch_printf (s, "%s /dev/null\n", marker);
      return;
    }
  cleanup_free char *name = ar_git_quote_path (prefix, path);
  /* As git does: a tab after a name with a space, for patch(1). */
  ar_patch_printf (s, "%s %s%s\n", marker, name,
                   strchr (name, ' ') ? "\t" : "");
}

static void
write_header (ar_patch_sink *s, const char *path, const ar_git_blob *a,
              const ar_git_blob *b)
{
  cleanup_free char *qa = ar_git_quote_path ("a/", path);
  cleanup_free char *qb = ar_git_quote_path ("b/", path);
  ar_patch_printf (s, "diff --git %s %s\n", qa, qb);
  if (!a->mode)
    ar_patch_printf (s, "new file mode %06o\n", b->mode);
  else if (!b->mode)
    ar_patch_printf (s, "deleted file mode %06o\n", a->mode);
  else if (a->mode != b->mode)
    ar_patch_printf (s, "old mode %06o\nnew mode %06o\n", a->mode, b->mode);
}

static int
write_body (ar_patch_sink *s, const char *path, const ar_git_blob *a,
            const ar_git_blob *b, ar_text_hunks_fn hunks, ar_error_t **err)
{
  char id_a[AR_SHA1_HEX_SIZE], id_b[AR_SHA1_HEX_SIZE];
  blob_id (a, id_a);
  blob_id (b, id_b);
  if (a->mode && a->mode == b->mode)
    ar_patch_printf (s, "index %s..%s %06o\n", id_a, id_b, a->mode);
  else
    ar_patch_printf (s, "index %s..%s\n", id_a, id_b);
  if (is_binary (a) || is_binary (b))
    {
      ar_patch_printf (s, "GIT binary patch\n");
      if (write_literal (s, b, err) < 0 || write_literal (s, a, err) < 0)
        return ar_error_prefix (err, "binary patch of `%s`", path);
      return 0;
    }
  /* An empty file made or removed is the header alone. */
  if (count_lines (a) + count_lines (b) == 0)
    return 0;
  write_file_line (s, "---", "a/", path, a->mode != 0);
  write_file_line (s, "+++", "b/", path, b->mode != 0);
  bool both_text_files = a->fd >= 0 && b->fd >= 0 && a->len > 0 && b->len > 0
                         && a->mode != AR_GIT_MODE_LINK;
  if (both_text_files && hunks)
    return hunks (s, a, b, err);
  write_whole_hunk (s, a, b);
  return 0;
}

int
ar_git_patch_write (ar_patch_sink *s, const char *path, const ar_git_blob *a,
                    const ar_git_blob *b, ar_text_hunks_fn hunks,
                    ar_error_t **err)
{
  if (!ar_git_blob_differs (a, b))
    return 0;
  if (a->mode && b->mode && (a->mode & S_IFMT) != (b->mode & S_IFMT))
    {
      const ar_git_blob none = { .fd = -1 };
      if (ar_git_patch_write (s, path, a, &none, hunks, err) < 0)
        return -1;
      return ar_git_patch_write (s, path, &none, b, hunks, err);
    }
  write_header (s, path, a, b);
  if (same_content (a, b))
    return 0; /* the mode alone */
  return write_body (s, path, a, b, hunks, err);
}

void
ar_git_rename_write (ar_patch_sink *s, const char *from, const char *to)
{
  cleanup_free char *qa = ar_git_quote_path ("a/", from);
  cleanup_free char *qb = ar_git_quote_path ("b/", to);
  cleanup_free char *qfrom = ar_git_quote_path ("", from);
  cleanup_free char *qto = ar_git_quote_path ("", to);
  ar_patch_printf (
      s,
      "diff --git %s %s\nsimilarity index 100%%\nrename from %s\nrename to %s\n",
      qa, qb, qfrom, qto);
}
