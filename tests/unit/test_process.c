/* SPDX-License-Identifier: Apache-2.0 */
/* The last steps before exec: validation of the process section, the PATH
 * lookup, and the OCI hook runner (exit status, signals, timeouts, stdin,
 * env). Most of it runs unprivileged in a temporary directory; the user
 * and capability switch runs only as root, in a forked child. */
#include "config.h"
#include "unit.h"
#include "../../src/core/caps.h"
#include "../../src/core/hooks.h"
#include "../../src/core/process.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/fs.h"

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmp[64];

#define STRV(...)                                                              \
  ((oci_strv){ (char *[]){ __VA_ARGS__, NULL },                                \
               sizeof ((char *[]){ __VA_ARGS__ }) / sizeof (char *) })

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
write_file (const char *name, const char *content, mode_t mode)
{
  cleanup_free char *path = tmp_path (name);
  cleanup_close int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  if (fd < 0 || ar_write_all (fd, content, strlen (content)) < 0)
    {
      perror (path);
      exit (2);
    }
  fchmod (fd, mode);
}

static char *
read_tmp (const char *name)
{
  cleanup_free char *path = tmp_path (name);
  char *content = NULL;
  ar_error_t *err = NULL;
  if (ar_read_file_at (AT_FDCWD, path, 1 << 20, &content, NULL, &err) < 0)
    {
      ar_error_free (err);
      return NULL;
    }
  return content;
}

static oci_process
valid_process (void)
{
  static char *args[] = { "sh", NULL };
  oci_process p = { 0 };
  p.args = (oci_strv){ args, 1 };
  p.cwd = "/";
  return p;
}

/* Validate, returning the error message (or NULL when valid). */
static char *
validate_message (const oci_process *p)
{
  cleanup_error ar_error_t *err = NULL;
  if (ar_process_validate (p, &err) == 0)
    return NULL;
  return xstrdup (ar_error_text (err));
}

/* ---- validation ------------------------------------------------------- */

static void
test_validate_ok (void)
{
  oci_process p = valid_process ();
  oci_rlimit rl[] = { { "RLIMIT_NOFILE", 1024, 512 }, { "RLIMIT_CORE", 0, 0 } };
  p.rlimits = rl;
  p.n_rlimits = 2;
  oci_capabilities caps = { .bounding = STRV ("CAP_CHOWN", "CAP_KILL"),
                            .effective = STRV ("CAP_KILL") };
  p.capabilities = &caps;
  cleanup_free char *msg = validate_message (&p);
  CHECK_STR (msg, NULL);
  CHECK_INT (ar_process_validate (NULL, NULL), 0);
}

static void
test_validate_args_and_cwd (void)
{
  oci_process p = valid_process ();
  p.args = (oci_strv){ NULL, 0 };
  cleanup_free char *no_args = validate_message (&p);
  CHECK_STR (no_args, "config.json: .process.args: must not be empty");

  p = valid_process ();
  p.cwd = "relative/dir";
  cleanup_free char *relative = validate_message (&p);
  CHECK_STR (relative, "config.json: .process.cwd: \"relative/dir\" is not "
                       "an absolute path");
}

static void
test_validate_rlimits (void)
{
  oci_process p = valid_process ();
  oci_rlimit unknown[]
      = { { "RLIMIT_NOFILE", 10, 10 }, { "RLIMIT_FOO", 1, 1 } };
  p.rlimits = unknown;
  p.n_rlimits = 2;
  cleanup_free char *m1 = validate_message (&p);
  CHECK_STR (m1, "config.json: .process.rlimits[1].type: unknown rlimit "
                 "\"RLIMIT_FOO\"");

  oci_rlimit dup[] = { { "RLIMIT_CORE", 10, 10 },
                       { "RLIMIT_NOFILE", 10, 10 },
                       { "RLIMIT_CORE", 1, 1 } };
  p.rlimits = dup;
  p.n_rlimits = 3;
  cleanup_free char *m2 = validate_message (&p);
  CHECK_STR (m2, "config.json: .process.rlimits[2].type: duplicate rlimit "
                 "\"RLIMIT_CORE\"");

  oci_rlimit inverted[] = { { "RLIMIT_NOFILE", 10, 20 } };
  p.rlimits = inverted;
  p.n_rlimits = 1;
  cleanup_free char *m3 = validate_message (&p);
  CHECK_STR (m3, "config.json: .process.rlimits[0]: soft limit 20 is above "
                 "hard limit 10");

  const char *all[] = {
    "RLIMIT_AS",     "RLIMIT_CORE",   "RLIMIT_CPU",        "RLIMIT_DATA",
    "RLIMIT_FSIZE",  "RLIMIT_LOCKS",  "RLIMIT_MEMLOCK",    "RLIMIT_MSGQUEUE",
    "RLIMIT_NICE",   "RLIMIT_NOFILE", "RLIMIT_NPROC",      "RLIMIT_RSS",
    "RLIMIT_RTPRIO", "RLIMIT_RTTIME", "RLIMIT_SIGPENDING", "RLIMIT_STACK"
  };
  oci_rlimit every[16];
  for (size_t i = 0; i < 16; i++)
    every[i] = (oci_rlimit){ (char *) all[i], 5, 5 };
  p.rlimits = every;
  p.n_rlimits = 16;
  cleanup_free char *m4 = validate_message (&p);
  CHECK_STR (m4, NULL);
}

