/* SPDX-License-Identifier: Apache-2.0 */
/* secrets.ask: every open of a file on the container's secrets tmpfs
 * waits for the approver. The kernel holds the open itself (fanotify's
 * FAN_OPEN_PERM on that mount), so what is decided is the open of that
 * file by that process: there is no path to swap after the check. A
 * daemon of its own session answers, holding a pidfd of the init, and
 * ends with it. An allow for the container lets later opens of the same
 * secret through without a question; directories are never asked about. */
#include "config.h"
#include "secret_gate.h"
#include "stage.h"
#include "../../hooks/egress.h"
#include "../util/cleanup.h"
#include "../util/fds.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/pidfd.h"
#include "../util/fds.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/prctl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define MAX_OPEN_QUESTIONS 16
#define MAX_APPROVED 256
#define DETAIL_MAX 256

typedef struct
{
  egress_question q; /* q.fd < 0: free */
  int event_fd;      /* the held open's file; answered through it */
  char name[NAME_MAX + 1];
  long long started_ms;
} held_open;

typedef struct
{
  const ar_agent_plan *plan;
  const char *id;
  int fan_fd, pidfd;
  held_open held[MAX_OPEN_QUESTIONS];
  egress_approved approved; /* secrets allowed for the container */
} gate;

static void
respond (const gate *g, int event_fd, bool allow)
{
  struct fanotify_response r
      = { .fd = event_fd, .response = allow ? FAN_ALLOW : FAN_DENY };
  (void) !write (g->fan_fd, &r, sizeof r);
  close (event_fd);
}

static void
audit_open (const gate *g, const char *event, const held_open *h,
            const char *detail, const char *decision, const char *why)
{
  if (!ar_agent_stage_audits (g->plan))
    return;
  cleanup_free char *fields = egress_question_audit_fields (
      "secret", h->name, detail, decision, why, h->started_ms);
  ar_agent_stage_audit (g->plan, g->id, event, fields);
}

/* The opener's command line, spaces between its words, shortened. */
static char *
opener (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/cmdline", (int) pid);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  char buf[DETAIL_MAX + 1];
  ssize_t n = fd >= 0 ? read (fd, buf, DETAIL_MAX) : -1;
  if (n <= 0)
    return xstrdup ("?");
  for (ssize_t i = 0; i < n; i++)
    if (buf[i] == '\0' || buf[i] == '\n')
      buf[i] = ' ';
  while (n > 0 && buf[n - 1] == ' ')
    n--;
  buf[n] = '\0';
  return xstrdup (buf);
}

static void
decided (gate *g, held_open *h, ar_approval_decision d, const char *why)
{
  audit_open (g, "approval", h, NULL, ar_approval_decision_name (d), why);
  if (d == AR_APPROVAL_ALLOW)
    egress_approved_add (&g->approved, h->name);
  respond (g, h->event_fd, d != AR_APPROVAL_DENY);
  egress_question_close (&h->q);
  h->event_fd = -1;
}

/* One held open: a directory or an approved secret goes on; otherwise
 * the approver is asked (too many at once: refused). */
static void
on_open (gate *g, const struct fanotify_event_metadata *ev)
{
  struct stat st;
  char link[64], target[PATH_MAX];
  snprintf (link, sizeof link, "/proc/self/fd/%d", ev->fd);
  ssize_t n = readlink (link, target, sizeof target - 1);
  if (fstat (ev->fd, &st) < 0 || n <= 0)
    {
      respond (g, ev->fd, false);
      return;
    }
  target[n] = '\0';
  const char *slash = strrchr (target, '/');
  const char *name = slash ? slash + 1 : target;
  if (S_ISDIR (st.st_mode) || egress_approved_has (&g->approved, name))
    {
      respond (g, ev->fd, true);
      return;
    }
  held_open *h = NULL;
  for (size_t i = 0; h == NULL && i < MAX_OPEN_QUESTIONS; i++)
    if (g->held[i].event_fd < 0)
      h = &g->held[i];
  if (h == NULL)
    {
      respond (g, ev->fd, false);
      return;
    }
  *h = (held_open){ .event_fd = ev->fd, .started_ms = ar_now_ms () };
  h->q.fd = -1;
  size_t name_len = strnlen (name, sizeof h->name - 1);
  memcpy (h->name, name, name_len);
  h->name[name_len] = '\0';
  cleanup_free char *detail = opener (ev->pid);
  audit_open (g, "approval-request", h, detail, NULL, NULL);
  const ar_approval_request req = { .container = (char *) g->id,
                                    .what = (char *) "secret",
                                    .where = h->name,
                                    .detail = detail };
  cleanup_error ar_error_t *err = NULL;
  if (egress_question_start (&h->q, g->plan->approver, &req,
                             (unsigned) g->plan->ask_timeout, &err)
      < 0)
    decided (g, h, AR_APPROVAL_DENY, "approver gone");
}

