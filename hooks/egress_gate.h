/* SPDX-License-Identifier: Apache-2.0 */
/* The name gate: where the container's TCP connections to addresses that
 * only a name opened are redirected (egress_nft.c's gate chain). Each is
 * held until its first bytes say the name it is for (peek_name.c: a TLS
 * ClientHello's server name, an HTTP Host header), then either passed on
 * to the address it was sent to, those bytes and everything after flowing
 * untouched (splice), or reset at once. Nothing is decrypted and no
 * certificate is involved: a client sees its own server or a refusal.
 *
 * It runs in the resolver (thread or daemon), in the container's netns,
 * on the resolver's loop: one epoll fd stands for all its sockets. */
#ifndef AR_HOOKS_EGRESS_GATE_H
#define AR_HOOKS_EGRESS_GATE_H

#include "../src/util/error.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct egress_gate egress_gate;

/* How long a client may take to say its name (a protocol whose server
 * speaks first never will), and how many connections are held at once. */
#define EGRESS_GATE_HELLO_SECONDS 10
#define EGRESS_GATE_MAX_CONNECTIONS 512

/* Whether `name` may be reached at `addr` on `port`. */
typedef bool (*egress_gate_allows) (void *data, const char *name,
                                    const char *addr, uint16_t port);
/* A connection the gate reset: its destination, and the name it said
 * (NULL: none) or why it was refused. */
typedef void (*egress_gate_refused) (void *data, const char *addr,
                                     uint16_t port, const char *name,
                                     const char *why);

/* Listening sockets on 127.0.0.1 and ::1 (when the netns has IPv6), one
 * port for both, in the current netns; fds[1] is -1 without IPv6. */
int egress_gate_listen (int fds[2], uint16_t *port, ar_error_t **err);

/* The gate over the listening sockets (it owns them from here). */
egress_gate *
egress_gate_new (const int fds[2], egress_gate_allows allows,
                 egress_gate_refused refused, void *data, ar_error_t **err);
void egress_gate_free (egress_gate *g);
/* Readable when the gate has work: the resolver polls it. */
int egress_gate_fd (const egress_gate *g);
/* Do what is ready, and reset clients that said nothing in time. */
void egress_gate_run (egress_gate *g);

#endif
