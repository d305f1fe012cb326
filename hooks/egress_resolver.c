/* SPDX-License-Identifier: Apache-2.0 */
/* The per-container resolver: the only DNS the container can reach.
 *
 * It listens on 127.0.0.53:53 (UDP and TCP) INSIDE the container's netns
 * — those sockets are made while the hook is in that netns, and keep it —
 * and forwards to the host's upstream over a socket made in the host's
 * netns. Queries are read and checked by dns_wire.c; names the
 * allow-list does not cover, and names that are not plain letters,
 * digits, '-' and '_' labels, get NXDOMAIN without going upstream, so
 * nothing can be tunnelled through other names. What goes upstream is the
 * question re-encoded from the name that was checked, never the client's
 * bytes. For allowed names the A/AAAA records of an answer that matches
 * the question sent (and of the CNAME chain it starts) are added to the
 * container's allow sets for their TTL (clamped to [30 s, 1 h]) before
 * the answer goes back, so the connect() that follows is already allowed;
 * an answer that does not match is dropped.
 *
 * In mode ask, a name the allow-list does not cover is held while the
 * approver is asked (egress_ask.c; one question per name, the lookups
 * that come meanwhile wait with it): allow-once forwards what was held,
 * allow also lets the name through for the rest of the container's life,
 * and a deny, a timeout or an approver that cannot be reached answers
 * NXDOMAIN. The question and the decision go to the audit log.
 *
 * It is a daemon of its own (the hook exits), or, when the process that
 * sets it up stays until the container ends (agentrun run and sandbox in
 * the foreground), a thread of that process: no fork (whose page copying
 * costs more than everything else the egress set-up does). Either way it
 * holds a pidfd of the container's init and ends when that does; delete
 * stops it sooner. */
#include "config.h"
#include "dns_wire.h"
#include "egress.h"
#include "egress_resolver.h"
#include "../oci/json.h"
#include "../src/util/audit_log.h"
#include "../src/util/bytes.h"
#include "../src/util/cleanup.h"
#include "../src/util/clock.h"
#include "../src/util/daemon.h"
#include "../src/util/fs.h"
#include "../src/util/pidfd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

/* ---- DNS wire format (the rest is dns_wire.c) ------------------------ */

const char *
egress_qtype_name (uint16_t t)
{
  switch (t)
    {
    case DNS_TYPE_A:
      return "A";
    case DNS_TYPE_AAAA:
      return "AAAA";
    case DNS_TYPE_CNAME:
      return "CNAME";
    case 16:
      return "TXT";
    case 15:
      return "MX";
    case 65:
      return "HTTPS";
    default:
      return "other";
    }
}

/* ---- audit ------------------------------------------------------------ */

/* A container that floods lookups or refused connects must not fill the
 * host's disk through the audit log: at most AUDIT_PER_SECOND lines a
 * second, and the next line that gets through says how many were not
 * written ("dropped"). One resolver per process: static state is its. */
#define AUDIT_PER_SECOND 50

void
egress_resolver_audit (const resolver *r, const char *event, const char *fields)
{
  static time_t window;
  static unsigned used;
  static unsigned long dropped;
  time_t now = time (NULL);
  if (now != window)
    {
      window = now;
      used = 0;
    }
  if (used >= AUDIT_PER_SECOND)
    {
      dropped++;
      return;
    }
  used++;
  cleanup_free char *all
      = dropped ? xasprintf ("%s,\"dropped\":%lu", fields, dropped)
                : xstrdup (fields);
  dropped = 0;
  cleanup_error ar_error_t *err = NULL;
  ar_audit_append (r->cfg->audit_path, r->cfg->id, event, all, &err);
}

static void
audit (const resolver *r, const char *name, uint16_t qtype,
       const char *decision, const char *addresses_json)
{
  if (r->cfg->audit_path == NULL)
    return;
  cleanup_free char *quoted
      = oj_json_string (name, strlen (name), EGRESS_AUDIT_STRING_MAX);
  cleanup_free char *fields
      = xasprintf ("\"name\":%s,\"qtype\":\"%s\",\"decision\":\"%s\"%s%s",
                   quoted, egress_qtype_name (qtype), decision,
                   addresses_json ? ",\"addresses\":" : "",
                   addresses_json ? addresses_json : "");
  egress_resolver_audit (r, "egress-dns", fields);
}

