/* SPDX-License-Identifier: Apache-2.0 */
/* Network namespaces and rtnetlink, spoken directly (src/util/netlink.h):
 * an `ip` process per step would cost more than the whole set-up. Every
 * function acts in the caller's current netns (the netlink socket is made
 * on the spot, and a socket keeps the netns it was made in). */
#include "config.h"
#include "egress.h"
#include "../src/util/cleanup.h"
#include "../src/util/clock.h"
#include "../src/util/netlink.h"
#include "../src/util/sha256.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void
egress_id_hash (const char *id, char out[9])
{
  char hex[AR_SHA256_DIGEST_SIZE * 2 + 1];
  ar_sha256_hex (id, strlen (id), hex);
  memcpy (out, hex, 8);
  out[8] = '\0';
}

int
egress_open_netns (pid_t pid, int *fd, ar_error_t **err)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/net", (int) pid);
  *fd = open (path, O_RDONLY | O_CLOEXEC);
  if (*fd < 0)
    return ar_error_set (err, errno, "open %s", path);
  return 0;
}

int
egress_enter_netns (int fd, const char *what, ar_error_t **err)
{
  if (setns (fd, CLONE_NEWNET) < 0)
    return ar_error_set (err, errno, "setns into the %s network namespace",
                         what);
  return 0;
}

typedef struct
{
  int netns_fd;
  egress_netns_fn fn;
  void *arg;
  int result;
  ar_error_t *err;
} netns_call;

static void *
netns_call_main (void *data)
{
  netns_call *call = data;
  call->result
      = egress_enter_netns (call->netns_fd, "container's", &call->err) < 0
            ? -1
            : call->fn (call->arg, &call->err);
  return NULL;
}

int
egress_in_netns (int netns_fd, egress_netns_fn fn, void *arg, ar_error_t **err)
{
  netns_call call = { .netns_fd = netns_fd, .fn = fn, .arg = arg };
  pthread_t thread;
  int r = pthread_create (&thread, NULL, netns_call_main, &call);
  if (r != 0)
    return ar_error_set (
        err, r, "start a thread for the container's network namespace");
  pthread_join (thread, NULL);
  if (call.result >= 0)
    ar_error_free (call.err);
  else if (ar_error_pass (err, call.err) == 0)
    ar_error_set (err, 0, "in the container's network namespace: failed");
  return call.result;
}

/* One request, one acknowledgement. Returns 0 or -errno. */
static int
rtnl_talk (ar_nl_buf *req)
{
  cleanup_error ar_error_t *failure = NULL;
  cleanup_close int fd = ar_nl_socket (NETLINK_ROUTE, &failure);
  struct nlmsghdr *nlh = ar_nl_current (req);
  nlh->nlmsg_flags |= NLM_F_ACK;
  if (fd < 0 || ar_nl_send (fd, req, &failure) < 0)
    return -(failure->errno_value ? failure->errno_value : EIO);
  return ar_nl_wait_ack (fd, nlh->nlmsg_seq, NULL);
}

static void
link_request (ar_nl_buf *req, uint16_t type, uint16_t flags, const char *ifname)
{
  ar_nl_msg (req, type, flags, 1);
  struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
  ar_nl_put (req, &ifi, sizeof ifi);
  ar_nl_attr_str (req, IFLA_IFNAME, ifname);
}

int
egress_link_up (const char *ifname, ar_error_t **err)
{
  cleanup_nl_buf ar_nl_buf req = { 0 };
  link_request (&req, RTM_NEWLINK, 0, ifname);
  struct ifinfomsg *ifi = NLMSG_DATA (ar_nl_current (&req));
  ifi->ifi_change = ifi->ifi_flags = IFF_UP;
  int r = rtnl_talk (&req);
  if (r < 0)
    return ar_error_set (err, -r, "set link %s up", ifname);
  return 0;
}

bool
egress_netns_has_links (void)
{
  struct if_nameindex *list = if_nameindex ();
  bool found = false;
  for (struct if_nameindex *i = list; i && i->if_index; i++)
    if (strcmp (i->if_name, "lo") != 0)
      found = true;
  if (list)
    if_freenameindex (list);
  return found;
}

