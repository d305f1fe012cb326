/* SPDX-License-Identifier: Apache-2.0 */
/* The host side of the agent profile: sha256 vectors, the audit log's hash
 * chain, and (as root) the ephemeral overlay, the secrets tmpfs and the
 * sanitized /output export, each driven with a plan built by hand in a
 * temporary directory ($TMPDIR or /tmp). Every test ends with no mount
 * left below it.
 *
 * With arguments it is a driver for tests/agent_host.bats instead, one
 * host-side step per call (see tool_main). */
#include "config.h"
#include "unit.h"
#include "../../src/agent/agent.h"
#include "../../src/agent/hostfs.h"
#include "../../src/agent/output.h"
#include "../../src/agent/overlay.h"
#include "../../src/agent/secrets.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/fs.h"
#include "../../src/util/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmp[PATH_MAX];
static bool as_root;

#define SECRET_LONG "sk-live-0123456789abcdefSECRET"
#define SECRET_SHORT "pw1"
#define CONTAINER_UID 1234
#define CONTAINER_GID 5678

/* ---- helpers ---------------------------------------------------------- */

static int
remove_entry (const char *path, const struct stat *st, int type,
              struct FTW *ftw)
{
  (void) st, (void) type, (void) ftw;
  return remove (path);
}

static char *
tmp_path (const char *name)
{
  return xasprintf ("%s/%s", tmp, name);
}

static void
write_file (const char *path, const void *content, size_t len, mode_t mode)
{
  cleanup_close int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  if (fd < 0 || ar_write_all (fd, content, len) < 0)
    {
      perror (path);
      exit (2);
    }
  fchmod (fd, mode);
}

static void
write_text (const char *path, const char *text)
{
  write_file (path, text, strlen (text), 0644);
}

static char *
read_text (const char *path)
{
  char *content = NULL;
  cleanup_error ar_error_t *err = NULL;
  if (ar_read_file_at (AT_FDCWD, path, 64 << 20, &content, NULL, &err) < 0)
    return NULL;
  return content;
}

static void
mkdirs (const char *path)
{
  cleanup_error ar_error_t *err = NULL;
  if (ar_mkdir_p (path, 0755, &err) < 0)
    {
      fprintf (stderr, "%s\n", ar_error_text (err));
      exit (2);
    }
}

/* Mounts at or below the test's directory. */
static int
mounts_below_tmp (void)
{
  cleanup_free char *info = read_text ("/proc/self/mountinfo");
  int n = 0;
  for (char *p = info; p && (p = strstr (p, tmp)) != NULL; p++)
    n++;
  return n;
}

static bool
exists (const char *path)
{
  struct stat st;
  return lstat (path, &st) == 0;
}

/* A digest of a whole tree: names, types, modes, owners, sizes, contents
 * and link targets, to show a rootfs is unchanged byte for byte. */
static ar_sha256_ctx tree_ctx;
static size_t tree_prefix;

static int
hash_entry (const char *path, const struct stat *st, int type, struct FTW *ftw)
{
  (void) type, (void) ftw;
  char meta[256];
  snprintf (meta, sizeof meta, "|%o|%u|%u|%lld|", st->st_mode, st->st_uid,
            st->st_gid, (long long) st->st_size);
  ar_sha256_update (&tree_ctx, path + tree_prefix, strlen (path + tree_prefix));
  ar_sha256_update (&tree_ctx, meta, strlen (meta));
  if (S_ISREG (st->st_mode))
    {
      cleanup_free char *content = read_text (path);
      if (content)
        ar_sha256_update (&tree_ctx, content, (size_t) st->st_size);
    }
  else if (S_ISLNK (st->st_mode))
    {
      char target[4096];
      ssize_t n = readlink (path, target, sizeof target);
      if (n > 0)
        ar_sha256_update (&tree_ctx, target, (size_t) n);
    }
  return 0;
}

static void
tree_digest (const char *root, char hex[AR_SHA256_HEX_SIZE])
{
  uint8_t digest[AR_SHA256_DIGEST_SIZE];
  ar_sha256_init (&tree_ctx);
  tree_prefix = strlen (root);
  nftw (root, hash_entry, 16, FTW_PHYS);
  ar_sha256_final (&tree_ctx, digest);
  ar_sha256_to_hex (digest, hex);
}

static void
make_rootfs (const char *rootfs)
{
  cleanup_free char *d = xasprintf ("%s/d", rootfs);
  cleanup_free char *df = xasprintf ("%s/d/f", rootfs);
  cleanup_free char *a = xasprintf ("%s/a", rootfs);
  cleanup_free char *del = xasprintf ("%s/del", rootfs);
  cleanup_free char *link = xasprintf ("%s/link", rootfs);
  mkdirs (d);
  write_text (df, "in d\n");
  write_text (a, "original\n");
  write_text (del, "to be deleted\n");
  symlink ("/etc/passwd", link);
}

/* A spec whose process runs as CONTAINER_UID:CONTAINER_GID. */
static oci_spec *
new_spec (const char *root_path)
{
  oci_spec *spec = xcalloc (1, sizeof *spec);
  spec->root_path = xstrdup (root_path);
  spec->process = xcalloc (1, sizeof *spec->process);
  spec->process->user.uid = CONTAINER_UID;
  spec->process->user.gid = CONTAINER_GID;
  return spec;
}

