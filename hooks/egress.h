/* SPDX-License-Identifier: Apache-2.0 */
/* agentrun-egress: the egress controller, an OCI hook any runtime can
 * register (createRuntime to set up, poststop to tear down).
 *
 *   create: the container's netns gets lo up and, unless the mode is none
 *           in a fresh netns, a filter table "inet agentrun"; a fresh
 *           netns also gets a veth to the host, a /30 lease from the pool
 *           and its elements in the shared host table "inet
 *           agentrun-egress" (NAT, forward); domain entries start a
 *           resolver on 127.0.0.53 inside the netns.
 *   delete: remove its host table elements and veth, stop the resolver,
 *           release the lease, remove the state dir.
 *
 * Everything the hook made is named after the container id's hash or
 * recorded under the state dir, so delete (or the reclaim of a dead
 * container's lease at a later create) finds it without the container. */
#ifndef AR_HOOKS_EGRESS_H
#define AR_HOOKS_EGRESS_H

#include "../oci/approval.h"
#include "../src/util/error.h"
#include "egress_gate.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define EGRESS_RUN_DIR "/run/agentrun-egress"
#define EGRESS_LEASE_DIR EGRESS_RUN_DIR "/leases"
#define EGRESS_CONTAINER_TABLE "agentrun"
#define EGRESS_HOST_TABLE "agentrun-egress"
/* The resolver's address inside the container: on lo, so it is the same
 * for every container and every kind of netns (fresh or an engine's). */
#define EGRESS_RESOLVER_ADDR "127.0.0.53"
#define EGRESS_RESOLV_CONF "nameserver " EGRESS_RESOLVER_ADDR "\n"
/* The resolver daemon's process name (comm), whoever forked it. */
#define AR_EGRESS_RESOLVER_NAME "agentrun-egress"
/* TTL bounds for addresses learnt from DNS answers. */
#define EGRESS_TTL_MIN 30
#define EGRESS_TTL_MAX 3600
/* Mode ask: how long a lookup waits for the approver by default, and at
 * most (a resolver client told to wait longer waits 30 s: glibc's cap). */
#define EGRESS_ASK_TIMEOUT_DEFAULT 25
#define EGRESS_ASK_TIMEOUT_MAX 300
/* Mode ask: how long an allow-once opens a held flow's destination (its
 * retried first packets get through), and a refusal closes it. */
#define EGRESS_ASK_FLOW_SECONDS 30

typedef enum
{
  EGRESS_MODE_NONE,
  EGRESS_MODE_ALLOWLIST,
  EGRESS_MODE_OPEN,
} egress_mode;

typedef enum
{
  ENTRY_NET4, /* address or CIDR */
  ENTRY_NET6,
  ENTRY_DOMAIN,   /* exactly this name */
  ENTRY_WILDCARD, /* any name below `name` (not `name` itself) */
} egress_entry_kind;

typedef struct
{
  egress_entry_kind kind;
  char *text;    /* normalised: "10.0.0.0/8", "fd00::1", "pypi.org" */
  uint16_t port; /* 0: every port */
} egress_entry;

typedef struct
{
  egress_entry *items;
  size_t len;
} egress_allowlist;

/* A /30 from the pool: host side .1, container side .2 (offsets). */
typedef struct
{
  unsigned index;
  struct in_addr network, host, container;
} egress_lease;

/* ---- egress_entries.c ---- */
/* One entry, checked in full; the error reads "WHAT `TEXT`: why". */
int egress_entry_parse (const char *what, const char *text, egress_entry *out,
                        ar_error_t **err);
void egress_allowlist_free (egress_allowlist *list);
/* An inbound port: "PORT", "PORT/tcp" or "PORT/udp". */
typedef struct
{
  uint16_t port;
  uint8_t proto; /* IPPROTO_TCP or IPPROTO_UDP */
} egress_ingress;
int egress_ingress_parse (const char *what, const char *text,
                          egress_ingress *out, ar_error_t **err);
bool egress_allowlist_has_domains (const egress_allowlist *list);
/* An address or network, in network byte order. */
typedef struct
{
  int family;
  uint8_t addr[16];
  unsigned prefix;
} egress_network;
/* "ADDR" or "ADDR/PREFIX" (an entry's normalised text); false when it is
 * no address. */
bool egress_network_parse (const char *text, egress_network *n);
/* Does `outer` open every destination `inner` opens? (A name under a
 * wildcard, a network inside a network, either on outer's port.) */
bool egress_entry_covers (const egress_entry *outer, const egress_entry *inner);
/* The entries a DNS name falls under (its ports); false if none. Each
 * port goes to *ports (0: every port), at most `max`. */
bool egress_name_allowed (const egress_allowlist *list, const char *name,
                          uint16_t *ports, size_t max, size_t *n_ports);

