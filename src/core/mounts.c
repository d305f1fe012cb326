/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "mounts.h"
#include "idmap.h"
#include "mounts_internal.h"
#include "mount_options.h"
#include "namespaces.h"
#include "../util/cleanup.h"
#include "../util/idmount.h"
#include "../util/userns.h"
#include "../util/fs.h"
#include "../util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---------------------------------------------------------------------
 * Small mount helpers working on O_PATH fds, so that every path the
 * container controls has been resolved inside the rootfs first.
 * --------------------------------------------------------------------- */

/* The flags a bind remount must repeat: the kernel refuses (EPERM) to drop
 * them from a mount that a less privileged namespace inherited locked. */
static unsigned long
locked_flags (const char *path)
{
  struct statvfs st;
  if (statvfs (path, &st) < 0)
    return 0;
  unsigned long flags = 0;
  if (st.f_flag & ST_NOSUID)
    flags |= MS_NOSUID;
  if (st.f_flag & ST_NODEV)
    flags |= MS_NODEV;
  if (st.f_flag & ST_NOEXEC)
    flags |= MS_NOEXEC;
  if (st.f_flag & ST_NOATIME)
    flags |= MS_NOATIME;
  if (st.f_flag & ST_NODIRATIME)
    flags |= MS_NODIRATIME;
  if (st.f_flag & ST_RELATIME)
    flags |= MS_RELATIME;
  /* Neither: strictatime, which a remount must say (no flag is relatime). */
  if (!(st.f_flag & (ST_NOATIME | ST_RELATIME)))
    flags |= MS_STRICTATIME;
  if (st.f_flag & ST_RDONLY)
    flags |= MS_RDONLY;
  return flags;
}

/* Change the per-mount flags of the bind mount at `path`. */
static int
remount_bind (const char *path, const char *display, unsigned long flags,
              ar_error_t **err)
{
  unsigned long base = MS_REMOUNT | MS_BIND;
  unsigned long keep = flags & ~(MS_BIND | MS_REC | MS_REMOUNT);
  if (mount (NULL, path, NULL, base | keep, NULL) == 0)
    return 0;
  if (errno != EPERM)
    return ar_error_set (err, errno, "remount \"%s\"", display);

  /* Retry with what is locked on the mount now. Read-only stays only if
   * it was asked for: locked_flags reports it too, but a locked
   * read-only mount cannot become writable anyway. Locked atime flags
   * cannot change at all: the mount's own replace the ones asked for. */
  const unsigned long atime
      = MS_NOATIME | MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME;
  unsigned long locked = locked_flags (path) & ~MS_RDONLY;
  if (mount (NULL, path, NULL, base | (keep & ~atime) | locked, NULL) < 0)
    return ar_error_set (err, errno, "remount \"%s\"", display);
  return 0;
}

static int
apply_propagation (const char *path, const char *display,
                   const ar_mount_options *o, ar_error_t **err)
{
  for (size_t i = 0; i < o->n_propagation; i++)
    if (mount (NULL, path, NULL, o->propagation[i], NULL) < 0)
      return ar_error_set (err, errno, "set propagation of \"%s\"", display);
  return 0;
}

static int
apply_recursive_attrs (int mnt_fd, const char *display,
                       const ar_mount_options *o, ar_error_t **err)
{
  if (o->attr_set == 0 && o->attr_clr == 0)
    return 0;
  struct mount_attr attr = { .attr_set = o->attr_set, .attr_clr = o->attr_clr };
  if (mount_setattr (mnt_fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
                     sizeof attr)
      < 0)
    return ar_error_set (err, errno, "set recursive attributes of \"%s\"",
                         display);
  return 0;
}

/* A detached copy (open_tree) of `source`, relative to `dir_fd`, with
 * `attr` set on it before anyone can see it: binds keep the source
 * mount's flags and propagation, and a copy is changed most simply before
 * it is attached. -1 with errno on failure. */
static int
detached_copy (int dir_fd, const char *source, bool recursive,
               const struct mount_attr *attr)
{
  int rec = recursive ? AT_RECURSIVE : 0;
  struct mount_attr a = *attr;
  int fd
      = open_tree (dir_fd, source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | rec);
  if (fd >= 0 && mount_setattr (fd, "", AT_EMPTY_PATH | rec, &a, sizeof a) < 0)
    {
      int saved = errno;
      close (fd);
      errno = saved;
      return -1;
    }
  return fd;
}

