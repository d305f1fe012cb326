/* SPDX-License-Identifier: Apache-2.0 */
/* Scoped secrets: host files copied into a per-container tmpfs (never to
 * disk), bind-mounted read-only into the container, zeroed and unmounted
 * at delete. Secret bytes are held in memory only to scan /output for
 * them; they never reach an error message, a log or the state dir. */
#ifndef AR_AGENT_SECRETS_H
#define AR_AGENT_SECRETS_H

#include "agent.h"
#include <stddef.h>
#include <sys/types.h>

#define AR_SECRETS_DIR "secrets"               /* below the state dir */
#define AR_SECRETS_DEFAULT_PATH "/run/secrets" /* in the container */
#define AR_SECRET_MAX_BYTES (1u << 20)

/* Mount the tmpfs at <state_dir>/secrets and copy each plan secret into it
 * as a 0400 file owned by uid:gid (host ids). The tmpfs root becomes
 * 0500 uid:gid. On failure nothing is left mounted. */
int ar_secrets_prepare (const ar_agent_plan *plan, const char *state_dir,
                        uid_t uid, gid_t gid, ar_error_t **err);

/* Zero the secret files, unmount the tmpfs, remove the directory. Safe
 * when nothing is mounted. */
int ar_secrets_teardown (const char *state_dir, ar_error_t **err);

/* For the exec path, when plan->secrets_main_only: called in the exec'd
 * process after it has joined the container's mount namespace and before
 * it drops privileges. Gives the process a mount namespace of its own
 * (slave of the container's, so nothing propagates back) in which
 * `secrets_path` (NULL: the default) is no longer the secrets tmpfs. */
int ar_secrets_hide (const char *secrets_path, ar_error_t **err);

/* The secrets' contents, to look for them in exported files. */
typedef struct
{
  char *name;
  unsigned char *bytes;
  size_t len;
} ar_secret_value;

typedef struct
{
  ar_secret_value *items;
  size_t n;
  size_t longest;
} ar_secret_set;

/* Read the secrets from the tmpfs (or, when it is not mounted, from their
 * host files). Missing files are skipped; empty ones too, since they
 * would match everything. */
int ar_secrets_load (const ar_agent_plan *plan, const char *state_dir,
                     ar_secret_set *set, ar_error_t **err);

/* Zero and free. */
void ar_secret_set_clear (ar_secret_set *set);

/* The name of the first secret whose bytes occur in buf, or NULL. */
const char *
ar_secret_set_find (const ar_secret_set *set, const void *buf, size_t len);

/* Why a name (a file's, or a path) must not be shown outside the
 * sandbox: "name contains secret NAME" or "name is not printable UTF-8"
 * (caller frees); NULL when it may be shown. */
char *ar_secret_name_problem (const ar_secret_set *set, const char *name);

/* Read `fd` to its end and say which secret it holds (*found, NULL when
 * none), with the streaming search below. */
int ar_secret_scan_fd (const ar_secret_set *set, int fd, const char **found,
                       ar_error_t **err);

/* Streaming search: feed a file in pieces of any size; a secret split
 * across pieces is still found. Memory: the longest secret plus 64 KiB. */
typedef struct
{
  const ar_secret_set *set;
  unsigned char *window; /* the tail of what came before, then new data */
  size_t kept;
  const char *found; /* the first secret seen, NULL so far */
} ar_secret_scanner;

void ar_secret_scanner_init (ar_secret_scanner *s, const ar_secret_set *set);
void ar_secret_scanner_feed (ar_secret_scanner *s, const void *buf, size_t len);
void ar_secret_scanner_clear (ar_secret_scanner *s);

#endif
