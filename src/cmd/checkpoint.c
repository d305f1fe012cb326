/* SPDX-License-Identifier: Apache-2.0 */
/* checkpoint and restore: runc's verbs and flags, as containerd and Podman
 * call them, carried out by CRIU (core/criu.h). */
#include "config.h"
#include "cmd.h"
#include "../core/container.h"
#include "../core/criu.h"
#include "../core/foreground.h"
#include "../util/cleanup.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CRIU_FLAGS                                                             \
  { "image-path", 0, true,                                                     \
    "where the checkpoint images go (default: ./checkpoint)" },                \
      { "work-path", 0, true,                                                  \
        "where CRIU's logs and work files go (default: the image path)" },     \
      { "tcp-established", 0, false, "allow open TCP connections" },           \
      { "ext-unix-sk", 0, false, "allow external unix sockets" },              \
      { "shell-job", 0, false, "allow a shell job" },                          \
      { "file-locks", 0, false, "handle file locks" },                         \
      { "manage-cgroups-mode", 0, true,                                        \
        "soft (default), full, strict or ignore" },                            \
      { "empty-ns", 0, true, "a namespace to leave out (network)", true },     \
      { "auto-dedup", 0, false, "deduplicate images" },                        \
  {                                                                            \
    "lazy-pages", 0, false, "lazy migration (not supported)"                   \
  }
enum
{
  OPT_IMAGE_PATH,
  OPT_WORK_PATH,
  OPT_TCP_ESTABLISHED,
  OPT_EXT_UNIX_SK,
  OPT_SHELL_JOB,
  OPT_FILE_LOCKS,
  OPT_MANAGE_CGROUPS_MODE,
  OPT_EMPTY_NS,
  OPT_AUTO_DEDUP,
  OPT_LAZY_PAGES,
  CRIU_FLAGS_COUNT
};

static const ar_option checkpoint_options[] = {
  CRIU_FLAGS,
  { "parent-path", 0, true, "a previous checkpoint (pre-dump)" },
  { "leave-running", 0, false,
    "leave the process running after the checkpoint" },
  { "page-server", 0, true, "ADDRESS:PORT of a page server (not supported)" },
  { "status-fd", 0, true,
    "an fd told when the lazy page server is ready (not supported)" },
  { "pre-dump", 0, false, "dump memory only, leave the container running" },
  { 0 }
};
enum
{
  OPT_PARENT_PATH = CRIU_FLAGS_COUNT,
  OPT_LEAVE_RUNNING,
  OPT_PAGE_SERVER,
  OPT_STATUS_FD,
  OPT_PRE_DUMP
};
AR_OPTIONS_MATCH (checkpoint_options, OPT_PRE_DUMP);

static const ar_option restore_options[]
    = { CRIU_FLAGS,
        { "bundle", 'b', true, "the container's bundle (default: .)" },
        { "console-socket", 0, true,
          "a unix socket to send the new terminal's pty master to" },
        { "detach", 'd', false,
          "leave the restored container running and return" },
        { "pid-file", 0, true, "write the restored init's pid here" },
        { "no-subreaper", 0, false,
          "do not become a subreaper (agentrun never does)" },
        { "no-pivot", 0, false,
          "do not use pivot_root (not supported: CRIU pivots)" },
        { "lsm-profile", 0, true, "an LSM profile for the restored process" },
        { "lsm-mount-context", 0, true, "an LSM mount context" },
        { 0 } };
enum
{
  OPT_BUNDLE = CRIU_FLAGS_COUNT,
  OPT_CONSOLE_SOCKET,
  OPT_DETACH,
  OPT_PID_FILE,
  OPT_NO_SUBREAPER,
  OPT_NO_PIVOT,
  OPT_LSM_PROFILE,
  OPT_LSM_MOUNT_CONTEXT
};
AR_OPTIONS_MATCH (restore_options, OPT_LSM_MOUNT_CONTEXT);

static const ar_command_doc checkpoint_doc = {
  "checkpoint", "[OPTIONS] CONTAINER_ID",
  "Checkpoint a running container with CRIU; unless --leave-running, it is then deleted."
};

static const ar_command_doc restore_doc = {
  "restore", "[OPTIONS] CONTAINER_ID",
  "Restore a container from a CRIU checkpoint, under a new or the same id."
};

static int
unsupported (const ar_parsed *p, const int *flags, size_t n,
             const ar_option *table, ar_error_t **err)
{
  for (size_t i = 0; i < n; i++)
    if (p->present[flags[i]])
      return ar_error_set (err, 0, "--%s: not supported by agentrun",
                           table[flags[i]].long_name);
  return 0;
}

