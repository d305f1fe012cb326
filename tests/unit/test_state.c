/* SPDX-License-Identifier: Apache-2.0 */
/* A container's state record without a container: the id rules, and
 * state.json written and read back field by field. No root needed: the
 * record goes to a temporary directory. */
#include "config.h"
#include "unit.h"
#include "../../src/core/state.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/fs.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static bool
id_ok (const char *id)
{
  cleanup_error ar_error_t *err = NULL;
  int r = ar_state_validate_id (id, &err);
  CHECK ((r == 0) == (err == NULL));
  return r == 0;
}

static void
test_ids (void)
{
  CHECK (id_ok ("a"));
  CHECK (id_ok ("ctr-1_x.y+z"));
  /* containerd's and Docker's 64 hex digits. */
  CHECK (id_ok (
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
  CHECK (!id_ok (""));
  CHECK (!id_ok ("."));
  CHECK (!id_ok (".."));
  CHECK (!id_ok ("a/b"));
  CHECK (!id_ok ("../x"));
  CHECK (!id_ok ("a b"));
  CHECK (!id_ok ("a\nb"));
  /* agentrun's own files beside the containers. */
  CHECK (!id_ok (AR_SECCOMP_CACHE_DIR));
  CHECK (!id_ok (".sandbox"));
  CHECK (!id_ok (".hidden"));
  char long_id[1026];
  memset (long_id, 'a', sizeof long_id - 1);
  long_id[1025] = '\0';
  CHECK (!id_ok (long_id));
  long_id[1024] = '\0';
  CHECK (id_ok (long_id));
}

static void
test_save_and_load (void)
{
  char dir[] = "/tmp/agentrun-unit-state.XXXXXX";
  if (!CHECK (mkdtemp (dir) != NULL))
    return;
  cleanup_close int dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  oci_kv items[] = { { (char *) "run.agentrun.timeout", (char *) "10m" },
                     { (char *) "quote\"d", (char *) "tab\there" } };
  ar_state s = { .id = (char *) "ctr1",
                 .pid = 4242,
                 .start_time = 123456789012ULL,
                 .bundle = (char *) "/b/ctr1",
                 .rootfs = (char *) "/b/ctr1/rootfs",
                 .created = (char *) "2026-11-25T18:00:00.000000000Z",
                 .owner = 1500,
                 .cgroup = (char *) "v1:/agentrun/ctr1",
                 .annotations = { .items = items, .len = 2 } };
  cleanup_error ar_error_t *err = NULL;
  CHECK (ar_state_save (dirfd, &s, &err) == 0);
  ar_state *back = NULL;
  if (CHECK (ar_state_load (dirfd, &back, &err) == 0 && back != NULL))
    {
      CHECK_STR (back->id, "ctr1");
      CHECK (back->pid == 4242);
      CHECK (back->start_time == 123456789012ULL);
      CHECK_STR (back->bundle, "/b/ctr1");
      CHECK_STR (back->rootfs, "/b/ctr1/rootfs");
      CHECK_STR (back->created, s.created);
      CHECK (back->owner == 1500);
      CHECK_STR (back->cgroup, "v1:/agentrun/ctr1");
      if (CHECK (back->annotations.len == 2))
        {
          CHECK_STR (back->annotations.items[0].key, "run.agentrun.timeout");
          CHECK_STR (back->annotations.items[1].key, "quote\"d");
          CHECK_STR (back->annotations.items[1].value, "tab\there");
        }
      /* The OCI view: the status is given, not stored. */
      cleanup_free char *json
          = ar_state_to_oci_json (back, AR_STATUS_RUNNING, false);
      CHECK (strstr (json, "\"status\":\"running\"") != NULL);
      CHECK (strstr (json, "\"pid\":4242") != NULL);
      ar_state_free (back);
    }
  /* No cgroup: none comes back. */
  s.cgroup = NULL;
  CHECK (ar_state_save (dirfd, &s, &err) == 0);
  back = NULL;
  if (CHECK (ar_state_load (dirfd, &back, &err) == 0 && back != NULL))
    {
      CHECK (back->cgroup == NULL);
      ar_state_free (back);
    }
  unlinkat (dirfd, AR_STATE_FILE, 0);
  rmdir (dir);
}

/* A process named by pid and start time (the supervisor, a rootless
 * pool's namespace holder): read back while it lives, 0 once it is gone
 * (its pid may be another process's by then), -1 with no record. */
static void
test_pid_record (void)
{
  char dir[] = "/tmp/agentrun-unit-pid.XXXXXX";
  if (!CHECK (mkdtemp (dir) != NULL))
    return;
  cleanup_close int dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  CHECK (ar_pid_record_read (dirfd, "rec") == -1);
  cleanup_error ar_error_t *err = NULL;
  CHECK (ar_pid_record_write (dirfd, "rec", getpid (), &err) == 0);
  CHECK (ar_pid_record_read (dirfd, "rec") == getpid ());

  pid_t child = fork ();
  if (child == 0)
    _exit (0);
  CHECK (ar_pid_record_write (dirfd, "rec", child, &err) == 0);
  waitpid (child, NULL, 0);
  CHECK (ar_pid_record_read (dirfd, "rec") == 0);

  /* The same pid with another start time is another process. */
  char line[64];
  int len = snprintf (line, sizeof line, "%d 1\n", (int) getpid ());
  CHECK (ar_write_file_atomic_at (dirfd, "rec", line, (size_t) len, 0600, &err)
         == 0);
  CHECK (ar_pid_record_read (dirfd, "rec") == 0);
  CHECK (ar_write_file_atomic_at (dirfd, "rec", "garbage", 7, 0600, &err) == 0);
  CHECK (ar_pid_record_read (dirfd, "rec") == -1);
  unlinkat (dirfd, "rec", 0);
  rmdir (dir);
}

/* A record whose writer holds its lock: its process counts as alive
 * whatever the record says (a reaper reads nothing), and once the lock
 * is gone the record is read; no record at all is not a gone process. */
static void
test_pid_record_held (void)
{
  char dir[] = "/tmp/agentrun-unit-held.XXXXXX";
  if (!CHECK (mkdtemp (dir) != NULL))
    return;
  cleanup_close int dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_error ar_error_t *err = NULL;
  CHECK (!ar_pid_record_gone (dirfd, "rec"));
  int held = -1;
  CHECK (ar_pid_record_write_held (dirfd, "rec", &held, &err) == 0);
  CHECK (held >= 0 && (fcntl (held, F_GETFD) & FD_CLOEXEC));
  CHECK (ar_pid_record_read (dirfd, "rec") == getpid ());
  CHECK (faccessat (dirfd, "rec.tmp", F_OK, 0) < 0);

  /* The same inode, locked still, now names a process that ended. */
  pid_t child = fork ();
  if (child == 0)
    _exit (0);
  waitpid (child, NULL, 0);
  char line[64];
  int len = snprintf (line, sizeof line, "%d 1\n", (int) child);
  cleanup_close int rewrite
      = openat (dirfd, "rec", O_WRONLY | O_TRUNC | O_CLOEXEC);
  CHECK (rewrite >= 0 && write (rewrite, line, (size_t) len) == len);
  CHECK (!ar_pid_record_gone (dirfd, "rec"));
  close (held);
  CHECK (ar_pid_record_gone (dirfd, "rec"));

  CHECK (ar_pid_record_write (dirfd, "rec", getpid (), &err) == 0);
  CHECK (!ar_pid_record_gone (dirfd, "rec"));
  unlinkat (dirfd, "rec", 0);
  rmdir (dir);
}

int
main (void)
{
  RUN (test_ids);
  RUN (test_save_and_load);
  RUN (test_pid_record);
  RUN (test_pid_record_held);
  return unit_finish ();
}
