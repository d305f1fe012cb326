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
#include "../src/util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#define PASTA_PID_FILE "pasta.pid"
#define PASTA_NETNS_FILE "pasta.netns"

/* pasta opens a namespace file by path (it does not take a descriptor),
 * and a /proc/PID/ns path is refused to it once it has dropped to the
 * caller's ids: a bind mount of the namespace in this (private) mount
 * namespace is a file it can open. */
static int
bind_netns_file (pid_t pid, const char *file, ar_error_t **err)
{
  cleanup_close int fd = open (file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return ar_error_set (err, errno, "create `%s`", file);
  cleanup_free char *ns = xasprintf ("/proc/%d/ns/net", (int) pid);
  if (mount (ns, file, NULL, MS_BIND, NULL) < 0)
    return ar_error_set (err, errno, "bind %s on `%s`", ns, file);
  return 0;
}

static void
unbind_netns_file (const char *file)
{
  umount2 (file, MNT_DETACH);
  unlink (file);
}

/* pasta daemonizes once the tap is up and configured (--config-net). */
static int
run_pasta (const char *netns_file, const char *pid_file, ar_error_t **err)
{
  char *argv[] = { (char *) "pasta", (char *) "--quiet", (char *) "--runas", (char *) "0:0",
                   (char *) "--config-net", (char *) "--no-map-gw",
                   (char *) "-t", (char *) "none", (char *) "-u", (char *) "none",
                   (char *) "-T", (char *) "none", (char *) "-U", (char *) "none",
                   (char *) "--netns", (char *) netns_file, (char *) "-P", (char *) pid_file,
                   NULL };
  cleanup_free char *msg = NULL;
  cleanup_error ar_error_t *not_run = NULL;
  int r = ar_spawn_wait (argv, &msg, &not_run);
  if (r < 0)
    return ar_error_set (err, not_run->errno_value, "egress without root needs pasta (Debian: apt-get install passt)");
  if (r == 0)
    return 0;
  return ar_error_set (err, 0, "pasta failed: %s", msg[0] ? msg : "no message");
}

int
egress_pasta_connect (pid_t container_pid, const char *dir, ar_error_t **err)
{
  cleanup_free char *netns_file = xasprintf ("%s/" PASTA_NETNS_FILE, dir);
  cleanup_free char *pid_file = xasprintf ("%s/" PASTA_PID_FILE, dir);
  if (bind_netns_file (container_pid, netns_file, err) < 0)
    {
      unlink (netns_file);
      return -1;
    }
  /* Kept while the container lives: pasta ends when it goes away. */
  int r = run_pasta (netns_file, pid_file, err);
  if (r < 0)
    unbind_netns_file (netns_file);
  return r;
}

void
egress_pasta_stop (const char *dir)
{
  cleanup_free char *netns_file = xasprintf ("%s/" PASTA_NETNS_FILE, dir);
  unbind_netns_file (netns_file);
  cleanup_free char *pid_file = xasprintf ("%s/" PASTA_PID_FILE, dir);
  cleanup_free char *text = NULL;
  int pid;
  if (ar_read_file_at (AT_FDCWD, pid_file, 32, &text, NULL, NULL) < 0
      || sscanf (text, "%d", &pid) != 1 || pid <= 0)
    return;
  /* Only the pasta it names: the pid may have been reused since. */
  cleanup_free char *comm_path = xasprintf ("/proc/%d/comm", pid);
  cleanup_free char *comm = NULL;
  if (ar_read_file_at (AT_FDCWD, comm_path, 32, &comm, NULL, NULL) == 0
      && (strncmp (comm, "pasta", 5) == 0 || strncmp (comm, "passt", 5) == 0))
    kill (pid, SIGKILL);
  unlink (pid_file);
}
