/* SPDX-License-Identifier: Apache-2.0 */
/* Passing a file descriptor to another process over a unix socket
 * (SCM_RIGHTS): the runtime's sync socket with its init, the console
 * socket and the seccomp listener. */
#ifndef AR_UTIL_FDPASS_H
#define AR_UTIL_FDPASS_H

#include "error.h"
#include <stddef.h>
#include <sys/types.h>

/* One sendmsg of `len` bytes (at least one) with `fd` attached (-1:
 * none), retried on EINTR, never raising SIGPIPE: the bytes sent, or -1
 * with errno. */
ssize_t ar_fd_sendmsg (int sock, const void *data, size_t len, int fd);

/* One recvmsg of up to `len` bytes, retried on EINTR: the bytes read, or
 * -1 with errno. *fd is the fd that came with them (O_CLOEXEC), or -1;
 * any more than one are closed. */
ssize_t ar_fd_recvmsg (int sock, void *buf, size_t len, int *fd);

/* Connect to the unix socket at `path` and send `fd` and `payload` there.
 * Errors name the path. */
int ar_fd_send_to_path (const char *path, int fd, const char *payload,
                        ar_error_t **err);

/* A unix socket of `type` listening at `name` in the directory `dirfd`,
 * named through /proc/self/fd so that a deep directory stays within
 * sun_path's 108 bytes. `name` appears only once the socket listens (it
 * is bound aside and renamed into place), so a peer that finds it and
 * connects at once is never refused; a name already taken fails (EEXIST)
 * and leaves nothing. Errors name `name`. */
int ar_socket_listen_at (int dirfd, const char *name, int type, int backlog,
                         ar_error_t **err);

/* The same for SOCK_SEQPACKET (backlog 1), listening or connected. */
int ar_seqpacket_listen_at (int dirfd, const char *name, ar_error_t **err);
int ar_seqpacket_connect_at (int dirfd, const char *name, ar_error_t **err);

#endif
