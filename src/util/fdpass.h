/* Passing a file descriptor to another process over a unix socket
 * (SCM_RIGHTS): the console socket and the seccomp listener. */
#ifndef AR_UTIL_FDPASS_H
#define AR_UTIL_FDPASS_H

#include "error.h"

/* Send `fd` with `payload` as the data over the connected stream socket
 * `sock`; at least one byte goes along, or the peer may not see the
 * message. A payload longer than one sendmsg follows as plain data. */
int ar_fd_send (int sock, int fd, const char *payload, ar_error_t **err);

/* Connect to the unix socket at `path` and send `fd` and `payload` there.
 * Errors name the path. */
int ar_fd_send_to_path (const char *path, int fd, const char *payload,
                        ar_error_t **err);

#endif
