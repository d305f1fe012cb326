/* SPDX-License-Identifier: Apache-2.0 */
/* util/fdpass: a listening socket's name appears only once it listens
 * (a pool's taker connects the moment a sandbox's socket shows up), and
 * one that cannot be made leaves nothing in its directory. */
#include "config.h"
#include "unit.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/fdpass.h"
#include "../../src/util/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 300

static char top[] = "/tmp/agentrun-unit-fdpass.XXXXXX";

static unsigned
entries (int dir)
{
  int fd = openat (dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  unsigned n = 0;
  for (struct dirent *e; d && (e = readdir (d));)
    n += strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0;
  if (d)
    closedir (d);
  return n;
}

/* Connects to every socket the moment its name appears, as a taker
 * woken by inotify does; exits with the number refused. */
static int
eager_peer (int dir, int ready)
{
  int in = inotify_init1 (IN_CLOEXEC);
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", dir);
  if (in < 0 || inotify_add_watch (in, path, IN_CREATE | IN_MOVED_TO) < 0)
    return 255;
  (void) !write (ready, "", 1);
  unsigned refused = 0;
  char buf[4096] __attribute__ ((aligned (__alignof__(struct inotify_event))));
  for (;;)
    {
      ssize_t n = read (in, buf, sizeof buf);
      for (char *p = buf; n > 0 && p < buf + n;)
        {
          struct inotify_event *ev = (struct inotify_event *) p;
          p += sizeof *ev + ev->len;
          if (ev->len == 0 || ev->name[0] == '.')
            continue;
          if (strcmp (ev->name, "stop") == 0)
            return refused > 254 ? 254 : (int) refused;
          ar_error_t *err = NULL;
          int sock = ar_seqpacket_connect_at (dir, ev->name, &err);
          if (sock >= 0)
            close (sock);
          else if (err->errno_value == ECONNREFUSED)
            refused++;
          ar_error_free (err);
        }
    }
}

static void
test_name_appears_listening (void)
{
  int dir = open (top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int ready[2];
  CHECK (dir >= 0 && pipe (ready) == 0);
  pid_t peer = fork ();
  if (peer == 0)
    _exit (eager_peer (dir, ready[1]));
  char c;
  CHECK (read (ready[0], &c, 1) == 1);
  for (int i = 0; i < ROUNDS; i++)
    {
      char name[32];
      snprintf (name, sizeof name, "s%d", i);
      ar_error_t *err = NULL;
      int sock = ar_seqpacket_listen_at (dir, name, &err);
      CHECK (sock >= 0);
      /* Open until the peer's connect landed (a loaded machine may take
       * long): a refusal can then only come before listen. */
      struct pollfd pfd = { .fd = sock, .events = POLLIN };
      if (sock >= 0 && poll (&pfd, 1, 5000) == 1)
        close (accept4 (sock, NULL, NULL, SOCK_CLOEXEC));
      if (sock >= 0)
        close (sock);
      unlinkat (dir, name, 0);
      ar_error_free (err);
    }
  close (openat (dir, "stop", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  int status = 0;
  CHECK (waitpid (peer, &status, 0) == peer);
  CHECK_INT (WIFEXITED (status) ? WEXITSTATUS (status) : -1, 0);
  unlinkat (dir, "stop", 0);
  CHECK_INT (entries (dir), 0);
  close (ready[0]);
  close (ready[1]);
  close (dir);
}

static void
test_taken_name_left_alone (void)
{
  int dir = open (top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  CHECK (dir >= 0);
  ar_error_t *err = NULL;
  int first = ar_seqpacket_listen_at (dir, "taken", &err);
  CHECK (first >= 0);
  int second = ar_seqpacket_listen_at (dir, "taken", &err);
  CHECK (second < 0);
  CHECK (err != NULL && err->errno_value == EEXIST);
  CHECK (err != NULL && strstr (ar_error_text (err), "`taken`") != NULL);
  ar_error_free (err);
  CHECK_INT (entries (dir), 1);
  /* The first still answers. */
  err = NULL;
  int sock = ar_seqpacket_connect_at (dir, "taken", &err);
  CHECK (sock >= 0);
  close (sock);
  close (first);
  unlinkat (dir, "taken", 0);
  close (dir);
}

int
main (void)
{
  CHECK (mkdtemp (top) != NULL);
  RUN (test_name_appears_listening);
  RUN (test_taken_name_left_alone);
  rmdir (top);
  return unit_finish ();
}