/* ---- replies ---------------------------------------------------------- */

static void
send_to_client (const resolver *r, int tcp_fd, const struct sockaddr *to,
                socklen_t to_len, const unsigned char *msg, size_t len)
{
  if (tcp_fd < 0)
    {
      sendto (r->udp_fd, msg, len, MSG_DONTWAIT, to, to_len);
      return;
    }
  unsigned char prefix[2];
  ar_store_be16 (prefix, (uint16_t) len);
  if (ar_write_all (tcp_fd, prefix, 2) < 0
      || ar_write_all (tcp_fd, msg, len) < 0)
    return;
}

/* NXDOMAIN with the query's question (bytes 12..question_end), so the
 * client gives up at once; FORMERR when the question cannot be told. */
static void
refuse (const resolver *r, int tcp_fd, const struct sockaddr *to,
        socklen_t to_len, const unsigned char *query, size_t len,
        size_t question_end)
{
  unsigned char reply[DNS_MAX];
  size_t n = dns_encode_refusal (query, len, question_end, reply, sizeof reply);
  if (n)
    send_to_client (r, tcp_fd, to, to_len, reply, n);
}

/* ---- queries ---------------------------------------------------------- */

static pending_query *
free_slot (resolver *r)
{
  time_t now = time (NULL);
  for (size_t i = 0; i < MAX_PENDING; i++)
    if (!r->pending[i].in_use || r->pending[i].deadline < now)
      return &r->pending[i];
  return NULL;
}

static uint16_t
new_upstream_id (const resolver *r)
{
  for (;;)
    {
      uint16_t id;
      if (getrandom (&id, sizeof id, 0) != sizeof id)
        id = (uint16_t) rand ();
      bool taken = false;
      for (size_t i = 0; i < MAX_PENDING; i++)
        if (r->pending[i].in_use && r->pending[i].upstream_id == id)
          taken = true;
      if (!taken)
        return id;
    }
}

/* Forward an allowed query (its answer's addresses are learnt for
 * `ports`), or refuse it. */
void
egress_resolver_forward (resolver *r, const dns_query *q, bool allowed,
                         const uint16_t *ports, size_t n_ports,
                         const unsigned char *msg, size_t len, int tcp_fd,
                         const struct sockaddr_storage *from,
                         socklen_t from_len)
{
  const struct sockaddr *to = (const struct sockaddr *) from;
  pending_query *p = allowed && r->upstream_fd >= 0 ? free_slot (r) : NULL;
  if (p == NULL)
    {
      audit (r, q->name, q->qtype,
             allowed && r->upstream_fd < 0 ? "no upstream" : "refused", NULL);
      refuse (r, tcp_fd, to, from_len, msg, len, q->end);
      return;
    }
  *p = (pending_query){ .client_id = q->id,
                        .upstream_id = new_upstream_id (r),
                        .tcp_fd = tcp_fd,
                        .deadline = time (NULL) + PENDING_SECONDS,
                        .question = *q,
                        .n_ports = n_ports };
  memcpy (&p->client, from, from_len);
  p->client_len = from_len;
  if (n_ports)
    memcpy (p->ports, ports, n_ports * sizeof *ports);
  unsigned char out[DNS_MAX];
  size_t out_len = dns_encode_query (q, p->upstream_id, out, sizeof out);
  p->in_use
      = out_len > 0 && send (r->upstream_fd, out, out_len, MSG_DONTWAIT) >= 0;
}

static void
handle_query (resolver *r, const unsigned char *msg, size_t len, int tcp_fd,
              const struct sockaddr_storage *from, socklen_t from_len)
{
  uint16_t ports[MAX_PORTS];
  size_t n_ports = 0;
  if (len < DNS_HEADER_LEN || (msg[2] & 0x80))
    return; /* not a query */
  dns_query q;
  cleanup_error ar_error_t *err = NULL;
  if (dns_parse_query (msg, len, &q, &err) < 0)
    {
      if (q.end) /* a question, with '?' for the bytes that refused it */
        audit (r, q.name, q.qtype, "refused", NULL);
      refuse (r, tcp_fd, (const struct sockaddr *) from, from_len, msg, len,
              q.end);
      return;
    }
  bool allowed = r->cfg->forward_all
                 || egress_name_allowed (r->cfg->allow, q.name, ports,
                                         MAX_PORTS, &n_ports)
                 || egress_resolver_approved (r, q.name);
  if (!allowed && r->cfg->approver
      && egress_resolver_ask_name (r, &q, msg, len, tcp_fd, from, from_len))
    return;
  egress_resolver_forward (r, &q, allowed, ports, n_ports, msg, len, tcp_fd,
                           from, from_len);
}