static int
attach (int tree_fd, int target_fd)
{
  return move_mount (tree_fd, "", target_fd, "",
                     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

/* nosuid and noexec like the rest of /dev: the fd of the target would not
 * reach a new bind mount to remount it, so they go on the copy. */
int
ar_mounts_bind_device_fd (const char *source, int target_fd, ar_error_t **err)
{
  static const struct mount_attr device
      = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC };
  cleanup_close int tree = detached_copy (AT_FDCWD, source, false, &device);
  if (tree < 0 || attach (tree, target_fd) < 0)
    return ar_error_set (err, errno, "bind \"%s\"", source);
  return 0;
}

static bool
streq (const char *a, const char *b)
{
  return a && b && strcmp (a, b) == 0;
}

/* A destination for proc or sysfs must be a real directory: a symlink
 * there would let the rootfs aim the mount somewhere else (CVE-2019-19921
 * and friends). A missing one is fine; it will be created. */
int
ar_mounts_check_real_directory (int rootfs_fd, const char *dest,
                                ar_error_t **err)
{
  cleanup_free char *clean = ar_path_clean (dest);
  cleanup_free char *parent = xstrdup (clean);
  char *slash = strrchr (parent, '/');
  const char *name = clean + (slash ? slash - parent + 1 : 0);
  if (slash)
    *slash = '\0';
  if (*name == '\0')
    return ar_error_set (err, 0, "rootfs%s: not a directory", clean);

  cleanup_error ar_error_t *open_err = NULL;
  cleanup_close int parent_fd = ar_path_open_in_root (
      rootfs_fd, *parent ? parent : "/", O_PATH | O_DIRECTORY, &open_err);
  if (parent_fd < 0 && open_err->errno_value == ENOENT)
    return 0;
  if (parent_fd < 0)
    {
      *err = steal_pointer (&open_err);
      return -1;
    }
  struct stat st;
  if (fstatat (parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0
                           : ar_error_set (err, errno, "stat rootfs%s", clean);
  if (S_ISLNK (st.st_mode))
    return ar_error_set (err, 0, "rootfs%s: not a directory (symlink)", clean);
  if (!S_ISDIR (st.st_mode))
    return ar_error_set (err, 0, "rootfs%s: not a directory", clean);
  return 0;
}

/* After something was mounted on `dest`, reopen it: the fd used as the
 * mount point still names the covered directory, not the new mount. */
static int
reopen_mount (int rootfs_fd, const char *dest, ar_error_t **err)
{
  return ar_path_open_in_root (rootfs_fd, dest, O_PATH, err);
}

/* The steps after the mount itself: read-only and friends for a bind,
 * propagation, recursive attributes. */
static int
finish_mount (int rootfs_fd, const oci_mount *m, const ar_mount_options *o,
              bool is_bind, ar_error_t **err)
{
  unsigned long remount_flags
      = o->flags & ~(MS_BIND | MS_REC | MS_REMOUNT | MS_SILENT);
  bool need_remount = is_bind && remount_flags != 0;
  if (!need_remount && o->n_propagation == 0 && o->attr_set == 0
      && o->attr_clr == 0)
    return 0;

  cleanup_close int mnt_fd = reopen_mount (rootfs_fd, m->destination, err);
  if (mnt_fd < 0)
    return -1;
  char path[AR_FD_PATH_MAX];
  ar_fd_path (mnt_fd, path);
  if (need_remount
      && remount_bind (path, m->destination, remount_flags, err) < 0)
    return -1;
  if (apply_propagation (path, m->destination, o, err) < 0)
    return -1;
  return apply_recursive_attrs (mnt_fd, m->destination, o, err);
}

/* `tree_fd` >= 0: a detached copy of the source the runtime made before
 * the clone (ar_mounts_open_bind_sources), attached here; else the source
 * is opened and bound here. */
static int
mount_bind (int rootfs_fd, const oci_mount *m, const ar_mount_options *o,
            int tree_fd, ar_error_t **err)
{
  if (m->source == NULL)
    return ar_error_set (err, 0, "bind mount on \"%s\": no source",
                         m->destination);
  /* The source is the host's (relative ones from the bundle, our cwd). */
  cleanup_close int src_fd
      = tree_fd >= 0 ? -1 : open (m->source, O_PATH | O_CLOEXEC);
  if (tree_fd < 0 && src_fd < 0)
    return ar_error_set (err, errno, "mount \"%s\" on \"%s\"", m->source,
                         m->destination);
  struct stat st;
  if (fstat (tree_fd >= 0 ? tree_fd : src_fd, &st) < 0)
    return ar_error_set (err, errno, "stat \"%s\"", m->source);

  cleanup_close int dst_fd = ar_path_create_in_root (rootfs_fd, m->destination,
                                                     S_ISDIR (st.st_mode), err);
  if (dst_fd < 0)
    return -1;

  char src[AR_FD_PATH_MAX], dst[AR_FD_PATH_MAX];
  ar_fd_path (src_fd, src);
  ar_fd_path (dst_fd, dst);
  if (tree_fd >= 0
          ? attach (tree_fd, dst_fd) < 0
          : mount (src, dst, NULL, MS_BIND | (o->flags & MS_REC), NULL) < 0)
    return ar_error_set (err, errno, "mount \"%s\" on \"%s\"", m->source,
                         m->destination);
  return finish_mount (rootfs_fd, m, o, true, err);
}

/* sysfs can only be mounted by the owner of the network namespace; in a
 * user namespace sharing the host's, fall back to the host's /sys. */
static int
mount_sysfs_fallback (int rootfs_fd, const oci_mount *m,
                      const ar_mount_options *o, ar_error_t **err)
{
  oci_mount bind = *m;
  bind.source = (char *) "/sys";
  ar_mount_options rbind = *o;
  rbind.flags |= MS_BIND | MS_REC;
  /* The host's /sys comes with submounts; read-only must reach them too. */
  if (o->flags & MS_RDONLY)
    rbind.attr_set |= MOUNT_ATTR_RDONLY;
  return mount_bind (rootfs_fd, &bind, &rbind, -1, err);
}

/* `data` without its "gid=N" option (malloc'd). */
static char *
without_gid_option (const char *data)
{
  cleanup_free char *copy = xstrdup (data);
  char *out = xstrdup (""), *save = NULL;
  for (char *tok = strtok_r (copy, ",", &save); tok;
       tok = strtok_r (NULL, ",", &save))
    if (strncmp (tok, "gid=", 4) != 0)
      xappend (&out, ",", tok);
  return out;
}

/* devpts refuses a gid= its user namespace does not map (EINVAL): a
 * rootless map has one gid, and specs ask for the host's tty group (5).
 * As crun does, the terminals are then owned by the mapped root's group. */
static int
mount_devpts_unmapped_gid (const char *source, const char *dst,
                           const ar_mount_options *o)
{
  if (o->data == NULL || strstr (o->data, "gid=") == NULL)
    return -1;
  cleanup_free char *data = without_gid_option (o->data);
  return mount (source, dst, "devpts", o->flags, data);
}

static int
mount_filesystem (int rootfs_fd, const oci_mount *m, const ar_mount_options *o,
                  ar_error_t **err)
{
  const char *type = m->type;
  if (type == NULL)
    return ar_error_set (err, 0, "mount on \"%s\": no type", m->destination);
  if ((streq (type, "proc") || streq (type, "sysfs"))
      && ar_mounts_check_real_directory (rootfs_fd, m->destination, err) < 0)
    return -1;

  cleanup_close int dst_fd
      = ar_path_create_in_root (rootfs_fd, m->destination, true, err);
  if (dst_fd < 0)
    return -1;
  char dst[AR_FD_PATH_MAX];
  ar_fd_path (dst_fd, dst);
  const char *source = m->source ? m->source : type;
  if (mount (source, dst, type, o->flags, o->data) < 0
      && !(errno == EINVAL && streq (type, "devpts")
           && mount_devpts_unmapped_gid (source, dst, o) == 0))
    {
      if (errno == EPERM && streq (type, "sysfs"))
        return mount_sysfs_fallback (rootfs_fd, m, o, err);
      return ar_error_set (err, errno, "mount \"%s\" on \"%s\"", source,
                           m->destination);
    }
  return finish_mount (rootfs_fd, m, o, false, err);
}

/* ---------------------------------------------------------------------
 * cgroup mounts: expose the container's cgroups at the destination.
 * --------------------------------------------------------------------- */

#define CGROUP_ROOT "/sys/fs/cgroup"

typedef struct
{
  char *name;        /* directory name under CGROUP_ROOT ("cpu,cpuacct") */
  char *fstype;      /* "cgroup" or "cgroup2" */
  char *controllers; /* v1 mount data ("cpu,cpuacct", "name=systemd") */
} cgroup_hierarchy;

static void
hierarchies_free (cgroup_hierarchy **h)
{
  if (*h == NULL)
    return;
  for (cgroup_hierarchy *p = *h; p->name; p++)
    {
      free (p->name);
      free (p->fstype);
      free (p->controllers);
    }
  free (*h);
  *h = NULL;
}
#define cleanup_hierarchies __attribute__ ((cleanup (hierarchies_free)))

/* Keep the super options that select controllers; "rw", "xattr" and the
 * like are not part of a hierarchy's identity. */
static char *
controllers_from_super_options (const char *super)
{
  cleanup_free char *copy = xstrdup (super);
  cleanup_free char *out = xstrdup ("");
  char *save = NULL;
  for (char *tok = strtok_r (copy, ",", &save); tok;
       tok = strtok_r (NULL, ",", &save))
    {
      if (streq (tok, "rw") || streq (tok, "ro") || streq (tok, "xattr")
          || streq (tok, "noprefix") || streq (tok, "clone_children")
          || strncmp (tok, "release_agent=", 14) == 0)
        continue;
      xappend (&out, ",", tok);
    }
  return steal_pointer (&out);
}

/* The hierarchies mounted directly under /sys/fs/cgroup, from mountinfo:
 * "id parent major:minor root mountpoint opts [optional...] - type src
 * super". A NULL-name-terminated array. */
static int
read_cgroup_hierarchies (cgroup_hierarchy **out, bool *unified_root,
                         ar_error_t **err)
{
  cleanup_file FILE *f = fopen ("/proc/self/mountinfo", "re");
  if (f == NULL)
    return ar_error_set (err, errno, "open /proc/self/mountinfo");
  size_t n = 0;
  cgroup_hierarchy *list = xcalloc (1, sizeof *list);
  cleanup_free char *line = NULL;
  size_t cap = 0;
  *unified_root = false;
  while (getline (&line, &cap, f) > 0)
    {
      char mountpoint[PATH_MAX], fstype[64], super[1024];
      const char *dash = strstr (line, " - ");
      if (dash == NULL
          || sscanf (line, "%*s %*s %*s %*s %4095s", mountpoint) != 1
          || sscanf (dash, " - %63s %*s %1023s", fstype, super) != 2)
        continue;
      bool v1 = streq (fstype, "cgroup"), v2 = streq (fstype, "cgroup2");
      if (!v1 && !v2)
        continue;
      if (v2 && streq (mountpoint, CGROUP_ROOT))
        *unified_root = true;
      const char *name = mountpoint + strlen (CGROUP_ROOT) + 1;
      if (strncmp (mountpoint, CGROUP_ROOT "/", strlen (CGROUP_ROOT) + 1) != 0
          || strchr (name, '/') != NULL)
        continue;
      bool seen = false;
      for (size_t i = 0; i < n; i++)
        seen |= streq (list[i].name, name);
      if (seen)
        continue;
      list = xrealloc (list, (n + 2) * sizeof *list);
      list[n].name = xstrdup (name);
      list[n].fstype = xstrdup (fstype);
      list[n].controllers = v1 ? controllers_from_super_options (super) : NULL;
      n++;
      memset (&list[n], 0, sizeof *list);
    }
  *out = list;
  return 0;
}

/* /proc/self/cgroup as the init read it before unsharing its cgroup
 * namespace, after which every path there reads "/". */
static char *cgroups_before_cgroupns;

void
ar_mounts_note_own_cgroups (void)
{
  free (cgroups_before_cgroupns);
  cgroups_before_cgroupns = NULL;
  ar_read_file_at (AT_FDCWD, "/proc/self/cgroup", 65536,
                   &cgroups_before_cgroupns, NULL, NULL);
}

/* Our cgroup path in the hierarchy `h` ("/user.slice/..."), from
 * /proc/self/cgroup, or what it said before the cgroup namespace. */
static char *
own_cgroup_path (const cgroup_hierarchy *h)
{
  cleanup_free char *text = NULL;
  if (cgroups_before_cgroupns)
    text = xstrdup (cgroups_before_cgroupns);
  else if (ar_read_file_at (AT_FDCWD, "/proc/self/cgroup", 65536, &text, NULL,
                            NULL)
           < 0)
    return NULL;
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line;
       line = strtok_r (NULL, "\n", &save))
    {
      char *ctrls = strchr (line, ':');
      char *path = ctrls ? strchr (ctrls + 1, ':') : NULL;
      if (path == NULL)
        continue;
      *path++ = '\0';
      ctrls++;
      bool match
          = h->controllers ? streq (ctrls, h->controllers) : *ctrls == '\0';
      if (match)
        return xstrdup (path);
    }
  return NULL;
}

static bool
in_cgroup_namespace (const oci_spec *spec)
{
  if (spec->linux_cfg == NULL)
    return false;
  for (size_t i = 0; i < spec->linux_cfg->n_namespaces; i++)
    if (spec->linux_cfg->namespaces[i].type == OCI_NS_CGROUP)
      return true;
  return false;
}

/* One hierarchy at `dest`: a fresh mount in a cgroup namespace (the
 * namespace root is all it shows), else a bind of our own cgroup so the
 * container sees nothing above it. */
static int
mount_one_hierarchy (int rootfs_fd, const char *dest, const cgroup_hierarchy *h,
                     unsigned long flags, bool cgroupns, ar_error_t **err)
{
  cleanup_close int fd = ar_path_create_in_root (rootfs_fd, dest, true, err);
  if (fd < 0)
    return -1;
  char path[AR_FD_PATH_MAX];
  ar_fd_path (fd, path);
  unsigned long mflags = flags & ~(MS_BIND | MS_REC | MS_REMOUNT);
  if (cgroupns)
    {
      if (mount (h->fstype, path, h->fstype, mflags, h->controllers) == 0)
        return 0;
      /* From a user namespace a fresh cgroup2 is refused (EPERM, or EBUSY
       * when no cgroup was delegated to the container): bind the
       * container's own cgroup from the host's hierarchy instead (its
       * path as the init saw it before the cgroup namespace), as runc
       * does, read-only when the mount asks; nothing above it shows. */
      if (!((errno == EPERM || errno == EBUSY) && ar_userns_unprivileged ()))
        return ar_error_set (err, errno, "mount \"%s\" on \"%s\"", h->fstype,
                             dest);
    }

  cleanup_free char *own = own_cgroup_path (h);
  if (own == NULL)
    return ar_error_set (err, 0,
                         "cgroup hierarchy `%s`: not in "
                         "/proc/self/cgroup",
                         h->name);
  cleanup_free char *source = xasprintf (CGROUP_ROOT "/%s%s", h->name, own);
  if (mount (source, path, NULL, MS_BIND | MS_REC, NULL) < 0)
    return ar_error_set (err, errno, "mount \"%s\" on \"%s\"", source, dest);
  if (mflags == 0)
    return 0;
  cleanup_close int mnt_fd = reopen_mount (rootfs_fd, dest, err);
  if (mnt_fd < 0)
    return -1;
  ar_fd_path (mnt_fd, path);
  return remount_bind (path, dest, mflags, err);
}

/* Co-mounted controllers ("cpu,cpuacct") also answer to each name. */
static int
link_comounted (int rootfs_fd, const char *dest, const char *name,
                ar_error_t **err)
{
  if (strchr (name, ',') == NULL)
    return 0;
  cleanup_close int dir_fd
      = ar_path_open_in_root (rootfs_fd, dest, O_PATH | O_DIRECTORY, err);
  if (dir_fd < 0)
    return -1;
  cleanup_free char *copy = xstrdup (name);
  char *save = NULL;
  for (char *tok = strtok_r (copy, ",", &save); tok;
       tok = strtok_r (NULL, ",", &save))
    if (symlinkat (name, dir_fd, tok) < 0 && errno != EEXIST)
      return ar_error_set (err, errno, "symlink %s/%s", dest, tok);
  return 0;
}

static int
mount_cgroup (const oci_spec *spec, int rootfs_fd, const oci_mount *m,
              const ar_mount_options *o, ar_error_t **err)
{
  bool cgroupns = in_cgroup_namespace (spec);
  bool unified_root = false;
  cleanup_hierarchies cgroup_hierarchy *list = NULL;
  if (read_cgroup_hierarchies (&list, &unified_root, err) < 0)
    return -1;

  if (unified_root)
    {
      cgroup_hierarchy v2
          = { .name = (char *) "", .fstype = (char *) "cgroup2" };
      return mount_one_hierarchy (rootfs_fd, m->destination, &v2, o->flags,
                                  cgroupns, err);
    }

  /* v1 or hybrid: a tmpfs holding one directory per hierarchy, made
   * read-only at the end when the mount asks for it. */
  oci_mount tmpfs = *m;
  tmpfs.type = (char *) "tmpfs";
  tmpfs.source = (char *) "tmpfs";
  ar_mount_options tmpfs_options
      = { .flags = o->flags & ~MS_RDONLY, .data = (char *) "mode=755" };
  if (mount_filesystem (rootfs_fd, &tmpfs, &tmpfs_options, err) < 0)
    return -1;

  for (cgroup_hierarchy *h = list; h->name; h++)
    {
      cleanup_free char *dest = xasprintf ("%s/%s", m->destination, h->name);
      if (mount_one_hierarchy (rootfs_fd, dest, h, o->flags, cgroupns, err) < 0
          || link_comounted (rootfs_fd, m->destination, h->name, err) < 0)
        return -1;
    }

  if (!(o->flags & MS_RDONLY))
    return 0;
  cleanup_close int mnt_fd = reopen_mount (rootfs_fd, m->destination, err);
  if (mnt_fd < 0)
    return -1;
  char path[AR_FD_PATH_MAX];
  ar_fd_path (mnt_fd, path);
  return remount_bind (path, m->destination, o->flags, err);
}

/* ---------------------------------------------------------------------
 * The rootfs.
 * --------------------------------------------------------------------- */

static bool
is_bind_mount (const oci_mount *m, const ar_mount_options *o)
{
  return (o->flags & MS_BIND) || streq (m->type, "bind");
}

bool
ar_mounts_is_bind (const oci_mount *m)
{
  cleanup_mount_options ar_mount_options o = { 0 };
  cleanup_error ar_error_t *ignored = NULL;
  return ar_mount_options_parse (&m->options, &o, &ignored) == 0
         && is_bind_mount (m, &o);
}

/* The spec's (last) mount on /dev and its parsed options; NULL when none
 * or its options do not parse (mount_one reports that). */
static const oci_mount *
find_dev_mount (const oci_spec *spec, ar_mount_options *o)
{
  const oci_mount *found = NULL;
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const oci_mount *m = &spec->mounts[i];
      cleanup_free char *dest
          = m->destination ? ar_path_clean (m->destination) : NULL;
      if (streq (dest, "/dev"))
        found = m;
    }
  if (found == NULL)
    return NULL;
  cleanup_error ar_error_t *ignored = NULL;
  return ar_mount_options_parse (&found->options, o, &ignored) == 0 ? found
                                                                    : NULL;
}

bool
ar_mounts_dev_is_bind (const oci_spec *spec)
{
  cleanup_mount_options ar_mount_options o = { 0 };
  const oci_mount *m = find_dev_mount (spec, &o);
  return m && is_bind_mount (m, &o);
}

/* A read-only /dev (not a bind) is mounted writable first: the runtime
 * makes pts, shm, the device nodes and links in it, and ar_mounts_finalize
 * makes it read-only afterwards, as runc does. */
static bool
is_readonly_dev (const oci_mount *m, const ar_mount_options *o)
{
  if (!(o->flags & MS_RDONLY) || is_bind_mount (m, o) || m->destination == NULL)
    return false;
  cleanup_free char *dest = ar_path_clean (m->destination);
  return streq (dest, "/dev");
}

static int
remount_dev_readonly (const oci_spec *spec, ar_error_t **err)
{
  cleanup_mount_options ar_mount_options o = { 0 };
  const oci_mount *m = find_dev_mount (spec, &o);
  if (m == NULL || !is_readonly_dev (m, &o))
    return 0;
  if (mount (NULL, "/dev", NULL, (o.flags & ~MS_REC) | MS_REMOUNT, o.data) < 0)
    return ar_error_set (err, errno, "remount \"/dev\" read-only");
  return 0;
}

/* The /dev the runtime sets up: a mount there, of any type, goes on the
 * rootfs's own directory, never where a symlink in the image points (the
 * tmpfs for /dev would land on, say, the image's /etc). Checked as the
 * path is now, before the mount: under a /dev tmpfs mounted earlier,
 * "pts" and "shm" are fresh directories of that tmpfs. */
static int
check_dev_destination (int rootfs_fd, const char *dest, ar_error_t **err)
{
  static const char *const dev_paths[]
      = { "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue" };
  cleanup_free char *clean = ar_path_clean (dest);
  for (size_t i = 0; i < sizeof dev_paths / sizeof dev_paths[0]; i++)
    {
      if (!streq (clean, dev_paths[i]))
        continue;
      if (ar_mounts_check_real_directory (rootfs_fd, "/dev", err) < 0)
        return -1;
      return ar_mounts_check_real_directory (rootfs_fd, clean, err);
    }
  return 0;
}

static int
mount_one (const oci_spec *spec, int rootfs_fd, const oci_mount *m, int src_fd,
           ar_error_t **err)
{
  if (m->destination == NULL)
    return ar_error_set (err, 0, "no destination");
  if (check_dev_destination (rootfs_fd, m->destination, err) < 0)
    return -1;
  cleanup_mount_options ar_mount_options o = { 0 };
  if (ar_mount_options_parse (&m->options, &o, err) < 0)
    return -1;
  /* In the host's namespace a bind of a shared host mount would be its
   * peer, and what is mounted under it later would show on the host: a
   * slave receives but never sends, as in a namespace of our own. */
  if (is_bind_mount (m, &o) && ar_ns_host_mounts (spec)
      && ar_mount_options_add_propagation (&o, MS_SLAVE | MS_REC, true, err)
             < 0)
    return -1;
  if (is_bind_mount (m, &o))
    return mount_bind (rootfs_fd, m, &o, src_fd, err);
  if (is_readonly_dev (m, &o))
    o.flags &= ~MS_RDONLY;
  if (streq (m->type, "cgroup") || streq (m->type, "cgroup2"))
    return mount_cgroup (spec, rootfs_fd, m, &o, err);
  return mount_filesystem (rootfs_fd, m, &o, err);
}

static int
root_propagation (const oci_spec *spec, unsigned long *flag, ar_error_t **err)
{
  const char *value
      = spec->linux_cfg ? spec->linux_cfg->rootfs_propagation : NULL;
  *flag = 0;
  if (value == NULL || *value == '\0')
    return 0;
  *flag = ar_mount_propagation_flag (value);
  if (*flag == 0)
    return ar_error_set (err, 0,
                         ".linux.rootfsPropagation: unknown value "
                         "`%s`",
                         value);
  return 0;
}

/* pivot_root refuses a new root whose parent mount is shared; that only
 * happens when rootfsPropagation asked for "shared". Find the mount that
 * holds `rootfs` (longest mountpoint prefix) and make it private. */
static int
make_parent_mount_private (const char *rootfs, ar_error_t **err)
{
  cleanup_file FILE *f = fopen ("/proc/self/mountinfo", "re");
  if (f == NULL)
    return ar_error_set (err, errno, "open /proc/self/mountinfo");
  cleanup_free char *line = NULL;
  size_t cap = 0;
  char best[PATH_MAX] = "/";
  bool best_shared = false;
  while (getline (&line, &cap, f) > 0)
    {
      char mountpoint[PATH_MAX];
      int consumed = 0;
      if (sscanf (line, "%*s %*s %*s %*s %4095s %*s%n", mountpoint, &consumed)
          != 1)
        continue;
      size_t len = strlen (mountpoint);
      bool contains = streq (mountpoint, "/")
                      || (strncmp (rootfs, mountpoint, len) == 0
                          && (rootfs[len] == '/' || rootfs[len] == '\0'));
      if (!contains || len < strlen (best))
        continue;
      const char *dash = strstr (line, " - ");
      const char *shared = strstr (line + consumed, " shared:");
      strcpy (best, mountpoint);
      best_shared = shared != NULL && (dash == NULL || shared < dash);
    }
  if (best_shared && mount (NULL, best, NULL, MS_PRIVATE, NULL) < 0)
    return ar_error_set (err, errno, "make \"%s\" private", best);
  return 0;
}

/* In a mount namespace of our own, before the rootfs bind. */
static int
isolate_namespace (const oci_spec *spec, const char *real, ar_error_t **err)
{
  unsigned long propagation;
  if (root_propagation (spec, &propagation, err) < 0)
    return -1;
  /* Slave by default: host mounts still reach us, ours never reach the
   * host. An unbindable "/" would refuse the rootfs bind below; the new
   * root gets the asked propagation after pivot_root anyway, so until
   * then private does. */
  if (propagation & MS_UNBINDABLE)
    propagation = MS_PRIVATE | (propagation & MS_REC);
  if (mount (NULL, "/", NULL, propagation ? propagation : MS_SLAVE | MS_REC,
             NULL)
      < 0)
    return ar_error_set (err, errno, "set propagation of \"/\"");
  return make_parent_mount_private (real, err);
}

/* The rootfs on itself: a mount of the container's own, so a later
 * remount of "/" (root.readonly) or a mount on it never touches the mount
 * the rootfs lives in. In the host's namespace, where "/" and the rest
 * are left alone, it is made a slave instead (see mount_one). By its path,
 * or by `dir_fd` (a detached copy of its mounts attached over it). The
 * new mount's root, opened; -1 on failure. */
static int
bind_rootfs (const oci_spec *spec, const char *real, int dir_fd,
             ar_error_t **err)
{
  bool host = ar_ns_host_mounts (spec);
  if (!host && isolate_namespace (spec, real, err) < 0)
    return -1;
  if (dir_fd >= 0 && !host)
    {
      cleanup_close int tree = open_tree (dir_fd, "",
                                          OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC
                                              | AT_RECURSIVE | AT_EMPTY_PATH);
      if (tree < 0 || attach (tree, dir_fd) < 0)
        return ar_error_set (err, errno, "bind rootfs \"%s\" on itself", real);
      return steal_fd (&tree);
    }
  if (mount (real, real, NULL, MS_BIND | MS_REC, NULL) < 0)
    return ar_error_set (err, errno, "bind rootfs \"%s\" on itself", real);
  if (host && mount (NULL, real, NULL, MS_SLAVE | MS_REC, NULL) < 0)
    return ar_error_set (err, errno, "make rootfs \"%s\" a slave mount", real);
  int fd = open (real, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ar_error_set (err, errno, "open rootfs `%s`", real);
  return fd;
}

static bool
is_idmapped (const oci_mount *m, const ar_mount_options *o)
{
  return o->idmap || m->n_uid_mappings > 0 || m->n_gid_mappings > 0;
}

bool
ar_mounts_any_idmapped (const oci_spec *spec)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      cleanup_mount_options ar_mount_options o = { 0 };
      cleanup_error ar_error_t *ignored = NULL;
      if (ar_mount_options_parse (&spec->mounts[i].options, &o, &ignored) == 0
          && is_idmapped (&spec->mounts[i], &o))
        return true;
    }
  return false;
}

