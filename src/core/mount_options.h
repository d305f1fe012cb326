/* SPDX-License-Identifier: Apache-2.0 */
/* Mount options: runc's vocabulary turned into mount(2) flags, propagation
 * changes, recursive attributes (mount_setattr) and a data string. Pure:
 * no syscalls. */
#ifndef AR_CORE_MOUNT_OPTIONS_H
#define AR_CORE_MOUNT_OPTIONS_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AR_MOUNT_MAX_PROPAGATION 8

typedef struct
{
  unsigned long flags;
  unsigned long propagation[AR_MOUNT_MAX_PROPAGATION]; /* in order */
  size_t n_propagation;
  uint64_t attr_set, attr_clr; /* mount_setattr, AT_RECURSIVE */
  char *data;                  /* NULL when empty */
  /* "idmap", "ridmap" (runtime-spec 1.1): an idmapped bind, of the mount
   * alone or of every mount below it too. */
  bool idmap, idmap_recursive;
} ar_mount_options;

/* Add a mount's `options` to *o, in order (a later "rw" undoes an
 * earlier "ro"); what no table knows goes to the data string. Errors
 * name the option as ".options[I]". */
int ar_mount_options_parse (const oci_strv *options, ar_mount_options *o,
                            ar_error_t **err);
void ar_mount_options_clear (ar_mount_options *o);
#define cleanup_mount_options __attribute__ ((cleanup (ar_mount_options_clear)))

/* A propagation change; `first`: before the mount's own options, which
 * then still win. */
int ar_mount_options_add_propagation (ar_mount_options *o, unsigned long flag,
                                      bool first, ar_error_t **err);

/* The propagation flag an option names ("rslave"), 0 when none. */
unsigned long ar_mount_propagation_flag (const char *name);

/* Every option name the tables give a meaning, for `features` (the ones
 * accepted and ignored are left out). Returns how many there are; at
 * most `max` are stored. */
size_t ar_mounts_option_names (const char **out, size_t max);

#endif