/* ---- answers ---------------------------------------------------------- */

static uint32_t
clamp_ttl (uint32_t ttl)
{
  return ttl < EGRESS_TTL_MIN   ? EGRESS_TTL_MIN
         : ttl > EGRESS_TTL_MAX ? EGRESS_TTL_MAX
                                : ttl;
}

/* What one answer allows, and the same for the audit log. */
typedef struct
{
  egress_learnt *items;
  size_t len;
  char *addresses; /* JSON array */
} learnt;

static void
append (char **s, char *piece)
{
  char *joined = xasprintf ("%s%s", *s ? *s : "", piece);
  free (*s);
  free (piece);
  *s = joined;
}

static void
remember_name (resolver *r, const char *addr, const char *name)
{
  learnt_name *slot = &r->names[r->next_name++ % NAME_CACHE];
  snprintf (slot->addr, sizeof slot->addr, "%s", addr);
  /* `name` is a pending query's, inside *r too (never this slot). */
  size_t n = strnlen (name, sizeof slot->name - 1);
  memcpy (slot->name, name, n);
  slot->name[n] = '\0';
}

static const char *
name_of (const resolver *r, const char *addr)
{
  for (size_t i = 0; i < NAME_CACHE; i++)
    if (strcmp (r->names[i].addr, addr) == 0)
      return r->names[i].name;
  return NULL;
}

static void
learn (learnt *out, int family, const unsigned char *addr, uint16_t port,
       uint32_t ttl)
{
  out->items = xrealloc (out->items, (out->len + 1) * sizeof *out->items);
  egress_learnt *l = &out->items[out->len++];
  *l = (egress_learnt){
    .family = family, .port = port, .ttl = ttl, .by_name = true
  };
  memcpy (l->addr, addr, family == AF_INET ? 4 : 16);
}

static void
learn_address (resolver *r, const pending_query *p, const dns_address *a,
               learnt *out)
{
  int family = a->type == DNS_TYPE_A ? AF_INET : AF_INET6;
  uint32_t ttl = clamp_ttl (a->ttl);
  char addr[INET6_ADDRSTRLEN];
  inet_ntop (family, a->addr, addr, sizeof addr);
  remember_name (r, addr, p->question.name);
  if (p->n_ports == 0)
    learn (out, family, a->addr, 0, ttl);
  for (size_t i = 0; i < p->n_ports; i++)
    learn (out, family, a->addr, p->ports[i], ttl);
  append (&out->addresses,
          xasprintf ("%s\"%s\"", out->addresses ? "," : "[", addr));
}

static pending_query *
pending_for (resolver *r, uint16_t upstream_id)
{
  for (size_t i = 0; i < MAX_PENDING; i++)
    if (r->pending[i].in_use && r->pending[i].upstream_id == upstream_id)
      return &r->pending[i];
  return NULL;
}

/* An answer that is not to the question sent (id, name, type, class) is
 * dropped, and the query stays pending for the real one. */
static void
handle_answer (resolver *r, unsigned char *msg, size_t len)
{
  if (len < DNS_HEADER_LEN)
    return;
  pending_query *p = pending_for (r, ar_load_be16 (msg));
  dns_addresses found = { 0 };
  cleanup_error ar_error_t *err = NULL;
  if (p == NULL
      || dns_parse_answers (msg, len, &p->question, p->upstream_id, &found,
                            &err)
             < 0)
    return;
  p->in_use = false;
  learnt l = { 0 };
  for (size_t i = 0; !r->cfg->forward_all && i < found.len; i++)
    learn_address (r, p, &found.items[i], &l);
  dns_addresses_free (&found);
  if (l.len && egress_nft_learn (l.items, l.len, &err) < 0)
    {
      /* Without the set entries the answer is useless: say so. */
      audit (r, p->question.name, p->question.qtype, "error", NULL);
      free (l.items);
      free (l.addresses);
      return;
    }
  cleanup_free char *addresses
      = l.addresses ? xasprintf ("%s]", l.addresses) : NULL;
  audit (r, p->question.name, p->question.qtype, "allowed", addresses);
  ar_store_be16 (msg, p->client_id);
  send_to_client (r, p->tcp_fd, (struct sockaddr *) &p->client, p->client_len,
                  msg, len);
  free (l.items);
  free (l.addresses);
}

