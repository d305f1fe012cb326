/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "egress_gate.h"
#include "egress.h"
#include "peek_name.h"
#include "../src/util/cleanup.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* linux/netfilter_ipv4.h and linux/netfilter_ipv6/ip6_tables.h, which do
 * not mix with glibc's netinet headers: where conntrack says a redirected
 * connection was going. */
#define SO_ORIGINAL_DST 80
#define IP6T_SO_ORIGINAL_DST 80

/* What one direction holds in flight: a pipe made this large (the
 * default's 64 KiB costs a third of the throughput in wake-ups). */
#define PIPE_BYTES (1024 * 1024)
#define EVENTS_PER_WAIT 64
#define ACCEPTS_PER_EVENT 16
#define TEXT(x) #x
#define TEXT_OF(x) TEXT (x)
#define SECONDS_TEXT TEXT_OF (EGRESS_GATE_HELLO_SECONDS)

typedef struct connection connection;

/* What an epoll event points at: a listening socket (conn NULL) or one
 * side of a connection. */
typedef struct
{
  connection *conn;
  int index; /* listening socket: 0 v4, 1 v6; a connection: 0 client */
} tag;

/* Bytes from one socket to the other, through a pipe. */
typedef struct
{
  int r, w;
  size_t queued;
  bool eof, shut;
} direction;

typedef enum
{
  HELLO,      /* reading the client's first bytes */
  CONNECTING, /* the name is allowed: connecting to the destination */
  RELAY,      /* both ways, untouched */
} state;

struct connection
{
  connection *prev, *next;
  state state;
  int client, server;
  struct sockaddr_storage dst;
  socklen_t dst_len;
  char addr[INET6_ADDRSTRLEN];
  uint16_t port;
  time_t deadline;
  uint8_t *hello;
  size_t hello_len, hello_sent;
  direction up, down; /* client to server, server to client */
  tag client_tag, server_tag;
};

struct egress_gate
{
  int epfd;
  int listen[2];
  tag listen_tag[2];
  connection *conns;
  size_t n_conns;
  egress_gate_allows allows;
  egress_gate_refused refused;
  void *data;
};

/* ---- listening -------------------------------------------------------- */

