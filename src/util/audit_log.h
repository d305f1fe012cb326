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
 * the end, or a last line rewritten. The count goes on from the kept
 * head, so an append reads only what was appended since. A log that no
 * longer holds the kept head's line is still appended to, but the head
 * stays for `agentrun audit` to show: *stale then says so (else NULL). */
int ar_audit_append_with_head (const char *audit_path, const char *heads_dir,
                               const char *container_id, const char *event,
                               const char *fields_json, char **stale,
                               ar_error_t **err);

/* Where the heads of the logs a state root's containers append to are
 * kept: ROOT/.audit-heads. */
char *ar_audit_heads_dir (const char *state_root);

/* The head stored for a log in `heads_dir` ("N:HASH"), NULL (and 0) when
 * none is. */
int ar_audit_stored_head (const char *audit_path, const char *heads_dir,
                          char **head, ar_error_t **err);

/* The same, when a head must be kept: none is an error naming the log. */
int ar_audit_kept_head (const char *audit_path, const char *heads_dir,
                        char **head, ar_error_t **err);

/* Remove the head kept for a log (once it was moved away to be rotated:
 * the next append starts a new one); *head is the one removed. */
int ar_audit_forget_head (const char *audit_path, const char *heads_dir,
                          char **head, ar_error_t **err);

/* Check a log against a head "N:HASH": *problem is NULL when line N is
 * there and hashes to HASH, else one line saying what is wrong. */
int ar_audit_check_head (const char *audit_path, const char *head,
                         char **problem, ar_error_t **err);

/* The log's head as it is now, "N:HASH" (what ar_audit_check_head
 * takes), read from the log itself (the count from the head kept in
 * `heads_dir` when that names the last line); NULL (and 0) for an empty
 * log. */
int ar_audit_head (const char *audit_path, const char *heads_dir, char **head,
                   ar_error_t **err);

/* Lines in the log, a last one without its newline included. */
int ar_audit_count_lines (const char *audit_path, size_t *n, ar_error_t **err);

/* Check a log's chain; *bad_line is the first line that does not match. */
int
ar_audit_verify (const char *audit_path, size_t *bad_line, ar_error_t **err);

#endif
