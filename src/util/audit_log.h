/* SPDX-License-Identifier: Apache-2.0 */
/* The audit log: one JSON object per line, each carrying the sha256 of
 * the previous line, so that a line cut or edited shows. Written by the
 * agent policy and by the egress hook's resolver, which both sit above
 * util. */
#ifndef AR_UTIL_AUDIT_LOG_H
#define AR_UTIL_AUDIT_LOG_H

#include "error.h"
#include <stddef.h>

/* Append one event ("prev" is the sha256 of the line before). `fields_json` is
 * the inner part of an object ("\"argv\":[...],\"status\":0") or NULL. */
int
ar_audit_append (const char *audit_path, const char *container_id,
                 const char *event, const char *fields_json, ar_error_t **err);

/* The same, keeping the log's head in `heads_dir` (NULL: none) as
 * "N:HASH": how many lines the log has and the sha256 of the last one.
 * Kept outside the log, it shows what the chain cannot: lines cut off at
 * the end, or a last line rewritten. */
int ar_audit_append_with_head (const char *audit_path, const char *heads_dir,
                               const char *container_id, const char *event,
                               const char *fields_json, ar_error_t **err);

#define AR_AUDIT_HEADS_DIR ".audit-heads" /* under the state root */

/* The head stored for a log in `heads_dir` ("N:HASH"), NULL (and 0) when
 * none is. */
int ar_audit_stored_head (const char *audit_path, const char *heads_dir,
                          char **head, ar_error_t **err);

/* Check a log against a head "N:HASH": *problem is NULL when line N is
 * there and hashes to HASH, else one line saying what is wrong. */
int ar_audit_check_head (const char *audit_path, const char *head,
                         char **problem, ar_error_t **err);

/* The log's head as it is now, "N:HASH" (what ar_audit_check_head
 * takes), read from the log itself; NULL (and 0) for an empty log. */
int ar_audit_head (const char *audit_path, char **head, ar_error_t **err);

/* Lines in the log, a last one without its newline included. */
int ar_audit_count_lines (const char *audit_path, size_t *n, ar_error_t **err);

/* Check a log's chain; *bad_line is the first line that does not match. */
int
ar_audit_verify (const char *audit_path, size_t *bad_line, ar_error_t **err);

#endif
