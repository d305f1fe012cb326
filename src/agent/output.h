/* SPDX-License-Identifier: Apache-2.0 */
/* Artifact-only output: a tmpfs bind-mounted at the container's output
 * path, exported at delete into <host dir>/<container id>/ — regular
 * files and directories only, modes sanitized, within quota, files that
 * hold a secret withheld — with a manifest of what arrived. */
#ifndef AR_AGENT_OUTPUT_H
#define AR_AGENT_OUTPUT_H

#include "secrets.h"
#include "../util/error.h"
#include "../util/sha256.h"
#include <stdint.h>
#include <yajl/yajl_gen.h>
#include <sys/types.h>

#define AR_OUTPUT_DIR "output" /* below the state dir */
#define AR_OUTPUT_MANIFEST "manifest.json"

/* Mount the tmpfs at <state_dir>/output (size max_bytes, room for about
 * max_files files), its root 0755 owned by uid:gid (host ids). */
int
ar_output_prepare (const char *state_dir, uint64_t max_bytes,
                   uint64_t max_files, uid_t uid, gid_t gid, ar_error_t **err);

typedef struct
{
  char *path; /* relative to the destination */
  uint64_t size;
  char sha256[AR_SHA256_HEX_SIZE];
} ar_output_file;

typedef struct
{
  char *path;
  char *reason; /* "symlink", "contains secret <name>", ... */
} ar_output_withheld;

typedef struct
{
  char *destination; /* NULL: nothing was exported */
  ar_output_file *files;
  size_t n_files;
  ar_output_withheld *withheld;
  size_t n_withheld;
  uint64_t bytes;
} ar_output_report;

/* Copy the output tmpfs into <host_dir>/<container_id>/ (which must not
 * exist) and write the manifest there. Nothing to do when the tmpfs is
 * not mounted (report->destination stays NULL). Files that contain any of
 * `secrets` are withheld. The copies belong to host_dir's owner. */
int ar_output_export (const char *state_dir, const char *host_dir,
                      const char *container_id, uint64_t max_bytes,
                      uint64_t max_files, const ar_secret_set *secrets,
                      ar_output_report *report, ar_error_t **err);

/* Where /output goes when its destination refuses it (it cannot be made
 * there): <state root>/.output-kept, made 0700; the export there is
 * <dir>/<id>, and <dir>/<id>.why holds the refusal, one line. The
 * artifacts outlive the container and the error can name them. */
char *ar_output_kept_dir (const char *state_root);
int ar_output_export_kept (const char *state_dir, const char *container_id,
                           uint64_t max_bytes, uint64_t max_files,
                           const ar_secret_set *secrets, const ar_error_t *why,
                           ar_output_report *report, ar_error_t **err);

/* What an export left in <host_dir>/<container_id>, from its manifest:
 * its path, how many files arrived (out->files stays NULL) and what was
 * withheld, and why; out->destination is NULL when no manifest is there
 * (nothing was exported). ar_output_report_clear frees it. */
int ar_output_exported (const char *host_dir, const char *container_id,
                        ar_output_report *out, ar_error_t **err);

/* The report as the inside of a JSON object ("destination", "files",
 * "withheld"), for the audit log. */
char *ar_output_report_fields_json (const ar_output_report *report);

void ar_output_report_clear (ar_output_report *report);

/* "withheld": [{"path", "reason"}...] into an open object (the export's
 * report, and the diff's, share the form). */
void ar_output_gen_withheld (yajl_gen gen, const ar_output_withheld *items,
                             size_t n);

/* Unmount the tmpfs and remove its directory; safe when not there. */
int ar_output_teardown (const char *state_dir, ar_error_t **err);

#endif
