/* Network namespaces and rtnetlink, spoken directly through libmnl: an
 * `ip` process per step would cost more than the whole set-up. Every
 * function acts in the caller's current netns (the netlink socket is made
 * on the spot, and a socket keeps the netns it was made in). */
#include "config.h"
#include "egress.h"
#include "../src/util/cleanup.h"
#include "../src/util/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <libmnl/libmnl.h>
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
    return ar_error_set (err, errno, "setns into the %s network namespace", what);
  return 0;
}

/* One request, one acknowledgement. Returns 0 or -errno. */
static int
rtnl_talk (struct nlmsghdr *nlh)
{
  struct mnl_socket *nl = mnl_socket_open2 (NETLINK_ROUTE, SOCK_CLOEXEC);
  if (nl == NULL)
    return -errno;
  int r = -EIO;
  char buf[MNL_SOCKET_BUFFER_SIZE];
  nlh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = (uint32_t) time (NULL);
  if (mnl_socket_bind (nl, 0, MNL_SOCKET_AUTOPID) < 0
      || mnl_socket_sendto (nl, nlh, nlh->nlmsg_len) < 0)
    r = -errno;
  else
    {
      ssize_t n = mnl_socket_recvfrom (nl, buf, sizeof buf);
      if (n < 0)
        r = -errno;
      else
        r = mnl_cb_run (buf, (size_t) n, nlh->nlmsg_seq,
                        mnl_socket_get_portid (nl), NULL, NULL) < 0
                ? -errno
                : 0;
    }
  mnl_socket_close (nl);
  return r;
}

static struct nlmsghdr *
link_request (char *buf, uint16_t type, uint16_t flags, const char *ifname)
{
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = flags;
  struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header (nlh, sizeof *ifi);
  ifi->ifi_family = AF_UNSPEC;
  mnl_attr_put_strz (nlh, IFLA_IFNAME, ifname);
  return nlh;
}

int
egress_link_up (const char *ifname, ar_error_t **err)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh = link_request (buf, RTM_NEWLINK, 0, ifname);
  struct ifinfomsg *ifi = mnl_nlmsg_get_payload (nlh);
  ifi->ifi_change = IFF_UP;
  ifi->ifi_flags = IFF_UP;
  int r = rtnl_talk (nlh);
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

/* /proc/self/net is the current netns's view: its route table in hex. */
bool
egress_default_gateway (struct in_addr *gw)
{
  cleanup_file FILE *f = fopen ("/proc/self/net/route", "re");
  char line[256];
  while (f && fgets (line, sizeof line, f))
    {
      char ifname[IFNAMSIZ + 1];
      unsigned dest, gateway;
      if (sscanf (line, "%16s %x %x", ifname, &dest, &gateway) == 3
          && dest == 0 && gateway != 0)
        {
          gw->s_addr = gateway; /* already in network order */
          return true;
        }
    }
  return false;
}

int
egress_veth_create (const char *host_name, int peer_netns_fd,
                    ar_error_t **err)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh = link_request (buf, RTM_NEWLINK,
                                       NLM_F_CREATE | NLM_F_EXCL, host_name);
  struct nlattr *linkinfo = mnl_attr_nest_start (nlh, IFLA_LINKINFO);
  mnl_attr_put_strz (nlh, IFLA_INFO_KIND, "veth");
  struct nlattr *data = mnl_attr_nest_start (nlh, IFLA_INFO_DATA);
  struct nlattr *peer = mnl_attr_nest_start (nlh, VETH_INFO_PEER);
  struct ifinfomsg *peer_ifi = mnl_nlmsg_put_extra_header (nlh, sizeof *peer_ifi);
  peer_ifi->ifi_family = AF_UNSPEC;
  mnl_attr_put_strz (nlh, IFLA_IFNAME, "eth0");
  mnl_attr_put_u32 (nlh, IFLA_NET_NS_FD, (uint32_t) peer_netns_fd);
  mnl_attr_nest_end (nlh, peer);
  mnl_attr_nest_end (nlh, data);
  mnl_attr_nest_end (nlh, linkinfo);
  int r = rtnl_talk (nlh);
  if (r < 0)
    return ar_error_set (err, -r, "create veth %s", host_name);
  return 0;
}

int
egress_link_delete (const char *ifname)
{
  char buf[MNL_SOCKET_BUFFER_SIZE];
  return rtnl_talk (link_request (buf, RTM_DELLINK, 0, ifname));
}

int
egress_addr_add (const char *ifname, struct in_addr addr, unsigned prefix,
                 ar_error_t **err)
{
  unsigned index = if_nametoindex (ifname);
  if (index == 0)
    return ar_error_set (err, errno, "no link %s", ifname);
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = RTM_NEWADDR;
  nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
  struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header (nlh, sizeof *ifa);
  ifa->ifa_family = AF_INET;
  ifa->ifa_prefixlen = (unsigned char) prefix;
  ifa->ifa_scope = RT_SCOPE_UNIVERSE;
  ifa->ifa_index = index;
  mnl_attr_put (nlh, IFA_LOCAL, sizeof addr, &addr);
  mnl_attr_put (nlh, IFA_ADDRESS, sizeof addr, &addr);
  int r = rtnl_talk (nlh);
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
  char buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = RTM_NEWROUTE;
  nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
  struct rtmsg *rtm = mnl_nlmsg_put_extra_header (nlh, sizeof *rtm);
  rtm->rtm_family = AF_INET;
  rtm->rtm_dst_len = 0;
  rtm->rtm_table = RT_TABLE_MAIN;
  rtm->rtm_protocol = RTPROT_BOOT;
  rtm->rtm_scope = RT_SCOPE_UNIVERSE;
  rtm->rtm_type = RTN_UNICAST;
  mnl_attr_put (nlh, RTA_GATEWAY, sizeof gw, &gw);
  mnl_attr_put_u32 (nlh, RTA_OIF, index);
  int r = rtnl_talk (nlh);
  if (r < 0)
    return ar_error_set (err, -r, "add default route via %s", ifname);
  return 0;
}