static int
listen_on (int family, uint16_t port, int *fd)
{
  struct sockaddr_storage ss = { 0 };
  socklen_t len;
  if (family == AF_INET)
    {
      struct sockaddr_in *a = (struct sockaddr_in *) &ss;
      *a = (struct sockaddr_in){ .sin_family = AF_INET,
                                 .sin_port = htons (port),
                                 .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
      len = sizeof *a;
    }
  else
    {
      struct sockaddr_in6 *a = (struct sockaddr_in6 *) &ss;
      *a = (struct sockaddr_in6){ .sin6_family = AF_INET6,
                                  .sin6_port = htons (port),
                                  .sin6_addr = IN6ADDR_LOOPBACK_INIT };
      len = sizeof *a;
    }
  *fd = socket (family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1;
  if (*fd < 0
      || (family == AF_INET6
          && setsockopt (*fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0)
      || bind (*fd, (struct sockaddr *) &ss, len) < 0 || listen (*fd, 128) < 0)
    {
      int saved = errno;
      ar_closep (fd);
      errno = saved;
      return -1;
    }
  return 0;
}

static uint16_t
bound_port (int fd)
{
  struct sockaddr_in a = { 0 };
  socklen_t len = sizeof a;
  return getsockname (fd, (struct sockaddr *) &a, &len) == 0
             ? ntohs (a.sin_port)
             : 0;
}

int
egress_gate_listen (int fds[2], uint16_t *port, ar_error_t **err)
{
  fds[0] = fds[1] = -1;
  /* The kernel picks a free port on 127.0.0.1; ::1 takes the same one,
   * unless a process of an engine's netns holds it there: then again. */
  for (int attempt = 0; attempt < 8; attempt++)
    {
      if (listen_on (AF_INET, 0, &fds[0]) < 0)
        return ar_error_set (err, errno, "name gate: listen on 127.0.0.1");
      *port = bound_port (fds[0]);
      if (listen_on (AF_INET6, *port, &fds[1]) == 0)
        return 0;
      if (errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT)
        return 0; /* no IPv6 here: nothing to redirect there either */
      ar_closep (&fds[0]);
    }
  return ar_error_set (err, EADDRINUSE, "name gate: listen on [::1]");
}

/* ---- connections ------------------------------------------------------ */

static void
watch (egress_gate *g, int op, int fd, uint32_t events, tag *t)
{
  struct epoll_event ev = { .events = events, .data.ptr = t };
  epoll_ctl (g->epfd, op, fd, &ev);
}

static void
close_direction (direction *d)
{
  ar_closep (&d->r);
  ar_closep (&d->w);
}

/* A reset rather than a close: the other end sees the connection refused
 * (or broken), never a clean end of a reply. */
static void
reset (int *fd)
{
  struct linger hard = { .l_onoff = 1, .l_linger = 0 };
  if (*fd >= 0)
    setsockopt (*fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  ar_closep (fd);
}

static void
drop (egress_gate *g, connection *c, bool abort)
{
  if (abort)
    {
      reset (&c->client);
      reset (&c->server);
    }
  ar_closep (&c->client);
  ar_closep (&c->server);
  close_direction (&c->up);
  close_direction (&c->down);
  free (c->hello);
  if (g->conns == c)
    g->conns = c->next;
  else if (c->prev)
    c->prev->next = c->next;
  if (c->next)
    c->next->prev = c->prev;
  g->n_conns--;
  free (c);
}

static void
refuse (egress_gate *g, connection *c, const char *name, const char *why)
{
  g->refused (g->data, c->addr, c->port, name, why);
  drop (g, c, true);
}

/* Where the client's connection was going before the gate chain sent it
 * here; false for one that came here itself. */
static bool
original_destination (connection *c, int family)
{
  c->dst_len = sizeof c->dst;
  int level = family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6;
  int opt = family == AF_INET ? SO_ORIGINAL_DST : IP6T_SO_ORIGINAL_DST;
  if (getsockopt (c->client, level, opt, &c->dst, &c->dst_len) < 0)
    return false;
  const void *addr;
  if (family == AF_INET)
    {
      const struct sockaddr_in *a = (const struct sockaddr_in *) &c->dst;
      if ((ntohl (a->sin_addr.s_addr) >> 24) == 127)
        return false;
      addr = &a->sin_addr;
      c->port = ntohs (a->sin_port);
    }
  else
    {
      const struct sockaddr_in6 *a = (const struct sockaddr_in6 *) &c->dst;
      if (IN6_IS_ADDR_LOOPBACK (&a->sin6_addr))
        return false;
      addr = &a->sin6_addr;
      c->port = ntohs (a->sin6_port);
    }
  inet_ntop (family, addr, c->addr, sizeof c->addr);
  return true;
}

/* false when there was none to take. */
static bool
accept_one (egress_gate *g, int index)
{
  int fd = accept4 (g->listen[index], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0)
    return false;
  connection *c = xcalloc (1, sizeof *c);
  *c = (connection){ .state = HELLO,
                     .client = fd,
                     .server = -1,
                     .up = { .r = -1, .w = -1 },
                     .down = { .r = -1, .w = -1 },
                     .deadline = time (NULL) + EGRESS_GATE_HELLO_SECONDS,
                     .next = g->conns };
  c->client_tag = (tag){ .conn = c, .index = 0 };
  c->server_tag = (tag){ .conn = c, .index = 1 };
  if (g->conns)
    g->conns->prev = c;
  g->conns = c;
  g->n_conns++;
  snprintf (c->addr, sizeof c->addr, "%s", index ? "::1" : "127.0.0.1");
  if (!original_destination (c, index ? AF_INET6 : AF_INET))
    {
      refuse (g, c, NULL, "not a redirected connection");
      return true;
    }
  if (g->n_conns > EGRESS_GATE_MAX_CONNECTIONS)
    {
      refuse (g, c, NULL, "too many connections waiting at once");
      return true;
    }
  c->hello = xcalloc (1, PEEK_BYTES_MAX);
  watch (g, EPOLL_CTL_ADD, c->client, EPOLLIN, &c->client_tag);
  return true;
}

static void
start_connect (egress_gate *g, connection *c)
{
  uint32_t mark = EGRESS_GATE_MARK;
  c->server = socket (c->dst.ss_family,
                      SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (c->server < 0
      || setsockopt (c->server, SOL_SOCKET, SO_MARK, &mark, sizeof mark) < 0
      || (connect (c->server, (struct sockaddr *) &c->dst, c->dst_len) < 0
          && errno != EINPROGRESS))
    {
      drop (g, c, true);
      return;
    }
  c->state = CONNECTING;
  watch (g, EPOLL_CTL_MOD, c->client, 0, &c->client_tag);
  watch (g, EPOLL_CTL_ADD, c->server, EPOLLOUT, &c->server_tag);
}

static void
read_hello (egress_gate *g, connection *c)
{
  ssize_t n = read (c->client, c->hello + c->hello_len,
                    PEEK_BYTES_MAX - c->hello_len);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0)
    {
      drop (g, c, false); /* the client gave up before saying anything */
      return;
    }
  c->hello_len += (size_t) n;
  peek_name name;
  cleanup_error ar_error_t *why = NULL;
  switch (peek_name_read (c->hello, c->hello_len, &name, &why))
    {
    case PEEK_MORE:
      return;
    case PEEK_REFUSE:
      refuse (g, c, NULL, why ? why->message : "no name");
      return;
    case PEEK_NAME:
      if (!g->allows (g->data, name.name, c->addr, c->port))
        refuse (g, c, name.name, "not an allowed name");
      else
        start_connect (g, c);
      return;
    }
}

/* ---- relaying --------------------------------------------------------- */

/* From `src` through the direction's pipe to `dst`, as far as both let;
 * -1 when either end failed. */
static int
pump (int src, int dst, direction *d)
{
  for (bool moved = true; moved;)
    {
      moved = false;
      if (!d->eof && d->queued < PIPE_BYTES)
        {
          ssize_t n = splice (src, NULL, d->w, NULL, PIPE_BYTES - d->queued,
                              SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
          if (n < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
          if (n >= 0)
            {
              d->queued += (size_t) n;
              d->eof = n == 0;
              moved = true;
            }
        }
      if (d->queued > 0)
        {
          ssize_t n = splice (d->r, NULL, dst, NULL, d->queued,
                              SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
          if (n < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
          if (n > 0)
            {
              d->queued -= (size_t) n;
              moved = true;
            }
        }
    }
  if (d->eof && d->queued == 0 && !d->shut)
    {
      shutdown (dst, SHUT_WR);
      d->shut = true;
    }
  return 0;
}

/* The client's first bytes, which the gate read, go first. */
static int
send_hello (connection *c)
{
  while (c->hello_sent < c->hello_len)
    {
      ssize_t n = write (c->server, c->hello + c->hello_sent,
                         c->hello_len - c->hello_sent);
      if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
      c->hello_sent += (size_t) n;
    }
  return 0;
}

static uint32_t
wants (const direction *out, const direction *in, bool blocked_out)
{
  uint32_t events = 0;
  if (!out->eof && out->queued < PIPE_BYTES)
    events |= EPOLLIN;
  if (in->queued > 0 || blocked_out)
    events |= EPOLLOUT;
  return events;
}

static void
relay (egress_gate *g, connection *c)
{
  if (send_hello (c) < 0)
    {
      drop (g, c, true);
      return;
    }
  bool hello_left = c->hello_sent < c->hello_len;
  if ((!hello_left && pump (c->client, c->server, &c->up) < 0)
      || pump (c->server, c->client, &c->down) < 0)
    {
      drop (g, c, true);
      return;
    }
  if (c->up.shut && c->down.shut)
    {
      drop (g, c, false);
      return;
    }
  uint32_t client = hello_left ? 0 : wants (&c->up, &c->down, false);
  watch (g, EPOLL_CTL_MOD, c->client, client, &c->client_tag);
  watch (g, EPOLL_CTL_MOD, c->server, wants (&c->down, &c->up, hello_left),
         &c->server_tag);
}

static void
connected (egress_gate *g, connection *c)
{
  int error = 0;
  socklen_t len = sizeof error;
  int up[2], down[2];
  if (getsockopt (c->server, SOL_SOCKET, SO_ERROR, &error, &len) < 0
      || error != 0)
    {
      drop (g, c, true);
      return;
    }
  if (pipe2 (up, O_CLOEXEC | O_NONBLOCK) < 0)
    {
      drop (g, c, true);
      return;
    }
  c->up = (direction){ .r = up[0], .w = up[1] };
  if (pipe2 (down, O_CLOEXEC | O_NONBLOCK) < 0)
    {
      drop (g, c, true);
      return;
    }
  c->down = (direction){ .r = down[0], .w = down[1] };
  fcntl (c->up.w, F_SETPIPE_SZ, PIPE_BYTES);
  fcntl (c->down.w, F_SETPIPE_SZ, PIPE_BYTES);
  c->state = RELAY;
  relay (g, c);
}

static void
on_event (egress_gate *g, const struct epoll_event *ev)
{
  tag *t = ev->data.ptr;
  connection *c = t->conn;
  /* A client's burst (npm opens a dozen at once) in one turn. */
  for (int taken = 0; c == NULL && taken < ACCEPTS_PER_EVENT; taken++)
    if (!accept_one (g, t->index))
      break;
  if (c == NULL)
    return;
  switch (c->state)
    {
    case HELLO:
      read_hello (g, c);
      return;
    case CONNECTING:
      connected (g, c);
      return;
    case RELAY:
      relay (g, c);
      return;
    }
}

/* ---- the gate --------------------------------------------------------- */

egress_gate *
egress_gate_new (const int fds[2], egress_gate_allows allows,
                 egress_gate_refused refused, void *data, ar_error_t **err)
{
  egress_gate *g = xcalloc (1, sizeof *g);
  *g = (egress_gate){ .epfd = epoll_create1 (EPOLL_CLOEXEC),
                      .listen = { fds[0], fds[1] },
                      .allows = allows,
                      .refused = refused,
                      .data = data };
  if (g->epfd < 0)
    {
      ar_error_set (err, errno, "name gate: epoll_create1");
      egress_gate_free (g);
      return NULL;
    }
  for (int i = 0; i < 2; i++)
    if (g->listen[i] >= 0)
      {
        g->listen_tag[i] = (tag){ .conn = NULL, .index = i };
        watch (g, EPOLL_CTL_ADD, g->listen[i], EPOLLIN, &g->listen_tag[i]);
      }
  /* Six descriptors a connection: as many as the hard limit lets. */
  struct rlimit nofile;
  if (getrlimit (RLIMIT_NOFILE, &nofile) == 0
      && nofile.rlim_cur < nofile.rlim_max)
    {
      nofile.rlim_cur = nofile.rlim_max;
      setrlimit (RLIMIT_NOFILE, &nofile);
    }
  return g;
}

void
egress_gate_free (egress_gate *g)
{
  if (g == NULL)
    return;
  while (g->conns)
    drop (g, g->conns, true);
  ar_closep (&g->listen[0]);
  ar_closep (&g->listen[1]);
  ar_closep (&g->epfd);
  free (g);
}

int
egress_gate_fd (const egress_gate *g)
{
  return g->epfd;
}

void
egress_gate_run (egress_gate *g)
{
  /* One batch a call: a download keeps the gate busy without end, and
   * the resolver's loop has lookups to answer between batches (its poll
   * wakes at once while the epoll fd has more). */
  struct epoll_event events[EVENTS_PER_WAIT];
  int n = epoll_wait (g->epfd, events, EVENTS_PER_WAIT, 0);
  /* A connection dropped by an earlier event of this batch may have a
   * later one: the batch ends at a drop, the rest comes back next time. */
  for (int i = 0; i < n; i++)
    {
      size_t before = g->n_conns;
      on_event (g, &events[i]);
      if (g->n_conns < before)
        break;
    }
  time_t now = time (NULL);
  for (connection *c = g->conns, *next; c; c = next)
    {
      next = c->next;
      if (c->state == HELLO && c->deadline < now)
        refuse (g, c, NULL, "no name within " SECONDS_TEXT " s");
    }
}
