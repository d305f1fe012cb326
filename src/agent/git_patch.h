/* SPDX-License-Identifier: Apache-2.0 */
/* One path's part of a diff in git's extended format, as `git diff
 * --binary --full-index` writes it and `git apply` takes it: modes,
 * creations and deletions, symlinks (the target is the content), text as
 * unified hunks and anything holding a NUL byte as a binary literal
 * (zlib + base85). Pure: the caller finds and reads the files. */
#ifndef AR_AGENT_GIT_PATCH_H
#define AR_AGENT_GIT_PATCH_H

#include "secrets.h"
#include "../util/error.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* git's three kinds of tracked entries. */
#define AR_GIT_MODE_FILE 0100644u
#define AR_GIT_MODE_EXEC 0100755u
#define AR_GIT_MODE_LINK 0120000u

/* One side of a change. */
typedef struct
{
  unsigned mode;       /* 0: not there; else an AR_GIT_MODE_* */
  const uint8_t *data; /* the content; a symlink's target */
  size_t len;
  int fd; /* a regular file's readable fd (for the hunks), or -1 */
} ar_git_blob;

/* Where the lines go. Each line is checked for a secret's bytes on the
 * way and replaced by one line saying so: a file that holds a secret is
 * withheld whole before it gets here, this is the last net. */
typedef struct
{
  FILE *out;
  const ar_secret_set *secrets; /* NULL: none */
} ar_patch_sink;

void ar_patch_line (ar_patch_sink *s, const char *line, size_t len);
void ar_patch_printf (ar_patch_sink *s, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Unified hunks between two regular text files, from "@@" on (what
 * follows the ---/+++ lines): diff(1) in ws_diff.c, another writer in
 * the unit tests. */
typedef int (*ar_text_hunks_fn) (ar_patch_sink *s, const ar_git_blob *a,
                                 const ar_git_blob *b, ar_error_t **err);

/* git's name for a path with its "a/" or "b/" prefix: quoted in C style
 * when it holds a control character, '"', '\\' or a byte above 0x7e, as
 * git does. Caller frees. */
char *ar_git_quote_path (const char *prefix, const char *path);

/* Does a side differ from the other (mode or content)? */
bool ar_git_blob_differs (const ar_git_blob *a, const ar_git_blob *b);

/* Write the patch that turns `a` into `b` at `path`; nothing when they
 * are the same. A change of kind (file to symlink) is a deletion and a
 * creation, as git writes it. */
int ar_git_patch_write (ar_patch_sink *s, const char *path,
                        const ar_git_blob *a, const ar_git_blob *b,
                        ar_text_hunks_fn hunks, ar_error_t **err);

/* The patch of an exact rename (same mode and bytes): git's header with
 * "similarity index 100%" and nothing else. */
void ar_git_rename_write (ar_patch_sink *s, const char *from, const char *to);

#endif
