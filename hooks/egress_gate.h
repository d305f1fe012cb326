/* SPDX-License-Identifier: Apache-2.0 */
/* The name gate: the container's TCP connections to addresses that only
 * a name opened are checked in the kernel's path, not proxied. The
 * filter (egress_nft.c's chain `named`) queues the first packets of each
 * such connection to this process (nfnetlink_queue); a packet without
 * data (the handshake) passes at once, and the first data is held until
 * it says the name it is for (peek_name.c: a TLS ClientHello's server
 * name, an HTTP Host header). Then the held packets go on, marked, and
 * the filter marks the connection so that nothing more of it comes here;
 * or the first is rejected with a reset, the rest dropped, and every
 * later packet of it too; the server, which saw only the handshake, gets
 * a reset of its own. The client talks to its own server from the
 * first byte to the last: nothing decrypted, no certificate, no second
 * connection, no copy of the bytes that follow.
 *
 * It runs in the resolver (thread or daemon) on the resolver's loop. */
#ifndef AR_HOOKS_EGRESS_GATE_H
#define AR_HOOKS_EGRESS_GATE_H

#include "../src/util/error.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct egress_gate egress_gate;

/* How long a client may take to say its name once it sent data, and how
 * many connections may wait for their name at once. */
#define EGRESS_GATE_HELLO_SECONDS 10
#define EGRESS_GATE_MAX_CONNECTIONS 512

/* The queue numbers tried, first to last: one netns may hold an older
 * gate (an engine restarted the container) until its resolver is gone. */
#define EGRESS_GATE_QUEUE_FIRST 0x6172
#define EGRESS_GATE_QUEUES 16

/* The packet marks of the gate's verdicts, which the filter turns into
 * the connection's mark: let through, or refused; and of the resets it
 * sends servers itself (SO_MARK, which needs CAP_NET_ADMIN in the netns:
 * no container process has it). */
#define EGRESS_GATE_PASS 0x61726700u
#define EGRESS_GATE_REFUSE 0x61726701u
#define EGRESS_GATE_RESET 0x61726702u

/* Its sockets: the queue's, and raw IPv4 and IPv6 ones for the servers'
 * resets (-1 without IPv6). */
#define EGRESS_GATE_FDS 3

/* Whether `name` may be reached at `addr` on `port`. */
typedef bool (*egress_gate_allows) (void *data, const char *name,
                                    const char *addr, uint16_t port);
/* A connection the gate refused: its destination, and the name it said
 * (NULL: none) and why. */
typedef void (*egress_gate_refused) (void *data, const char *addr,
                                     uint16_t port, const char *name,
                                     const char *why);

/* Bind the first free queue of the current netns, and open the raw
 * sockets there. */
int
egress_gate_open (int fds[EGRESS_GATE_FDS], uint16_t *queue, ar_error_t **err);

/* The gate over those sockets (it owns them from here). */
egress_gate *egress_gate_new (const int fds[EGRESS_GATE_FDS], uint16_t queue,
                              egress_gate_allows allows,
                              egress_gate_refused refused, void *data);
void egress_gate_free (egress_gate *g);
/* Readable when packets wait: the resolver polls it. */
int egress_gate_fd (const egress_gate *g);
/* Decide what is queued, and refuse connections that said no name in
 * time. */
void egress_gate_run (egress_gate *g);

#endif