/* ---- refused connections --------------------------------------------- */

/* One egress-refused line: where to, by which protocol and port (0:
 * none), the name involved (NULL: none) and why (NULL: the filter's). */
static void
audit_refused (const resolver *r, const char *addr, const char *protocol,
               uint16_t port, const char *name, const char *why)
{
  if (r->cfg->audit_path == NULL)
    return;
  cleanup_free char *quoted
      = name ? oj_json_string (name, strlen (name), EGRESS_AUDIT_STRING_MAX)
             : NULL;
  cleanup_free char *port_field
      = port ? xasprintf (",\"port\":%u", port) : xstrdup ("");
  cleanup_free char *reason
      = why ? oj_json_string (why, strlen (why), EGRESS_AUDIT_STRING_MAX)
            : NULL;
  cleanup_free char *fields = xasprintf (
      "\"destination\":\"%s\",\"protocol\":\"%s\"%s%s%s%s%s", addr, protocol,
      port_field, quoted ? ",\"name\":" : "", quoted ? quoted : "",
      reason ? ",\"reason\":" : "", reason ? reason : "");
  egress_resolver_audit (r, "egress-refused", fields);
}

static void
on_refusal (const egress_refusal *refusal, void *data)
{
  const resolver *r = data;
  if (refusal->inbound)
    {
      cleanup_free char *fields = xasprintf (
          "\"source\":\"%s\",\"destination\":\"%s\",\"protocol\":\"%s\","
          "\"port\":%u",
          refusal->source, refusal->addr, refusal->proto_name, refusal->port);
      egress_resolver_audit (r, "ingress", fields);
      return;
    }
  audit_refused (r, refusal->addr, refusal->proto_name, refusal->port,
                 name_of (r, refusal->addr), NULL);
}

/* ---- the name gate ---------------------------------------------------- */

/* Whether a lookup of `name` answered `addr` (the approver's allow-once
 * opens that lookup's addresses, for that name). */
static bool
learnt_from (const resolver *r, const char *addr, const char *name)
{
  for (size_t i = 0; i < NAME_CACHE; i++)
    if (strcmp (r->names[i].addr, addr) == 0
        && strcmp (r->names[i].name, name) == 0)
      return true;
  return false;
}

/* A name the allow-list covers on `port` (an entry without a port covers
 * all), one the approver allowed, or the name whose lookup opened the
 * address. */
static bool
gate_allows (void *data, const char *name, const char *addr, uint16_t port)
{
  const resolver *r = data;
  uint16_t ports[MAX_PORTS];
  size_t n = 0;
  if (egress_name_allowed (r->cfg->allow, name, ports, MAX_PORTS, &n))
    for (size_t i = 0; i < n; i++)
      if (ports[i] == 0 || ports[i] == port)
        return true;
  return egress_resolver_approved (r, name) || learnt_from (r, addr, name);
}

static void
gate_refused (void *data, const char *addr, uint16_t port, const char *name,
              const char *why)
{
  audit_refused (data, addr, "tcp", port, name, why);
}

/* ---- TCP clients ------------------------------------------------------ */

static void
tcp_close (resolver *r, tcp_client *c)
{
  for (size_t i = 0; i < MAX_PENDING; i++)
    if (r->pending[i].in_use && r->pending[i].tcp_fd == c->fd)
      r->pending[i].in_use = false;
  egress_resolver_drop_held (r, c->fd);
  ar_closep (&c->fd);
  c->len = 0;
}

static void
tcp_accept (resolver *r)
{
  int fd = accept4 (r->tcp_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0)
    return;
  for (size_t i = 0; i < MAX_TCP; i++)
    if (r->tcp[i].fd < 0)
      {
        r->tcp[i] = (tcp_client){ .fd = fd,
                                  .deadline = time (NULL) + PENDING_SECONDS };
        return;
      }
  close (fd);
}

