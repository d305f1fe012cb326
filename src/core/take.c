/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "take.h"
#include "launcher_wire.h"
#include "container_internal.h"
#include "foreground.h"
#include "policy_stage.h"
#include "state.h"
#include "sync.h"
#include "../util/cleanup.h"
#include "../util/fdpass.h"
#include "../util/fs.h"
#include "../util/clock.h"
#include "../util/path.h"
#include "../util/pidfd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int
ar_take_offer (int sync_fd, int dirfd, const char *name, ar_error_t **err)
{
  cleanup_close int listener = ar_seqpacket_listen_at (dirfd, name, err);
  if (listener < 0)
    return -1;
  if (ar_sync_send (sync_fd, AR_SYNC_TAKE, 0, listener, NULL, err) < 0)
    {
      unlinkat (dirfd, name, 0);
      return -1;
    }
  return 0;
}

static int
read_command (int fd, ar_take_command *cmd, ar_error_t **err)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return ar_error_set (err, errno, "take: the command");
  if (st.st_size <= 0 || (size_t) st.st_size > AR_TAKE_COMMAND_MAX)
    return ar_error_set (err, 0, "take: the command is %lld bytes",
                         (long long) st.st_size);
  size_t len = (size_t) st.st_size;
  cleanup_free char *buf = xmalloc (len);
  for (size_t at = 0; at < len;)
    {
      ssize_t n = pread (fd, buf + at, len - at, (off_t) at);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return ar_error_set (err, n < 0 ? errno : EIO,
                             "take: read the command");
      at += (size_t) n;
    }
  return ar_take_command_decode (buf, len, cmd, err);
}

int
ar_take_await (int listener, ar_take_command *cmd, int stdio[3], int *conn,
               ar_error_t **err)
{
  stdio[0] = stdio[1] = stdio[2] = -1;
  int c;
  do
    c = accept4 (listener, NULL, NULL, SOCK_CLOEXEC);
  while (c < 0 && errno == EINTR);
  if (c < 0)
    return ar_error_set (err, errno, "take: accept");
  *conn = c;
  ar_sync_msg msg;
  if (ar_sync_expect (c, AR_SYNC_COMMAND, &msg, err) < 0)
    return -1;
  free (msg.text);
  cleanup_close int command_fd = msg.fd;
  if (command_fd < 0)
    return ar_error_set (err, 0, "take: no command came");
  if (read_command (command_fd, cmd, err) < 0)
    return -1;
  for (int i = 0; i < 3; i++)
    {
      if (ar_sync_expect (c, AR_SYNC_STDIO, &msg, err) < 0)
        return -1;
      free (msg.text);
      stdio[i] = msg.fd;
      if (msg.fd < 0 || msg.value != i)
        return ar_error_set (err, 0, "take: expected the fd for %d", i);
    }
  return 0;
}

static int
send_command (int sock, const ar_take_command *cmd, ar_error_t **err)
{
  size_t len = 0;
  cleanup_free char *buf = ar_take_command_encode (cmd, &len);
  if (len > AR_TAKE_COMMAND_MAX)
    return ar_error_set (err, E2BIG, "the command and its environment");
  cleanup_close int fd = memfd_create ("agentrun-command", MFD_CLOEXEC);
  if (fd < 0)
    return ar_error_set (err, errno, "memfd_create");
  if (ar_write_all (fd, buf, len) < 0)
    return ar_error_set (err, errno, "write the command");
  if (ar_sync_send (sock, AR_SYNC_COMMAND, 0, fd, NULL, err) < 0)
    return -1;
  for (int i = 0; i < 3; i++)
    if (ar_sync_send (sock, AR_SYNC_STDIO, i, i, NULL, err) < 0)
      return -1;
  return 0;
}

/* After the start, off the command's path: the audit records ("take":
 * the command as the container's process got it; "start") and poststart
 * hooks, which need the stored state and spec; without either neither is
 * read. */
static void
after_start (const char *root, const char *id, int state_fd,
             const ar_plan *plan, bool poststart, const ar_take_command *cmd,
             char *const *command_line)
{
  if (!poststart && !ar_stage_audits (plan))
    return;
  oci_spec *spec = NULL;
  cleanup_state ar_state *st = NULL;
  cleanup_error ar_error_t *e = NULL;
  if (ar_state_load (state_fd, &st, &e) < 0
      || ar_container_load_spec (state_fd, &spec, &e) < 0)
    {
      fprintf (stderr, "agentrun: warning: %s: %s\n", id, ar_error_text (e));
      return;
    }
  oci_process proc = *spec->process;
  proc.args = cmd->args;
  cleanup_free char *cwd
      = cmd->cwd == NULL || cmd->cwd[0] == '/'
            ? NULL
            : xasprintf ("%s/%s", proc.cwd ? proc.cwd : "", cmd->cwd);
  if (cmd->cwd)
    proc.cwd = cwd ? cwd : cmd->cwd;
  cleanup_free char *state_dir = ar_container_state_path (root, id, &e);
  if (state_dir)
    ar_stage_audit_process (plan, state_dir, id, "take", &proc, command_line);
  ar_stage_audit (plan, id, "start", NULL);
  ar_container_run_hooks_of (spec, plan, st, true);
  oci_spec_free (spec);
}

/* The init's word that it has the command: its host pid, and whether
 * there are poststart hooks. The pidfd is opened while it waits for the
 * start, so the pid is still its own. */
static int
await_ready (int sock, ar_created *out, bool *poststart, ar_error_t **err)
{
  ar_sync_msg msg;
  if (ar_sync_expect (sock, AR_SYNC_READY, &msg, err) < 0)
    return -1;
  *poststart = msg.text && strcmp (msg.text, "0") != 0;
  free (msg.text);
  out->pid = msg.value;
  out->pidfd = out->pid > 0 ? ar_pidfd_open (out->pid) : -1;
  if (out->pidfd < 0)
    return ar_error_set (err, errno, "pidfd_open %d", (int) out->pid);
  return 0;
}

