/* SPDX-License-Identifier: Apache-2.0 */
/* The resolver's questions to the approver (mode ask): a name the
 * allow-list does not cover, with the lookups held until its answer; a
 * new flow the filter held, whose answer goes into the filter's sets.
 * One question per name or destination at a time (egress_ask.c). */
#include "config.h"
#include "egress_resolver.h"
#include "../src/util/cleanup.h"
#include "../src/util/clock.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

bool
egress_resolver_approved (const resolver *r, const char *name)
{
  return egress_approved_has (&r->approved, name);
}

static void
audit_ask (const resolver *r, const char *event, const name_ask *a,
           const char *decision, const char *why)
{
  if (r->cfg->audit_path == NULL)
    return;
  cleanup_free char *fields = egress_question_audit_fields (
      a->what, a->where, a->detail, decision, why, a->started_ms);
  egress_resolver_audit (r, event, fields);
}

static void
ask_decided (resolver *r, name_ask *a, ar_approval_decision d, const char *why);

static bool
hold (name_ask *a, const unsigned char *msg, size_t len, int tcp_fd,
      const struct sockaddr_storage *from, socklen_t from_len)
{
  if (a->n_held == ASK_WAITERS)
    return false;
  held_query *h = &a->held[a->n_held++];
  *h = (held_query){
    .msg = xmalloc (len), .len = len, .tcp_fd = tcp_fd, .from_len = from_len
  };
  memcpy (h->msg, msg, len);
  memcpy (&h->from, from, from_len);
  return true;
}

/* The question out about `where`, or NULL (and a free slot, if any, in
 * *free_slot). */
static name_ask *
asking_about (resolver *r, const char *what, const char *where,
              name_ask **free_slot)
{
  *free_slot = NULL;
  for (size_t i = 0; i < MAX_ASKS; i++)
    {
      name_ask *a = &r->asks[i];
      if (a->q.fd >= 0 && strcmp (a->what, what) == 0
          && strcmp (a->where, where) == 0)
        return a;
      if (a->q.fd < 0 && *free_slot == NULL)
        *free_slot = a;
    }
  return NULL;
}

/* Send the question in slot `a`; an approver out of reach decides at
 * once. */
static void
ask (resolver *r, name_ask *a, const char *what, const char *where,
     const char *detail)
{
  a->what = what;
  snprintf (a->where, sizeof a->where, "%s", where);
  a->detail = detail;
  a->started_ms = ar_now_ms ();
  audit_ask (r, "approval-request", a, NULL, NULL);
  const ar_approval_request req = { .container = (char *) r->cfg->id,
                                    .what = (char *) what,
                                    .where = a->where,
                                    .detail = (char *) detail };
  cleanup_error ar_error_t *err = NULL;
  if (egress_question_start (&a->q, r->cfg->approver, &req, r->cfg->ask_timeout,
                             &err)
      < 0)
    {
      egress_question_close (&a->q);
      ask_decided (r, a, AR_APPROVAL_DENY, "approver gone");
    }
}

/* The flag of `qtype` in a recent answer, or NULL for a type it does not
 * track. */
static bool *
answered_type (recent_answer *a, uint16_t qtype)
{
  return qtype == DNS_TYPE_A ? &a->a : qtype == DNS_TYPE_AAAA ? &a->aaaa : NULL;
}

static void
remember_answer (resolver *r, const name_ask *a, ar_approval_decision d)
{
  recent_answer *slot = &r->recent[r->next_recent++ % RECENT_ANSWERS];
  *slot = (recent_answer){ .decision = d,
                           .until_ms = ar_now_ms () + SAME_LOOKUP_MS };
  snprintf (slot->name, sizeof slot->name, "%s", a->where);
  for (size_t i = 0; i < a->n_held; i++)
    {
      dns_query q;
      cleanup_error ar_error_t *err = NULL;
      bool *type;
      if (dns_parse_query (a->held[i].msg, a->held[i].len, &q, &err) == 0
          && (type = answered_type (slot, q.qtype)))
        *type = true;
    }
}

/* The decision on `q`'s name that the other half of its lookup got. */
static bool
same_lookup_answered (resolver *r, const dns_query *q, ar_approval_decision *d)
{
  long long now = ar_now_ms ();
  for (size_t i = 0; i < RECENT_ANSWERS; i++)
    {
      recent_answer *a = &r->recent[i];
      bool *type = answered_type (a, q->qtype);
      if (a->until_ms > now && type && !*type && strcmp (a->name, q->name) == 0)
        {
          *type = true;
          *d = a->decision;
          return true;
        }
    }
  return false;
}

/* Hold the query with the question already out for its name, answer it
 * as the other half of its lookup was, or ask a new one. False when none
 * can be (too many at once): refused. */