/* The flags both verbs share; `path` keeps the default image path. */
static int
criu_options_fill (const ar_parsed *p, ar_criu_options *o, char **path,
                   ar_error_t **err)
{
  const char *mode = p->value[OPT_MANAGE_CGROUPS_MODE];
  if (mode && strcmp (mode, "soft") != 0 && strcmp (mode, "full") != 0
      && strcmp (mode, "strict") != 0 && strcmp (mode, "ignore") != 0)
    return ar_error_set (
        err, 0,
        "--manage-cgroups-mode: `%s` is not soft, full, strict or ignore",
        mode);
  for (size_t i = 0; i < p->n_multi[OPT_EMPTY_NS]; i++)
    if (strcmp (p->multi[OPT_EMPTY_NS][i], "network") != 0)
      return ar_error_set (err, 0,
                           "--empty-ns: `%s`: only network can be left out",
                           p->multi[OPT_EMPTY_NS][i]);
  if (p->value[OPT_IMAGE_PATH] == NULL)
    {
      cleanup_free char *cwd = getcwd (NULL, 0);
      if (cwd == NULL)
        return ar_error_set (err, 0, "--image-path: none given, and no cwd");
      *path = xasprintf ("%s/checkpoint", cwd);
    }
  *o = (ar_criu_options){
    .image_path = *path ? *path : p->value[OPT_IMAGE_PATH],
    .work_path = p->value[OPT_WORK_PATH],
    .manage_cgroups_mode = mode,
    .empty_ns = p->multi[OPT_EMPTY_NS],
    .tcp_established = ar_flag (p, OPT_TCP_ESTABLISHED),
    .ext_unix_sk = ar_flag (p, OPT_EXT_UNIX_SK),
    .shell_job = ar_flag (p, OPT_SHELL_JOB),
    .file_locks = ar_flag (p, OPT_FILE_LOCKS),
    .auto_dedup = ar_flag (p, OPT_AUTO_DEDUP),
  };
  return 0;
}

/* A verb's flags into `o`, those agentrun does not support refused: 1
 * when --help was printed, -1 on an error. */
static int
parse_verb (const ar_command_doc *doc, const ar_option *table,
            const int *refused, size_t n_refused, int argc, char **argv,
            ar_parsed *p, ar_criu_options *o, char **path, ar_error_t **err)
{
  int r = ar_cmd_parse (doc, table, argc, argv, p, err);
  if (r != 0)
    return r;
  if (ar_require_args (doc->verb, p, 1, "CONTAINER_ID", err) < 0
      || unsupported (p, refused, n_refused, table, err) < 0
      || criu_options_fill (p, o, path, err) < 0)
    return -1;
  return 0;
}

int
ar_cmd_checkpoint (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  static const int refused[]
      = { OPT_LAZY_PAGES, OPT_PAGE_SERVER, OPT_STATUS_FD };
  cleanup_parsed ar_parsed p = { 0 };
  cleanup_free char *path = NULL;
  ar_criu_options o;
  int r = parse_verb (&checkpoint_doc, checkpoint_options, refused, 3, argc,
                      argv, &p, &o, &path, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  o.parent_path = p.value[OPT_PARENT_PATH];
  o.leave_running = ar_flag (&p, OPT_LEAVE_RUNNING);
  o.pre_dump = ar_flag (&p, OPT_PRE_DUMP);
  return ar_container_checkpoint (g->root, p.args[0], &o, err);
}

int
ar_cmd_restore (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  static const int refused[] = { OPT_LAZY_PAGES, OPT_NO_PIVOT };
  cleanup_parsed ar_parsed p = { 0 };
  cleanup_free char *path = NULL;
  ar_criu_options o;
  int r = parse_verb (&restore_doc, restore_options, refused, 2, argc, argv, &p,
                      &o, &path, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  o.lsm_profile = p.value[OPT_LSM_PROFILE];
  o.lsm_mount_context = p.value[OPT_LSM_MOUNT_CONTEXT];
  o.console_socket = p.value[OPT_CONSOLE_SOCKET];
  bool detach = ar_flag (&p, OPT_DETACH);
  ar_create_options opts = {
    .root = g->root,
    .id = p.args[0],
    .profile = g->profile,
    .systemd_cgroup = g->systemd_cgroup,
    .rootless = g->rootless,
    .bundle = p.value[OPT_BUNDLE],
    .pid_file = p.value[OPT_PID_FILE],
    .caller_waits = !detach,
    .delete_when_done = !detach,
    .restore = &o,
  };
  if (g->rootless)
    return ar_error_set (err, 0,
                         "restore: needs root (CRIU restores as root only)");
  cleanup_created ar_created created;
  if (ar_container_create (&opts, &created, err) < 0)
    return -1;
  if (detach)
    return 0;
  ar_foreground_forward_signals (created.pid);
  int status
      = ar_container_wait (g->root, opts.id, "restore", &created, NULL, err);
  if (status < 0)
    return -1;
  if (ar_container_delete (g->root, opts.id, true, err) < 0)
    return -1;
  return status;
}