char **
egress_local_addresses (size_t *n)
{
  *n = 0;
  char **out = xcalloc (1, sizeof *out);
  struct ifaddrs *all = NULL;
  if (getifaddrs (&all) < 0)
    return out;
  for (struct ifaddrs *i = all; i; i = i->ifa_next)
    {
      const struct sockaddr *sa = i->ifa_addr;
      if (sa == NULL || (i->ifa_flags & IFF_LOOPBACK)
          || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
        continue;
      const void *addr
          = sa->sa_family == AF_INET
                ? (const void *) &((const struct sockaddr_in *) sa)->sin_addr
                : (const void *) &((const struct sockaddr_in6 *) sa)->sin6_addr;
      if (sa->sa_family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL (addr))
        continue; /* fe80::/10 is refused whole */
      char text[INET6_ADDRSTRLEN];
      if (inet_ntop (sa->sa_family, addr, text, sizeof text) == NULL)
        continue;
      out = xrealloc (out, (*n + 2) * sizeof *out);
      out[(*n)++] = xstrdup (text);
      out[*n] = NULL;
    }
  freeifaddrs (all);
  return out;
}

/* /proc/thread-self/net is the calling thread's netns (egress_in_netns
 * runs this on a thread of its own): its route table in hex. */
bool
egress_default_gateway (struct in_addr *gw)
{
  cleanup_file FILE *f = fopen ("/proc/thread-self/net/route", "re");
  char line[256];
  while (f && fgets (line, sizeof line, f))
    {
      char ifname[IFNAMSIZ + 1];
      unsigned dest, gateway;
      if (sscanf (line, "%16s %x %x", ifname, &dest, &gateway) == 3 && dest == 0
          && gateway != 0)
        {
          gw->s_addr = gateway; /* already in network order */
          return true;
        }
    }
  return false;
}

/* A container of the same id that just ended (a rollback's restart, a
 * quick re-run) leaves its veth to the kernel's teardown of its netns,
 * which runs a little later (seconds on a loaded host), or to the watcher
 * that removes it from a netns that stays: wait, bounded, for the name to
 * be free; past the bound remove the leftover, ours by its name. */
static void
wait_for_stale_link (const char *name)
{
  for (int i = 0; i < 300 && if_nametoindex (name) != 0; i++)
    ar_sleep_ms (10);
  if (if_nametoindex (name) != 0)
    egress_link_delete (name);
}

int
egress_veth_create (const char *host_name, int peer_netns_fd, ar_error_t **err)
{
  cleanup_nl_buf ar_nl_buf req = { 0 };
  link_request (&req, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, host_name);
  size_t linkinfo = ar_nl_nest (&req, IFLA_LINKINFO);
  ar_nl_attr_str (&req, IFLA_INFO_KIND, "veth");
  size_t data = ar_nl_nest (&req, IFLA_INFO_DATA);
  size_t peer = ar_nl_nest (&req, VETH_INFO_PEER);
  struct ifinfomsg peer_ifi = { .ifi_family = AF_UNSPEC };
  ar_nl_put (&req, &peer_ifi, sizeof peer_ifi);
  ar_nl_attr_str (&req, IFLA_IFNAME, "eth0");
  ar_nl_attr_u32 (&req, IFLA_NET_NS_FD, (uint32_t) peer_netns_fd);
  ar_nl_nest_end (&req, peer);
  ar_nl_nest_end (&req, data);
  ar_nl_nest_end (&req, linkinfo);
  int r = rtnl_talk (&req);
  if (r == -EEXIST)
    {
      wait_for_stale_link (host_name);
      r = rtnl_talk (&req);
    }
  if (r < 0)
    return ar_error_set (err, -r, "create veth %s", host_name);
  return 0;
}

int
egress_link_delete (const char *ifname)
{
  cleanup_nl_buf ar_nl_buf req = { 0 };
  link_request (&req, RTM_DELLINK, 0, ifname);
  return rtnl_talk (&req);
}

int
egress_addr_add (const char *ifname, struct in_addr addr, unsigned prefix,
                 ar_error_t **err)
{
  unsigned index = if_nametoindex (ifname);
  if (index == 0)
    return ar_error_set (err, errno, "no link %s", ifname);
  cleanup_nl_buf ar_nl_buf req = { 0 };
  ar_nl_msg (&req, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, 1);
  struct ifaddrmsg ifa = { .ifa_family = AF_INET,
                           .ifa_prefixlen = (unsigned char) prefix,
                           .ifa_scope = RT_SCOPE_UNIVERSE,
                           .ifa_index = index };
  ar_nl_put (&req, &ifa, sizeof ifa);
  ar_nl_attr (&req, IFA_LOCAL, &addr, sizeof addr);
  ar_nl_attr (&req, IFA_ADDRESS, &addr, sizeof addr);
  int r = rtnl_talk (&req);
  if (r < 0)
    return ar_error_set (err, -r, "add address to %s", ifname);
  return 0;
}

int
egress_route_default (const char *ifname, struct in_addr gw, ar_error_t **err)
{
  unsigned index = if_nametoindex (ifname);
  if (index == 0)
    return ar_error_set (err, errno, "no link %s", ifname);
  cleanup_nl_buf ar_nl_buf req = { 0 };
  ar_nl_msg (&req, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, 1);
  struct rtmsg rtm = { .rtm_family = AF_INET,
                       .rtm_table = RT_TABLE_MAIN,
                       .rtm_protocol = RTPROT_BOOT,
                       .rtm_scope = RT_SCOPE_UNIVERSE,
                       .rtm_type = RTN_UNICAST };
  ar_nl_put (&req, &rtm, sizeof rtm);
  ar_nl_attr (&req, RTA_GATEWAY, &gw, sizeof gw);
  ar_nl_attr_u32 (&req, RTA_OIF, index);
  int r = rtnl_talk (&req);
  if (r < 0)
    return ar_error_set (err, -r, "add default route via %s", ifname);
  return 0;
}
