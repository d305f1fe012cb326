#include "config.h"
#include "cmd.h"
#include "../core/container.h"
#include "../core/terminal.h"
#include "../util/cleanup.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

static const ar_option options[] = {
  AR_CREATE_OPTIONS,
  { "detach", 'd', false, "start the container and return at once" },
  { "keep", 0, false, "do not delete the container after it exits" },
  { 0 }
};
enum
{
  OPT_DETACH = AR_CREATE_OPTIONS_COUNT,
  OPT_KEEP
};

static const ar_command_doc doc = {
  "run", "[OPTIONS] CONTAINER_ID",
  "Create and start a container, wait for it, delete it, and exit with its status."
};

/* The init we forward signals to while we wait for it. */
static volatile pid_t forward_pid;

static void
forward_signal (int sig)
{
  if (forward_pid > 0)
    kill (forward_pid, sig);
}

static void
install_forwarding (pid_t pid)
{
  static const int sigs[] = { SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,
                              SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };
  forward_pid = pid;
  struct sigaction sa = { .sa_handler = forward_signal, .sa_flags = SA_RESTART };
  sigemptyset (&sa.sa_mask);
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    sigaction (sigs[i], &sa, NULL);
}

static int
wait_exit_status (pid_t pid, ar_error_t **err)
{
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return ar_error_set (err, errno, "wait for container init");
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return WEXITSTATUS (status);
}

int
ar_cmd_run (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  ar_parsed p;
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("run", &p, 1, "CONTAINER_ID", err) < 0)
    return -1;
  ar_create_options opts;
  if (ar_create_options_fill (g, &p, &opts, err) < 0)
    return -1;
  bool detach = ar_flag (&p, OPT_DETACH);
  opts.started_by_parent = true;

  ar_created created;
  if (ar_container_create (&opts, &created, err) < 0)
    return -1;
  cleanup_close int pidfd = created.pidfd;
  cleanup_close int pty = created.pty_master;
  if (!detach)
    install_forwarding (created.pid);
  if (ar_container_release (g->root, opts.id, &created, err) < 0)
    {
      cleanup_error ar_error_t *ignored = NULL;
      ar_container_delete (g->root, opts.id, true, &ignored);
      return -1;
    }
  if (detach)
    return 0;

  if (pty >= 0 && ar_terminal_proxy (pty, err) < 0)
    {
      /* The workload goes on; report the proxy failure after it ends. */
      fprintf (stderr, "agentrun: %s\n", (*err)->msg);
      ar_error_freep (err);
    }
  int status = wait_exit_status (created.pid, err);
  forward_pid = 0;
  if (status < 0)
    return -1;
  if (!ar_flag (&p, OPT_KEEP)
      && ar_container_delete (g->root, opts.id, true, err) < 0)
    return -1;
  return status;
}
