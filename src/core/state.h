/* SPDX-License-Identifier: Apache-2.0 */
/* The persistent record of one container: <root>/<id>/state.json, written
 * by create and read by every later verb. Status is derived from the live
 * process, never stored, so a crash cannot leave a lie behind. */
#ifndef AR_CORE_STATE_H
#define AR_CORE_STATE_H

#include "../../oci/oci.h"
#include "../../oci/spec.h"
#include "../util/error.h"
#include "launcher_wire.h" /* AR_EXEC_FIFO, AR_AWAIT_TAKE_FILE */
#include <stdbool.h>
#include <sys/types.h>

#define AR_STATE_FILE "state.json"
#define AR_CONFIG_FILE "config.json"
#define AR_CGROUP_FILE                                                         \
  "cgroup" /* the cgroup a create made, before state.json */
#define AR_EXIT_LOGGED_FILE "exit-logged" /* run/sandbox audited the exit */
/* A delete that failed part way did the agent's teardown already. */
#define AR_AGENT_FINISHED_FILE "agent-finished"
/* "PID START_TIME" of the run or sandbox that will delete the container
 * when it ends: once that process is gone, nobody will. */
#define AR_SUPERVISOR_FILE "supervisor"
/* "PID START" of the process holding a pooled rootless sandbox's
 * namespaces (rootless.h) */
#define AR_NS_HOLDER_FILE "ns-holder"
/* The bundle was made for this container: a sandbox of a build before
 * its spec was handed to create in memory. Delete still removes it. */
#define AR_OWNED_BUNDLE_FILE "bundle-owned"
#define AR_CONFIG_MAX_SIZE (16u << 20) /* bytes of config.json we read */
/* Under the state root, beside the containers: not a valid container id. */
#define AR_SECCOMP_CACHE_DIR ".seccomp-cache"

typedef struct ar_state
{
  char *id;
  pid_t pid;                     /* host pid of the container init */
  unsigned long long start_time; /* field 22 of /proc/pid/stat: guards
                                    against pid reuse */
  char *bundle;
  char *rootfs;
  char *created; /* RFC 3339 */
  uid_t owner;
  char *cgroup; /* ar_cgroup_serialize() text; NULL when none */
  oci_map annotations;
} ar_state;

typedef enum
{
  AR_STATUS_CREATING,
  AR_STATUS_CREATED,
  AR_STATUS_RUNNING,
  AR_STATUS_PAUSED,
  AR_STATUS_STOPPED,
} ar_status;

const char *ar_status_name (ar_status status);

/* Reject ids that could escape the state root or confuse tools. */
int ar_state_validate_id (const char *id, ar_error_t **err);

/* Write / read <state_dir>/state.json. */
int ar_state_save (int state_dirfd, const ar_state *state, ar_error_t **err);
int ar_state_load (int state_dirfd, ar_state **out, ar_error_t **err);
void ar_state_free (ar_state *state);
void ar_state_freep (ar_state **state);
#define cleanup_state __attribute__ ((cleanup (ar_state_freep)))

/* True when the recorded init is still the same live process. */
bool ar_state_init_alive (const ar_state *state);

/* created / running / paused / stopped, from the process, the exec fifo
 * and the freezer. */
ar_status ar_state_status (int state_dirfd, const ar_state *state);

/* The OCI state of the container in `status` (pid omitted once stopped). */
oci_state ar_state_to_oci (const ar_state *state, ar_status status);

/* The OCI state JSON `agentrun state` prints (and hooks receive). */
char *
ar_state_to_oci_json (const ar_state *state, ar_status status, bool pretty);

/* Current time as RFC 3339 with nanoseconds, UTC. */
char *ar_now_rfc3339 (void);

#endif