/* ---- egress_net.c: namespaces and rtnetlink ---- */
/* "ar" + 8 hex digits of sha256(id): the host veth and the host table. */
void egress_id_hash (const char *id, char out[9]);
int egress_open_netns (pid_t pid, int *fd, ar_error_t **err);
int egress_enter_netns (int fd, const char *what, ar_error_t **err);

/* Without root: link the container's netns to the host's through pasta
 * (its pid file in `dir`), and stop it again. */
int
egress_pasta_connect (pid_t container_pid, const char *dir, ar_error_t **err);
void egress_pasta_stop (const char *dir);

/* Run fn(arg, err) in the network namespace `netns_fd` on a thread of its
 * own (a thread's netns is its own) and wait for it: the caller never
 * leaves its namespace, so it never needs to setns back into one it may
 * not enter (the host's, from the user namespace of a sandbox without
 * root). fn's result is returned, its error passed on. */
typedef int (*egress_netns_fn) (void *arg, ar_error_t **err);
int
egress_in_netns (int netns_fd, egress_netns_fn fn, void *arg, ar_error_t **err);
int egress_link_up (const char *ifname, ar_error_t **err);
/* Interfaces other than lo in the current netns: an engine made it. */
bool egress_netns_has_links (void);
/* The addresses of the current netns's interfaces but loopback's and
 * link-local ones, as text (malloc'd, NULL-terminated; *n of them). */
char **egress_local_addresses (size_t *n);
/* IPv4 default gateway of the current netns; false when there is none. */
bool egress_default_gateway (struct in_addr *gw);
int
egress_veth_create (const char *host_name, int peer_netns_fd, ar_error_t **err);
int egress_link_delete (const char *ifname);
int egress_addr_add (const char *ifname, struct in_addr addr, unsigned prefix,
                     ar_error_t **err);
int
egress_route_default (const char *ifname, struct in_addr gw, ar_error_t **err);

/* ---- egress_nft.c: the rules, over netlink ---- */
typedef struct
{
  egress_mode mode;
  const egress_allowlist *allow;
  bool has_host_addr;
  struct in_addr host_addr; /* the host side of the veth */
  bool has_gateway;
  struct in_addr gateway; /* an engine's bridge gateway */
  /* Without root (pasta): the host's own addresses, which pasta would
   * reach through the user's sockets ("10.0.0.5", "fd00::5"). */
  char **host_addrs;
  size_t n_host_addrs;
  int nflog_group; /* -1: no logging of refusals */
  bool ask;        /* mode ask: new flows outside the allow-list are held */
  /* The netns is new: no older table to replace. Replacing one puts it
   * on the kernel's destroy list, and closing the socket then waits for
   * an RCU grace period (~10 ms here). */
  bool fresh_netns;
  /* Inbound ports whose new connections are let in. */
  const egress_ingress *ingress;
  size_t n_ingress;
  /* The name gate (egress_gate.c): TCP to an address a name opened
   * passes only as its verdicts on queue `gate_queue` say. */
  bool gate;
  uint16_t gate_queue;
} egress_filter;
/* The container's table, in the current netns (replacing an older one). */
int egress_nft_container_filter (const egress_filter *f, ar_error_t **err);
/* An address allowed for `ttl` seconds (port 0: all): opened by a name
 * (a DNS answer), its TCP connections pass the name gate; else (a flow
 * the approver allowed) it is open as an address entry is. */
typedef struct
{
  int family;
  uint8_t addr[16];
  uint16_t port;
  uint32_t ttl;
  bool by_name;
} egress_learnt;
int egress_nft_learn (const egress_learnt *items, size_t n, ar_error_t **err);
/* Mode ask: refuse `item`'s address and port at once, for its ttl. */
int egress_nft_refuse (const egress_learnt *item, ar_error_t **err);
/* A container's veth `ar<hash>` and its /30 in the shared host table
 * (made when missing); detach with `lease` NULL removes the veth only. */
int egress_nft_host_attach (const char *hash, const egress_lease *lease,
                            ar_error_t **err);
void egress_nft_host_detach (const char *hash, const egress_lease *lease);

/* ---- egress_firewall.c: the host's own firewall ---- */
/* Where iptables' FORWARD chain drops by default (Docker's), accept rules
 * for agentrun's veths in it, unless they are there already; and away
 * again (when the last lease goes). */
int egress_firewall_open (ar_error_t **err);
void egress_firewall_close (void);

/* ---- egress_lease.c ---- */
/* Take a /30 (reclaiming dead containers' first) and put it and the
 * veth name `ar<hash>` into the host table, all under the lease lock. */
int egress_lease_take (const char *pool, const char *id, pid_t pid,
                       const char *hash, egress_lease *out, ar_error_t **err);
void egress_lease_release (const char *id, unsigned index);
int egress_pool_parse (const char *pool, struct in_addr *base,
                       unsigned *n_slots, ar_error_t **err);
