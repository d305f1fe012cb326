/* SPDX-License-Identifier: Apache-2.0 */
/* The gate daemon: one fanotify group in permission mode, whose held
 * events (the open of a secret, the exec of a named program) wait for the
 * approver's answer. It runs in a session of its own, holding a pidfd of
 * the init, and ends with it. Should it die, the kernel lets what it held
 * through (fanotify's rule when a group goes): it is a root process of
 * the host, out of the container's reach. */
#include "config.h"
#include "gate.h"
#include "gate_internal.h"
#include "stage.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/daemon.h"
#include "../util/pidfd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MAX_APPROVED 256
#define CMDLINE_MAX 256

void
gate_respond (const gate *g, int event_fd, bool allow)
{
  struct fanotify_response r
      = { .fd = event_fd, .response = allow ? FAN_ALLOW : FAN_DENY };
  (void) !write (g->fan_fd, &r, sizeof r);
  close (event_fd);
}

static void
audit_held (const gate *g, const char *event, const gate_held *h,
            const char *detail, const char *decision, const char *why)
{
  if (!ar_agent_stage_audits (g->plan))
    return;
  cleanup_free char *fields = egress_question_audit_fields (
      h->what, h->where, detail, decision, why, h->started_ms);
  ar_agent_stage_audit (g->plan, g->id, event, fields);
}

static bool
denied_just_now (const gate *g, const char *key, long long now)
{
  for (size_t i = 0; i < GATE_RECENT_DENIALS; i++)
    if (g->denied[i].key && now < g->denied[i].until_ms
        && strcmp (g->denied[i].key, key) == 0)
      return true;
  return false;
}

static void
remember_denial (gate *g, const char *key)
{
  size_t i = g->next_denied++ % GATE_RECENT_DENIALS;
  free (g->denied[i].key);
  g->denied[i].key = xstrdup (key);
  g->denied[i].until_ms = ar_now_ms () + GATE_DENIAL_HOLDS_MS;
}

/* The answer, audited, given, and the slot freed. */
static void
answer (gate *g, gate_held *h, ar_approval_decision d, const char *why)
{
  audit_held (g, "approval", h, NULL, ar_approval_decision_name (d), why);
  gate_respond (g, h->event_fd, d != AR_APPROVAL_DENY);
  egress_question_close (&h->q);
  free (h->where);
  free (h->key);
  *h = (gate_held){ .q.fd = -1, .event_fd = -1 };
}

static void
decided (gate *g, gate_held *h, ar_approval_decision d, const char *why)
{
  if (d == AR_APPROVAL_ALLOW)
    egress_approved_add (h->approved, h->key);
  if (d == AR_APPROVAL_DENY)
    remember_denial (g, h->key);
  answer (g, h, d, why);
}

void
gate_ask (gate *g, int event_fd, const char *what, const char *where,
          const char *detail, egress_approved *approved, const char *key)
{
  gate_held *h = NULL;
  for (size_t i = 0; h == NULL && i < GATE_MAX_QUESTIONS; i++)
    if (g->held[i].event_fd < 0)
      h = &g->held[i];
  if (h == NULL)
    {
      gate_respond (g, event_fd, false);
      return;
    }
  *h = (gate_held){ .q.fd = -1,
                    .event_fd = event_fd,
                    .what = what,
                    .where = xstrdup (where),
                    .key = xstrdup (key),
                    .approved = approved,
                    .started_ms = ar_now_ms () };
  if (denied_just_now (g, key, h->started_ms))
    {
      answer (g, h, AR_APPROVAL_DENY, "denied just before");
      return;
    }
  audit_held (g, "approval-request", h, detail, NULL, NULL);
  const ar_approval_request req = { .container = (char *) g->id,
                                    .what = (char *) what,
                                    .where = h->where,
                                    .detail = (char *) detail };
  cleanup_error ar_error_t *err = NULL;
  if (egress_question_start (&h->q, g->plan->approver, &req,
                             (unsigned) g->plan->ask_timeout, &err)
      < 0)
    decided (g, h, AR_APPROVAL_DENY, "approver gone");
}

char *
gate_cmdline (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/cmdline", (int) pid);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  char buf[CMDLINE_MAX + 1];
  ssize_t n = fd >= 0 ? read (fd, buf, CMDLINE_MAX) : -1;
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
      if (ev->mask & FAN_OPEN_EXEC_PERM)
        gate_exec_on_exec (g, ev);
      else if (ev->mask & FAN_OPEN_PERM)
        gate_secret_on_open (g, ev);
      else
        close (ev->fd);
    }
}

static _Noreturn void
serve (gate *g)
{
  for (;;)
    {
      struct pollfd fds[2 + GATE_MAX_QUESTIONS];
      fds[0] = (struct pollfd){ .fd = g->pidfd, .events = POLLIN };
      fds[1] = (struct pollfd){ .fd = g->fan_fd, .events = POLLIN };
      for (size_t i = 0; i < GATE_MAX_QUESTIONS; i++)
        fds[2 + i] = (struct pollfd){ .fd = g->held[i].q.fd, .events = POLLIN };
      if (poll (fds, 2 + GATE_MAX_QUESTIONS, 250) < 0 && errno != EINTR)
        _exit (1);
      if (fds[0].revents)
        _exit (0); /* the init is gone */
      if (fds[1].revents)
        read_events (g);
      long long now = ar_now_ms ();
      for (size_t i = 0; i < GATE_MAX_QUESTIONS; i++)
        {
          gate_held *h = &g->held[i];
          ar_approval_decision d;
          cleanup_free char *why = NULL;
          if (h->event_fd >= 0
              && (fds[2 + i].revents || now >= h->q.deadline_ms)
              && egress_question_poll (&h->q, now, &d, &why))
            decided (g, h, d, why);
        }
    }
}

int
ar_gate_start (const ar_agent_plan *plan, const char *id, pid_t init_pid,
               ar_error_t **err)
{
  bool secrets = gate_secret_wanted (plan), programs = gate_exec_wanted (plan);
  if (!secrets && !programs)
    return 0;
  /* Thread ids: an exec is judged by what that thread is calling. */
  cleanup_close int fan_fd = fanotify_init (
      FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_UNLIMITED_QUEUE | FAN_REPORT_TID,
      O_RDONLY);
  if (fan_fd < 0)
    return ar_error_set (err, errno, "%s: fanotify_init (it needs root)",
                         secrets ? "secrets.ask" : "programs.ask");
  gate g = { .plan = plan,
             .id = id,
             .init_pid = init_pid,
             .fan_fd = fan_fd,
             .secrets.max = MAX_APPROVED,
             .programs.max = MAX_APPROVED };
  if ((secrets && gate_secret_mark (&g, err) < 0)
      || (programs && gate_exec_mark (&g, err) < 0))
    return -1;
  cleanup_close int pidfd = ar_pidfd_open (init_pid);
  if (pidfd < 0)
    return ar_error_set (err, errno, "gate: pidfd_open");
  pid_t child = fork ();
  if (child < 0)
    return ar_error_set (err, errno, "gate: fork");
  if (child > 0)
    return 0;
  int keep[] = { fan_fd, pidfd };
  ar_daemon_enter (keep, 2);
  prctl (PR_SET_NAME, "agentrun-gate");
  g.pidfd = pidfd;
  for (size_t i = 0; i < GATE_MAX_QUESTIONS; i++)
    g.held[i] = (gate_held){ .q.fd = -1, .event_fd = -1 };
  serve (&g);
}
