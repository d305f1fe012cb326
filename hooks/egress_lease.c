/* SPDX-License-Identifier: Apache-2.0 */
/* /30 leases from the pool (default 10.213.0.0/16), one file per lease
 * under /run/agentrun-egress/leases named by its slot, holding
 * "<id> <pid> <pid start time>". Taken and released under an flock of
 * the lease dir. A lease whose container process is gone is stale (a
 * create or delete that was SIGKILLed): the next create reclaims it and
 * whatever its container left on the host. */
#include "config.h"
#include "egress.h"
#include "../src/util/cleanup.h"
#include "../src/util/daemon.h"
#include "../src/util/fs.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <net/if.h>
#include <sys/stat.h>
#include <sys/wait.h>

int
egress_pool_parse (const char *pool, struct in_addr *base, unsigned *n_slots,
                   ar_error_t **err)
{
  cleanup_free char *copy = xstrdup (pool);
  char *slash = strchr (copy, '/');
  char *end = NULL;
  long prefix = slash ? strtol (slash + 1, &end, 10) : -1;
  if (slash)
    *slash = '\0';
  if (slash == NULL || *end != '\0' || prefix < 8 || prefix > 30
      || inet_pton (AF_INET, copy, base) != 1)
    return ar_error_set (err, 0,
                         "--pool `%s`: want an IPv4 CIDR from /8 to /30", pool);
  uint32_t mask = prefix ? ~0u << (32 - prefix) : 0;
  base->s_addr = htonl (ntohl (base->s_addr) & mask);
  *n_slots = 1u << (30 - prefix);
  return 0;
}

static void
lease_addresses (struct in_addr base, unsigned index, egress_lease *out)
{
  uint32_t net = ntohl (base.s_addr) + index * 4;
  out->index = index;
  out->network.s_addr = htonl (net);
  out->host.s_addr = htonl (net + 1);
  out->container.s_addr = htonl (net + 2);
}

typedef struct
{
  char id[1025];
  pid_t pid;
  unsigned long long start;
} lease_owner;

static bool
read_owner (int dirfd, const char *name, lease_owner *owner)
{
  cleanup_free char *data = NULL;
  if (ar_read_file_at (dirfd, name, 2048, &data, NULL, NULL) < 0)
    return false;
  int pid;
  if (sscanf (data, "%1024s %d %llu", owner->id, &pid, &owner->start) != 3)
    return false;
  owner->pid = pid;
  return true;
}

static bool
owner_alive (const lease_owner *owner)
{
  return owner->pid > 0 && owner->start != 0
         && ar_pid_start_time (owner->pid) == owner->start;
}

static void
detach_host (const char *pool, const char *hash, long index)
{
  struct in_addr base;
  unsigned n_slots;
  cleanup_error ar_error_t *ignored = NULL;
  egress_lease lease = { 0 };
  bool known
      = index >= 0 && egress_pool_parse (pool, &base, &n_slots, &ignored) == 0;
  if (known)
    lease_addresses (base, (unsigned) index, &lease);
  egress_nft_host_detach (hash, known ? &lease : NULL);
}

/* Deleting a veth ourselves costs a synchronous unregister (15 ms and
 * more), and when the netns is going away it goes anyway, a little later.
 * A netns the container owned (--netns-owned) goes: nothing to do. For
 * one that may outlive it (joined by path), a detached child waits and
 * deletes the veth only if the netns stays: delete returns without
 * paying for either. */
static void
remove_link_later (const char *link)
{
  if (if_nametoindex (link) == 0)
    return;
  pid_t child = fork ();
  if (child != 0)
    {
      if (child > 0)
        waitpid (child, NULL, 0);
      return;
    }
  if (fork () != 0)
    _exit (0); /* the grandchild is init's: nobody waits for it */
  ar_daemon_enter (NULL, 0);
  for (int i = 0; i < 100; i++)
    {
      if (if_nametoindex (link) == 0)
        _exit (0);
      usleep (10000);
    }
  egress_link_delete (link);
  _exit (0);
}

/* The state dir's lease file: "<index>[ owned]". */
static long
lease_index_of (const char *dir, bool *netns_owned)
{
  cleanup_free char *path = xasprintf ("%s/lease", dir);
  cleanup_free char *data = NULL;
  *netns_owned = false;
  if (ar_read_file_at (AT_FDCWD, path, 32, &data, NULL, NULL) < 0)
    return -1;
  char *end;
  long index = strtol (data, &end, 10);
  *netns_owned = strncmp (end, " owned", 6) == 0;
  return index;
}

static void
stop_resolver (const char *id, const char *dir)
{
  egress_resolver_stop_thread (id);
  cleanup_free char *pid_path = xasprintf ("%s/resolver.pid", dir);
  cleanup_free char *data = NULL;
  int pid;
  unsigned long long start;
  if (ar_read_file_at (AT_FDCWD, pid_path, 64, &data, NULL, NULL) == 0
      && sscanf (data, "%d %llu", &pid, &start) == 2 && pid > 0
      && ar_pid_start_time (pid) == start)
    kill (pid, SIGKILL);
}

