/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the resolver (egress_resolver.c, egress_resolver_ask.c): its
 * state, and what its two halves call of each other. */
#ifndef AR_HOOKS_EGRESS_RESOLVER_H
#define AR_HOOKS_EGRESS_RESOLVER_H

#include "dns_wire.h"
#include "egress.h"
#include "egress_gate.h"

#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#define DNS_MAX 4096
#define MAX_PENDING 128
#define MAX_TCP 16
#define MAX_PORTS 8
#define PENDING_SECONDS 5
#define MAX_ASKS 16
#define ASK_WAITERS 8
#define MAX_APPROVED 1024

typedef struct
{
  bool in_use;
  uint16_t upstream_id, client_id;
  struct sockaddr_storage client;
  socklen_t client_len;
  int tcp_fd; /* -1: the client asked over UDP */
  time_t deadline;
  dns_query question; /* as sent upstream */
  uint16_t ports[MAX_PORTS];
  size_t n_ports;
} pending_query;

typedef struct
{
  int fd;
  size_t len;
  time_t deadline;
  unsigned char buf[DNS_MAX + 2];
} tcp_client;

/* A lookup held while the approver decides on its name. */
typedef struct
{
  unsigned char *msg; /* the client's query, as it came */
  size_t len;
  int tcp_fd; /* -1: UDP; -2: its TCP client went */
  struct sockaddr_storage from;
  socklen_t from_len;
} held_query;

/* One question out: about a name (the lookups held with it), or about
 * a new flow the filter held (`flow`: its destination). */
typedef struct
{
  egress_question q;                 /* q.fd < 0: a free slot */
  const char *what;                  /* "dns" or "connect" */
  char where[DNS_NAME_TEXT_MAX + 1]; /* the name, or ADDR:PORT */
  const char *detail;                /* the query type, or the protocol */
  long long started_ms;
  held_query held[ASK_WAITERS];
  size_t n_held;
  egress_learnt flow;
} name_ask;

/* A name's decision, for the other half of the same lookup: a client
 * asks for A and AAAA at once or one after the other, and the approver
 * is asked once (the question already out holds both; this, the second
 * when the first was answered). Another query of a type it covered is a
 * new lookup, asked again. */
#define RECENT_ANSWERS 16
#define SAME_LOOKUP_MS 2000
typedef struct
{
  char name[DNS_NAME_TEXT_MAX + 1];
  bool a, aaaa; /* the query types it answered */
  ar_approval_decision decision;
  long long until_ms;
} recent_answer;

/* Which name an address was learnt from, for the refusal log. */
#define NAME_CACHE 256
typedef struct
{
  char addr[INET6_ADDRSTRLEN];
  char name[DNS_NAME_TEXT_MAX + 1];
} learnt_name;

typedef struct
{
  const egress_resolver_config *cfg;
  int udp_fd, tcp_fd, upstream_fd, pidfd, nflog_fd;
  int held_flows_fd; /* mode ask: the filter's held flows (NFLOG) */
  int stop_fd;       /* a thread's: readable when delete wants it gone */
  int gate_fds[EGRESS_GATE_FDS]; /* the name gate's, until it runs */
  egress_gate *gate;             /* while it serves */
  pending_query pending[MAX_PENDING];
  tcp_client tcp[MAX_TCP];
  learnt_name names[NAME_CACHE];
  size_t next_name;
  name_ask asks[MAX_ASKS];
  recent_answer recent[RECENT_ANSWERS];
  size_t next_recent;
  egress_approved approved; /* names allowed for the container */
} resolver;

/* Shared by the halves. */
const char *egress_qtype_name (uint16_t t);
/* An audit line, rate-limited (at most AUDIT_PER_SECOND a second). */
void egress_resolver_audit (const resolver *r, const char *event,
                            const char *fields);
/* Forward an allowed query (its answer's addresses learnt for `ports`),
 * or refuse it. */
void egress_resolver_forward (resolver *r, const dns_query *q, bool allowed,
                              const uint16_t *ports, size_t n_ports,
                              const unsigned char *msg, size_t len, int tcp_fd,
                              const struct sockaddr_storage *from,
                              socklen_t from_len);

/* egress_resolver_ask.c */
/* Did the approver allow `name` for the container? */
bool egress_resolver_approved (const resolver *r, const char *name);
/* Hold the query with the question out about its name, or ask one; false
 * when neither can be (too many at once): the caller refuses it. */
bool egress_resolver_ask_name (resolver *r, const dns_query *q,
                               const unsigned char *msg, size_t len, int tcp_fd,
                               const struct sockaddr_storage *from,
                               socklen_t from_len);
/* A flow the filter held (its NFLOG group), for egress_nflog_read. */
void egress_resolver_on_held_flow (const egress_refusal *flow, void *data);
/* Questions answered or timed out; `fds` are the asks' pollfds. */
void egress_resolver_poll_asks (resolver *r, const struct pollfd *fds);
/* A TCP client went: its held lookups with it. */
void egress_resolver_drop_held (resolver *r, int tcp_fd);
void egress_resolver_asks_clear (resolver *r);

#endif