static void
tcp_read (resolver *r, tcp_client *c)
{
  ssize_t n = read (c->fd, c->buf + c->len, sizeof c->buf - c->len);
  if (n <= 0)
    {
      if (n == 0 || (errno != EAGAIN && errno != EINTR))
        tcp_close (r, c);
      return;
    }
  c->len += (size_t) n;
  if (c->len < 2)
    return;
  size_t want = ar_load_be16 (c->buf);
  if (want > DNS_MAX || want < DNS_HEADER_LEN)
    {
      tcp_close (r, c);
      return;
    }
  if (c->len < want + 2)
    return;
  struct sockaddr_storage none = { 0 };
  handle_query (r, c->buf + 2, want, c->fd, &none, sizeof none);
  c->len = 0;
  c->deadline = time (NULL) + PENDING_SECONDS
                + (r->cfg->approver ? (time_t) r->cfg->ask_timeout : 0);
}

/* ---- the loop --------------------------------------------------------- */

static void serve_all (resolver *r);

/* The gate lives while the loop does, in the thread or daemon that runs
 * it; its queue was bound in the container's netns. */
static void
serve (resolver *r)
{
  if (r->gate_fds[0] >= 0)
    r->gate = egress_gate_new (r->gate_fds, r->cfg->gate_queue, gate_allows,
                               gate_refused, r);
  for (int i = 0; i < EGRESS_GATE_FDS; i++)
    r->gate_fds[i] = -1; /* the gate's */
  serve_all (r);
  egress_gate_free (r->gate);
  r->gate = NULL;
}

static void
serve_all (resolver *r)
{
  for (;;)
    {
      struct pollfd fds[8 + MAX_TCP + MAX_ASKS];
      size_t n = 0;
      fds[n++] = (struct pollfd){ .fd = r->pidfd, .events = POLLIN };
      fds[n++] = (struct pollfd){ .fd = r->udp_fd, .events = POLLIN };
      fds[n++] = (struct pollfd){ .fd = r->tcp_fd, .events = POLLIN };
      fds[n++] = (struct pollfd){ .fd = r->upstream_fd, .events = POLLIN };
      for (size_t i = 0; i < MAX_TCP; i++)
        fds[n++] = (struct pollfd){ .fd = r->tcp[i].fd, .events = POLLIN };
      fds[n++] = (struct pollfd){ .fd = r->nflog_fd, .events = POLLIN };
      fds[n++] = (struct pollfd){ .fd = r->stop_fd, .events = POLLIN };
      for (size_t i = 0; i < MAX_ASKS; i++)
        fds[n++] = (struct pollfd){ .fd = r->asks[i].q.fd, .events = POLLIN };
      fds[n++] = (struct pollfd){ .fd = r->held_flows_fd, .events = POLLIN };
      fds[n++] = (struct pollfd){ .fd = r->gate ? egress_gate_fd (r->gate) : -1,
                                  .events = POLLIN };
      if (poll (fds, n, r->cfg->approver ? 250 : 1000) < 0 && errno != EINTR)
        return;
      /* Its timeouts too, on every turn. */
      if (r->gate)
        egress_gate_run (r->gate);
      if (fds[5 + MAX_TCP].revents)
        return;
      if (fds[0].revents)
        {
          /* The init is gone. What it was refused is already queued: the
           * kernel logs a packet before the connect() it fails returns. */
          for (int i = 0; i < 64 && r->nflog_fd >= 0; i++)
            if (!egress_nflog_read (r->nflog_fd, on_refusal, r))
              break;
          return;
        }
      unsigned char msg[DNS_MAX];
      struct sockaddr_storage from;
      socklen_t from_len = sizeof from;
      ssize_t len;
      if (fds[1].revents
          && (len = recvfrom (r->udp_fd, msg, sizeof msg, MSG_DONTWAIT,
                              (struct sockaddr *) &from, &from_len))
                 > 0)
        handle_query (r, msg, (size_t) len, -1, &from, from_len);
      if (fds[2].revents)
        tcp_accept (r);
      if (fds[3].revents
          && (len = recv (r->upstream_fd, msg, sizeof msg, MSG_DONTWAIT)) > 0)
        handle_answer (r, msg, (size_t) len);
      if (fds[4 + MAX_TCP].revents)
        egress_nflog_read (r->nflog_fd, on_refusal, r);
      if (fds[6 + MAX_TCP + MAX_ASKS].revents)
        egress_nflog_read (r->held_flows_fd, egress_resolver_on_held_flow, r);
      egress_resolver_poll_asks (r, &fds[6 + MAX_TCP]);
      time_t now = time (NULL);
      for (size_t i = 0; i < MAX_TCP; i++)
        if (r->tcp[i].fd >= 0 && fds[4 + i].revents)
          tcp_read (r, &r->tcp[i]);
        else if (r->tcp[i].fd >= 0 && r->tcp[i].deadline < now)
          tcp_close (r, &r->tcp[i]);
    }
}