long
egress_cleanup_host (const char *pool, const char *id, const char *state_dir,
                     long index)
{
  char hash[9];
  egress_id_hash (id, hash);
  cleanup_free char *dir = egress_state_dir (state_dir, id);
  /* No lease given and no state dir: the create made nothing on the host
   * (mode none in a fresh netns, or it failed before the dir existed). */
  if (index < 0 && access (dir, F_OK) < 0)
    return -1;
  bool netns_owned;
  long recorded = lease_index_of (dir, &netns_owned);
  if (index < 0)
    index = recorded;
  /* The resolver first: with it gone nothing holds the container's netns,
   * and the kernel starts taking the netns and its veth away while we
   * do the rest. */
  stop_resolver (id, dir);
  egress_pasta_stop (dir);
  detach_host (pool, hash, index);
  cleanup_free char *link = xasprintf ("ar%s", hash);
  if (!netns_owned)
    remove_link_later (link);
  static const char *const files[]
      = { "resolver.pid", "resolv.conf", "lease", NULL };
  for (size_t i = 0; files[i]; i++)
    {
      cleanup_free char *path = xasprintf ("%s/%s", dir, files[i]);
      unlink (path);
    }
  rmdir (dir);
  return index;
}

static int
lock_lease_dir (int *dirfd, ar_error_t **err)
{
  if (ar_mkdir_p (EGRESS_LEASE_DIR, 0700, err) < 0)
    return -1;
  *dirfd = open (EGRESS_LEASE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (*dirfd < 0)
    return ar_error_set (err, errno, "open %s", EGRESS_LEASE_DIR);
  if (flock (*dirfd, LOCK_EX) < 0)
    return ar_error_set (err, errno, "lock %s", EGRESS_LEASE_DIR);
  return 0;
}

/* Every lease whose holder is dead goes, with what its container left
 * (a previous holder of our own id is replaced the same way). */
static void
reclaim_stale (int dirfd, const char *pool, const char *id)
{
  int fd = dup (dirfd);
  cleanup_dir DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL)
    {
      ar_closep (&fd);
      return;
    }
  for (struct dirent *de; (de = readdir (d));)
    {
      lease_owner owner;
      if (de->d_name[0] == '.' || !read_owner (dirfd, de->d_name, &owner))
        continue;
      bool ours = strcmp (owner.id, id) == 0;
      if (!ours && owner_alive (&owner))
        continue;
      if (!ours)
        egress_cleanup_host (pool, owner.id, NULL,
                             strtol (de->d_name, NULL, 10));
      unlinkat (dirfd, de->d_name, 0);
    }
}

static bool
no_lease_left (int dirfd)
{
  int fd = dup (dirfd);
  cleanup_dir DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL)
    {
      ar_closep (&fd);
      return false;
    }
  for (struct dirent *de; (de = readdir (d));)
    if (de->d_name[0] != '.')
      return false;
  return true;
}

int
egress_lease_take (const char *pool, const char *id, pid_t pid,
                   const char *hash, egress_lease *out, ar_error_t **err)
{
  struct in_addr base;
  unsigned n_slots;
  if (egress_pool_parse (pool, &base, &n_slots, err) < 0)
    return -1;
  cleanup_close int dirfd = -1;
  if (lock_lease_dir (&dirfd, err) < 0)
    return -1;
  reclaim_stale (dirfd, pool, id);
  for (unsigned i = 0; i < n_slots; i++)
    {
      char name[16];
      snprintf (name, sizeof name, "%u", i);
      if (faccessat (dirfd, name, F_OK, 0) == 0)
        continue;
      cleanup_free char *owner
          = xasprintf ("%s %d %llu\n", id, (int) pid, ar_pid_start_time (pid));
      if (ar_write_file_atomic_at (dirfd, name, owner, strlen (owner), 0600,
                                   err)
          < 0)
        return -1;
      lease_addresses (base, i, out);
      if (egress_nft_host_attach (hash, out, err) < 0)
        {
          unlinkat (dirfd, name, 0);
          return -1;
        }
      /* The caller undoes only a lease it got: what was attached goes. */
      if (egress_firewall_open (err) < 0)
        {
          egress_nft_host_detach (hash, out);
          unlinkat (dirfd, name, 0);
          return -1;
        }
      return 0;
    }
  return ar_error_set (err, 0, "no free /30 left in the pool %s", pool);
}

void
egress_lease_release (const char *id, unsigned index)
{
  cleanup_close int dirfd = -1;
  cleanup_error ar_error_t *ignored = NULL;
  if (lock_lease_dir (&dirfd, &ignored) < 0)
    return;
  char name[16];
  snprintf (name, sizeof name, "%u", index);
  lease_owner owner;
  if (read_owner (dirfd, name, &owner) && strcmp (owner.id, id) == 0)
    unlinkat (dirfd, name, 0);
  if (no_lease_left (dirfd))
    egress_firewall_close ();
}