static void
test_validate_capabilities (void)
{
  oci_process p = valid_process ();
  oci_capabilities caps = { .bounding = STRV ("CAP_CHOWN"),
                            .permitted = STRV ("CAP_KILL", "CAP_FOO") };
  p.capabilities = &caps;
  cleanup_free char *m1 = validate_message (&p);
  CHECK_STR (m1, "config.json: .process.capabilities.permitted[1]: unknown "
                 "capability \"CAP_FOO\"");

  /* runc's spelling only: libcap alone would take these. */
  const char *bad[] = { "chown",       "cap_chown",          "12",
                        "CAP_KILL=ep", "CAP_CHOWN,CAP_KILL", "CAP_" };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      char *one[] = { (char *) bad[i], NULL };
      oci_capabilities c = { .ambient = { one, 1 } };
      cleanup_error ar_error_t *err = NULL;
      CHECK (ar_caps_validate (&c, &err) < 0);
      cleanup_free char *want = xasprintf ("unknown capability \"%s\"", bad[i]);
      CHECK_STR (err ? ar_error_text (err) : NULL, want);
    }

  oci_capabilities newest
      = { .effective = STRV ("CAP_CHECKPOINT_RESTORE", "CAP_AUDIT_WRITE") };
  CHECK_INT (ar_caps_validate (&newest, NULL), 0);
  CHECK_INT (ar_caps_validate (NULL, NULL), 0);
}

static void
test_validate_scheduler_and_io (void)
{
  oci_process p = valid_process ();
  oci_scheduler sched = { .policy = "SCHED_WHATEVER" };
  p.scheduler = &sched;
  cleanup_free char *m1 = validate_message (&p);
  CHECK_STR (m1, "config.json: .process.scheduler.policy: unknown policy "
                 "\"SCHED_WHATEVER\"");

  sched.policy = "SCHED_RR";
  sched.flags = STRV ("SCHED_FLAG_RESET_ON_FORK", "SCHED_FLAG_NOPE");
  cleanup_free char *m2 = validate_message (&p);
  CHECK_STR (m2, "config.json: .process.scheduler.flags[1]: unknown flag "
                 "\"SCHED_FLAG_NOPE\"");

  p.scheduler = NULL;
  oci_io_priority io = { .class = "IOPRIO_CLASS_XX", .priority = 1 };
  p.io_priority = &io;
  cleanup_free char *m3 = validate_message (&p);
  CHECK_STR (m3, "config.json: .process.ioPriority.class: unknown class "
                 "\"IOPRIO_CLASS_XX\"");
  io.class = "IOPRIO_CLASS_BE";
  io.priority = 8;
  cleanup_free char *m4 = validate_message (&p);
  CHECK_STR (m4, "config.json: .process.ioPriority.priority: 8 is outside "
                 "0..7");
}

/* ---- finding the executable ------------------------------------------- */

static char *
find_message (const char *arg0, char *path_env, char **found)
{
  char *args[] = { (char *) arg0, NULL };
  char *env[] = { "HOME=/", path_env, NULL };
  oci_process p = valid_process ();
  p.args = (oci_strv){ args, 1 };
  p.env = (oci_strv){ env, path_env ? 2 : 1 };
  cleanup_error ar_error_t *err = NULL;
  *found = ar_process_find_executable (&p, &err);
  return err ? xstrdup (ar_error_text (err)) : NULL;
}