/* ---- start-up --------------------------------------------------------- */

char *
egress_host_nameserver (void)
{
  cleanup_file FILE *f = fopen ("/etc/resolv.conf", "re");
  char line[512], addr[256];
  while (f && fgets (line, sizeof line, f))
    if (sscanf (line, " nameserver %255s", addr) == 1)
      return xstrdup (addr);
  return xstrdup ("127.0.0.1");
}

/* "1.2.3.4", "1.2.3.4:5353", "::1", "[::1]:5353" → a connected UDP socket. */
static int
upstream_socket (const char *spec, int *fd, ar_error_t **err)
{
  cleanup_free char *host = NULL;
  const char *port = "53";
  const char *colon = strrchr (spec, ':');
  if (spec[0] == '[' && strchr (spec, ']'))
    {
      const char *close = strchr (spec, ']');
      host = xstrndup (spec + 1, (size_t) (close - spec - 1));
      if (close[1] == ':')
        port = close + 2;
    }
  else if (colon && strchr (spec, ':') == colon)
    {
      host = xstrndup (spec, (size_t) (colon - spec));
      port = colon + 1;
    }
  else
    host = xstrdup (spec);
  struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
                            .ai_socktype = SOCK_DGRAM };
  struct addrinfo *ai = NULL;
  if (getaddrinfo (host, port, &hints, &ai) != 0)
    return ar_error_set (
        err, 0, "upstream resolver `%s`: want an address[:port]", spec);
  *fd = socket (ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int r = *fd < 0 || connect (*fd, ai->ai_addr, ai->ai_addrlen) < 0 ? -1 : 0;
  int saved = errno;
  freeaddrinfo (ai);
  if (r < 0)
    return ar_error_set (err, saved, "upstream resolver `%s`", spec);
  return 0;
}

/* An upstream the host has no route to (an offline host, a daemon's
 * netns of its own) is no reason to refuse the container: its lookups get
 * NXDOMAIN, audited as "no upstream", and a warning says why. */
static int
upstream_usable (const char *spec, int *fd, ar_error_t **err)
{
  cleanup_error ar_error_t *e = NULL;
  if (upstream_socket (spec, fd, &e) == 0)
    return 0;
  int why = e->errno_value;
  if (why != ENETUNREACH && why != EHOSTUNREACH)
    return ar_error_pass (err, steal_pointer (&e));
  fprintf (stderr, "agentrun: warning: egress: %s: names will not resolve\n",
           ar_error_text (e));
  ar_closep (fd);
  return 0;
}