/* The one error for an init that went while it waited to be taken. */
static int
init_gone (ar_error_t **err)
{
  ar_error_freep (err);
  return ar_error_set_code (err, AR_ERR_PEER_GONE, 0, "its init is gone");
}

int
ar_take_connect (int dirfd, const char *name, ar_error_t **err)
{
  int sock = ar_seqpacket_connect_at (dirfd, name, err);
  int why = sock < 0 && *err ? (*err)->errno_value : 0;
  if (why == ECONNREFUSED || why == ENOENT)
    return init_gone (err);
  return sock;
}

/* A connection that closed before READY: the init went while it waited
 * (killed), and nothing of the command ran. */
static int
gone_if_closed (ar_error_t **err)
{
  return ar_error_is (*err, AR_ERR_PEER_GONE) ? init_gone (err) : -1;
}

int
ar_take_hand (int sock, const ar_take_command *cmd,
              const ar_take_handover *done, ar_take_ready *out,
              ar_error_t **err)
{
  *out = (ar_take_ready){
    .created
    = { .pidfd = -1, .sync_fd = sock, .pty_master = -1, .adopted = true }
  };
  ar_created *c = &out->created;
  if (done && done->pidfd >= 0)
    {
      /* The launcher handed the command, read READY and started it. */
      out->started = true;
      out->poststart = done->poststart;
      c->pid = done->pid;
      c->pidfd = dup (done->pidfd);
      if (c->pidfd < 0)
        return ar_error_set (err, errno, "take: the init's pidfd %d",
                             done->pidfd);
      return 0;
    }
  if (!(done && done->sent) && send_command (sock, cmd, err) < 0)
    return gone_if_closed (err);
  if (await_ready (sock, c, &out->poststart, err) < 0)
    return gone_if_closed (err);
  return 0;
}

int
ar_container_take (const char *root, const char *id, const ar_take_command *cmd,
                   char *const *command_line, ar_take_ready *ready,
                   ar_error_t **err)
{
  ar_created *out = &ready->created;
  cleanup_close int state_fd = ar_container_open_dir (root, id, err);
  if (state_fd < 0)
    return -1;
  /* From the start on, a signal to this process is the command's: a
   * caller may send one as soon as the command runs. */
  ar_foreground_forward_signals (out->pid);
  if (!ready->started
      && ar_sync_send (out->sync_fd, AR_SYNC_START, 0, -1, NULL, err) < 0)
    return -1;
  /* Off the command's path: it runs. */
  out->started_ms = ar_now_ms ();
  ar_plan *plan = NULL;
  if (ar_container_record_supervisor (state_fd, err) < 0
      || ar_stage_load_plan (state_fd, &plan, err) < 0)
    return -1;
  out->wall_clock_seconds = ar_stage_wall_clock_seconds (plan);
  unlinkat (state_fd, AR_AWAIT_TAKE_FILE, 0);
  after_start (root, id, state_fd, plan, ready->poststart, cmd, command_line);
  ar_stage_free_plan (plan);
  return 0;
}

void
ar_take_handover_clear (ar_take_handover *h)
{
  free (h->id);
  ar_closep (&h->sock);
  ar_closep (&h->pidfd);
  *h = (ar_take_handover){ .sock = -1, .pidfd = -1 };
}

/* An fd passed across the exec, as text: open, of `type` (S_IFSOCK), or
 * (type 0) a pidfd, whose process's pid goes to *pid; then close-on-exec. */
static int
adopt_fd (const char *text, mode_t type, int *out, pid_t *pid, ar_error_t **err)
{
  char *end;
  errno = 0;
  long fd = strtol (text, &end, 10);
  struct stat st;
  if (errno || end == text || *end || fd < 0 || fd > INT_MAX
      || fstat ((int) fd, &st) < 0
      || (type ? (st.st_mode & S_IFMT) != type
               : (*pid = ar_pidfd_pid ((int) fd)) < 0)
      || fcntl ((int) fd, F_SETFD, FD_CLOEXEC) < 0)
    return ar_error_set (err, 0, AR_TAKE_HANDOVER_ENV ": `%s` is not %s", text,
                         type ? "a socket's fd" : "a pidfd");
  *out = (int) fd;
  return 0;
}

int
ar_take_handover_parse (const char *text, ar_take_handover *h, ar_error_t **err)
{
  *h = (ar_take_handover){ .sock = -1, .pidfd = -1 };
  cleanup_free char *copy = xstrdup (text);
  char *words[5];
  size_t n = 0;
  char *save = NULL;
  for (char *w = strtok_r (copy, " ", &save); w && n < 5;
       w = strtok_r (NULL, " ", &save))
    words[n++] = w;
  if (n != 1 && n != 2 && n != 4)
    return ar_error_set (err, 0,
                         AR_TAKE_HANDOVER_ENV
                         ": `%s`: expected ID [SOCK [PIDFD POSTSTART]]",
                         text);
  if (ar_check_plain_name (AR_TAKE_HANDOVER_ENV, words[0], err) < 0)
    return -1;
  h->id = xstrdup (words[0]);
  h->sent = n >= 2;
  h->poststart = n == 4 && strcmp (words[3], "0") != 0;
  if ((n >= 2 && adopt_fd (words[1], S_IFSOCK, &h->sock, NULL, err) < 0)
      || (n == 4 && adopt_fd (words[2], 0, &h->pidfd, &h->pid, err) < 0))
    {
      ar_take_handover_clear (h);
      return -1;
    }
  return 0;
}