static void
free_spec (oci_spec *spec)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      free (spec->mounts[i].destination);
      free (spec->mounts[i].source);
      free (spec->mounts[i].type);
      ar_strv_freep (&spec->mounts[i].options.items);
    }
  free (spec->mounts);
  free (spec->root_path);
  free (spec->process);
  free (spec);
}

static bool
has_option (const oci_mount *m, const char *option)
{
  for (size_t i = 0; i < m->options.len; i++)
    if (strcmp (m->options.items[i], option) == 0)
      return true;
  return false;
}

/* ---- sha256 ----------------------------------------------------------- */

static void
check_sha (const char *data, size_t len, const char *want)
{
  char hex[AR_SHA256_HEX_SIZE];
  ar_sha256_hex (data, len, hex);
  CHECK_STR (hex, want);
}

static void
test_sha256_vectors (void)
{
  check_sha (
      "", 0,
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  check_sha (
      "abc", 3,
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  check_sha (
      m448, strlen (m448),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

  /* A million 'a', fed in uneven pieces to exercise the block buffer. */
  ar_sha256_ctx ctx;
  uint8_t digest[AR_SHA256_DIGEST_SIZE];
  char hex[AR_SHA256_HEX_SIZE];
  char piece[997];
  memset (piece, 'a', sizeof piece);
  ar_sha256_init (&ctx);
  size_t left = 1000000;
  while (left > 0)
    {
      size_t n = left < sizeof piece ? left : sizeof piece;
      ar_sha256_update (&ctx, piece, n);
      left -= n;
    }
  ar_sha256_final (&ctx, digest);
  ar_sha256_to_hex (digest, hex);
  CHECK_STR (
      hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

  /* Padding edge: 55 and 56 bytes straddle the length field. */
  check_sha (
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 55,
      "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  check_sha (
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 56,
      "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
}

/* ---- audit log -------------------------------------------------------- */

static size_t
verify_log (const char *path)
{
  size_t bad = 99;
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_audit_verify (path, &bad, &err), 0);
  return bad;
}

static void
append_three (const char *log)
{
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_audit_append (log, "ctr-1", "create", NULL, &err), 0);
  CHECK_INT (ar_audit_append (log, "ctr-\"2\"\n", "exec",
                              "\"argv\":[\"sh\",\"-c\"],\"status\":0", &err),
             0);
  CHECK_INT (ar_audit_append (log, "ctr-1", "delete", "", &err), 0);
}

static void
test_audit_chain (void)
{
  cleanup_free char *log = tmp_path ("audit.log");
  append_three (log);
  CHECK_INT (verify_log (log), 0);

  cleanup_free char *text = read_text (log);
  CHECK (strncmp (text, "{\"time\":\"", 9) == 0);
  CHECK (strstr (text, "\"id\":\"ctr-1\",\"event\":\"create\",\"prev\":\""
                       "0000000000000000000000000000000000000000000000000000"
                       "000000000000\"}\n")
         != NULL);
  CHECK (strstr (text, "\"id\":\"ctr-\\\"2\\\"\\n\",\"event\":\"exec\","
                       "\"argv\":[\"sh\",\"-c\"],\"status\":0,\"prev\":\"")
         != NULL);
  /* Line 2 links to line 1. */
  char *nl = strchr (text, '\n');
  char hex[AR_SHA256_HEX_SIZE];
  ar_sha256_hex (text, (size_t) (nl - text), hex);
  char *line2_end = strchr (nl + 1, '\n');
  CHECK (memcmp (line2_end - 66, hex, 64) == 0);
  struct stat st;
  CHECK (stat (log, &st) == 0 && (st.st_mode & 0777) == 0600);

  /* A multi-line fields_json is refused. */
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_audit_append (log, "x", "bad", "\"a\":1,\n\"b\":2", &err), -1);
}

static void
test_audit_edit_and_truncate (void)
{
  cleanup_free char *log = tmp_path ("audit-edit.log");
  append_three (log);
  cleanup_free char *text = read_text (log);

  /* Edit line 1 ("create" -> "crEate"): the chain breaks at line 2. */
  cleanup_free char *edited = xstrdup (text);
  char *e = strstr (edited, "create");
  e[2] = 'E';
  write_text (log, edited);
  CHECK_INT (verify_log (log), 2);

  /* Cut the last line short: that line is reported. */
  size_t len = strlen (text);
  write_file (log, text, len - 10, 0600);
  CHECK_INT (verify_log (log), 3);

  /* Appending after a cut starts a new line; the damage still shows. */
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_audit_append (log, "ctr-1", "later", NULL, &err), 0);
  CHECK_INT (verify_log (log), 3);

  /* Removing a middle line breaks the chain too. */
  char *first_nl = strchr (text, '\n');
  char *second_nl = strchr (first_nl + 1, '\n');
  cleanup_free char *without_middle
      = xasprintf ("%.*s%s", (int) (first_nl + 1 - text), text, second_nl + 1);
  write_text (log, without_middle);
  CHECK_INT (verify_log (log), 2);

  /* An empty log is a valid one; a missing one is an error. */
  write_text (log, "");
  CHECK_INT (verify_log (log), 0);
  unlink (log);
  size_t bad;
  CHECK_INT (ar_audit_verify (log, &bad, &err), -1);
}

/* ---- secret scanning -------------------------------------------------- */

static void
test_secret_scanner (void)
{
  ar_secret_value values[] = {
    { "long", (unsigned char *) SECRET_LONG, strlen (SECRET_LONG) },
    { "short", (unsigned char *) SECRET_SHORT, strlen (SECRET_SHORT) },
  };
  ar_secret_set set = { values, 2, strlen (SECRET_LONG) };

  size_t size = 300 * 1024;
  cleanup_free char *buf = xmalloc (size);
  memset (buf, 'x', size);
  /* Straddling the scanner's 64 KiB pieces. */
  memcpy (buf + 65536 - 7, SECRET_LONG, strlen (SECRET_LONG));

  ar_secret_scanner s;
  ar_secret_scanner_init (&s, &set);
  ar_secret_scanner_feed (&s, buf, size);
  CHECK_STR (s.found, "long");
  ar_secret_scanner_clear (&s);

  /* Fed in small pieces, the split secret is still found. */
  ar_secret_scanner_init (&s, &set);
  for (size_t off = 0; off < size; off += 1000)
    ar_secret_scanner_feed (&s, buf + off,
                            size - off < 1000 ? size - off : 1000);
  CHECK_STR (s.found, "long");
  ar_secret_scanner_clear (&s);

  memset (buf, 'x', size);
  memcpy (buf + size - 2, "pw", 2);
  ar_secret_scanner_init (&s, &set);
  ar_secret_scanner_feed (&s, buf, size);
  CHECK_STR (s.found, NULL);
  ar_secret_scanner_feed (&s, "1", 1); /* completes "pw1" */
  CHECK_STR (s.found, "short");
  ar_secret_scanner_clear (&s);

  ar_secret_scanner_init (&s, NULL);
  ar_secret_scanner_feed (&s, buf, size);
  CHECK_STR (s.found, NULL);
  ar_secret_scanner_clear (&s);
}

/* ---- overlay ---------------------------------------------------------- */

static void
test_overlay_lifecycle (void)
{
  cleanup_free char *rootfs = tmp_path ("ov-rootfs");
  cleanup_free char *state = tmp_path ("ov-state");
  cleanup_free char *log = tmp_path ("ov-audit.log");
  mkdirs (state);
  make_rootfs (rootfs);
  char before[AR_SHA256_HEX_SIZE], after[AR_SHA256_HEX_SIZE];
  tree_digest (rootfs, before);

  ar_agent_plan plan = { .overlay = true,
                         .overlay_size_bytes = 4 << 20,
                         .overlay_inodes = 1000,
                         .output_path = "/output",
                         .audit_path = log };
  oci_spec *spec = new_spec ("rootfs");
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_agent_prepare (&plan, state, rootfs, spec, &err), 0);
  cleanup_free char *merged = xasprintf ("%s/overlay/merged", state);
  CHECK_STR (spec->root_path, merged);
  CHECK_INT (spec->n_mounts, 1);
  CHECK (ar_hostfs_is_mountpoint (merged));

  /* The core makes the mount point: not a change of the container's. */
  cleanup_free char *mount_point = xasprintf ("%s/output", merged);
  CHECK (mkdir (mount_point, 0755) == 0);

  /* The container's writes: modify, create, delete, replace a dir. */
  cleanup_free char *a = xasprintf ("%s/a", merged);
  cleanup_free char *created = xasprintf ("%s/new-file", merged);
  cleanup_free char *del = xasprintf ("%s/del", merged);
  cleanup_free char *d = xasprintf ("%s/d", merged);
  cleanup_free char *df = xasprintf ("%s/d/f", merged);
  cleanup_free char *sub = xasprintf ("%s/newdir/inner", merged);
  write_text (a, "changed\n");
  write_text (created, "new\n");
  CHECK (unlink (del) == 0);
  CHECK (unlink (df) == 0 && rmdir (d) == 0 && mkdir (d, 0755) == 0);
  mkdirs (sub);
  cleanup_free char *seen = read_text (a);
  CHECK_STR (seen, "changed\n");

  tree_digest (rootfs, after);
  CHECK_STR (after, before);

  CHECK_INT (ar_agent_finish (&plan, state, "ctr-ov", &err), 0);
  CHECK (err == NULL);
  tree_digest (rootfs, after);
  CHECK_STR (after, before);
  CHECK_INT (mounts_below_tmp (), 0);
  cleanup_free char *overlay_dir = xasprintf ("%s/overlay", state);
  CHECK (!exists (overlay_dir));

  cleanup_free char *text = read_text (log);
  CHECK (text && strstr (text, "\"event\":\"fs-changes\"") != NULL);
  CHECK (text && strstr (text, "\"modified\":[\"/a\"]") != NULL);
  CHECK (text && strstr (text, "\"deleted\":[\"/del\"]") != NULL);
  CHECK (text && strstr (text, "\"replaced\":[\"/d\"]") != NULL);
  CHECK (text && strstr (text, "\"/new-file\"") != NULL);
  CHECK (text && strstr (text, "\"/newdir\"") != NULL);
  CHECK (text && strstr (text, "\"/newdir/inner\"") != NULL);
  CHECK (text && strstr (text, "\"truncated\":false") != NULL);
  CHECK (text && strstr (text, "\"/output\"") == NULL);
  CHECK_INT (verify_log (log), 0);

  /* A second finish finds nothing to do and logs nothing. */
  CHECK_INT (ar_agent_finish (&plan, state, "ctr-ov", &err), 0);
  cleanup_free char *again = read_text (log);
  CHECK_STR (again, text);
  free_spec (spec);
}