bool
egress_resolver_ask_name (resolver *r, const dns_query *q,
                          const unsigned char *msg, size_t len, int tcp_fd,
                          const struct sockaddr_storage *from,
                          socklen_t from_len)
{
  ar_approval_decision d;
  if (same_lookup_answered (r, q, &d))
    {
      egress_resolver_forward (r, q, d != AR_APPROVAL_DENY, NULL, 0, msg, len,
                               tcp_fd, from, from_len);
      return true;
    }
  name_ask *free_slot;
  name_ask *a = asking_about (r, "dns", q->name, &free_slot);
  if (a)
    return hold (a, msg, len, tcp_fd, from, from_len);
  if (free_slot == NULL)
    return false;
  free_slot->n_held = 0;
  hold (free_slot, msg, len, tcp_fd, from, from_len);
  ask (r, free_slot, "dns", q->name, egress_qtype_name (q->qtype));
  return true;
}

/* A new flow the filter held: asked about once (its retries are logged
 * too while the question is out). */
void
egress_resolver_on_held_flow (const egress_refusal *flow, void *data)
{
  resolver *r = data;
  if (flow->port == 0)
    return;
  bool v6 = strchr (flow->addr, ':') != NULL;
  cleanup_free char *where
      = xasprintf (v6 ? "[%s]:%u" : "%s:%u", flow->addr, flow->port);
  name_ask *free_slot;
  if (asking_about (r, "connect", where, &free_slot) || free_slot == NULL)
    return;
  free_slot->n_held = 0;
  free_slot->flow = (egress_learnt){ .family = v6 ? AF_INET6 : AF_INET,
                                     .port = flow->port };
  inet_pton (free_slot->flow.family, flow->addr, free_slot->flow.addr);
  ask (r, free_slot, "connect", where, flow->proto_name);
}

/* A flow's decision, for the filter: an allow-once opens its destination
 * long enough for the held flow's retries, an allow for good (no
 * timeout); anything else refuses it at once for a while, so the flow
 * fails instead of waiting out its retries. */
static void
flow_decided (const resolver *r, name_ask *a, ar_approval_decision d)
{
  a->flow.ttl = d == AR_APPROVAL_ALLOW ? 0 : EGRESS_ASK_FLOW_SECONDS;
  cleanup_error ar_error_t *err = NULL;
  if ((d == AR_APPROVAL_DENY ? egress_nft_refuse (&a->flow, &err)
                             : egress_nft_learn (&a->flow, 1, &err))
      < 0)
    egress_resolver_audit (r, "error",
                           "\"what\":\"connect\",\"error\":\"filter\"");
}

/* What was held goes on (forwarded, or refused) as decided; an allow
 * lets the name through from now on. */
static void
ask_decided (resolver *r, name_ask *a, ar_approval_decision d, const char *why)
{
  audit_ask (r, "approval", a, ar_approval_decision_name (d), why);
  if (strcmp (a->what, "connect") == 0)
    {
      flow_decided (r, a, d);
      return;
    }
  if (d == AR_APPROVAL_ALLOW)
    egress_approved_add (&r->approved, a->where);
  remember_answer (r, a, d);
  for (size_t i = 0; i < a->n_held; i++)
    {
      held_query *h = &a->held[i];
      dns_query q;
      cleanup_error ar_error_t *err = NULL;
      if (h->tcp_fd != -2 && dns_parse_query (h->msg, h->len, &q, &err) == 0)
        egress_resolver_forward (r, &q, d != AR_APPROVAL_DENY, NULL, 0, h->msg,
                                 h->len, h->tcp_fd, &h->from, h->from_len);
      free (h->msg);
    }
  a->n_held = 0;
}

/* Questions answered, approvers gone, deadlines passed. */
void
egress_resolver_poll_asks (resolver *r, const struct pollfd *fds)
{
  long long now = ar_now_ms ();
  for (size_t i = 0; i < MAX_ASKS; i++)
    {
      name_ask *a = &r->asks[i];
      ar_approval_decision d;
      cleanup_free char *why = NULL;
      if (a->q.fd < 0 || (!fds[i].revents && now < a->q.deadline_ms)
          || !egress_question_poll (&a->q, now, &d, &why))
        continue;
      egress_question_close (&a->q);
      ask_decided (r, a, d, why);
    }
}

/* A TCP client that went takes its held lookups with it. */
void
egress_resolver_drop_held (resolver *r, int tcp_fd)
{
  for (size_t i = 0; i < MAX_ASKS; i++)
    for (size_t j = 0; j < r->asks[i].n_held; j++)
      if (r->asks[i].held[j].tcp_fd == tcp_fd)
        r->asks[i].held[j].tcp_fd = -2;
}

void
egress_resolver_asks_clear (resolver *r)
{
  for (size_t i = 0; i < MAX_ASKS; i++)
    {
      egress_question_close (&r->asks[i].q);
      for (size_t j = 0; j < r->asks[i].n_held; j++)
        free (r->asks[i].held[j].msg);
    }
  egress_approved_clear (&r->approved);
}