static void
test_find_executable (void)
{
  cleanup_free char *bin1 = tmp_path ("bin1");
  cleanup_free char *bin2 = tmp_path ("bin2");
  mkdir (bin1, 0755);
  mkdir (bin2, 0755);
  write_file ("bin1/tool", "#!/bin/sh\n", 0644); /* not executable */
  write_file ("bin2/tool", "#!/bin/sh\n", 0755);
  write_file ("bin1/only", "#!/bin/sh\n", 0755);
  cleanup_free char *dir_as_cmd = tmp_path ("bin2/subdir");
  mkdir (dir_as_cmd, 0755);
  cleanup_free char *path_env = xasprintf ("PATH=%s:%s", bin1, bin2);

  /* The non-executable bin1/tool is skipped for bin2/tool. */
  cleanup_free char *found = NULL;
  cleanup_free char *m1 = find_message ("tool", path_env, &found);
  cleanup_free char *want = tmp_path ("bin2/tool");
  CHECK_STR (m1, NULL);
  CHECK_STR (found, want);

  cleanup_free char *found2 = NULL;
  cleanup_free char *m2 = find_message ("missing", path_env, &found2);
  CHECK_STR (m2, "exec: \"missing\": executable file not found in $PATH");
  CHECK (found2 == NULL);

  /* Directories on PATH are not executables. */
  cleanup_free char *found3 = NULL;
  cleanup_free char *m3 = find_message ("subdir", path_env, &found3);
  CHECK_STR (m3, "exec: \"subdir\": executable file not found in $PATH");

  /* No PATH in env: the default one finds sh. */
  cleanup_free char *found4 = NULL;
  cleanup_free char *m4 = find_message ("sh", NULL, &found4);
  CHECK_STR (m4, NULL);
  CHECK (found4 != NULL && strstr (found4, "/sh") != NULL);
}

static void
test_find_executable_by_path (void)
{
  cleanup_free char *tool = tmp_path ("bin2/tool");
  cleanup_free char *found = NULL;
  cleanup_free char *m1 = find_message (tool, "PATH=/nowhere", &found);
  CHECK_STR (m1, NULL);
  CHECK_STR (found, tool);

  cleanup_free char *plain = tmp_path ("bin1/tool");
  cleanup_free char *found2 = NULL;
  cleanup_free char *m2 = find_message (plain, NULL, &found2);
  cleanup_free char *want2
      = xasprintf ("exec: \"%s\": permission denied", plain);
  /* root may execute nothing without an x bit either */
  CHECK_STR (m2, want2);

  cleanup_free char *dir = tmp_path ("bin2");
  cleanup_free char *found3 = NULL;
  cleanup_free char *m3 = find_message (dir, NULL, &found3);
  cleanup_free char *want3 = xasprintf ("exec: \"%s\": is a directory", dir);
  CHECK_STR (m3, want3);

  cleanup_free char *found4 = NULL;
  cleanup_free char *m4 = find_message ("/no/such/file", NULL, &found4);
  CHECK_STR (m4, "exec: \"/no/such/file\": stat /no/such/file: no such "
                 "file or directory");
}

/* ---- hooks ------------------------------------------------------------ */

static char *
hooks_message (oci_hook *hooks, size_t n, const char *state)
{
  oci_hook_list list = { hooks, n };
  cleanup_error ar_error_t *err = NULL;
  if (ar_hooks_run (&list, "prestart", state, &err) == 0)
    return NULL;
  return xstrdup (ar_error_text (err));
}

static oci_hook
sh_hook (const char *script)
{
  char **args = xcalloc (4, sizeof *args);
  args[0] = "sh";
  args[1] = "-c";
  args[2] = (char *) script;
  return (oci_hook){ .path = "/bin/sh", .args = { args, 3 } };
}

static double
seconds_since (const struct timespec *start)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (double) (now.tv_sec - start->tv_sec)
         + (double) (now.tv_nsec - start->tv_nsec) / 1e9;
}

