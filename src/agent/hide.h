/* SPDX-License-Identifier: Apache-2.0 */
/* Host paths hidden from a container whose root is the host's (sandbox):
 * the plan's patterns are expanded on the host at create, each match
 * resolved inside the rootfs (a symlink hides its target as the container
 * sees it), and the spec gets a masked path for each, or, for a directory
 * that holds the workspace, an empty tmpfs made read-only after the
 * workspace is mounted on it. Reads the host; makes no mount. */
#ifndef AR_AGENT_HIDE_H
#define AR_AGENT_HIDE_H

#include "agent.h"
#include <yajl/yajl_gen.h>

typedef enum
{
  AR_HIDE_MASK,  /* linux.maskedPaths: an empty tmpfs, or /dev/null */
  AR_HIDE_COVER, /* holds the workspace: empty read-only tmpfs below it */
  AR_HIDE_EMPTY, /* a home: an empty writable tmpfs ($HOME caches work) */
  AR_HIDE_KEEP,  /* the workspace itself: stays visible */
} ar_hide_how;

typedef struct
{
  char *path;          /* resolved, as the container sees it */
  const char *pattern; /* the plan's entry (borrowed from the plan) */
  const char *reason;  /* borrowed from the plan */
  ar_hide_how how;
} ar_hide_target;

typedef struct
{
  ar_hide_target *items;
  size_t n;
} ar_hide_list;

/* Expand the plan's hide patterns under `rootfs`. Paths that do not exist
 * (or dangling symlinks) are skipped; so are the plan's unhide paths. */
int ar_hide_resolve (const ar_agent_plan *plan, const char *rootfs,
                     ar_hide_list *out, ar_error_t **err);

/* In a user namespace of its own the container's root is no owner of
 * the host's directories: the highest directory on the way to the
 * workspace that others may not enter (a 0700 temp dir) is emptied
 * around the workspace (AR_HIDE_COVER), as a hidden one is; it could not
 * be read from inside anyway. */
void
ar_hide_cover_closed_parents (const ar_agent_plan *plan, ar_hide_list *list);

/* Point the spec at the list: masked paths, and a tmpfs mount plus a
 * read-only path for each directory that holds the workspace (append it
 * before the workspace's own mount). */
void ar_hide_apply (const ar_hide_list *list, oci_spec *spec);

/* [{"path", "pattern", "reason", "how"}...] */
void ar_hide_gen_json (yajl_gen g, const ar_hide_list *list);

void ar_hide_list_clear (ar_hide_list *list);
#define cleanup_hide_list __attribute__ ((cleanup (ar_hide_list_clear)))

#endif
