/* SPDX-License-Identifier: Apache-2.0 */
/* The last steps before exec, shared by the container init and `exec`. */
#ifndef AR_CORE_PROCESS_H
#define AR_CORE_PROCESS_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include <sys/types.h>

/* Check the process section before anything is created: rlimit names,
 * capability names, cwd absolute, args non-empty. */
int ar_process_validate (const oci_process *process, ar_error_t **err);

/* Find args[0] using the PATH of process->env (as seen from the current
 * root), as execvp would; errors like runc: `exec: "foo": executable file
 * not found in $PATH`. Returns a malloc'd path. */
char *ar_process_find_executable (const oci_process *process, ar_error_t **err);

/* The environment to execve with: the process's own, plus HOME from the
 * container's /etc/passwd (or "/") when it has none, as runc sets it.
 * Call inside the container root, in the child about to exec. */
char **ar_process_exec_env (const oci_process *process);

/* envp (from ar_process_exec_env) without LISTEN_FDS/LISTEN_PID, plus
 * LISTEN_FDS=n and LISTEN_PID=getpid(): socket activation for the process
 * about to exec. */
char **ar_process_env_add_listen_fds (char **envp, int n);

/* setrlimit for each process.rlimits entry. */
int ar_process_set_rlimits (const oci_process *process, ar_error_t **err);

/* scheduler, ioPriority, umask (default 0022). */
int ar_process_set_attributes (const oci_process *process, ar_error_t **err);

/* process.oomScoreAdj of the process `pid` (0: this one). A container's
 * init in a user namespace of its own has it written by the runtime: its
 * /proc files are host root's until it execs (a change of ids made it
 * undumpable), and its mapped root may not write them. */
int ar_process_set_oom_score_adj (const oci_process *process, pid_t pid,
                                  ar_error_t **err);

/* setgroups/setgid/setuid to process.user, keeping capabilities so that
 * ar_caps_apply can set them afterwards. */
int ar_process_set_user (const oci_process *process, ar_error_t **err);

/* Foreground run, sandbox and exec: SIGKILL this process when the runtime
 * that forked it dies. Called after the last change of credentials (which
 * clears the setting). The parent may have died before the call; getppid()
 * cannot tell (it is 0 across a pid namespace), but `parent_fd`, a socket
 * whose other end only the parent holds, has hung up then. */
int ar_process_die_with_parent (int parent_fd, ar_error_t **err);

#endif
