/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "mount_options.h"
#include "../util/cleanup.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

typedef struct
{
  const char *name;
  bool clear; /* the option turns the flag off ("rw", "suid", ...) */
  unsigned long flag;
} flag_option;

static const flag_option flag_options[] = {
  { "defaults", false, 0 },
  { "ro", false, MS_RDONLY },
  { "rw", true, MS_RDONLY },
  { "nosuid", false, MS_NOSUID },
  { "suid", true, MS_NOSUID },
  { "nodev", false, MS_NODEV },
  { "dev", true, MS_NODEV },
  { "noexec", false, MS_NOEXEC },
  { "exec", true, MS_NOEXEC },
  { "sync", false, MS_SYNCHRONOUS },
  { "async", true, MS_SYNCHRONOUS },
  { "dirsync", false, MS_DIRSYNC },
  { "remount", false, MS_REMOUNT },
  { "mand", false, MS_MANDLOCK },
  { "nomand", true, MS_MANDLOCK },
  { "noatime", false, MS_NOATIME },
  { "atime", true, MS_NOATIME },
  { "nodiratime", false, MS_NODIRATIME },
  { "diratime", true, MS_NODIRATIME },
  { "relatime", false, MS_RELATIME },
  { "norelatime", true, MS_RELATIME },
  { "strictatime", false, MS_STRICTATIME },
  { "nostrictatime", true, MS_STRICTATIME },
  { "lazytime", false, MS_LAZYTIME },
  { "nolazytime", true, MS_LAZYTIME },
  { "nosymfollow", false, MS_NOSYMFOLLOW },
  { "symfollow", true, MS_NOSYMFOLLOW },
  { "iversion", false, MS_I_VERSION },
  { "noiversion", true, MS_I_VERSION },
  { "silent", false, MS_SILENT },
  { "loud", true, MS_SILENT },
  { "bind", false, MS_BIND },
  { "rbind", false, MS_BIND | MS_REC },
};

typedef struct
{
  const char *name;
  unsigned long flag;
} propagation_option;

static const propagation_option propagation_options[] = {
  { "private", MS_PRIVATE },       { "rprivate", MS_PRIVATE | MS_REC },
  { "shared", MS_SHARED },         { "rshared", MS_SHARED | MS_REC },
  { "slave", MS_SLAVE },           { "rslave", MS_SLAVE | MS_REC },
  { "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
};

/* "rro", "rnosuid", ...: like their plain forms but applied to every mount
 * of a recursive bind, which only mount_setattr(AT_RECURSIVE) can do. */
typedef struct
{
  const char *name;
  bool clear;
  uint64_t attr;
} recursive_option;

static const recursive_option recursive_options[] = {
  { "rro", false, MOUNT_ATTR_RDONLY },
  { "rrw", true, MOUNT_ATTR_RDONLY },
  { "rnosuid", false, MOUNT_ATTR_NOSUID },
  { "rsuid", true, MOUNT_ATTR_NOSUID },
  { "rnodev", false, MOUNT_ATTR_NODEV },
  { "rdev", true, MOUNT_ATTR_NODEV },
  { "rnoexec", false, MOUNT_ATTR_NOEXEC },
  { "rexec", true, MOUNT_ATTR_NOEXEC },
  { "rnodiratime", false, MOUNT_ATTR_NODIRATIME },
  { "rdiratime", true, MOUNT_ATTR_NODIRATIME },
  { "rnosymfollow", false, MOUNT_ATTR_NOSYMFOLLOW },
  { "rsymfollow", true, MOUNT_ATTR_NOSYMFOLLOW },
  /* The atime mode is one field: clearing _ATIME selects it anew. */
  { "rnoatime", false, MOUNT_ATTR_NOATIME },
  { "rstrictatime", false, MOUNT_ATTR_STRICTATIME },
  { "rrelatime", false, MOUNT_ATTR_RELATIME },
};

/* runtime-spec 1.1's idmapped binds: of the mount alone, or recursively. */
typedef struct
{
  const char *name;
  bool recursive;
} idmap_option;

static const idmap_option idmap_options[] = {
  { "idmap", false },
  { "ridmap", true },
};

/* Options other runtimes define that have no meaning for us. */
static const char *const ignored_options[] = { "tmpcopyup", "notmpcopyup" };

/* Every option name the tables above give a meaning, for `features`.
 * The ignored ones are left out: accepting is not implementing. */
size_t
ar_mounts_option_names (const char **out, size_t max)
{
  size_t n = 0;
#define ADD_NAMES(table)                                                       \
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++, n++)             \
    if (n < max)                                                               \
      out[n] = table[i].name;
  ADD_NAMES (flag_options)
  ADD_NAMES (propagation_options)
  ADD_NAMES (recursive_options)
  ADD_NAMES (idmap_options)
#undef ADD_NAMES
  return n;
}

