/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by create.c and container.c only. */
#ifndef AR_CORE_CONTAINER_INTERNAL_H
#define AR_CORE_CONTAINER_INTERNAL_H

#include <sys/types.h>

/* Remove the state dir's files and the dir itself. */
void ar_container_remove_state_dir (int root_fd, const char *id, int state_fd);

/* Wait (bounded) for a process to be gone; works for non-children too. */
void ar_wait_pidfd_exit (int pidfd, pid_t pid, int timeout_ms);

#endif
