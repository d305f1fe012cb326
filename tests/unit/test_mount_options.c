/* SPDX-License-Identifier: Apache-2.0 */
/* A mount's options as runc reads them: mount(2) flags, propagation
 * changes in order, recursive attributes, and the rest as data. Pure. */
#include "config.h"
#include "unit.h"
#include "../../src/core/mount_options.h"
#include "../../src/util/cleanup.h"

#include <sys/mount.h>

static int
parse (char **items, size_t n, ar_mount_options *o, ar_error_t **err)
{
  const oci_strv v = { .items = items, .len = n };
  return ar_mount_options_parse (&v, o, err);
}

#define PARSE(o, err, ...)                                                     \
  parse ((char *[]){ __VA_ARGS__ },                                            \
         sizeof ((char *[]){ __VA_ARGS__ }) / sizeof (char *), o, err)

static void
test_flags_and_data (void)
{
  cleanup_mount_options ar_mount_options o = { 0 };
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (PARSE (&o, &err, "rbind", "ro", "nosuid", "nodev", "size=64k",
                    "mode=755", "tmpcopyup"),
             0);
  CHECK (o.flags == (MS_BIND | MS_REC | MS_RDONLY | MS_NOSUID | MS_NODEV));
  /* What no table knows is the data, in order; tmpcopyup is accepted
   * and ignored, as other runtimes' vocabulary. */
  CHECK_STR (o.data, "size=64k,mode=755");
  CHECK_INT ((int) o.n_propagation, 0);
}

static void
test_later_wins (void)
{
  cleanup_mount_options ar_mount_options o = { 0 };
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (PARSE (&o, &err, "ro", "noexec", "rw", "exec", "defaults"), 0);
  CHECK (o.flags == 0);
  CHECK (o.data == NULL);
}

static void
test_propagation_in_order (void)
{
  cleanup_mount_options ar_mount_options o = { 0 };
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (PARSE (&o, &err, "rprivate", "shared"), 0);
  CHECK_INT ((int) o.n_propagation, 2);
  CHECK (o.propagation[0] == (MS_PRIVATE | MS_REC));
  CHECK (o.propagation[1] == MS_SHARED);
  /* The runtime's own default goes first; the mount's options still win. */
  CHECK_INT (
      ar_mount_options_add_propagation (&o, MS_SLAVE | MS_REC, true, &err), 0);
  CHECK (o.propagation[0] == (MS_SLAVE | MS_REC));
  CHECK (o.propagation[2] == MS_SHARED);
  CHECK (ar_mount_propagation_flag ("runbindable") == (MS_UNBINDABLE | MS_REC));
  CHECK (ar_mount_propagation_flag ("ro") == 0);
}

static void
test_too_many_propagation (void)
{
  cleanup_mount_options ar_mount_options o = { 0 };
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (PARSE (&o, &err, "private", "shared", "slave", "private", "shared",
                    "slave", "private", "shared", "slave"),
             -1);
  CHECK_STR (err ? ar_error_text (err) : NULL,
             ".options: too many propagation options");
}

static void
test_recursive_attributes (void)
{
  cleanup_mount_options ar_mount_options o = { 0 };
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (
      PARSE (&o, &err, "rro", "rnosuid", "rsuid", "rnoatime", "rrelatime"), 0);
  CHECK (o.attr_set & MOUNT_ATTR_RDONLY);
  /* rsuid undoes rnosuid: cleared, not set. */
  CHECK (!(o.attr_set & MOUNT_ATTR_NOSUID));
  CHECK (o.attr_clr & MOUNT_ATTR_NOSUID);
  /* The atime mode is one field: the last one asked for, the field
   * cleared first. */
  CHECK ((o.attr_set & MOUNT_ATTR__ATIME) == MOUNT_ATTR_RELATIME);
  CHECK (o.attr_clr & MOUNT_ATTR__ATIME);
  CHECK (o.flags == 0);
}

/* "idmap" and "ridmap" mark the bind idmapped (of the mount alone, or of
 * every mount below it too); neither reaches the data string. */
static void
test_idmap (void)
{
  cleanup_mount_options ar_mount_options o = { 0 };
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (PARSE (&o, &err, "rbind", "idmap"), 0);
  CHECK (o.idmap && !o.idmap_recursive && o.data == NULL);
  cleanup_mount_options ar_mount_options r = { 0 };
  CHECK_INT (PARSE (&r, &err, "bind", "ridmap"), 0);
  CHECK (r.idmap && r.idmap_recursive && r.data == NULL);
}

static void
test_option_names (void)
{
  const char *names[128];
  size_t n = ar_mounts_option_names (names, 128);
  CHECK (n > 30 && n <= 128);
  bool rro = false, tmpcopyup = false, idmap = false;
  for (size_t i = 0; i < n && i < 128; i++)
    {
      rro |= strcmp (names[i], "rro") == 0;
      tmpcopyup |= strcmp (names[i], "tmpcopyup") == 0;
      idmap |= strcmp (names[i], "idmap") == 0;
    }
  CHECK (rro);
  CHECK (idmap);
  /* Accepted is not implemented: features does not list it. */
  CHECK (!tmpcopyup);
}

int
main (void)
{
  RUN (test_flags_and_data);
  RUN (test_later_wins);
  RUN (test_propagation_in_order);
  RUN (test_too_many_propagation);
  RUN (test_recursive_attributes);
  RUN (test_idmap);
  RUN (test_option_names);
  return unit_finish ();
}