/* A rootfs path with the characters overlay options would trip on. */
static void
test_overlay_odd_rootfs_path (void)
{
  cleanup_free char *rootfs = tmp_path ("odd,root:fs\\x");
  cleanup_free char *state = tmp_path ("odd-state");
  mkdirs (state);
  make_rootfs (rootfs);
  ar_agent_plan plan = { .overlay = true, .overlay_size_bytes = 1 << 20 };
  oci_spec *spec = new_spec ("rootfs");
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_agent_prepare (&plan, state, rootfs, spec, &err), 0);
  cleanup_free char *a = xasprintf ("%s/a", spec->root_path);
  cleanup_free char *content = read_text (a);
  CHECK_STR (content, "original\n");
  CHECK_INT (ar_agent_finish (&plan, state, "ctr", &err), 0);
  CHECK_INT (mounts_below_tmp (), 0);
  free_spec (spec);
}

static void
test_overlay_enospc (void)
{
  cleanup_free char *rootfs = tmp_path ("full-rootfs");
  cleanup_free char *state = tmp_path ("full-state");
  mkdirs (state);
  make_rootfs (rootfs);
  ar_agent_plan plan = { .overlay = true,
                         .overlay_size_bytes = 256 << 10,
                         .overlay_inodes = 64 };
  oci_spec *spec = new_spec ("rootfs");
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_agent_prepare (&plan, state, rootfs, spec, &err), 0);

  /* Bytes: a 1 MiB write into a 256 KiB layer. */
  cleanup_free char *big = xasprintf ("%s/big", spec->root_path);
  int fd = open (big, O_WRONLY | O_CREAT, 0644);
  CHECK (fd >= 0);
  char block[4096] = { 0 };
  int saved = 0;
  for (int i = 0; i < 256; i++)
    if (write (fd, block, sizeof block) < 0)
      {
        saved = errno;
        break;
      }
  close (fd);
  CHECK_INT (saved, ENOSPC);
  unlink (big);

  /* Inodes: more files than the layer holds. */
  saved = 0;
  for (int i = 0; i < 200 && saved == 0; i++)
    {
      cleanup_free char *f = xasprintf ("%s/f%d", spec->root_path, i);
      int ffd = open (f, O_WRONLY | O_CREAT, 0644);
      if (ffd < 0)
        saved = errno;
      else
        close (ffd);
    }
  CHECK_INT (saved, ENOSPC);

  cleanup_free char *outside = xasprintf ("%s/big", rootfs);
  cleanup_free char *outside_f0 = xasprintf ("%s/f0", rootfs);
  CHECK (!exists (outside) && !exists (outside_f0));
  CHECK_INT (ar_agent_finish (&plan, state, "ctr", &err), 0);
  CHECK_INT (mounts_below_tmp (), 0);
  free_spec (spec);
}