/* The mount's own maps, or with the option alone the container's. */
static int
idmap_copy (const oci_spec *spec, const oci_mount *m, const ar_mount_options *o,
            int tree_fd, ar_error_t **err)
{
  const oci_linux *l = spec->linux_cfg;
  const oci_id_mapping *uids = m->uid_mappings, *gids = m->gid_mappings;
  size_t n_uids = m->n_uid_mappings, n_gids = m->n_gid_mappings;
  if (n_uids == 0 && n_gids == 0 && l)
    {
      uids = l->uid_mappings;
      n_uids = l->n_uid_mappings;
      gids = l->gid_mappings;
      n_gids = l->n_gid_mappings;
    }
  if (n_uids == 0 || n_gids == 0)
    return ar_error_set (
        err, 0,
        "an idmapped mount needs uidMappings and gidMappings (its own, or .linux's for the idmap option)");
  cleanup_free char *uid_map = ar_idmap_text (uids, n_uids);
  cleanup_free char *gid_map = ar_idmap_text (gids, n_gids);
  cleanup_idmap_ns ar_idmap_ns ns = { .fd = -1 };
  if (ar_idmount_userns (uid_map, gid_map, &ns, err) < 0)
    return -1;
  return ar_idmount_set (tree_fd, ns.fd, o->idmap_recursive, m->source, err);
}

