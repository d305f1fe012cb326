/* SPDX-License-Identifier: Apache-2.0 */
/* Without root there is no veth to the host: pasta (Debian's passt) links
 * the container's network namespace to the host's through the user's own
 * sockets, and the in-namespace filter and resolver do the rest, as with
 * the veth. Nothing reaches the host itself: the gateway address is not
 * mapped to its loopback (--no-map-gw) and no port is forwarded either
 * way (-t/-u/-T/-U none: "auto" would bring ports bound on the host's
 * loopback into the container's). */
#include "config.h"
#include "egress.h"
#include "../src/util/cleanup.h"
#include "../src/util/fs.h"
#include "../src/util/path.h"
#include "../src/util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* pasta opens it in the container's namespace, as the user: without
 * udev's 0666 it cannot, and says only "Failed to open tun socket". */
#define TUN_DEVICE "/dev/net/tun"

/* In the egress state dir, a symlink to the namespace file pasta is given. */
#define PASTA_NETNS_LINK "pasta.netns"

/* pasta opens a namespace file by path (it takes no descriptor), and a
 * /proc/PID/ns path of the container is refused to it once it has dropped
 * its capabilities: a bind mount of the namespace, in this (private) mount
 * namespace, is a file it can open. It goes where Podman puts its own,
 * $XDG_RUNTIME_DIR/netns/, the one place (besides /proc) that the AppArmor
 * profile Debian and Ubuntu ship for pasta lets it read namespaces from. */
static char *
netns_file_path (const char *dir, ar_error_t **err)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  if (xdg == NULL || xdg[0] != '/')
    return xasprintf ("%s/netns", dir);
  cleanup_free char *netns_dir = xasprintf ("%s/netns", xdg);
  if (ar_mkdir_p (netns_dir, 0700, err) < 0)
    return NULL;
  const char *slash = strrchr (dir, '/');
  return xasprintf ("%s/agentrun-%s", netns_dir, slash ? slash + 1 : dir);
}

static int
bind_netns_file (pid_t pid, const char *file, ar_error_t **err)
{
  cleanup_close int fd
      = open (file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return ar_error_set (err, errno, "create `%s`", file);
  cleanup_free char *ns = xasprintf ("/proc/%d/ns/net", (int) pid);
  if (mount (ns, file, NULL, MS_BIND, NULL) < 0)
    {
      ar_error_set (err, errno, "bind %s on `%s`", ns, file);
      unlink (file);
      return -1;
    }
  return 0;
}

/* pasta watches the file's directory and exits when the file goes. */
static void
unbind_netns_file (const char *file)
{
  umount2 (file, MNT_DETACH);
  unlink (file);
}

/* pasta daemonizes once the tap is up and configured (--config-net). */
static int
run_pasta (const char *netns_file, ar_error_t **err)
{
  char *argv[] = { (char *) "pasta",
                   (char *) "--quiet",
                   (char *) "--runas",
                   (char *) "0:0",
                   (char *) "--config-net",
                   (char *) "--no-map-gw",
                   (char *) "-t",
                   (char *) "none",
                   (char *) "-u",
                   (char *) "none",
                   (char *) "-T",
                   (char *) "none",
                   (char *) "-U",
                   (char *) "none",
                   (char *) "--netns",
                   (char *) netns_file,
                   NULL };
  cleanup_free char *msg = NULL;
  cleanup_error ar_error_t *not_run = NULL;
  int r = ar_spawn_wait (argv, &msg, &not_run);
  if (r < 0)
    return ar_error_set (
        err, not_run->errno_value,
        "egress without root needs pasta (Debian: apt-get install passt)");
  if (r == 0)
    return 0;
  struct stat st;
  if (access (TUN_DEVICE, R_OK | W_OK) < 0 && stat (TUN_DEVICE, &st) == 0)
    return ar_error_set (err, 0,
                         "pasta failed: %s: " TUN_DEVICE
                         " is mode %04o, not read-writable by this user "
                         "(udev makes it 0666: chmod 0666 " TUN_DEVICE ")",
                         msg[0] ? msg : "no message",
                         (unsigned) (st.st_mode & 07777));
  return ar_error_set (err, 0, "pasta failed: %s", msg[0] ? msg : "no message");
}

int
egress_pasta_connect (pid_t container_pid, const char *dir, ar_error_t **err)
{
  cleanup_free char *netns_file = netns_file_path (dir, err);
  if (netns_file == NULL)
    return -1;
  cleanup_free char *link = xasprintf ("%s/" PASTA_NETNS_LINK, dir);
  if (symlink (netns_file, link) < 0)
    return ar_error_set (err, errno, "create `%s`", link);
  if (bind_netns_file (container_pid, netns_file, err) < 0)
    {
      unlink (link);
      return -1;
    }
  /* Kept while the container lives: pasta ends when it goes away. */
  int r = run_pasta (netns_file, err);
  if (r < 0)
    egress_pasta_stop (dir);
  return r;
}

void
egress_pasta_stop (const char *dir)
{
  cleanup_free char *link = xasprintf ("%s/" PASTA_NETNS_LINK, dir);
  cleanup_free char *target = ar_readlink (link);
  if (target == NULL || target[0] == '\0')
    return;
  unbind_netns_file (target);
  unlink (link);
}