/* ---- secrets ---------------------------------------------------------- */

static ar_secret secrets_for_tests[2];

static ar_agent_plan
secrets_plan (void)
{
  cleanup_free char *dir = tmp_path ("host-secrets");
  mkdirs (dir);
  free (secrets_for_tests[0].host_path);
  free (secrets_for_tests[1].host_path);
  secrets_for_tests[0] = (ar_secret){ "api_key", tmp_path ("host-secrets/k") };
  secrets_for_tests[1] = (ar_secret){ "short", tmp_path ("host-secrets/s") };
  write_file (secrets_for_tests[0].host_path, SECRET_LONG, strlen (SECRET_LONG),
              0600);
  write_file (secrets_for_tests[1].host_path, SECRET_SHORT,
              strlen (SECRET_SHORT), 0600);
  return (ar_agent_plan){ .secrets = secrets_for_tests,
                          .n_secrets = 2,
                          .secrets_path = "/run/secrets" };
}

static void
test_secrets_lifecycle (void)
{
  cleanup_free char *state = tmp_path ("sec-state");
  mkdirs (state);
  ar_agent_plan plan = secrets_plan ();
  oci_spec *spec = new_spec ("rootfs");
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_agent_prepare (&plan, state, "/nonexistent", spec, &err), 0);
  CHECK_STR (spec->root_path, "rootfs"); /* no overlay asked */

  cleanup_free char *dir = xasprintf ("%s/secrets", state);
  cleanup_free char *key = xasprintf ("%s/api_key", dir);
  struct stat st;
  CHECK (stat (key, &st) == 0);
  CHECK_INT (st.st_mode & 07777, 0400);
  CHECK_INT (st.st_uid, CONTAINER_UID);
  CHECK_INT (st.st_gid, CONTAINER_GID);
  cleanup_free char *content = read_text (key);
  CHECK_STR (content, SECRET_LONG);
  CHECK (stat (dir, &st) == 0 && (st.st_mode & 07777) == 0500
         && st.st_uid == CONTAINER_UID);
  struct statvfs vfs;
  CHECK (statvfs (dir, &vfs) == 0);
  CHECK (vfs.f_flag & ST_NOEXEC);
  CHECK (vfs.f_flag & ST_NOSUID);
  CHECK (vfs.f_flag & ST_NODEV);

  CHECK_INT (spec->n_mounts, 1);
  if (spec->n_mounts == 1)
    {
      oci_mount *m = &spec->mounts[0];
      CHECK_STR (m->destination, "/run/secrets");
      CHECK_STR (m->source, dir);
      CHECK_STR (m->type, "bind");
      CHECK (has_option (m, "rbind") && has_option (m, "ro")
             && has_option (m, "noexec") && has_option (m, "nosuid")
             && has_option (m, "nodev"));
    }

  CHECK_INT (ar_agent_finish (&plan, state, "ctr", &err), 0);
  CHECK (!exists (dir));
  CHECK_INT (mounts_below_tmp (), 0);
  free_spec (spec);
}

