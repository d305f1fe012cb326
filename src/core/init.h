/* SPDX-License-Identifier: Apache-2.0 */
/* The container init: the process clone() makes, which sets the container
 * up from the inside and finally execs the workload. */
#ifndef AR_CORE_INIT_H
#define AR_CORE_INIT_H

#include "../../oci/spec.h"
#include "cgroups/cgroups.h"
#include "namespaces.h"
#include "seccomp.h"
#include <stdbool.h>

typedef struct
{
  const oci_spec *spec;
  const char *id;
  const char *bundle;
  const char *rootfs; /* absolute host path */
  int sync_fd;        /* our end of the sync pair */
  int fifo_fd;        /* O_PATH fd of exec.fifo; -1 when started by sync */
  ar_ns_joins *joins;
  const ar_seccomp_program *seccomp; /* compiled by the parent; NULL: none */
  int unshare_flags;  /* namespaces to unshare after joining (user joined) */
  bool new_userns;    /* made by the clone: its maps written by the parent */
  bool joined_userns; /* by path: the init starts in it (see spawn_init) */
  bool no_pivot;
  bool no_new_keyring;
  int preserve_fds;           /* listen_fds included */
  const int *bind_source_fds; /* per spec->mounts entry, or NULL */
  int listen_fds;             /* LISTEN_FDS for the workload, 0: none */
  bool die_with_parent;       /* the runtime waits for us: die when it does */
  bool reaper; /* stay as PID 1 and fork the workload (reaper.h) */
  /* Once ready, wait to be taken (take.h): the command and its stdio
   * come from the taker, not process.args. */
  bool await_take;
  /* The v1 cgroups to move into once released, or NULL (cgroups.h). */
  ar_cgroup_self_move *cgroup_self_move;
} ar_init_config;

/* Never returns: execs the workload or _exits non-zero after sending the
 * error to the parent. */
_Noreturn void ar_init_main (const ar_init_config *cfg);

#endif
