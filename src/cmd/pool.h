/* SPDX-License-Identifier: Apache-2.0 */
/* Pools of sandboxes made ahead (agentrun pool, sandbox --pool): each a
 * whole sandbox, created with the pool's options, whose init waits on a
 * socket to be given a command (core/take.h). A pool lives in
 * <root>/.pool/NAME: `options` and `globals` (NUL-separated, as `pool
 * create` was given them), `size`, `ready/` (one socket per waiting
 * sandbox, named by its container id), `taken/` (sockets being handed
 * over), `lock` (one filler at a time) and `fill.log` (the background
 * filler's errors). A sandbox is claimed by renaming its socket from
 * ready/ to taken/: two takers never get the same one. */
#ifndef AR_CMD_POOL_H
#define AR_CMD_POOL_H

#include "cmd.h"
#include "../util/error.h"
#include <sys/types.h>

typedef struct
{
  char *id;      /* the container's */
  int taken_fd;  /* taken/, where its socket now is (named by the id) */
  pid_t filler;  /* the filler a claim that found none ready started */
  bool refilled; /* ar_pool_refill started one since the claim */
} ar_pool_member;

void ar_pool_member_clear (ar_pool_member *m);
#define cleanup_pool_member __attribute__ ((cleanup (ar_pool_member_clear)))

/* Claim a ready sandbox of pool `name`. With none ready, start a filler
 * in the background and wait for its next one; its failure is the error. */
int ar_pool_claim (const ar_globals *g, const char *name, ar_pool_member *m,
                   ar_error_t **err);

/* The launcher claimed `id` of pool `name` (core/take.h): it is in
 * taken/, now this process's member. */
int ar_pool_adopt_claim (const ar_globals *g, const char *name, const char *id,
                         ar_pool_member *m, ar_error_t **err);

/* Once the claimed sandbox is taken: a filler in the background makes
 * its successor (once per claim; also after a claim that waited, whose
 * own filler may have found the pool whole while the sandbox it waited
 * for was still unclaimed). */
void ar_pool_refill (const ar_globals *g, const char *name, ar_pool_member *m);

/* The claimed socket is no longer needed (connected, or the sandbox is
 * being deleted). */
void ar_pool_release_socket (ar_pool_member *m);

/* sandbox.c: make one ready sandbox from a pool's sandbox options (a
 * sandbox's, without a command and without what each call gives: an
 * error names the flag), its socket `id` in `ready_fd`. A maker without
 * root, `in_own_namespaces` (core/rootless.h), leaves a holder of them. */
int ar_sandbox_make_ready (const ar_globals *g, char **options,
                           size_t n_options, const char *id, int ready_fd,
                           bool in_own_namespaces, ar_error_t **err);

#endif