static char *
prepare_error (ar_agent_plan *plan, const char *state)
{
  oci_spec *spec = new_spec ("rootfs");
  cleanup_error ar_error_t *err = NULL;
  cleanup_free char *rootfs = tmp_path ("fail-rootfs");
  mkdirs (rootfs);
  int r = ar_agent_prepare (plan, state, rootfs, spec, &err);
  /* A failed prepare leaves the spec and the host as they were. */
  CHECK_INT (r, -1);
  CHECK_STR (spec->root_path, "rootfs");
  CHECK_INT (spec->n_mounts, 0);
  CHECK_INT (mounts_below_tmp (), 0);
  free_spec (spec);
  return err ? xstrdup (ar_error_text (err)) : NULL;
}

static void
test_secrets_refused (void)
{
  cleanup_free char *state = tmp_path ("refuse-state");
  mkdirs (state);
  ar_agent_plan plan = secrets_plan ();
  plan.overlay = true; /* so a failure has something to undo */
  plan.output_path = "/output";

  /* A symlink in place of the file. */
  cleanup_free char *symlinked = tmp_path ("host-secrets/link");
  symlink (secrets_for_tests[0].host_path, symlinked);
  char *saved = secrets_for_tests[1].host_path;
  secrets_for_tests[1].host_path = symlinked;
  cleanup_free char *m1 = prepare_error (&plan, state);
  CHECK (m1 && strstr (m1, "secret `short`") != NULL);
  CHECK (m1 && strstr (m1, SECRET_LONG) == NULL);

  /* A fifo: refused, without hanging. */
  cleanup_free char *fifo = tmp_path ("host-secrets/fifo");
  mkfifo (fifo, 0600);
  secrets_for_tests[1].host_path = fifo;
  cleanup_free char *m2 = prepare_error (&plan, state);
  CHECK (m2 && strstr (m2, "not a regular file") != NULL);

  /* Too large. */
  cleanup_free char *large = tmp_path ("host-secrets/large");
  cleanup_free char *big = xcalloc (1, AR_SECRET_MAX_BYTES + 1);
  write_file (large, big, AR_SECRET_MAX_BYTES + 1, 0600);
  secrets_for_tests[1].host_path = large;
  cleanup_free char *m3 = prepare_error (&plan, state);
  CHECK (m3 && strstr (m3, "larger than") != NULL);

  /* Missing, and a name that would leave the directory. */
  cleanup_free char *missing = tmp_path ("host-secrets/missing");
  secrets_for_tests[1].host_path = missing;
  cleanup_free char *m4 = prepare_error (&plan, state);
  CHECK (m4 && strstr (m4, "No such file") != NULL);
  secrets_for_tests[1].host_path = saved;
  secrets_for_tests[1].name = "../escape";
  cleanup_free char *m5 = prepare_error (&plan, state);
  CHECK (m5 && strstr (m5, "secret name") != NULL);
  secrets_for_tests[1].name = "short";

  cleanup_free char *overlay_dir = xasprintf ("%s/overlay", state);
  CHECK (!exists (overlay_dir));
}

/* The exec path's helper, in a child: the secrets disappear there and
 * stay in the parent (the "main process"). */
static void
test_secrets_hide (void)
{
  cleanup_free char *state = tmp_path ("hide-state");
  cleanup_free char *target = tmp_path ("hide-ctr/run/secrets");
  mkdirs (state);
  mkdirs (target);
  ar_agent_plan plan = secrets_plan ();
  oci_spec *spec = new_spec ("rootfs");
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_agent_prepare (&plan, state, "/", spec, &err), 0);
  CHECK (mount (spec->mounts[0].source, target, NULL, MS_BIND, NULL) == 0);
  cleanup_free char *key = xasprintf ("%s/api_key", target);
  CHECK (exists (key));

  pid_t pid = fork ();
  if (pid == 0)
    {
      ar_error_t *child_err = NULL;
      if (ar_secrets_hide (target, &child_err) < 0)
        _exit (3);
      _exit (exists (key) ? 4 : 0);
    }
  int status = -1;
  waitpid (pid, &status, 0);
  CHECK_INT (status, 0);
  CHECK (exists (key));

  CHECK (umount2 (target, MNT_DETACH) == 0);
  CHECK_INT (ar_agent_finish (&plan, state, "ctr", &err), 0);
  CHECK_INT (mounts_below_tmp (), 0);
  free_spec (spec);
}

/* ---- output ----------------------------------------------------------- */

