/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by create.c and container.c only. */
#ifndef AR_CORE_CONTAINER_INTERNAL_H
#define AR_CORE_CONTAINER_INTERNAL_H

#include "../../oci/spec.h"
#include "policy_stage.h"
#include "../util/error.h"
#include <stdbool.h>
#include <sys/types.h>

/* Remove the state dir's files and the dir itself. */
void ar_container_remove_state_dir (int root_fd, const char *id, int state_fd);

/* Wait (bounded) for a process to be gone; works for non-children too. */
void ar_wait_pidfd_exit (int pidfd, pid_t pid, int timeout_ms);

/* This process supervises the container (its state dir `state_fd`): a
 * later create deletes it once this process and the init are gone. */
int ar_container_record_supervisor (int state_fd, ar_error_t **err);

struct ar_state;
/* poststart and poststop: the spec says a failing one is a warning, and
 * the lifecycle goes on. */
void ar_container_run_hooks_of (const oci_spec *spec, const ar_plan *plan,
                                const struct ar_state *st, bool poststart);

#endif