static void
read_events (gate *g)
{
  char buf[4096]
      __attribute__ ((aligned (__alignof__(struct fanotify_event_metadata))));
  ssize_t len = read (g->fan_fd, buf, sizeof buf);
  const struct fanotify_event_metadata *ev = (void *) buf;
  for (; len > 0 && FAN_EVENT_OK (ev, len); ev = FAN_EVENT_NEXT (ev, len))
    {
      if (ev->vers != FANOTIFY_METADATA_VERSION || ev->fd < 0)
        continue;
      if (ev->mask & FAN_OPEN_PERM)
        on_open (g, ev);
      else
        close (ev->fd);
    }
}

static _Noreturn void
serve (gate *g)
{
  for (;;)
    {
      struct pollfd fds[2 + MAX_OPEN_QUESTIONS];
      fds[0] = (struct pollfd){ .fd = g->pidfd, .events = POLLIN };
      fds[1] = (struct pollfd){ .fd = g->fan_fd, .events = POLLIN };
      for (size_t i = 0; i < MAX_OPEN_QUESTIONS; i++)
        fds[2 + i] = (struct pollfd){ .fd = g->held[i].q.fd, .events = POLLIN };
      if (poll (fds, 2 + MAX_OPEN_QUESTIONS, 250) < 0 && errno != EINTR)
        _exit (1);
      if (fds[0].revents)
        _exit (0); /* the init is gone */
      if (fds[1].revents)
        read_events (g);
      long long now = ar_now_ms ();
      for (size_t i = 0; i < MAX_OPEN_QUESTIONS; i++)
        {
          held_open *h = &g->held[i];
          ar_approval_decision d;
          cleanup_free char *why = NULL;
          if (h->event_fd >= 0
              && (fds[2 + i].revents || now >= h->q.deadline_ms)
              && egress_question_poll (&h->q, now, &d, &why))
            decided (g, h, d, why);
        }
    }
}

/* The secrets mount as the init sees it: through its root, so the mark
 * lands on the container's mount, not on anything of the host's. A mount
 * mark on anything but the secrets tmpfs itself would hold every open on
 * a wider mount: checked first. */
static int
mark_secrets (int fan_fd, pid_t init_pid, const char *secrets_path,
              ar_error_t **err)
{
  cleanup_free char *path
      = xasprintf ("/proc/%d/root%s", (int) init_pid, secrets_path);
  cleanup_free char *parent = xasprintf ("%s/..", path);
  struct statfs fs;
  struct stat st, up;
  if (statfs (path, &fs) < 0 || stat (path, &st) < 0 || stat (parent, &up) < 0)
    return ar_error_set (err, errno, "secrets.ask: `%s`", secrets_path);
  if (fs.f_type != TMPFS_MAGIC || st.st_dev == up.st_dev)
    return ar_error_set (err, 0, "secrets.ask: `%s` is not the secrets tmpfs",
                         secrets_path);
  if (fanotify_mark (fan_fd, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_PERM,
                     AT_FDCWD, path)
      < 0)
    return ar_error_set (err, errno, "secrets.ask: fanotify mark `%s`",
                         secrets_path);
  return 0;
}

int
ar_secret_gate_start (const ar_agent_plan *plan, const char *id, pid_t init_pid,
                      ar_error_t **err)
{
  /* Without a secret no tmpfs is mounted: nothing to ask about. */
  if (!plan->secrets_ask || plan->secrets_path == NULL || plan->n_secrets == 0)
    return 0;
  cleanup_close int fan_fd = fanotify_init (
      FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_UNLIMITED_QUEUE, O_RDONLY);
  if (fan_fd < 0)
    return ar_error_set (err, errno,
                         "secrets.ask: fanotify_init (it needs root)");
  if (mark_secrets (fan_fd, init_pid, plan->secrets_path, err) < 0)
    return -1;
  cleanup_close int pidfd = ar_pidfd_open (init_pid);
  if (pidfd < 0)
    return ar_error_set (err, errno, "secrets.ask: pidfd_open");
  pid_t child = fork ();
  if (child < 0)
    return ar_error_set (err, errno, "secrets.ask: fork");
  if (child > 0)
    return 0;
  setsid ();
  int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; devnull >= 0 && fd < 3; fd++)
    dup2 (devnull, fd);
  int keep[] = { fan_fd, pidfd };
  ar_close_fds_from (3, keep, 2);
  prctl (PR_SET_NAME, "agentrun-gate");
  gate g = { .plan = plan,
             .id = id,
             .fan_fd = fan_fd,
             .pidfd = pidfd,
             .approved.max = MAX_APPROVED };
  for (size_t i = 0; i < MAX_OPEN_QUESTIONS; i++)
    g.held[i] = (held_open){ .q.fd = -1, .event_fd = -1 };
  serve (&g);
}
