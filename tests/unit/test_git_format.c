/* SPDX-License-Identifier: Apache-2.0 */
/* The pieces of sandbox --diff's git format: SHA-1 (FIPS 180-4's
 * vectors), git's blob ids (as `git hash-object` prints them), base85
 * (Python's base64.b85encode with pad=True uses the same alphabet) and
 * whole patches as `git diff --binary --full-index` writes them. */
#include "config.h"
#include "unit.h"
#include "../../src/agent/git_patch.h"
#include "../../src/util/base85.h"
#include "../../src/util/sha1.h"

/* The hex SHA-1 of `len` bytes fed `piece` bytes at a time: the block
 * buffer sees every kind of split. */
static void
sha1_in_pieces (const char *data, size_t len, size_t piece,
                char hex[AR_SHA1_HEX_SIZE])
{
  ar_sha1_ctx ctx;
  uint8_t digest[AR_SHA1_DIGEST_SIZE];
  ar_sha1_init (&ctx);
  for (size_t off = 0; off < len; off += piece)
    ar_sha1_update (&ctx, data + off, len - off < piece ? len - off : piece);
  ar_sha1_final (&ctx, digest);
  ar_sha1_to_hex (digest, hex);
}

static void
test_sha1_vectors (void)
{
  char hex[AR_SHA1_HEX_SIZE];
  sha1_in_pieces ("abc", 3, 3, hex);
  CHECK_STR (hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
  sha1_in_pieces ("", 0, 1, hex);
  CHECK_STR (hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  const char *two_blocks
      = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  sha1_in_pieces (two_blocks, strlen (two_blocks), 5, hex);
  CHECK_STR (hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  char *million = malloc (1000000);
  memset (million, 'a', 1000000);
  sha1_in_pieces (million, 1000000, 997, hex);
  CHECK_STR (hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  free (million);
}

static void
test_git_blob_ids (void)
{
  char hex[AR_SHA1_HEX_SIZE];
  ar_sha1_git_blob_hex (NULL, 0, hex); /* an empty file: nothing mapped */
  CHECK_STR (hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
  ar_sha1_git_blob_hex ("hello\n", 6, hex);
  CHECK_STR (hex, "ce013625030ba8dba906f756967f9e9ca394464a");
  ar_sha1_git_blob_hex ("a\0b", 3, hex);
  CHECK_STR (hex, "20b5be91886d0b6f26dc98a225c0dac05fe2c86e");
}

static void
test_base85 (void)
{
  char out[64];
  const uint8_t bytes[]
      = { 0x00, 0x01, 0x02, 0x03, 0xff, 0xfe, 0xfd, 0xfc, 0x10 };
  ar_base85_encode (bytes, sizeof bytes, out);
  CHECK_STR (out, "009C6|Ni~_5C8xG");
  /* The empty input deflated as git does it (level 1), in every "literal 0". */
  const uint8_t empty_deflated[]
      = { 0x78, 0x01, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01 };
  ar_base85_encode (empty_deflated, sizeof empty_deflated, out);
  CHECK_STR (out, "cmV?d00001");
  ar_base85_encode (bytes, 0, out);
  CHECK_STR (out, "");
}

/* The patch for `a` -> `b` at `path`, whole hunks only. */
static char *
patch (const char *path, const ar_git_blob *a, const ar_git_blob *b)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&buf, &len);
  ar_patch_sink sink = { .out = mem };
  ar_error_t *err = NULL;
  int r = ar_git_patch_write (&sink, path, a, b, NULL, &err);
  fclose (mem);
  CHECK (r == 0);
  ar_error_free (err);
  return buf;
}

#define BLOB(m, s)                                                             \
  ((ar_git_blob){ .mode = (m),                                                 \
                  .data = (const uint8_t *) (s),                               \
                  .len = sizeof (s) - 1,                                       \
                  .fd = -1 })
static const ar_git_blob none = { .fd = -1 };

static void
test_patches_as_git_writes_them (void)
{
  char *p = patch ("h.txt", &none, &BLOB (AR_GIT_MODE_FILE, "hello\n"));
  CHECK_STR (
      p,
      "diff --git a/h.txt b/h.txt\n"
      "new file mode 100644\n"
      "index 0000000000000000000000000000000000000000..ce013625030ba8dba906f756967f9e9ca394464a\n"
      "--- /dev/null\n"
      "+++ b/h.txt\n"
      "@@ -0,0 +1 @@\n"
      "+hello\n");
  free (p);

  p = patch ("bin", &none, &BLOB (AR_GIT_MODE_FILE, "a\0b"));
  CHECK_STR (
      p,
      "diff --git a/bin b/bin\n"
      "new file mode 100644\n"
      "index 0000000000000000000000000000000000000000..20b5be91886d0b6f26dc98a225c0dac05fe2c86e\n"
      "GIT binary patch\n"
      "literal 3\n"
      "KcmYdfNCE%>hycU@\n"
      "\n"
      "literal 0\n"
      "HcmV?d00001\n"
      "\n");
  free (p);

  /* A symlink: its target, no newline; chmod +x alone: the modes. */
  p = patch ("l", &none, &BLOB (AR_GIT_MODE_LINK, "h.txt"));
  CHECK_STR (
      p,
      "diff --git a/l b/l\n"
      "new file mode 120000\n"
      "index 0000000000000000000000000000000000000000..db94ec9c7379f98e873539d76d22d302e3da147c\n"
      "--- /dev/null\n"
      "+++ b/l\n"
      "@@ -0,0 +1 @@\n"
      "+h.txt\n"
      "\\ No newline at end of file\n");
  free (p);
  p = patch ("run.sh", &BLOB (AR_GIT_MODE_FILE, "x\n"),
             &BLOB (AR_GIT_MODE_EXEC, "x\n"));
  CHECK_STR (
      p, "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n");
  free (p);

  /* Deleted, two lines; an empty file made is its header alone. */
  p = patch ("d", &BLOB (AR_GIT_MODE_FILE, "1\n2\n"), &none);
  CHECK (strstr (p, "deleted file mode 100644\n") != NULL);
  CHECK (strstr (p, "--- a/d\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-1\n-2\n")
         != NULL);
  free (p);
  p = patch ("e", &none, &BLOB (AR_GIT_MODE_FILE, ""));
  CHECK_STR (
      p,
      "diff --git a/e b/e\nnew file mode 100644\n"
      "index 0000000000000000000000000000000000000000..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n");
  free (p);

  /* Unchanged: nothing. */
  p = patch ("same", &BLOB (AR_GIT_MODE_FILE, "x\n"),
             &BLOB (AR_GIT_MODE_FILE, "x\n"));
  CHECK_STR (p, "");
  free (p);
}

static void
test_quoted_paths (void)
{
  char *q = ar_git_quote_path ("a/", "plain name.txt");
  CHECK_STR (q, "a/plain name.txt");
  free (q);
  q = ar_git_quote_path ("b/", "tab\there\n\"q\"\\\xc3\xa9");
  CHECK_STR (q, "\"b/tab\\there\\n\\\"q\\\"\\\\\\303\\251\"");
  free (q);
}

/* What `git diff -M --binary --full-index` printed for `git mv` of
 * "old \303\251.txt" to 'new dir/a"b.txt'. */
static void
test_rename_as_git_writes_it (void)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&buf, &len);
  ar_patch_sink sink = { .out = mem };
  ar_git_rename_write (&sink, "old \xc3\xa9.txt", "new dir/a\"b.txt");
  fclose (mem);
  CHECK_STR (buf,
             "diff --git \"a/old \\303\\251.txt\" \"b/new dir/a\\\"b.txt\"\n"
             "similarity index 100%\n"
             "rename from \"old \\303\\251.txt\"\n"
             "rename to \"new dir/a\\\"b.txt\"\n");
  free (buf);
}

int
main (void)
{
  RUN (test_sha1_vectors);
  RUN (test_git_blob_ids);
  RUN (test_base85);
  RUN (test_patches_as_git_writes_them);
  RUN (test_quoted_paths);
  RUN (test_rename_as_git_writes_it);
  return unit_finish ();
}