/* What a hostile container leaves in /output. */
static void
fill_hostile_output (const char *out)
{
  cleanup_free char *ok = xasprintf ("%s/ok.txt", out);
  cleanup_free char *nested_dir = xasprintf ("%s/sub/dir", out);
  cleanup_free char *nested = xasprintf ("%s/sub/dir/nested.txt", out);
  cleanup_free char *passwd_link = xasprintf ("%s/passwd", out);
  cleanup_free char *linkdir = xasprintf ("%s/etc", out);
  cleanup_free char *deep_link = xasprintf ("%s/sub/up", out);
  cleanup_free char *hard1 = xasprintf ("%s/hard1", out);
  cleanup_free char *hard2 = xasprintf ("%s/sub/hard2", out);
  cleanup_free char *fifo = xasprintf ("%s/fifo", out);
  cleanup_free char *dev = xasprintf ("%s/null", out);
  cleanup_free char *suid = xasprintf ("%s/suid", out);
  cleanup_free char *leak = xasprintf ("%s/leak.bin", out);
  cleanup_free char *short_leak = xasprintf ("%s/notes.txt", out);
  cleanup_free char *named = xasprintf ("%s/" SECRET_SHORT ".txt", out);
  cleanup_free char *manifest = xasprintf ("%s/manifest.json", out);
  cleanup_free char *ctl = xasprintf ("%s/bad\nname", out);
  cleanup_free char *sock = xasprintf ("%s/sock", out);

  write_text (ok, "hello\n");
  mkdirs (nested_dir);
  write_text (nested, "nested\n");
  symlink ("/etc/passwd", passwd_link);
  symlink ("/etc", linkdir);
  symlink ("../../../../../../../../etc", deep_link);
  write_text (hard1, "linked\n");
  link (hard1, hard2);
  mkfifo (fifo, 0644);
  mknod (dev, S_IFCHR | 0666, makedev (1, 3));
  write_file (suid, "#!/bin/sh\n", 10, 06755);

  /* The long secret across a 64 KiB boundary of a 200 KiB file. */
  size_t size = 200 * 1024;
  cleanup_free char *blob = xmalloc (size);
  memset (blob, 'z', size);
  memcpy (blob + 65536 - 9, SECRET_LONG, strlen (SECRET_LONG));
  write_file (leak, blob, size, 0644);
  write_text (short_leak, "the password is " SECRET_SHORT "!\n");
  write_text (named, "harmless\n");
  write_text (manifest, "[]");
  write_text (ctl, "x");

  int s = socket (AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  snprintf (addr.sun_path, sizeof addr.sun_path, "%s", sock);
  bind (s, (struct sockaddr *) &addr, sizeof addr);
  close (s);
}

static void
test_output_export_hostile (void)
{
  cleanup_free char *state = tmp_path ("out-state");
  cleanup_free char *host = tmp_path ("exported");
  cleanup_free char *log = tmp_path ("out-audit.log");
  mkdirs (state);
  mkdirs (host);
  CHECK (chown (host, 4321, 4322) == 0);
  ar_agent_plan plan = secrets_plan ();
  plan.output_path = "/output";
  plan.output_host_dir = host;
  plan.output_max_bytes = 1 << 20;
  plan.output_max_files = 100;
  plan.audit_path = log;

  char passwd_before[AR_SHA256_HEX_SIZE], passwd_after[AR_SHA256_HEX_SIZE];
  tree_digest ("/etc/passwd", passwd_before);

  oci_spec *spec = new_spec ("rootfs");
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_agent_prepare (&plan, state, "/", spec, &err), 0);
  CHECK_INT (spec->n_mounts, 2);
  cleanup_free char *out = xasprintf ("%s/output", state);
  if (spec->n_mounts == 2)
    {
      oci_mount *m = &spec->mounts[1];
      CHECK_STR (m->destination, "/output");
      CHECK_STR (m->source, out);
      CHECK (has_option (m, "rw") && has_option (m, "noexec"));
    }
  struct stat st;
  CHECK (stat (out, &st) == 0 && st.st_uid == CONTAINER_UID
         && (st.st_mode & 07777) == 0755);

  fill_hostile_output (out);
  CHECK_INT (ar_agent_finish (&plan, state, "ctr-out", &err), 0);
  if (err)
    fprintf (stderr, "  %s\n", ar_error_text (err));
  CHECK_INT (mounts_below_tmp (), 0);
  CHECK (!exists (out));

  cleanup_free char *dest = xasprintf ("%s/ctr-out", host);
  cleanup_free char *ok = xasprintf ("%s/ok.txt", dest);
  cleanup_free char *nested = xasprintf ("%s/sub/dir/nested.txt", dest);
  cleanup_free char *suid = xasprintf ("%s/suid", dest);
  cleanup_free char *ok_text = read_text (ok);
  cleanup_free char *nested_text = read_text (nested);
  CHECK_STR (ok_text, "hello\n");
  CHECK_STR (nested_text, "nested\n");
  CHECK (stat (ok, &st) == 0 && st.st_uid == 4321 && st.st_gid == 4322
         && (st.st_mode & 07777) == 0644);
  CHECK (stat (suid, &st) == 0 && (st.st_mode & 07777) == 0755);
  CHECK (stat (dest, &st) == 0 && st.st_uid == 4321
         && (st.st_mode & 07777) == 0755);

  static const char *const absent[]
      = { "passwd",    "etc",  "sub/up",   "hard1",     "sub/hard2",
          "fifo",      "null", "leak.bin", "notes.txt", SECRET_SHORT ".txt",
          "bad\nname", "sock" };
  for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
    {
      cleanup_free char *p = xasprintf ("%s/%s", dest, absent[i]);
      if (!CHECK (!exists (p)))
        fprintf (stderr, "  exported: %s\n", absent[i]);
    }

  cleanup_free char *manifest_path = xasprintf ("%s/manifest.json", dest);
  cleanup_free char *manifest = read_text (manifest_path);
  char hello_sha[AR_SHA256_HEX_SIZE];
  ar_sha256_hex ("hello\n", 6, hello_sha);
  cleanup_free char *ok_entry = xasprintf (
      "\"path\": \"ok.txt\",\n            \"size\": 6,\n            "
      "\"sha256\": \"%s\"",
      hello_sha);
  CHECK (manifest && strstr (manifest, ok_entry) != NULL);
  if (manifest && !strstr (manifest, ok_entry))
    fprintf (stderr, "%s\n", manifest);
  static const char *const reasons[]
      = { "\"symlink\"",
          "\"hard link\"",
          "\"fifo\"",
          "\"device node\"",
          "\"socket\"",
          "\"contains secret api_key\"",
          "\"contains secret short\"",
          "\"name contains secret short\"",
          "\"manifest.json\",\n            \"reason\": \"reserved name\"",
          "\"name is not printable UTF-8\"" };
  for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
    if (!CHECK (manifest && strstr (manifest, reasons[i]) != NULL))
      fprintf (stderr, "  missing reason %s\n", reasons[i]);
  CHECK (manifest && strstr (manifest, SECRET_LONG) == NULL);
  CHECK (manifest && strstr (manifest, "\"" SECRET_SHORT) == NULL);

  /* Nothing else arrived in the host dir; the symlinks' targets are as
   * they were. */
  cleanup_free char *stray = xasprintf ("%s/passwd", host);
  CHECK (!exists (stray));
  tree_digest ("/etc/passwd", passwd_after);
  CHECK_STR (passwd_after, passwd_before);

  /* The audit log has the export, no secret, and a sound chain. */
  cleanup_free char *audit = read_text (log);
  CHECK (audit && strstr (audit, "\"event\":\"output\"") != NULL);
  CHECK (audit && strstr (audit, "\"path\":\"ok.txt\",\"size\":6") != NULL);
  CHECK (audit && strstr (audit, SECRET_LONG) == NULL);
  CHECK_INT (verify_log (log), 0);
  free_spec (spec);
}

