/* SPDX-License-Identifier: Apache-2.0 */
/* checkpoint and restore: runc's verbs and flags, so engines and scripts
 * find them; there is no CRIU support yet, and each says so in one line
 * instead of pretending. */
#include "config.h"
#include "cmd.h"
#include "../core/container.h"
#include "../util/cleanup.h"

#include <unistd.h>

#define CRIU_FLAGS                                                             \
  { "image-path", 0, true, "where the checkpoint images go" },                 \
      { "work-path", 0, true, "where CRIU's logs and work files go" },         \
      { "tcp-established", 0, false, "allow open TCP connections" },           \
      { "ext-unix-sk", 0, false, "allow external unix sockets" },              \
      { "shell-job", 0, false, "allow a shell job" },                          \
      { "file-locks", 0, false, "handle file locks" },                         \
      { "manage-cgroups-mode", 0, true, "soft, full or strict" },              \
      { "empty-ns", 0, true, "a namespace to leave out" },                     \
      { "auto-dedup", 0, false, "deduplicate images" },                        \
  {                                                                            \
    "lazy-pages", 0, false, "lazy migration"                                   \
  }

static const ar_option checkpoint_options[] = {
  CRIU_FLAGS,
  { "parent-path", 0, true, "a previous checkpoint (pre-dump)" },
  { "leave-running", 0, false,
    "leave the process running after the checkpoint" },
  { "page-server", 0, true, "ADDRESS:PORT of a page server" },
  { "status-fd", 0, true, "an fd told when the lazy page server is ready" },
  { "pre-dump", 0, false, "dump memory only, leave the container running" },
  { 0 }
};
AR_OPTIONS_FIT (checkpoint_options);

static const ar_option restore_options[]
    = { CRIU_FLAGS,
        { "bundle", 'b', true, "the container's bundle" },
        { "console-socket", 0, true,
          "a unix socket to send the pty master to" },
        { "detach", 'd', false, "detach from the restored container" },
        { "pid-file", 0, true, "write the restored init's pid here" },
        { "no-subreaper", 0, false, "do not become a subreaper" },
        { "no-pivot", 0, false, "do not use pivot_root" },
        { "lsm-profile", 0, true, "an LSM profile for the restored process" },
        { "lsm-mount-context", 0, true, "an LSM mount context" },
        { 0 } };
AR_OPTIONS_FIT (restore_options);

static const ar_command_doc checkpoint_doc = {
  "checkpoint", "[OPTIONS] CONTAINER_ID",
  "Checkpoint a running container with CRIU (not supported by this build)."
};

static const ar_command_doc restore_doc = {
  "restore", "[OPTIONS] CONTAINER_ID",
  "Restore a container from a CRIU checkpoint (not supported by this build)."
};

static int
not_supported (const char *verb, ar_error_t **err)
{
  return ar_error_set (err, 0,
                       "%s: not supported: this build of "
                       "agentrun has no CRIU checkpoint/restore",
                       verb);
}

int
ar_cmd_checkpoint (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r
      = ar_cmd_parse (&checkpoint_doc, checkpoint_options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("checkpoint", &p, 1, "CONTAINER_ID", err) < 0)
    return -1;
  /* An unknown container is that error first, as runc reports it. */
  cleanup_close int state_fd = ar_container_open_dir (g->root, p.args[0], err);
  if (state_fd < 0)
    return -1;
  return not_supported ("checkpoint", err);
}

int
ar_cmd_restore (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  (void) g;
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&restore_doc, restore_options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("restore", &p, 1, "CONTAINER_ID", err) < 0)
    return -1;
  return not_supported ("restore", err);
}