/* One bind source's copy; an idmapped one is idmapped or the error. */
static int
open_bind_source (const oci_spec *spec, const oci_mount *m, int bundle_fd,
                  int *fd, ar_error_t **err)
{
  /* A copy of a shared host mount would be its peer, and what the
   * container mounts under it would show on the host: a slave, as a bind
   * made in the container's (rslave) namespace would be. */
  static const struct mount_attr slave = { .propagation = MS_SLAVE };
  cleanup_mount_options ar_mount_options o = { 0 };
  cleanup_error ar_error_t *unparsed = NULL;
  *fd = -1;
  if (m->source == NULL
      || ar_mount_options_parse (&m->options, &o, &unparsed) < 0)
    return 0; /* mount_one reports it */
  bool idmapped = is_idmapped (m, &o);
  if (!is_bind_mount (m, &o))
    return idmapped ? ar_error_set (err, 0,
                                    "uidMappings, gidMappings, idmap: only a "
                                    "bind mount can be idmapped")
                    : 0;
  *fd = detached_copy (bundle_fd, m->source, (o.flags & MS_REC) != 0, &slave);
  if (!idmapped)
    return 0;
  if (*fd < 0)
    return ar_error_set (err, errno, "idmapped mount of \"%s\"", m->source);
  if (idmap_copy (spec, m, &o, *fd, err) < 0)
    {
      if (!m->idmap_optional)
        return -1;
      ar_error_freep (err); /* the copy is still a plain one */
    }
  return 0;
}

