/* SPDX-License-Identifier: Apache-2.0 */
/* util/subid: a user's range in an /etc/subuid-format file, by name
 * (or by uid, for a user the passwd database knows), and one line that
 * names the file and the user when there is none. */
#include "config.h"
#include "unit.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/fs.h"
#include "../../src/util/subid.h"

#include <fcntl.h>
#include <unistd.h>

static char dir[] = "/tmp/agentrun-unit-subid.XXXXXX";

static char *
file_with (const char *name, const char *text)
{
  char *path = xasprintf ("%s/%s", dir, name);
  cleanup_error ar_error_t *err = NULL;
  CHECK (
      ar_write_file_atomic_at (AT_FDCWD, path, text, strlen (text), 0644, &err)
      == 0);
  return path;
}

static void
test_by_name (void)
{
  cleanup_free char *f = file_with (
      "names", "tester:100000:65536\nagentrun:2147483648:268435456\n");
  ar_subid_range r = { 0 };
  cleanup_error ar_error_t *err = NULL;
  CHECK (ar_subid_find (f, "agentrun", &r, &err) == 0);
  CHECK (r.start == 2147483648u && r.count == 268435456u);
  CHECK (ar_subid_find (f, "tester", &r, &err) == 0);
  CHECK (r.start == 100000 && r.count == 65536);
}

/* The first good line of the user wins; broken ones are passed over. */
static void
test_first_good_line (void)
{
  cleanup_free char *f = file_with ("broken", "agentrun\n"
                                              "agentrun:x:10\n"
                                              "agentrun:10:0\n"
                                              "agentrun:4294967295:2\n"
                                              "agentrun:-1:5\n"
                                              "agentrunner:1:1\n"
                                              "agentrun:500000:70000\n"
                                              "agentrun:900000:65536\n");
  ar_subid_range r = { 0 };
  cleanup_error ar_error_t *err = NULL;
  CHECK (ar_subid_find (f, "agentrun", &r, &err) == 0);
  CHECK (r.start == 500000 && r.count == 70000);
}

/* root is in every passwd database: a line may name it by its uid. */
static void
test_by_uid (void)
{
  cleanup_free char *f = file_with ("uids", "0:300000:65536\n");
  ar_subid_range r = { 0 };
  cleanup_error ar_error_t *err = NULL;
  CHECK (ar_subid_find (f, "root", &r, &err) == 0);
  CHECK (r.start == 300000 && r.count == 65536);
}

static void
test_none (void)
{
  cleanup_free char *f = file_with ("none", "tester:100000:65536\n");
  ar_subid_range r = { 0 };
  ar_error_t *err = NULL;
  CHECK (ar_subid_find (f, "agentrun", &r, &err) < 0);
  cleanup_free char *want = xasprintf ("%s: no range for user `agentrun`", f);
  CHECK (err && strncmp (ar_error_text (err), want, strlen (want)) == 0);
  ar_error_free (err);
  err = NULL;
  cleanup_free char *missing = xasprintf ("%s/absent", dir);
  CHECK (ar_subid_find (missing, "agentrun", &r, &err) < 0);
  CHECK (err && strstr (ar_error_text (err), "no range for user") != NULL);
  ar_error_free (err);
}

static void
remove_files (void)
{
  static const char *const names[] = { "names", "broken", "uids", "none" };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    {
      cleanup_free char *p = xasprintf ("%s/%s", dir, names[i]);
      unlink (p);
    }
  rmdir (dir);
}

int
main (void)
{
  if (mkdtemp (dir) == NULL)
    return 1;
  RUN (test_by_name);
  RUN (test_first_good_line);
  RUN (test_by_uid);
  RUN (test_none);
  remove_files ();
  return unit_finish ();
}