static void
test_output_quota (void)
{
  cleanup_free char *state = tmp_path ("quota-state");
  cleanup_free char *host = tmp_path ("quota-export");
  mkdirs (state);
  mkdirs (host);
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_output_prepare (state, 1 << 20, 20, CONTAINER_UID,
                                CONTAINER_GID, &err),
             0);
  cleanup_free char *out = xasprintf ("%s/output", state);
  char block[600];
  memset (block, 'q', sizeof block);
  for (int i = 0; i < 10; i++)
    {
      cleanup_free char *f = xasprintf ("%s/f%d", out, i);
      write_file (f, block, sizeof block, 0644);
    }

  /* A tighter quota at export than the tmpfs allowed: 4 files and 2000
   * bytes; with 600-byte files the bytes run out first. */
  ar_output_report report;
  CHECK_INT (ar_output_export (state, host, "q1", 2000, 4, NULL, &report, &err),
             0);
  CHECK_INT (report.n_files, 3);
  CHECK_INT (report.bytes, 1800);
  CHECK_INT (report.n_withheld, 7);
  CHECK (report.n_withheld > 0
         && strcmp (report.withheld[0].reason, "byte quota exceeded") == 0);
  ar_output_report_clear (&report);

  CHECK_INT (
      ar_output_export (state, host, "q2", 1 << 20, 2, NULL, &report, &err), 0);
  CHECK_INT (report.n_files, 2);
  CHECK (report.n_withheld > 0
         && strcmp (report.withheld[0].reason, "file count quota exceeded")
                == 0);
  ar_output_report_clear (&report);

  /* An existing destination is refused, and nothing is written. */
  CHECK_INT (
      ar_output_export (state, host, "q2", 1 << 20, 2, NULL, &report, &err),
      -1);
  CHECK (err && strstr (ar_error_text (err), "File exists") != NULL);
  ar_output_report_clear (&report);
  ar_error_free (err);
  err = NULL;
  CHECK_INT (
      ar_output_export (state, host, "../q3", 1 << 20, 2, NULL, &report, &err),
      -1);
  ar_output_report_clear (&report);

  CHECK_INT (ar_output_teardown (state, &err), 0);
  CHECK_INT (mounts_below_tmp (), 0);
}

/* The whole profile at once, with a destination that already exists: the
 * export goes under the state root instead (.output-kept, with why), the
 * teardown happens, and a second finish is a no-op. */
static void
test_finish_after_failed_export (void)
{
  cleanup_free char *rootfs = tmp_path ("all-rootfs");
  cleanup_free char *state = tmp_path ("all-state");
  cleanup_free char *host = tmp_path ("all-export");
  cleanup_free char *taken = tmp_path ("all-export/ctr-all");
  mkdirs (state);
  mkdirs (taken);
  make_rootfs (rootfs);
  ar_agent_plan plan = secrets_plan ();
  plan.overlay = true;
  plan.overlay_size_bytes = 1 << 20;
  plan.output_path = "/output";
  plan.output_host_dir = host;
  plan.output_max_bytes = 1 << 20;
  plan.output_max_files = 10;

  oci_spec *spec = new_spec ("rootfs");
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_agent_prepare (&plan, state, rootfs, spec, &err), 0);
  CHECK_INT (spec->n_mounts, 2);
  CHECK_INT (ar_agent_finish (&plan, state, "ctr-all", &err), 0);
  CHECK_INT (mounts_below_tmp (), 0);
  cleanup_free char *kept = tmp_path (".output-kept/ctr-all/manifest.json");
  cleanup_free char *why_path = tmp_path (".output-kept/ctr-all.why");
  cleanup_free char *why = NULL;
  CHECK (access (kept, F_OK) == 0);
  CHECK (ar_read_file_at (AT_FDCWD, why_path, 4096, &why, NULL, &err) == 0
         && strstr (why, "all-export/ctr-all") != NULL);
  CHECK_INT (ar_agent_finish (&plan, state, "ctr-all", &err), 0);
  CHECK_INT (ar_agent_finish (NULL, state, "ctr-all", &err), 0);
  free_spec (spec);
}