static int
listening_socket (int type, int *fd, ar_error_t **err)
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (53) };
  inet_pton (AF_INET, EGRESS_RESOLVER_ADDR, &addr.sin_addr);
  *fd = socket (AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1;
  /* Not for UDP: with SO_REUSEADDR on both, a process in the container
   * could bind the same address and take its own lookups from us. */
  if (*fd < 0
      || (type == SOCK_STREAM
          && setsockopt (*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
      || bind (*fd, (struct sockaddr *) &addr, sizeof addr) < 0
      || (type == SOCK_STREAM && listen (*fd, 16) < 0))
    return ar_error_set (err, errno, "resolver: listen on %s:53/%s",
                         EGRESS_RESOLVER_ADDR,
                         type == SOCK_STREAM ? "tcp" : "udp");
  return 0;
}

static _Noreturn void
daemon_main (resolver *r, int netns_fd)
{
  int keep[]
      = { r->udp_fd,      r->tcp_fd,     r->upstream_fd,   r->pidfd,
          r->nflog_fd,    netns_fd,      r->held_flows_fd, r->gate_fds[0],
          r->gate_fds[1], r->gate_fds[2] };
  /* Forked from the runtime too (it runs the hook in-process): none of
   * its signal handling; a TCP client that hangs up must not end us. */
  ar_daemon_enter (keep, sizeof keep / sizeof *keep);
  prctl (PR_SET_NAME, AR_EGRESS_RESOLVER_NAME); /* ps and pgrep -x show it */
  /* nftables talks to the netns it runs in: the container's. */
  cleanup_error ar_error_t *err = NULL;
  if (egress_enter_netns (netns_fd, "container's", &err) < 0)
    _exit (1);
  close (netns_fd);
  for (size_t i = 0; i < MAX_TCP; i++)
    r->tcp[i].fd = -1;
  serve (r);
  _exit (0);
}

static int
write_pid_file (const char *state_dir, pid_t pid, ar_error_t **err)
{
  cleanup_free char *path = xasprintf ("%s/resolver.pid", state_dir);
  cleanup_free char *text
      = xasprintf ("%d %llu\n", (int) pid, ar_pid_start_time (pid));
  return ar_write_file_atomic_at (AT_FDCWD, path, text, strlen (text), 0600,
                                  err);
}

/* One fork: the hook (or the runtime's create) exits soon after, so the
 * daemon ends up init's child; nobody waits for it but by its pid file. */
static int
spawn_daemon (resolver *r, int netns_fd, const char *state_dir,
              ar_error_t **err)
{
  pid_t daemon = fork ();
  if (daemon < 0)
    return ar_error_set (err, errno, "fork the resolver");
  if (daemon == 0)
    daemon_main (r, netns_fd);
  return write_pid_file (state_dir, daemon, err);
}

/* ---- as a thread ------------------------------------------------------ */

/* What the thread reads, owned by it: the hook's options are gone once
 * the create returns. */
typedef struct
{
  egress_resolver_config cfg;
  egress_allowlist allow;
} owned_config;

static owned_config *
config_copy (const egress_resolver_config *cfg)
{
  owned_config *c = xcalloc (1, sizeof *c);
  c->cfg = *cfg;
  c->cfg.id = xstrdup (cfg->id);
  c->cfg.audit_path = cfg->audit_path ? xstrdup (cfg->audit_path) : NULL;
  c->cfg.approver = cfg->approver ? xstrdup (cfg->approver) : NULL;
  c->cfg.upstream = c->cfg.state_dir = NULL; /* used only at start-up */
  c->allow.len = cfg->allow->len;
  c->allow.items = xcalloc (c->allow.len + 1, sizeof *c->allow.items);
  for (size_t i = 0; i < c->allow.len; i++)
    {
      c->allow.items[i] = cfg->allow->items[i];
      c->allow.items[i].text = xstrdup (cfg->allow->items[i].text);
    }
  c->cfg.allow = &c->allow;
  return c;
}

static void
config_free (owned_config *c)
{
  free ((char *) c->cfg.id);
  free ((char *) c->cfg.audit_path);
  free ((char *) c->cfg.approver);
  egress_allowlist_free (&c->allow);
  free (c);
}

typedef struct resolver_thread
{
  struct resolver_thread *next;
  pthread_t thread;
  resolver *r;
  owned_config *cfg;
  int netns_fd;
} resolver_thread;

/* This process's resolver threads; only its main thread touches the list. */
static resolver_thread *threads;

static void
close_resolver (resolver *r)
{
  int *fds[]
      = { &r->udp_fd,      &r->tcp_fd,     &r->upstream_fd,   &r->pidfd,
          &r->nflog_fd,    &r->stop_fd,    &r->held_flows_fd, &r->gate_fds[0],
          &r->gate_fds[1], &r->gate_fds[2] };
  for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
    ar_closep (fds[i]);
  for (size_t i = 0; i < MAX_TCP; i++)
    if (r->tcp[i].fd >= 0)
      ar_closep (&r->tcp[i].fd);
  egress_resolver_asks_clear (r);
  free (r);
}

static void *
thread_main (void *arg)
{
  resolver_thread *t = arg;
  cleanup_error ar_error_t *err = NULL;
  /* A thread's netns is its own: the process stays in the host's. */
  if (egress_enter_netns (t->netns_fd, "container's", &err) == 0)
    serve (t->r);
  return NULL;
}

static int
spawn_thread (resolver *r, const egress_resolver_config *cfg, ar_error_t **err)
{
  resolver_thread *t = xcalloc (1, sizeof *t);
  t->r = r;
  t->cfg = config_copy (cfg);
  r->cfg = &t->cfg->cfg;
  t->netns_fd = fcntl (cfg->container_netns_fd, F_DUPFD_CLOEXEC, 0);
  r->stop_fd = eventfd (0, EFD_CLOEXEC);
  /* Signals are the main thread's business (the foreground forwards
   * them to the container): the thread starts with all of them blocked. */
  sigset_t all, old;
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  int e = t->netns_fd < 0 || r->stop_fd < 0
              ? errno
              : pthread_create (&t->thread, NULL, thread_main, t);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (e != 0)
    {
      ar_closep (&t->netns_fd);
      config_free (t->cfg);
      free (t);
      return ar_error_set (err, e, "start the resolver thread");
    }
  t->next = threads;
  threads = t;
  return 0;
}

void
egress_resolver_stop_thread (const char *id)
{
  for (resolver_thread **p = &threads; *p; p = &(*p)->next)
    {
      resolver_thread *t = *p;
      if (strcmp (t->cfg->cfg.id, id) != 0)
        continue;
      eventfd_write (t->r->stop_fd, 1);
      pthread_join (t->thread, NULL);
      *p = t->next;
      close_resolver (t->r);
      ar_closep (&t->netns_fd);
      config_free (t->cfg);
      free (t);
      return;
    }
}

/* ---- start ------------------------------------------------------------ */

/* The listening sockets belong to the container's netns: opened there. */
static int
open_sockets_in_netns (void *arg, ar_error_t **err)
{
  resolver *r = arg;
  if (listening_socket (SOCK_DGRAM, &r->udp_fd, err) < 0
      || listening_socket (SOCK_STREAM, &r->tcp_fd, err) < 0)
    return -1;
  if (r->cfg->approver
      && egress_nflog_open (EGRESS_NFLOG_ASK_GROUP, &r->held_flows_fd, err) < 0)
    return -1;
  if (r->cfg->log_refusals && r->cfg->audit_path)
    return egress_nflog_open (EGRESS_NFLOG_GROUP, &r->nflog_fd, err);
  return 0;
}

int
egress_resolver_start (const egress_resolver_config *cfg, ar_error_t **err)
{
  /* On the heap: the pending queries, TCP buffers and name cache are
   * ~190 KiB, and a thread keeps them. */
  resolver *r = xcalloc (1, sizeof *r);
  *r = (resolver){ .cfg = cfg,
                   .udp_fd = -1,
                   .tcp_fd = -1,
                   .upstream_fd = -1,
                   .pidfd = -1,
                   .nflog_fd = -1,
                   .held_flows_fd = -1,
                   .stop_fd = -1,
                   .approved.max = MAX_APPROVED };
  memcpy (r->gate_fds, cfg->gate_fds, sizeof r->gate_fds);
  for (size_t i = 0; i < MAX_TCP; i++)
    r->tcp[i].fd = -1;
  for (size_t i = 0; i < MAX_ASKS; i++)
    r->asks[i].q.fd = -1;
  cleanup_free char *upstream
      = cfg->upstream ? xstrdup (cfg->upstream) : egress_host_nameserver ();
  int ret = -1;
  if ((r->pidfd = ar_pidfd_open (cfg->container_pid)) < 0)
    ret = ar_error_set (err, errno, "pidfd_open of the container's init");
  else if (upstream_usable (upstream, &r->upstream_fd, err) == 0
           && egress_in_netns (cfg->container_netns_fd, open_sockets_in_netns,
                               r, err)
                  == 0)
    ret = cfg->in_thread
              ? spawn_thread (r, cfg, err)
              : spawn_daemon (r, cfg->container_netns_fd, cfg->state_dir, err);
  /* The daemon has its own copies; a thread keeps these. */
  if (ret < 0 || !cfg->in_thread)
    close_resolver (r);
  return ret;
}