/* Undo what a container's create left on the host (host table elements,
 * veth, resolver, state dir) by id: delete and the reclaim of stale
 * leases. `state_dir` NULL: the default one. `index` is its lease, or
 * -1: read it from the state dir. Returns the lease it undid (-1: none). */
long egress_cleanup_host (const char *pool, const char *id,
                          const char *state_dir, long index);

/* ---- egress_nflog.c: refused connections, from the filter ---- */
#define EGRESS_NFLOG_GROUP 0
#define EGRESS_NFLOG_ASK_GROUP 1 /* mode ask: flows held for the approver */
/* The log prefix of an inbound connection let in (ingress ports); other
 * packets of the group are refusals. */
#define EGRESS_NFLOG_INBOUND "agentrun-in"
typedef struct
{
  char addr[46]; /* INET6_ADDRSTRLEN: the destination */
  char source[46];
  int proto;
  const char *proto_name;
  uint16_t port; /* 0: not TCP/UDP */
  bool inbound;  /* a connection let in, not a refusal */
} egress_refusal;
typedef void (*egress_refusal_fn) (const egress_refusal *r, void *data);
/* A socket bound to `group`, in the current netns. */
int egress_nflog_open (uint16_t group, int *fd, ar_error_t **err);
/* Read one batch and call `fn` for each refused packet; false when
 * nothing was queued. */
bool egress_nflog_read (int fd, egress_refusal_fn fn, void *data);

/* ---- egress_ask.c: one question to the approver ---- */
typedef struct
{
  int fd; /* -1: none under way */
  long long deadline_ms;
  size_t len;
  char buf[512]; /* the answer so far */
} egress_question;
/* Connect and send the request; an approver that cannot be reached is
 * an error naming its socket (the caller denies). */
int egress_question_start (egress_question *q, const char *approver,
                           const ar_approval_request *req, unsigned timeout_s,
                           ar_error_t **err);
/* Read what came (q->fd was readable, or the caller checks the
 * deadline): true when decided, with *d and *why (malloc'd: "approver",
 * "timeout", "approver gone", "bad answer: ..."). */
bool egress_question_poll (egress_question *q, long long now_ms,
                           ar_approval_decision *d, char **why);
void egress_question_close (egress_question *q);
/* The longest string an audit line keeps of a name, a command line. */
#define EGRESS_AUDIT_STRING_MAX 1024
/* The audit fields of a question ("approval-request": `decision` NULL) or
 * of its decision (why, and ms since `started_ms`); `detail` NULL: left
 * out. */
char *egress_question_audit_fields (const char *what, const char *where,
                                    const char *detail, const char *decision,
                                    const char *why, long long started_ms);
/* What an approver allowed for the rest of the container's life: at most
 * `max` entries (later allows are asked again). */
typedef struct
{
  char **items;
  size_t len, max;
} egress_approved;
bool egress_approved_has (const egress_approved *a, const char *where);
void egress_approved_add (egress_approved *a, const char *where);
void egress_approved_clear (egress_approved *a);

/* ---- egress_resolver.c ---- */
typedef struct
{
  const char *id;
  pid_t container_pid;
  const egress_allowlist *allow;
  bool forward_all;       /* mode open: every name, nothing learnt */
  const char *upstream;   /* address[:port] in the host netns */
  const char *audit_path; /* NULL: no audit log */
  const char *approver;   /* mode ask: the approver's socket; else NULL */
  unsigned ask_timeout;   /* seconds an approver has to answer */
  const char *state_dir;
  int container_netns_fd;
  bool log_refusals; /* read the filter's NFLOG group into the audit log */
  bool in_thread;    /* a thread of the caller, not a daemon */
  /* The name gate's sockets (egress_gate_open), which the resolver
   * takes over; -1: no gate. */
  int gate_fds[EGRESS_GATE_FDS];
  uint16_t gate_queue;
} egress_resolver_config;

/* Make the sockets (listening in the container's netns, upstream in the
 * caller's), start the resolver as a daemon and record its pid. */
int egress_resolver_start (const egress_resolver_config *cfg, ar_error_t **err);
/* Stop and join this process's resolver thread for container `id`, if it
 * has one (delete, in the process that started it). */
void egress_resolver_stop_thread (const char *id);
/* The first nameserver of /etc/resolv.conf. */
char *egress_host_nameserver (void);

/* ---- egress_hook.c: the hook's verbs ---- */
/* argv as the hook gets it ("agentrun-egress", "create", "--mode", ...),
 * the container's state JSON as on its stdin. `caller_stays`: the calling
 * process lives until the container ends (agentrun run and sandbox in the
 * foreground), so the resolver can be a thread of it. */
int egress_hook_run (int argc, char **argv, const char *state_json,
                     bool caller_stays, ar_error_t **err);

/* ---- shared helpers (egress_hook.c) ---- */
char *egress_state_dir (const char *base, const char *id);

#endif