/* ---- driver mode, for the bats tests ---------------------------------- */

static int
tool_failed (ar_error_t *err)
{
  fprintf (stderr, "%s\n", err ? ar_error_text (err) : "failed");
  ar_error_free (err);
  return 1;
}

static int
tool_overlay (int argc, char **argv)
{
  ar_error_t *err = NULL;
  if (strcmp (argv[1], "overlay-prepare") == 0 && argc == 6)
    {
      cleanup_free char *merged = NULL;
      if (ar_overlay_prepare (argv[2], argv[3], NULL,
                              strtoull (argv[4], NULL, 0),
                              strtoull (argv[5], NULL, 0), NULL, &merged, &err)
          < 0)
        return tool_failed (err);
      printf ("%s\n", merged);
      return 0;
    }
  if (strcmp (argv[1], "overlay-changes") == 0 && argc == 3)
    {
      cleanup_free char *fields = NULL;
      if (ar_overlay_changes_json (argv[2], NULL, NULL, NULL, &fields, &err)
          < 0)
        return tool_failed (err);
      printf ("{%s}\n", fields ? fields : "");
      return 0;
    }
  if (strcmp (argv[1], "overlay-teardown") == 0 && argc == 3)
    return ar_overlay_teardown (argv[2], &err) < 0 ? tool_failed (err) : 0;
  return -1;
}

static int
tool_output (int argc, char **argv)
{
  ar_error_t *err = NULL;
  if (strcmp (argv[1], "output-prepare") == 0 && argc == 5)
    return ar_output_prepare (argv[2], strtoull (argv[3], NULL, 0),
                              strtoull (argv[4], NULL, 0), CONTAINER_UID,
                              CONTAINER_GID, &err)
                   < 0
               ? tool_failed (err)
               : 0;
  if (strcmp (argv[1], "output-export") == 0 && argc == 7)
    {
      ar_output_report report;
      int r = ar_output_export (
          argv[2], argv[3], argv[4], strtoull (argv[5], NULL, 0),
          strtoull (argv[6], NULL, 0), NULL, &report, &err);
      ar_output_report_clear (&report);
      return r < 0 ? tool_failed (err) : 0;
    }
  if (strcmp (argv[1], "output-teardown") == 0 && argc == 3)
    return ar_output_teardown (argv[2], &err) < 0 ? tool_failed (err) : 0;
  return -1;
}

static int
tool_audit (int argc, char **argv)
{
  ar_error_t *err = NULL;
  if (strcmp (argv[1], "audit-append") == 0 && (argc == 5 || argc == 6))
    return ar_audit_append (argv[2], argv[3], argv[4],
                            argc == 6 ? argv[5] : NULL, &err)
                   < 0
               ? tool_failed (err)
               : 0;
  if (strcmp (argv[1], "audit-verify") == 0 && argc == 3)
    {
      size_t bad;
      if (ar_audit_verify (argv[2], &bad, &err) < 0)
        return tool_failed (err);
      printf ("%zu\n", bad);
      return 0;
    }
  return -1;
}

/*   overlay-prepare STATE ROOTFS BYTES INODES   (prints the merged dir)
 *   overlay-changes STATE | overlay-teardown STATE
 *   output-prepare STATE MAX_BYTES MAX_FILES    (root owned by 1234:5678)
 *   output-export STATE HOST_DIR ID MAX_BYTES MAX_FILES
 *   output-teardown STATE
 *   audit-append LOG ID EVENT [FIELDS] | audit-verify LOG (prints the
 *   first bad line, 0 when sound) */
static int
tool_main (int argc, char **argv)
{
  int r = tool_overlay (argc, argv);
  if (r < 0)
    r = tool_output (argc, argv);
  if (r < 0)
    r = tool_audit (argc, argv);
  if (r < 0)
    fprintf (stderr, "usage: see tests/unit/test_agent_host.c\n");
  return r < 0 ? 2 : r;
}

int
main (int argc, char **argv)
{
  if (argc > 1)
    {
      /* _exit: the unit summary (an atexit handler) is not for drivers. */
      int status = tool_main (argc, argv);
      fflush (stdout);
      _exit (status);
    }
  const char *base = getenv ("TMPDIR");
  snprintf (tmp, sizeof tmp, "%s/agentrun-test-agent-XXXXXX",
            base && *base ? base : "/tmp");
  if (mkdtemp (tmp) == NULL)
    {
      perror ("mkdtemp");
      return 2;
    }
  as_root = unit_real_root ();
  RUN (test_sha256_vectors);
  RUN (test_audit_chain);
  RUN (test_audit_edit_and_truncate);
  RUN (test_secret_scanner);
  if (as_root)
    {
      RUN (test_overlay_lifecycle);
      RUN (test_overlay_odd_rootfs_path);
      RUN (test_overlay_enospc);
      RUN (test_secrets_lifecycle);
      RUN (test_secrets_refused);
      RUN (test_secrets_hide);
      RUN (test_output_export_hostile);
      RUN (test_output_quota);
      RUN (test_finish_after_failed_export);
      CHECK_INT (mounts_below_tmp (), 0);
    }
  else
    printf ("skipped the overlay, secrets and output tests: not root\n");
  free (secrets_for_tests[0].host_path);
  free (secrets_for_tests[1].host_path);
  nftw (tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  return unit_finish ();
}