void
ar_mount_options_clear (ar_mount_options *o)
{
  free (o->data);
  o->data = NULL;
}

static bool
apply_flag_option (ar_mount_options *o, const char *opt)
{
  for (size_t i = 0; i < sizeof flag_options / sizeof *flag_options; i++)
    if (strcmp (opt, flag_options[i].name) == 0)
      {
        if (flag_options[i].clear)
          o->flags &= ~flag_options[i].flag;
        else
          o->flags |= flag_options[i].flag;
        return true;
      }
  return false;
}

static bool
apply_recursive_option (ar_mount_options *o, const char *opt)
{
  for (size_t i = 0; i < sizeof recursive_options / sizeof *recursive_options;
       i++)
    {
      const recursive_option *r = &recursive_options[i];
      if (strcmp (opt, r->name) != 0)
        continue;
      bool is_atime = r->attr == MOUNT_ATTR_NOATIME
                      || r->attr == MOUNT_ATTR_STRICTATIME
                      || r->attr == MOUNT_ATTR_RELATIME;
      if (is_atime)
        {
          o->attr_clr |= MOUNT_ATTR__ATIME;
          o->attr_set = (o->attr_set & ~MOUNT_ATTR__ATIME) | r->attr;
        }
      else if (r->clear)
        {
          o->attr_clr |= r->attr;
          o->attr_set &= ~r->attr;
        }
      else
        {
          o->attr_set |= r->attr;
          o->attr_clr &= ~r->attr;
        }
      return true;
    }
  return false;
}

unsigned long
ar_mount_propagation_flag (const char *name)
{
  for (size_t i = 0;
       i < sizeof propagation_options / sizeof *propagation_options; i++)
    if (strcmp (name, propagation_options[i].name) == 0)
      return propagation_options[i].flag;
  return 0;
}

static void
append_data (ar_mount_options *o, const char *opt)
{
  char *joined = o->data ? xasprintf ("%s,%s", o->data, opt) : xstrdup (opt);
  free (o->data);
  o->data = joined;
}

int
ar_mount_options_add_propagation (ar_mount_options *o, unsigned long flag,
                                  bool first, ar_error_t **err)
{
  if (o->n_propagation == AR_MOUNT_MAX_PROPAGATION)
    return ar_error_set (err, 0, ".options: too many propagation options");
  size_t at = first ? 0 : o->n_propagation;
  memmove (&o->propagation[at + 1], &o->propagation[at],
           (o->n_propagation - at) * sizeof *o->propagation);
  o->propagation[at] = flag;
  o->n_propagation++;
  return 0;
}

static bool
apply_idmap_option (ar_mount_options *o, const char *opt)
{
  for (size_t i = 0; i < sizeof idmap_options / sizeof *idmap_options; i++)
    if (strcmp (opt, idmap_options[i].name) == 0)
      {
        o->idmap = true;
        o->idmap_recursive = idmap_options[i].recursive;
        return true;
      }
  return false;
}

int
ar_mount_options_parse (const oci_strv *options, ar_mount_options *o,
                        ar_error_t **err)
{
  for (size_t i = 0; i < options->len; i++)
    {
      const char *opt = options->items[i];
      unsigned long prop = ar_mount_propagation_flag (opt);
      bool ignored = false;
      for (size_t j = 0; j < sizeof ignored_options / sizeof *ignored_options;
           j++)
        ignored |= strcmp (opt, ignored_options[j]) == 0;

      if (ignored || apply_flag_option (o, opt)
          || apply_recursive_option (o, opt))
        continue;
      if (prop != 0)
        {
          if (ar_mount_options_add_propagation (o, prop, false, err) < 0)
            return -1;
          continue;
        }
      if (apply_idmap_option (o, opt))
        continue;
      append_data (o, opt);
    }
  return 0;
}