int
ar_mounts_open_bind_sources (const oci_spec *spec, int bundle_fd, int **fds,
                             ar_error_t **err)
{
  int *out = xcalloc (spec->n_mounts + 1, sizeof *out);
  for (size_t i = 0; i < spec->n_mounts; i++)
    if (open_bind_source (spec, &spec->mounts[i], bundle_fd, &out[i], err) < 0)
      {
        ar_mounts_close_bind_sources (out, i + 1);
        return ar_error_prefix (err, "config.json: .mounts[%zu]", i);
      }
  *fds = out;
  return 0;
}

void
ar_mounts_close_bind_sources (int *fds, size_t n)
{
  for (size_t i = 0; fds && i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  free (fds);
}

int
ar_mounts_setup_rootfs (const oci_spec *spec, const char *real, int dir_fd,
                        const int *bind_source_fds, int *root_fd,
                        ar_error_t **err)
{
  cleanup_close int rootfs_fd = bind_rootfs (spec, real, dir_fd, err);
  if (rootfs_fd < 0)
    return -1;

  for (size_t i = 0; i < spec->n_mounts; i++)
    if (mount_one (spec, rootfs_fd, &spec->mounts[i],
                   bind_source_fds ? bind_source_fds[i] : -1, err)
        < 0)
      return ar_error_prefix (err, ".mounts[%zu]", i);

  if (!ar_mounts_dev_is_bind (spec)
      && ar_devices_setup (spec, rootfs_fd, err) < 0)
    return -1;
  *root_fd = steal_fd (&rootfs_fd);
  return 0;
}

int
ar_mounts_setup_console (const char *rootfs, const char *slave_path,
                         ar_error_t **err)
{
  cleanup_close int rootfs_fd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfs_fd < 0)
    return ar_error_set (err, errno, "open rootfs `%s`", rootfs);
  cleanup_close int console_fd
      = ar_path_create_in_root (rootfs_fd, "/dev/console", false, err);
  if (console_fd < 0)
    return -1;
  if (ar_mounts_bind_device_fd (slave_path, console_fd, err) < 0)
    return ar_error_prefix (err, "mount console on \"/dev/console\"");
  return 0;
}