static bool
no_children_left (void)
{
  return waitpid (-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

static void
test_hooks_exit_status (void)
{
  oci_hook ok[] = { { .path = "/bin/true" }, { .path = "/bin/true" } };
  cleanup_free char *m1 = hooks_message (ok, 2, "{}");
  CHECK_STR (m1, NULL);

  oci_hook fail[] = { { .path = "/bin/true" },
                      { .path = "/bin/false" },
                      { .path = "/bin/true" } };
  cleanup_free char *m2 = hooks_message (fail, 3, "{}");
  CHECK_STR (m2, "error running hook #1 (prestart /bin/false): exit status 1");

  oci_hook killed[] = { sh_hook ("kill -9 $$") };
  cleanup_free char *m3 = hooks_message (killed, 1, "{}");
  CHECK_STR (m3,
             "error running hook #0 (prestart /bin/sh): killed by signal 9");
  free (killed[0].args.items);

  oci_hook missing[] = { { .path = "/no/such/hook" } };
  cleanup_free char *m4 = hooks_message (missing, 1, "{}");
  CHECK_STR (
      m4,
      "error running hook #0 (prestart /no/such/hook): exec: No such file or "
      "directory");

  oci_hook_list empty = { NULL, 0 };
  CHECK_INT (ar_hooks_run (&empty, "poststop", "{}", NULL), 0);
  CHECK (no_children_left ());
}

static void
test_hooks_timeout (void)
{
  oci_hook slow[] = { sh_hook ("exec sleep 30") };
  slow[0].timeout = (oci_opt_i64){ true, 1 };
  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  cleanup_free char *m = hooks_message (slow, 1, "{}");
  double took = seconds_since (&start);
  CHECK_STR (m, "error running hook #0 (prestart /bin/sh): timed out after 1s");
  /* Not before its second, and long before the hook's own 30 s (the
     bound leaves room for a loaded machine). */
  CHECK (took >= 0.9 && took < 20);
  CHECK (no_children_left ());
  free (slow[0].args.items);
}

static void
test_hooks_stdin_args_env (void)
{
  cleanup_free char *out = tmp_path ("state.out");
  cleanup_free char *script = xasprintf ("cat > %s; echo \" $0\" >> %s; "
                                         "/usr/bin/env | grep -v '^PWD=' >> %s",
                                         out, out, out);
  char *args[] = { "sh", "-c", script, "first", NULL };
  char *env[] = { "FOO=bar", NULL };
  oci_hook hook = { .path = "/bin/sh", .args = { args, 4 }, .env = { env, 1 } };
  cleanup_free char *m = hooks_message (&hook, 1, "{\"id\":\"c1\"}");
  CHECK_STR (m, NULL);
  cleanup_free char *got = read_tmp ("state.out");
  /* Exactly the hook's env: nothing of ours (PWD is the shell's own). */
  CHECK_STR (got, "{\"id\":\"c1\"} first\nFOO=bar\n");
}

static void
test_hooks_large_state (void)
{
  /* More than a pipe holds: written as the hook reads it. */
  size_t len = 1 << 20;
  cleanup_free char *state = xmalloc (len + 1);
  memset (state, 'x', len);
  state[len] = '\0';
  cleanup_free char *out = tmp_path ("count.out");
  cleanup_free char *script = xasprintf ("wc -c > %s", out);
  oci_hook reader[] = { sh_hook (script) };
  cleanup_free char *m1 = hooks_message (reader, 1, state);
  CHECK_STR (m1, NULL);
  cleanup_free char *count = read_tmp ("count.out");
  CHECK (count != NULL && strtoul (count, NULL, 10) == len);
  free (reader[0].args.items);

  /* A hook that ignores its stdin must not kill us with SIGPIPE. */
  oci_hook deaf[] = { { .path = "/bin/true" } };
  cleanup_free char *m2 = hooks_message (deaf, 1, state);
  CHECK_STR (m2, NULL);
  sigset_t pending;
  sigpending (&pending);
  CHECK (!sigismember (&pending, SIGPIPE));
}

/* Hook output lands on our stderr, never our stdout. */
static void
test_hooks_output_goes_to_stderr (void)
{
  cleanup_free char *out_path = tmp_path ("stdout.txt");
  cleanup_free char *err_path = tmp_path ("stderr.txt");
  fflush (stdout);
  fflush (stderr);
  int saved_out = dup (STDOUT_FILENO), saved_err = dup (STDERR_FILENO);
  int out_fd = open (out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int err_fd = open (err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2 (out_fd, STDOUT_FILENO);
  dup2 (err_fd, STDERR_FILENO);

  oci_hook chatty[] = { sh_hook ("echo to-stdout; echo to-stderr >&2") };
  cleanup_free char *m = hooks_message (chatty, 1, "{}");

  dup2 (saved_out, STDOUT_FILENO);
  dup2 (saved_err, STDERR_FILENO);
  close (saved_out), close (saved_err), close (out_fd), close (err_fd);
  free (chatty[0].args.items);

  CHECK_STR (m, NULL);
  cleanup_free char *out = read_tmp ("stdout.txt");
  cleanup_free char *errs = read_tmp ("stderr.txt");
  CHECK_STR (out, "");
  CHECK_STR (errs, "to-stdout\nto-stderr\n");
}

/* ---- user and capabilities (root only) -------------------------------- */

static bool
status_line_is (const char *status, const char *key, const char *want)
{
  cleanup_free char *needle = xasprintf ("\n%s:\t%s\n", key, want);
  return strstr (status, needle) != NULL;
}

/* In a child: switch to uid 1000 with groups and a few capabilities, then
 * report through the exit status which /proc/self/status line was off. */
static int
child_switch_user (void)
{
  uint32_t gids[] = { 10, 20 };
  oci_process p = valid_process ();
  p.user = (oci_user){
    .uid = 1000, .gid = 1001, .additional_gids = gids, .n_additional_gids = 2
  };
  oci_capabilities caps
      = { .bounding = STRV ("CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"),
          .effective = STRV ("CAP_CHOWN", "CAP_NET_BIND_SERVICE"),
          .permitted = STRV ("CAP_CHOWN", "CAP_NET_BIND_SERVICE"),
          .inheritable = STRV ("CAP_NET_BIND_SERVICE"),
          .ambient = STRV ("CAP_NET_BIND_SERVICE", "CAP_CHOWN") };
  ar_error_t *err = NULL;
  if (ar_process_set_user (&p, &err) < 0 || ar_caps_apply (&caps, &err) < 0)
    {
      fprintf (stderr, "%s\n", ar_error_text (err));
      return 10;
    }
  cleanup_free char *status = NULL;
  if (ar_read_file_at (AT_FDCWD, "/proc/self/status", 1 << 16, &status, NULL,
                       &err)
      < 0)
    return 11;
  const char *want[][2] = {
    { "Uid", "1000\t1000\t1000\t1000" },
    { "Gid", "1001\t1001\t1001\t1001" },
    { "Groups", "10 20 " },
    { "CapInh", "0000000000000400" },
    { "CapPrm", "0000000000000401" },
    { "CapEff", "0000000000000401" },
    { "CapBnd", "0000000000000421" },
    { "CapAmb", "0000000000000400" },
  };
  for (int i = 0; i < 8; i++)
    if (!status_line_is (status, want[i][0], want[i][1]))
      return 20 + i;
  return 0;
}

static void
test_set_user_and_caps (void)
{
  if (geteuid () != 0)
    {
      fprintf (stderr, "skip test_set_user_and_caps: not root\n");
      return;
    }
  pid_t pid = fork ();
  if (pid == 0)
    _exit (child_switch_user ());
  int status = -1;
  waitpid (pid, &status, 0);
  CHECK (WIFEXITED (status));
  CHECK_INT (WEXITSTATUS (status), 0);
}

int
main (void)
{
  strcpy (tmp, "/tmp/agentrun-test-process-XXXXXX");
  if (mkdtemp (tmp) == NULL)
    {
      perror ("mkdtemp");
      return 2;
    }
  RUN (test_validate_ok);
  RUN (test_validate_args_and_cwd);
  RUN (test_validate_rlimits);
  RUN (test_validate_capabilities);
  RUN (test_validate_scheduler_and_io);
  RUN (test_find_executable);
  RUN (test_find_executable_by_path);
  RUN (test_hooks_exit_status);
  RUN (test_hooks_timeout);
  RUN (test_hooks_stdin_args_env);
  RUN (test_hooks_large_state);
  RUN (test_hooks_output_goes_to_stderr);
  RUN (test_set_user_and_caps);
  nftw (tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  return unit_finish ();
}
