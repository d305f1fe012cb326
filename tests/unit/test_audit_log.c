/* SPDX-License-Identifier: Apache-2.0 */
/* The audit log's kept head: counted on from the head rather than from
 * the start of a long log, and never moved to fit a log cut or rewritten
 * below it (which the chain alone cannot show). No root needed: the log
 * and the heads go to a temporary directory. */
#include "config.h"
#include "unit.h"
#include "../../src/util/audit_log.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/fs.h"
#include "../../src/util/sha256.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/agentrun-unit-audit.XXXXXX";
static char log_path[64], heads[64];

static bool
append_kept (const char *event)
{
  cleanup_error ar_error_t *err = NULL;
  cleanup_free char *stale = NULL;
  return ar_audit_append_with_head (log_path, heads, "c1", event, NULL, &stale,
                                    &err)
             == 0
         && stale == NULL;
}

/* The kept head's first line, "N:HASH". */
static char *
kept (void)
{
  cleanup_error ar_error_t *err = NULL;
  char *head = NULL;
  if (ar_audit_stored_head (log_path, heads, &head, &err) < 0)
    return NULL;
  return head;
}

/* "N:HASH" of the log as it stands, counted from its start. */
static char *
counted (void)
{
  cleanup_error ar_error_t *err = NULL;
  char *head = NULL;
  ar_audit_head (log_path, NULL, &head, &err);
  return head;
}

static bool
kept_is_counted (void)
{
  cleanup_free char *k = kept ();
  cleanup_free char *c = counted ();
  return k && c && strcmp (k, c) == 0;
}

static void
reset (void)
{
  unlink (log_path);
  cleanup_close int fd = open (heads, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0)
    ar_unlink_files_at (fd);
}

/* Lines appended by a writer that keeps no head (the egress hook's
 * resolver) are counted on top of the kept head's. */
static void
test_head_counts_on (void)
{
  reset ();
  CHECK (append_kept ("a") && append_kept ("b") && append_kept ("c"));
  cleanup_free char *three = kept ();
  CHECK (three && strncmp (three, "3:", 2) == 0);
  CHECK (kept_is_counted ());
  cleanup_error ar_error_t *err = NULL;
  CHECK (ar_audit_append (log_path, "c2", "egress-dns", NULL, &err) == 0);
  CHECK (ar_audit_append (log_path, "c2", "egress-dns", NULL, &err) == 0);
  CHECK (append_kept ("d"));
  cleanup_free char *six = kept ();
  CHECK (six && strncmp (six, "6:", 2) == 0);
  CHECK (kept_is_counted ());
  /* The sandbox's report takes the kept head's count when it names the
   * last line. */
  cleanup_free char *reported = NULL;
  CHECK (ar_audit_head (log_path, heads, &reported, &err) == 0);
  CHECK (reported && six && strcmp (reported, six) == 0);
}

