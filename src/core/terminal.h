/* SPDX-License-Identifier: Apache-2.0 */
/* Terminals: the pty a container with process.terminal gets. */
#ifndef AR_CORE_TERMINAL_H
#define AR_CORE_TERMINAL_H

#include "../util/error.h"

/* Open a new pty through `ptmx_path` (the container's <rootfs>/dev/ptmx, so
 * the slave lives in the container's devpts). Returns the master fd
 * (O_CLOEXEC) and sets *slave_path to the slave's path reachable through
 * `devpts_dir` (e.g. "<rootfs>/dev/pts/3"). */
int ar_terminal_open_pty (const char *ptmx_path, const char *devpts_dir,
                          int *master_fd, char **slave_path, ar_error_t **err);

/* In the container process: open the slave, make it the controlling tty of
 * a new session and dup it onto 0, 1 and 2. Console size applied when set. */
int ar_terminal_become_stdio (const char *slave_path, unsigned rows,
                              unsigned cols, ar_error_t **err);

/* Send `fd` over SCM_RIGHTS to the unix socket at `socket_path`, as the
 * runc --console-socket protocol expects. */
int
ar_terminal_send_to_socket (const char *socket_path, int fd, ar_error_t **err);

/* For `run` in the foreground with a terminal: copy stdin to the master and
 * the master to stdout (raw mode when stdin is a tty, window size
 * forwarded) until the master hangs up. Returns 0 or -1 with *err. */
int ar_terminal_proxy (int master_fd, ar_error_t **err);

#endif
