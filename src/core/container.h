/* SPDX-License-Identifier: Apache-2.0 */
/* Container lifecycle, as the CLI verbs drive it. */
#ifndef AR_CORE_CONTAINER_H
#define AR_CORE_CONTAINER_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include "launcher_wire.h" /* AR_DEFAULT_ROOT */
#include <stdbool.h>
#include <sys/types.h>

typedef struct ar_create_options
{
  const char *root; /* state root (--root) */
  const char *id;
  const char *profile; /* agent policy profile (--profile); NULL: default */
  bool systemd_cgroup; /* --systemd-cgroup: the cgroup is a systemd unit */
  /* --rootless: a cgroup this user may not make is no error unless the
   * spec asks for limits; those are refused, or with
   * ignore_unenforced_limits dropped with a warning that names them. */
  bool rootless;
  bool ignore_unenforced_limits;
  /* Who asked for the limits, for that refusal ("sandbox: --memory");
   * NULL: config.json's .linux.resources. */
  const char *limits_asked_by;
  bool trust_caller; /* sandbox: annotations come from the host user */
  /* run and sandbox in the foreground: the caller waits for the init and
   * enforces the wall-clock limit itself (see ar_created), so no watchdog
   * process is needed. */
  bool caller_waits;
  const char *bundle; /* NULL: the current directory */
  /* sandbox: the spec in memory instead of a bundle's config.json (whose
   * .root.path is then absolute): no bundle is written and read back, and
   * the state dir, which holds the spec as config.json, is the bundle. */
  const char *config_json;
  const char *pid_file;
  const char *console_socket;
  bool no_pivot;
  bool no_new_keyring;
  int preserve_fds;
  /* Socket activation: fds 3.. from systemd (LISTEN_FDS), passed on before
   * the preserved ones, with LISTEN_FDS and LISTEN_PID set for the
   * process as runc does. */
  int listen_fds;
  /* run: the parent starts the init through the sync channel instead of
   * exec.fifo, and keeps the pty master instead of sending it away. */
  bool started_by_parent;
  /* sandbox: the init stays as PID 1, reaps and passes signals on to the
   * whole namespace (core/reaper.h); the command is its child. */
  bool init_reaper;
  /* run (without --keep) and sandbox delete the container when it ends:
   * should this process die first, a later create or list does it. */
  bool delete_when_done;
  /* sandbox: its own command line (NULL-terminated), for the audit log. */
  char *const *command_line;
  /* sandbox --pool: once ready the init waits to be taken (take.h), not
   * started; with started_by_parent, and a caller that does not wait:
   * whoever takes it waits, and enforces the wall-clock limit. */
  bool await_take;
  /* rollback: a new init for the stopped container `id`, from its state
   * dir's spec, plan and cgroup; nothing else is made, and a failure
   * leaves it stopped as it was. `bundle` and `profile` are unused. */
  bool restart;
  /* restore: the processes come from these CRIU images (criu.h), not
   * from a new init; the rest is made as for a create. */
  const struct ar_criu_options *restore;
} ar_create_options;

/* What a create hands back to a caller that stays around (run). */
typedef struct
{
  pid_t pid;
  int pidfd;
  int sync_fd;                /* -1 unless started_by_parent */
  int pty_master;             /* -1 unless started_by_parent with a terminal */
  int64_t wall_clock_seconds; /* > 0: the caller must kill the init then */
  int64_t started_ms; /* ar_now_ms () when ar_container_release let it go */
  /* Taken from a pool (take.h): not this process's child, so its end is
   * seen on the pidfd and the command's status comes from its report. */
  bool adopted;
} ar_created;

/* mkdir -p the state root (--root) or a directory in it; a caller without
 * root that may not is told where its state belongs. */
int ar_container_make_root (const char *root, ar_error_t **err);

int ar_container_create (const ar_create_options *opts, ar_created *out,
                         ar_error_t **err);
/* Close the descriptors a create handed over (a cleanup attribute's job:
 * ar_container_create sets them to -1 first, so it is safe on failure). */
void ar_created_close (ar_created *created);
#define cleanup_created __attribute__ ((cleanup (ar_created_close)))

/* run: release an init created with started_by_parent, run poststart. */
int ar_container_release (const char *root, const char *id, ar_created *created,
                          ar_error_t **err);

int ar_container_start (const char *root, const char *id, ar_error_t **err);

int ar_container_kill (const char *root, const char *id, int signal, bool all,
                       ar_error_t **err);

int ar_container_delete (const char *root, const char *id, bool force,
                         ar_error_t **err);

/* Prints the OCI state JSON of one container to stdout. */
int
ar_container_print_state (const char *root, const char *id, ar_error_t **err);

/* Open <root>/<id>; a missing container is "container `id` does not exist". */
int ar_container_open_dir (const char *root, const char *id, ar_error_t **err);

/* The absolute path of <root>/<id>: mounts made under it are named by
 * this path, so a relative --root must not leak into them. */
char *
ar_container_state_path (const char *root, const char *id, ar_error_t **err);

struct ar_state;
struct ar_cgroup;

/* Open the state dir and load the record: the start of most verbs. */
int ar_container_load (const char *root, const char *id, int *state_fd,
                       struct ar_state **state, ar_error_t **err);

/* The container's cgroup; *cg is NULL when it has none. */
int ar_container_cgroup (const struct ar_state *state, struct ar_cgroup **cg,
                         ar_error_t **err);
/* The same for a verb that needs one: "container `ID` has no cgroup WHAT"
 * (WHAT: "to freeze", ...) when it has none. */
int ar_container_cgroup_for (const struct ar_state *state, const char *what,
                             struct ar_cgroup **cg, ar_error_t **err);

/* Every process of the container killed, its init waited for, and the
 * poststop hooks of that run run: it is stopped, with its state dir,
 * cgroup and resources kept for a restart (ar_create_options.restart). */
int ar_container_stop (const char *root, const char *id, ar_error_t **err);

/* pause / resume through the freezer. */
int ar_container_pause (const char *root, const char *id, bool pause,
                        ar_error_t **err);

/* The spec the container was created with (<state>/config.json). */
int ar_container_load_spec (int state_fd, oci_spec **spec, ar_error_t **err);

/* Append an event to the container's audit log, when it has one. */
void ar_container_audit (const char *root, const char *id, const char *event,
                         const char *fields_json);

/* run/sandbox: wait for the init (see ar_foreground_wait), enforce the
 * wall-clock limit of `created`, and audit how it ended; a limit that was
 * hit is also one line on stderr, "agentrun: WHO: ...". Returns the exit
 * status, or -1 with *err; *outcome (when not NULL) says how it ended. */
struct ar_run_outcome;
int ar_container_wait (const char *root, const char *id, const char *who,
                       const ar_created *created,
                       struct ar_run_outcome *outcome, ar_error_t **err);

/* sandbox: the workspace's changes in git's diff format, as `req` asks
 * (see ar_workspace_export_diff). */
struct ar_diff_request;
int ar_container_workspace_diff (const char *root, const char *id,
                                 const struct ar_diff_request *req,
                                 ar_error_t **err);

/* Delete the containers whose supervising run or sandbox died before it
 * could (delete_when_done), once their init is gone too. */
void ar_container_reap_abandoned (const char *root);

/* Host pids of every process in the container. */
int ar_container_pids (const char *root, const char *id, pid_t **pids,
                       size_t *n, ar_error_t **err);

#endif