/* A head an older build kept ("N:HASH" only) is found by counting once. */
static void
test_head_of_an_older_build (void)
{
  reset ();
  CHECK (append_kept ("a") && append_kept ("b"));
  cleanup_free char *two = kept ();
  cleanup_free char *file = NULL;
  cleanup_close int fd = open (heads, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_dir DIR *d = fdopendir (dup (fd));
  for (struct dirent *e; d && (e = readdir (d));)
    if (e->d_name[0] != '.')
      file = xasprintf ("%s/%s", heads, e->d_name);
  cleanup_error ar_error_t *err = NULL;
  cleanup_free char *old = xasprintf ("%s\n", two);
  CHECK (
      file
      && ar_write_file_atomic_at (AT_FDCWD, file, old, strlen (old), 0600, &err)
             == 0);
  CHECK (append_kept ("c"));
  cleanup_free char *three = kept ();
  CHECK (three && strncmp (three, "3:", 2) == 0);
  CHECK (kept_is_counted ());
}

/* The log cut below the kept head, or its line rewritten: the event is
 * appended, the head stays where it was, and a check against it fails. */
static void
test_head_stays_on_a_cut_log (void)
{
  reset ();
  CHECK (append_kept ("a") && append_kept ("b") && append_kept ("c"));
  cleanup_free char *before = kept ();
  cleanup_free char *text = NULL;
  cleanup_error ar_error_t *err = NULL;
  CHECK (ar_read_file_at (AT_FDCWD, log_path, 1 << 20, &text, NULL, &err) == 0);
  size_t first_line = (size_t) (strchr (text, '\n') - text) + 1;
  CHECK (truncate (log_path, (off_t) first_line) == 0);

  cleanup_free char *stale = NULL;
  CHECK (
      ar_audit_append_with_head (log_path, heads, "c1", "d", NULL, &stale, &err)
      == 0);
  CHECK (stale && strstr (stale, "no longer holds line 3"));
  cleanup_free char *after = kept ();
  CHECK (before && after && strcmp (before, after) == 0);
  cleanup_free char *problem = NULL;
  CHECK (ar_audit_check_head (log_path, after, &problem, &err) == 0);
  CHECK (problem
         && strcmp (problem, "truncated: the head says 3 lines, the log has 2")
                == 0);

  /* Line 3 there again, but another: rewritten below the head. */
  reset ();
  CHECK (append_kept ("a") && append_kept ("b") && append_kept ("c"));
  cleanup_free char *head3 = kept ();
  free (text);
  text = NULL;
  CHECK (ar_read_file_at (AT_FDCWD, log_path, 1 << 20, &text, NULL, &err) == 0);
  char *event = strstr (text, "\"event\":\"c\"");
  CHECK (event != NULL);
  if (event)
    event[9] = 'x';
  CHECK (ar_write_file_atomic_at (AT_FDCWD, log_path, text, strlen (text), 0600,
                                  &err)
         == 0);
  free (stale);
  stale = NULL;
  CHECK (
      ar_audit_append_with_head (log_path, heads, "c1", "d", NULL, &stale, &err)
      == 0);
  CHECK (stale != NULL);
  cleanup_free char *still = kept ();
  CHECK (head3 && still && strcmp (head3, still) == 0);
}

/* Rotation: the log moved away, its head forgotten (and handed back), a
 * new log starts a new head; the name resolves with the log gone. */
static void
test_forget_head_after_rotation (void)
{
  reset ();
  CHECK (append_kept ("a") && append_kept ("b"));
  cleanup_free char *two = kept ();
  cleanup_free char *moved = xasprintf ("%s.1", log_path);
  CHECK (rename (log_path, moved) == 0);
  char cwd[4096];
  CHECK (getcwd (cwd, sizeof cwd) != NULL);
  CHECK (chdir (dir) == 0);
  cleanup_free char *forgotten = NULL;
  cleanup_error ar_error_t *err = NULL;
  CHECK (ar_audit_forget_head ("log", heads, &forgotten, &err) == 0);
  CHECK (chdir (cwd) == 0);
  CHECK (two && forgotten && strcmp (two, forgotten) == 0);
  cleanup_free char *problem = NULL;
  CHECK (ar_audit_check_head (moved, forgotten, &problem, &err) == 0
         && problem == NULL);
  CHECK (append_kept ("c"));
  cleanup_free char *one = kept ();
  CHECK (one && strncmp (one, "1:", 2) == 0);
  ar_error_freep (&err);
  free (forgotten);
  forgotten = NULL;
  CHECK (ar_audit_forget_head (moved, heads, &forgotten, &err) < 0);
  CHECK (err && strstr (ar_error_text (err), "no head kept"));
  unlink (moved);
}

int
main (void)
{
  if (!CHECK (mkdtemp (dir) != NULL))
    return unit_finish ();
  snprintf (log_path, sizeof log_path, "%s/log", dir);
  snprintf (heads, sizeof heads, "%s/heads", dir);
  RUN (test_head_counts_on);
  RUN (test_head_of_an_older_build);
  RUN (test_head_stays_on_a_cut_log);
  RUN (test_forget_head_after_rotation);
  reset ();
  rmdir (heads);
  rmdir (dir);
  return unit_finish ();
}
