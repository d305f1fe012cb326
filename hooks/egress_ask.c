/* SPDX-License-Identifier: Apache-2.0 */
/* One question to the approver (oci/approval.h): a non-blocking
 * connection, the request written at once (one short line fits the
 * socket's buffer), the answer read as it comes, a deadline. Whatever is
 * not a well-formed answer in time is a deny, and says why. */
#include "config.h"
#include "egress.h"
#include "../oci/json.h"
#include "../src/util/cleanup.h"
#include "../src/util/clock.h"
#include "../src/util/fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
egress_question_start (egress_question *q, const char *approver,
                       const ar_approval_request *req, unsigned timeout_s,
                       ar_error_t **err)
{
  *q = (egress_question){ .fd = -1,
                          .deadline_ms = ar_now_ms () + timeout_s * 1000LL };
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (approver) >= sizeof addr.sun_path)
    return ar_error_set (err, ENAMETOOLONG, "approver `%s`", approver);
  strcpy (addr.sun_path, approver);
  cleanup_close int fd
      = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    return ar_error_set (err, errno, "approver `%s`", approver);
  cleanup_free char *line = ar_approval_request_encode (req);
  size_t len = strlen (line);
  if (send (fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t) len)
    return ar_error_set (err, errno, "approver `%s`: send", approver);
  q->fd = steal_fd (&fd);
  return 0;
}

/* The answer so far, when it holds a whole line. */
static bool
answered (egress_question *q, ar_approval_decision *d, char **why)
{
  char *nl = memchr (q->buf, '\n', q->len);
  if (nl == NULL)
    return false;
  cleanup_error ar_error_t *err = NULL;
  if (ar_approval_reply_decode (q->buf, (size_t) (nl - q->buf) + 1, d, &err)
      < 0)
    {
      *d = AR_APPROVAL_DENY;
      *why = xasprintf ("bad answer: %s", ar_error_text (err));
    }
  else
    *why = xstrdup ("approver");
  return true;
}

bool
egress_question_poll (egress_question *q, long long now_ms,
                      ar_approval_decision *d, char **why)
{
  for (;;)
    {
      if (answered (q, d, why))
        return true;
      if (q->len == sizeof q->buf)
        {
          *d = AR_APPROVAL_DENY;
          *why = xstrdup ("bad answer: longer than a line may be");
          return true;
        }
      ssize_t n
          = recv (q->fd, q->buf + q->len, sizeof q->buf - q->len, MSG_DONTWAIT);
      if (n > 0)
        {
          q->len += (size_t) n;
          continue;
        }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)
          && now_ms < q->deadline_ms)
        return false;
      *d = AR_APPROVAL_DENY;
      *why = xstrdup (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)
                          ? "approver gone"
                          : "timeout");
      return true;
    }
}

void
egress_question_close (egress_question *q)
{
  ar_closep (&q->fd);
  q->len = 0;
}

char *
egress_question_audit_fields (const char *what, const char *where,
                              const char *detail, const char *decision,
                              const char *why, long long started_ms)
{
  cleanup_free char *where_json
      = oj_json_string (where, strlen (where), EGRESS_AUDIT_STRING_MAX);
  cleanup_free char *detail_json
      = detail
            ? oj_json_string (detail, strlen (detail), EGRESS_AUDIT_STRING_MAX)
            : NULL;
  cleanup_free char *outcome
      = decision ? xasprintf (",\"decision\":\"%s\",\"why\":\"%s\",\"ms\":%lld",
                              decision, why, ar_now_ms () - started_ms)
                 : xstrdup ("");
  return xasprintf ("\"what\":\"%s\",\"where\":%s%s%s%s", what, where_json,
                    detail_json ? ",\"detail\":" : "",
                    detail_json ? detail_json : "", outcome);
}

bool
egress_approved_has (const egress_approved *a, const char *where)
{
  for (size_t i = 0; i < a->len; i++)
    if (strcmp (a->items[i], where) == 0)
      return true;
  return false;
}

void
egress_approved_add (egress_approved *a, const char *where)
{
  if (a->len == a->max || egress_approved_has (a, where))
    return;
  a->items = xrealloc (a->items, (a->len + 1) * sizeof *a->items);
  a->items[a->len++] = xstrdup (where);
}

void
egress_approved_clear (egress_approved *a)
{
  for (size_t i = 0; i < a->len; i++)
    free (a->items[i]);
  free (a->items);
  a->items = NULL;
  a->len = 0;
}