static int
pivot_into (const char *rootfs, ar_error_t **err)
{
  cleanup_close int old_root = open ("/", O_DIRECTORY | O_PATH | O_CLOEXEC);
  if (old_root < 0)
    return ar_error_set (err, errno, "open \"/\"");
  if (chdir (rootfs) < 0)
    return ar_error_set (err, errno, "chdir `%s`", rootfs);
  /* pivot_root(".", "."): the old root ends up stacked on the new one,
   * so no directory for it is needed inside the container. */
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    return ar_error_set (err, errno, "pivot_root `%s`", rootfs);
  if (fchdir (old_root) < 0)
    return ar_error_set (err, errno, "fchdir old root");
  /* Make sure the detach below cannot propagate back to the host. */
  if (mount (NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
    return ar_error_set (err, errno, "make old root rslave");
  if (umount2 (".", MNT_DETACH) < 0)
    return ar_error_set (err, errno, "detach old root");
  return 0;
}

static int
move_into (const char *rootfs, ar_error_t **err)
{
  if (chdir (rootfs) < 0)
    return ar_error_set (err, errno, "chdir `%s`", rootfs);
  if (mount (rootfs, "/", NULL, MS_MOVE, NULL) < 0)
    return ar_error_set (err, errno, "move rootfs `%s` to \"/\"", rootfs);
  if (chroot (".") < 0)
    return ar_error_set (err, errno, "chroot `%s`", rootfs);
  return 0;
}

/* In the host's mount namespace: its root stays where it is. */
static int
chroot_into (const char *rootfs, ar_error_t **err)
{
  if (chdir (rootfs) < 0)
    return ar_error_set (err, errno, "chdir `%s`", rootfs);
  if (chroot (".") < 0)
    return ar_error_set (err, errno, "chroot `%s`", rootfs);
  return 0;
}

int
ar_mounts_enter_rootfs (const char *rootfs, bool no_pivot, bool host_mounts,
                        ar_error_t **err)
{
  int r = host_mounts ? chroot_into (rootfs, err)
          : no_pivot  ? move_into (rootfs, err)
                      : pivot_into (rootfs, err);
  if (r < 0)
    return -1;
  if (chdir ("/") < 0)
    return ar_error_set (err, errno, "chdir \"/\"");
  return 0;
}

/* ---------------------------------------------------------------------
 * After pivot_root.
 * --------------------------------------------------------------------- */

/* A masked or read-only path the rootfs does not have is skipped, and so
 * is one below a directory the container's root may not enter (in a user
 * namespace, one of an unmapped owner): nothing in the container can
 * reach it either. Its O_PATH fd, or -1 with no error when it is missing
 * (*missing set). */
static int
open_unless_missing (int root_fd, const char *path, bool *missing,
                     ar_error_t **err)
{
  cleanup_error ar_error_t *open_err = NULL;
  int fd = ar_path_open_in_root (root_fd, path, O_PATH, &open_err);
  *missing
      = fd < 0
        && (open_err->errno_value == ENOENT || open_err->errno_value == ENOTDIR
            || open_err->errno_value == EACCES);
  if (fd < 0 && !*missing)
    *err = steal_pointer (&open_err);
  return fd;
}

/* /dev/null to bind over masked files, checked to be the real device: the
 * container could have put anything at that path. */
static int
open_dev_null (int root_fd, ar_error_t **err)
{
  cleanup_close int fd
      = ar_path_open_in_root (root_fd, "/dev/null", O_PATH, err);
  if (fd < 0)
    return -1;
  struct stat st;
  if (fstat (fd, &st) < 0)
    return ar_error_set (err, errno, "stat /dev/null");
  if (!S_ISCHR (st.st_mode) || st.st_rdev != makedev (1, 3))
    return ar_error_set (err, 0, "/dev/null is not the null device");
  return steal_fd (&fd);
}

static int
mask_path (int root_fd, int *null_fd, const char *path, ar_error_t **err)
{
  bool missing;
  cleanup_close int fd = open_unless_missing (root_fd, path, &missing, err);
  if (fd < 0)
    return missing ? 0 : -1;
  struct stat st;
  if (fstat (fd, &st) < 0)
    return ar_error_set (err, errno, "stat \"%s\"", path);
  char target[AR_FD_PATH_MAX];
  ar_fd_path (fd, target);
  if (S_ISDIR (st.st_mode))
    {
      if (mount ("tmpfs", target, "tmpfs", MS_RDONLY, "size=0k") < 0)
        return ar_error_set (err, errno, "mask \"%s\"", path);
      return 0;
    }
  if (*null_fd < 0 && (*null_fd = open_dev_null (root_fd, err)) < 0)
    return -1;
  char null_path[AR_FD_PATH_MAX];
  ar_fd_path (*null_fd, null_path);
  if (mount (null_path, target, NULL, MS_BIND, NULL) < 0)
    return ar_error_set (err, errno, "mask \"%s\"", path);
  return 0;
}

static int
readonly_path (int root_fd, const char *path, ar_error_t **err)
{
  bool missing;
  cleanup_close int fd = open_unless_missing (root_fd, path, &missing, err);
  if (fd < 0)
    return missing ? 0 : -1;
  char target[AR_FD_PATH_MAX];
  ar_fd_path (fd, target);
  if (mount (target, target, NULL, MS_BIND | MS_REC, NULL) < 0)
    return ar_error_set (err, errno, "bind \"%s\" on itself", path);

  cleanup_close int mnt_fd = ar_path_open_in_root (root_fd, path, O_PATH, err);
  if (mnt_fd < 0)
    return -1;
  ar_fd_path (mnt_fd, target);
  unsigned long keep = locked_flags (target) & ~MS_RDONLY;
  if (mount (NULL, target, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | keep, NULL)
      < 0)
    return ar_error_set (err, errno, "remount \"%s\" read-only", path);
  return 0;
}

static int
readonly_root (ar_error_t **err)
{
  unsigned long keep = locked_flags ("/") & ~MS_RDONLY;
  if (mount (NULL, "/", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | keep, NULL)
      < 0)
    return ar_error_set (err, errno, "remount \"/\" read-only");
  return 0;
}

int
ar_mounts_finalize (const oci_spec *spec, ar_error_t **err)
{
  const oci_linux *l = spec->linux_cfg;
  cleanup_close int root_fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    return ar_error_set (err, errno, "open \"/\"");

  if (spec->root_readonly && readonly_root (err) < 0)
    return ar_error_prefix (err, ".root.readonly");
  if (remount_dev_readonly (spec, err) < 0)
    return -1;

  for (size_t i = 0; l && i < l->readonly_paths.len; i++)
    if (readonly_path (root_fd, l->readonly_paths.items[i], err) < 0)
      return ar_error_prefix (err, ".linux.readonlyPaths[%zu]", i);

  cleanup_close int null_fd = -1;
  for (size_t i = 0; l && i < l->masked_paths.len; i++)
    if (mask_path (root_fd, &null_fd, l->masked_paths.items[i], err) < 0)
      return ar_error_prefix (err, ".linux.maskedPaths[%zu]", i);

  unsigned long propagation;
  if (root_propagation (spec, &propagation, err) < 0)
    return -1;
  if (propagation && mount (NULL, "/", NULL, propagation, NULL) < 0)
    return ar_error_set (err, errno, "set propagation of \"/\"");
  return 0;
}
