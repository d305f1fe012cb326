/* SPDX-License-Identifier: Apache-2.0 */
/* What `agentrun sandbox`'s own flags become, checked before anything is
 * made: the profile, the run.agentrun.* annotations (read by the policy's
 * own parser, the error naming the flag), host paths, and the command's
 * user, cwd, hostname and environment. */
#ifndef AR_CMD_SANDBOX_FLAGS_H
#define AR_CMD_SANDBOX_FLAGS_H

#include "../../oci/spec.h"
#include "../agent/agent.h"
#include "../util/error.h"
#include <stdbool.h>
#include <stddef.h>

/* The profile a sandbox runs under (NULL: agent), refused unless it has
 * the overlay that the workspace and every write live in. */
int
ar_sandbox_load_profile (const char *name, ar_profile **out, ar_error_t **err);

/* Every run.agentrun.* annotation of `spec` as the profile's policy will
 * read it; the error names the sandbox flag that made the annotation. */
int ar_sandbox_check_annotations (const ar_profile *profile,
                                  const oci_spec *spec, ar_error_t **err);

/* A host file named by a flag (--audit FILE, --diff FILE), made absolute
 * against the cwd: its directory must exist, the file need not. */
int ar_sandbox_host_file (const char *flag, const char *given, char **out,
                          ar_error_t **err);

/* The command's process as the flags ask for it. */
typedef struct
{
  const char *workspace; /* absolute */
  const char *user;      /* --user UID[:GID], NULL: 0:0 */
  const char *workdir;   /* --workdir, NULL: the workspace */
  const char *hostname;  /* --hostname, NULL: "sandbox" */
  const char *env_file;  /* --env-file, NULL: none */
  char *const *env;      /* -e NAME=VALUE or NAME, in order */
  size_t n_env;
  bool rootless; /* the sandbox maps only the caller's own ids */
} ar_sandbox_process_flags;

/* Set spec->process (user, cwd, environment: the default spec's PATH and
 * TERM, HOME, then --env-file's lines, then each -e, a later NAME
 * replacing an earlier one) and spec->hostname. */
int ar_sandbox_set_process (const ar_sandbox_process_flags *f, oci_spec *spec,
                            ar_error_t **err);

/* sandbox --pool: the entries of f->env_file and f->env (as
 * ar_sandbox_set_process sets them, NAME alone the host's value) added
 * to `env`. */
int ar_sandbox_env_entries (const ar_sandbox_process_flags *f, oci_strv *env,
                            ar_error_t **err);

#endif
