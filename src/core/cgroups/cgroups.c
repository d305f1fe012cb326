/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "internal.h"
#include "../../util/cleanup.h"
#include "../../util/clock.h"
#include "../../util/fs.h"
#include "../../util/mountinfo.h"
#include "../../util/path.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>

/* cgroup knobs and /proc files are small; this bounds a hostile one. */
#define KNOB_MAX (1024 * 1024)
/* How long destroy waits for killed processes to leave, and freeze for the
 * freezer to settle. */
#define SETTLE_TIMEOUT_MS 2000
#define POLL_INTERVAL_MS 10

/* ---- small helpers ---------------------------------------------------- */

static void
strv_append (char ***v, size_t *n, char *s)
{
  *v = xrealloc (*v, (*n + 2) * sizeof **v);
  (*v)[(*n)++] = s;
  (*v)[*n] = NULL;
}

static void
strv_free_n (char **v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (v[i]);
  free (v);
}

static bool
strv_contains (char *const *v, const char *s)
{
  for (; v && *v; v++)
    if (strcmp (*v, s) == 0)
      return true;
  return false;
}

/* Split on `sep`, dropping empty fields. */
static char **
split (const char *s, char sep)
{
  char **v = xcalloc (1, sizeof *v);
  size_t n = 0;
  while (*s)
    {
      const char *end = strchrnul (s, sep);
      if (end > s)
        {
          strv_append (&v, &n, xstrndup (s, (size_t) (end - s)));
        }
      s = *end ? end + 1 : end;
    }
  return v;
}

/* ---- lookups ------------------------------------------------------------ */

/* Cgroup paths are looked up from one fd of AR_CGROUP_ROOT, not from "/":
 * kernfs revalidates each of its dentries on a lookup under a read lock
 * of its root, and sysfs's ("fs", "cgroup") is taken for writing by every
 * network namespace made or torn down (its lo device's entries). With
 * hundreds of containers starting at once, lookups from "/" queued there.
 * The fd is checked by device and inode on each use: a child that closed
 * its fds (the init before exec) opens its own. */
static struct
{
  int fd;
  dev_t dev;
  ino_t ino;
} cg_root = { .fd = -1 };

static int
cg_root_fd (void)
{
  struct stat st;
  if (cg_root.fd >= 0 && fstat (cg_root.fd, &st) == 0
      && st.st_dev == cg_root.dev && st.st_ino == cg_root.ino)
    return cg_root.fd;
  int fd = open (AR_CGROUP_ROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      if (fd >= 0)
        close (fd);
      return -1;
    }
  cg_root.fd = fd; /* an old number is closed or another file's now */
  cg_root.dev = st.st_dev;
  cg_root.ino = st.st_ino;
  return fd;
}

int
ar_cg_at (const char *path, const char **rel)
{
  size_t n = strlen (AR_CGROUP_ROOT);
  *rel = path;
  if (!ar_path_at_or_under (path, AR_CGROUP_ROOT) || path[n] == '\0')
    return AT_FDCWD;
  int fd = cg_root_fd ();
  if (fd < 0)
    return AT_FDCWD;
  *rel = path + n + 1;
  return fd;
}

int
ar_cg_open (const char *path, int flags)
{
  const char *rel;
  int at = ar_cg_at (path, &rel);
  return openat (at, rel, flags | O_CLOEXEC);
}

int
ar_cg_mkdir (const char *path)
{
  const char *rel;
  int at = ar_cg_at (path, &rel);
  return mkdirat (at, rel, 0755);
}

int
ar_cg_rmdir (const char *path)
{
  const char *rel;
  int at = ar_cg_at (path, &rel);
  return unlinkat (at, rel, AT_REMOVEDIR);
}

DIR *
ar_cg_opendir (const char *path)
{
  int fd = ar_cg_open (path, O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return NULL;
  DIR *d = fdopendir (fd);
  if (d == NULL)
    close (fd);
  return d;
}

/* ---- knob access ------------------------------------------------------ */

int
ar_cg_write_fd (int fd, const char *value, const char *dir, const char *file,
                ar_error_t **err)
{
  size_t len = strlen (value);
  ssize_t n;
  do
    n = write (fd, value, len);
  while (n < 0 && errno == EINTR);
  if (n < 0 || (size_t) n != len)
    return ar_error_set (err, n < 0 ? errno : EIO, "write \"%s\" to `%s/%s`",
                         value, dir, file);
  return 0;
}

int
ar_cg_open_knob (const char *dir, const char *file, int flags, ar_error_t **err)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, file);
  int fd = ar_cg_open (path, flags);
  if (fd < 0)
    ar_error_set (err, errno, "open `%s`", path);
  return fd;
}

int
ar_cg_write (const char *dir, const char *file, const char *value,
             ar_error_t **err)
{
  cleanup_close int fd = ar_cg_open_knob (dir, file, O_WRONLY, err);
  if (fd < 0)
    return -1;
  return ar_cg_write_fd (fd, value, dir, file, err);
}

int
ar_cg_writef (const char *dir, const char *file, ar_error_t **err,
              const char *fmt, ...)
{
  cleanup_free char *value = NULL;
  va_list ap;
  va_start (ap, fmt);
  int r = vasprintf (&value, fmt, ap);
  va_end (ap);
  if (r < 0)
    abort ();
  return ar_cg_write (dir, file, value, err);
}

int
ar_cg_read (const char *dir, const char *file, char **out, ar_error_t **err)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, file);
  const char *rel;
  int at = ar_cg_at (path, &rel);
  char *text = NULL;
  size_t len = 0;
  if (ar_read_file_at (at, rel, KNOB_MAX, &text, &len, NULL) < 0)
    return ar_error_set (err, errno, "read `%s`", path);
  while (len > 0 && isspace ((unsigned char) text[len - 1]))
    text[--len] = '\0';
  *out = text;
  return 0;
}

bool
ar_cg_exists (const char *dir, const char *file)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, file);
  const char *rel;
  int at = ar_cg_at (path, &rel);
  return faccessat (at, rel, F_OK, 0) == 0;
}

/* ---- discovery -------------------------------------------------------- */

bool
ar_cg_has_controller (const ar_cg_hierarchy *h, const char *name)
{
  return strv_contains (h->controllers, name);
}

const ar_cg_hierarchy *
ar_cg_find_controller (const ar_cg_hierarchies *all, const char *name)
{
  for (size_t i = 0; i < all->len; i++)
    if (ar_cg_has_controller (&all->items[i], name))
      return &all->items[i];
  return NULL;
}

void
ar_cg_hierarchies_clear (ar_cg_hierarchies *h)
{
  for (size_t i = 0; i < h->len; i++)
    {
      free (h->items[i].mount_point);
      ar_strv_freep (&h->items[i].controllers);
      free (h->items[i].own_path);
    }
  free (h->items);
  h->items = NULL;
  h->len = 0;
}
#define cleanup_hierarchies __attribute__ ((cleanup (ar_cg_hierarchies_clear)))

/* One line of /proc/self/cgroup: "4:memory:/some/path". */
typedef struct
{
  bool v2;            /* "0::/path" */
  char **controllers; /* v1 only */
  const char *path;   /* points into the caller's text copy */
} proc_cgroup_line;

/* The runtime's cgroup as seen below a mount whose root is `mount_root`:
 * without a cgroup namespace a container's mount may show a subtree. */
static char *
own_path_below (const char *cgroup_path, const char *mount_root)
{
  size_t n = strlen (mount_root);
  const char *rel = cgroup_path;
  if (strcmp (mount_root, "/") != 0)
    {
      if (strncmp (cgroup_path, mount_root, n) == 0
          && (cgroup_path[n] == '\0' || cgroup_path[n] == '/'))
        rel = cgroup_path + n;
      else
        rel = ""; /* not visible through this mount: use its root */
    }
  while (*rel == '/')
    rel++;
  char *out = xstrdup (rel);
  size_t len = strlen (out);
  while (len > 0 && out[len - 1] == '/')
    out[--len] = '\0';
  return out;
}

static const proc_cgroup_line *
match_v1_line (const proc_cgroup_line *lines, size_t n, char *const *opts)
{
  for (size_t i = 0; i < n; i++)
    {
      if (lines[i].v2 || lines[i].controllers[0] == NULL)
        continue;
      bool all = true;
      for (char **c = lines[i].controllers; *c && all; c++)
        all = strv_contains (opts, *c);
      if (all)
        return &lines[i];
    }
  return NULL;
}

static const proc_cgroup_line *
match_v2_line (const proc_cgroup_line *lines, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (lines[i].v2)
      return &lines[i];
  return NULL;
}

static void
free_proc_lines (proc_cgroup_line *lines, size_t n)
{
  for (size_t i = 0; i < n; i++)
    ar_strv_freep (&lines[i].controllers);
  free (lines);
}

/* `text` is modified in place; the lines point into it. */
static proc_cgroup_line *
parse_proc_cgroup (char *text, size_t *n_out)
{
  proc_cgroup_line *lines = NULL;
  size_t n = 0;
  for (char *save = NULL, *line = strtok_r (text, "\n", &save); line;
       line = strtok_r (NULL, "\n", &save))
    {
      char *c1 = strchr (line, ':');
      char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (c2 == NULL)
        continue;
      *c1 = *c2 = '\0';
      lines = xrealloc (lines, (n + 1) * sizeof *lines);
      lines[n].v2 = strcmp (line, "0") == 0 && c1[1] == '\0';
      lines[n].controllers = split (c1 + 1, ',');
      lines[n].path = c2 + 1;
      n++;
    }
  *n_out = n;
  return lines;
}

typedef struct
{
  char *dev;  /* "0:37": a hierarchy mounted twice has one dev */
  char *root; /* the cgroup this mount shows, usually "/" */
  char *mount_point;
  char *fstype;
  char **super_opts;
} mount_entry;

static void
mount_entry_clear (mount_entry *m)
{
  free (m->dev);
  free (m->root);
  free (m->mount_point);
  free (m->fstype);
  ar_strv_freep (&m->super_opts);
}

static bool
parse_mount_line (const char *line, mount_entry *m)
{
  ar_mountinfo_entry e;
  if (!ar_mountinfo_parse (line, &e))
    return false;
  m->dev = steal_pointer (&e.dev);
  m->root = steal_pointer (&e.root);
  m->mount_point = steal_pointer (&e.mount_point);
  m->fstype = steal_pointer (&e.fstype);
  m->super_opts = split (e.super_opts, ',');
  ar_mountinfo_entry_clear (&e);
  return true;
}

/* A later mount on `mp` or one of its parents hides whatever was there. */
static bool
hides (const char *later, const char *mp)
{
  size_t n = strlen (later);
  if (strcmp (later, "/") == 0)
    return true;
  return strncmp (mp, later, n) == 0 && (mp[n] == '\0' || mp[n] == '/');
}

static void
add_hierarchy (ar_cg_hierarchies *out, ar_cg_version version,
               const char *mount_point, char **controllers, char *own_path)
{
  out->items = xrealloc (out->items, (out->len + 1) * sizeof *out->items);
  out->items[out->len++]
      = (ar_cg_hierarchy){ .version = version,
                           .mount_point = xstrdup (mount_point),
                           .controllers = controllers,
                           .own_path = own_path };
}

static char **
copy_strv (char *const *v)
{
  char **copy = xcalloc (1, sizeof *copy);
  size_t n = 0;
  for (; v && *v; v++)
    strv_append (&copy, &n, xstrdup (*v));
  return copy;
}

/* Add the hierarchy `m` mounts, if it is a cgroup under AR_CGROUP_ROOT. */
static void
consider_mount (const mount_entry *m, const proc_cgroup_line *lines,
                size_t n_lines, ar_cg_hierarchies *out)
{
  if (!ar_path_at_or_under (m->mount_point, AR_CGROUP_ROOT))
    return;
  if (strcmp (m->fstype, "cgroup2") == 0)
    {
      const proc_cgroup_line *l = match_v2_line (lines, n_lines);
      add_hierarchy (out, AR_CG_V2, m->mount_point,
                     xcalloc (1, sizeof (char *)),
                     own_path_below (l ? l->path : "/", m->root));
    }
  else if (strcmp (m->fstype, "cgroup") == 0)
    {
      const proc_cgroup_line *l = match_v1_line (lines, n_lines, m->super_opts);
      if (l == NULL)
        return; /* a hierarchy this process is not in cannot be used */
      add_hierarchy (out, AR_CG_V1, m->mount_point, copy_strv (l->controllers),
                     own_path_below (l->path, m->root));
    }
}

static void
mounts_clear (mount_entry *m, size_t n)
{
  for (size_t i = 0; i < n; i++)
    mount_entry_clear (&m[i]);
  free (m);
}

static mount_entry *
parse_mountinfo (const char *mountinfo, size_t *n_out)
{
  cleanup_free char *info = xstrdup (mountinfo);
  mount_entry *mounts = NULL;
  size_t n = 0;
  for (char *save = NULL, *line = strtok_r (info, "\n", &save); line;
       line = strtok_r (NULL, "\n", &save))
    {
      mounts = xrealloc (mounts, (n + 1) * sizeof *mounts);
      memset (&mounts[n], 0, sizeof mounts[n]);
      if (parse_mount_line (line, &mounts[n]))
        n++;
    }
  *n_out = n;
  return mounts;
}

static bool
is_hidden (const mount_entry *mounts, size_t n, size_t i)
{
  for (size_t j = i + 1; j < n; j++)
    if (hides (mounts[j].mount_point, mounts[i].mount_point))
      return true;
  return false;
}

int
ar_cg_parse_hierarchies (const char *mountinfo, const char *proc_cgroup,
                         ar_cg_hierarchies *out, ar_error_t **err)
{
  cleanup_free char *cgroup_text = xstrdup (proc_cgroup);
  size_t n_lines = 0, n_mounts = 0;
  proc_cgroup_line *lines = parse_proc_cgroup (cgroup_text, &n_lines);
  mount_entry *mounts = parse_mountinfo (mountinfo, &n_mounts);
  cleanup_strv char **devs = xcalloc (1, sizeof *devs);
  size_t n_devs = 0;

  /* mountinfo lists mounts in the order they were made: skip those hidden
   * by a later mount, and keep one mount per hierarchy (bind mounts). */
  for (size_t i = 0; i < n_mounts; i++)
    {
      if (strv_contains (devs, mounts[i].dev)
          || is_hidden (mounts, n_mounts, i))
        continue;
      size_t before = out->len;
      consider_mount (&mounts[i], lines, n_lines, out);
      if (out->len > before)
        strv_append (&devs, &n_devs, xstrdup (mounts[i].dev));
    }
  mounts_clear (mounts, n_mounts);
  free_proc_lines (lines, n_lines);
  if (out->len == 0)
    return ar_error_set (err, ENOENT,
                         "no cgroup hierarchy is mounted under "
                         "`" AR_CGROUP_ROOT "`");
  return 0;
}

int
ar_cg_discover (ar_cg_hierarchies *out, ar_error_t **err)
{
  cleanup_free char *mountinfo = NULL;
  cleanup_free char *proc_cgroup = NULL;
  if (ar_read_file_at (AT_FDCWD, "/proc/self/mountinfo", 16 * KNOB_MAX,
                       &mountinfo, NULL, err)
          < 0
      || ar_read_file_at (AT_FDCWD, "/proc/self/cgroup", KNOB_MAX, &proc_cgroup,
                          NULL, err)
             < 0)
    return -1;
  if (ar_cg_parse_hierarchies (mountinfo, proc_cgroup, out, err) < 0)
    return -1;

  /* What a v2 hierarchy offers is in its root's cgroup.controllers; in
   * hybrid mode that is only what no v1 hierarchy has taken. */
  for (size_t i = 0; i < out->len; i++)
    {
      ar_cg_hierarchy *h = &out->items[i];
      cleanup_free char *list = NULL;
      if (h->version != AR_CG_V2)
        continue;
      if (ar_cg_read (h->mount_point, "cgroup.controllers", &list, err) < 0)
        return -1;
      ar_strv_freep (&h->controllers);
      h->controllers = split (list, ' ');
    }
  return 0;
}

/* ---- what the resources ask for ---------------------------------------- */

static bool
wants_memory (const oci_memory *m)
{
  return m
         && (m->limit.set || m->reservation.set || m->swap.set
             || m->swappiness.set || m->disable_oom_killer.set
             || m->kernel_tcp.set);
}

static bool
wants_cpu (const oci_cpu *c)
{
  return c
         && (c->shares.set || c->quota.set || c->period.set || c->burst.set
             || c->realtime_runtime.set || c->realtime_period.set
             || c->idle.set);
}

static bool
wants_blkio (const oci_blkio *b)
{
  return b
         && (b->weight.set || b->leaf_weight.set || b->n_weight_device
             || b->n_throttle_read_bps || b->n_throttle_write_bps
             || b->n_throttle_read_iops || b->n_throttle_write_iops);
}

bool
ar_cg_wants (const oci_resources *r, const char *controller)
{
  if (r == NULL)
    return false;
  if (strcmp (controller, "memory") == 0)
    return wants_memory (r->memory);
  if (strcmp (controller, "cpu") == 0)
    return wants_cpu (r->cpu);
  if (strcmp (controller, "cpuset") == 0)
    return r->cpu && (r->cpu->cpus || r->cpu->mems);
  if (strcmp (controller, "pids") == 0)
    return r->pids_limit.set;
  if (strcmp (controller, "blkio") == 0 || strcmp (controller, "io") == 0)
    return wants_blkio (r->block_io);
  if (strcmp (controller, "hugetlb") == 0)
    return r->n_hugepage_limits > 0;
  if (strcmp (controller, "rdma") == 0)
    return r->n_rdma > 0;
  if (strcmp (controller, "devices") == 0)
    return r->n_devices > 0;
  if (strcmp (controller, "net_cls") == 0)
    return r->net_class_id.set;
  if (strcmp (controller, "net_prio") == 0)
    return r->n_net_priorities > 0;
  return false;
}

char *
ar_cgroup_requested_limits (const oci_resources *r)
{
  char *names = NULL;
  for (size_t i = 0; i < ar_cg_n_resource_controllers; i++)
    if (ar_cg_wants (r, ar_cg_resource_controllers[i].v1))
      xappend (&names, ", ", ar_cg_resource_controllers[i].what);
  if (ar_cg_wants (r, "net_cls") || ar_cg_wants (r, "net_prio"))
    xappend (&names, ", ", "network");
  if (r && r->unified.len > 0)
    xappend (&names, ", ", "unified");
  return names;
}

/* net_cls and net_prio exist only in v1. Where v1 hierarchies are mounted
 * the controller could be too, and a classID or priority map that nothing
 * applies must fail the create (as runc and crun do); under pure v2 there
 * is nothing to mount, and the limits are ignored. */
static int
check_network_controllers (const ar_cg_hierarchies *all, const oci_resources *r,
                           ar_error_t **err)
{
  bool have_v1 = false;
  for (size_t i = 0; i < all->len; i++)
    have_v1 |= all->items[i].version == AR_CG_V1;
  if (!have_v1)
    return 0;
  static const char *const controllers[] = { "net_cls", "net_prio" };
  for (size_t i = 0; i < 2; i++)
    if (ar_cg_wants (r, controllers[i])
        && ar_cg_find_controller (all, controllers[i]) == NULL)
      return ar_error_set (err, 0,
                           "linux.resources.network: no cgroup hierarchy has "
                           "the %s controller",
                           controllers[i]);
  return 0;
}

/* A limit nobody enforces is worse than an error: refuse it. net_cls and
 * net_prio are checked above; device rules under pure v2 need an eBPF
 * program that this module does not load. */
static int
check_controllers (const ar_cg_hierarchies *all, const oci_resources *r,
                   ar_error_t **err)
{
  for (size_t i = 0; i < ar_cg_n_resource_controllers; i++)
    {
      const ar_cg_resource_controller *c = &ar_cg_resource_controllers[i];
      if (ar_cg_wants (r, c->v1) && ar_cg_find_controller (all, c->v1) == NULL
          && ar_cg_find_controller (all, c->v2) == NULL)
        return ar_error_set (err, 0,
                             "linux.resources.%s: no cgroup hierarchy has the "
                             "%s controller",
                             c->what, c->v1);
    }
  if (check_network_controllers (all, r, err) < 0)
    return -1;

  bool have_v2 = false;
  for (size_t i = 0; i < all->len; i++)
    have_v2 |= all->items[i].version == AR_CG_V2;
  if (r && r->unified.len > 0 && !have_v2)
    return ar_error_set (err, 0,
                         "linux.resources.unified: needs cgroup v2, "
                         "but no cgroup2 hierarchy is mounted");
  return 0;
}

/* ---- cgroupsPath ------------------------------------------------------ */

/* "system.slice:docker:abc": the part before the first ':' has no '/'. */
static bool
is_systemd_style (const char *path)
{
  const char *colon = strchr (path, ':');
  return colon && memchr (path, '/', (size_t) (colon - path)) == NULL
         && strchr (colon + 1, ':') != NULL;
}

/* Normalise cgroupsPath into a path relative to either the hierarchy root
 * (absolute) or the runtime's own cgroup (relative), without "." and "..";
 * refuse anything that would leave that base or be the base itself. */
static int
normalize_cgroups_path (const char *id, const char *cgroups_path, char **out,
                        bool *absolute, ar_error_t **err)
{
  cleanup_free char *given = cgroups_path && *cgroups_path
                                 ? xstrdup (cgroups_path)
                                 : xasprintf ("/%s", id ? id : "");
  if (is_systemd_style (given))
    return ar_error_set (err, 0,
                         "config.json: .linux.cgroupsPath: \"%s\" is "
                         "systemd-style (slice:prefix:name): run agentrun "
                         "with --systemd-cgroup",
                         given);
  for (const char *p = given; *p; p++)
    if (iscntrl ((unsigned char) *p))
      return ar_error_set (err, 0,
                           "cgroupsPath \"%s\": control characters are not "
                           "allowed",
                           given);

  *absolute = given[0] == '/';
  cleanup_strv char **parts = split (given, '/');
  cleanup_free char **kept = xcalloc (1, sizeof *kept);
  size_t n_kept = 0;
  for (char **p = parts; *p; p++)
    {
      if (strcmp (*p, ".") == 0)
        continue;
      if (strcmp (*p, "..") == 0)
        {
          if (n_kept == 0)
            return ar_error_set (
                err, 0, "cgroupsPath \"%s\": \"..\" leaves the %s", given,
                *absolute ? "cgroup root" : "runtime's own cgroup");
          kept[--n_kept] = NULL;
          continue;
        }
      kept = xrealloc (kept, (n_kept + 2) * sizeof *kept);
      kept[n_kept++] = *p;
      kept[n_kept] = NULL;
    }
  if (n_kept == 0)
    return ar_error_set (
        err, 0, "cgroupsPath \"%s\": refusing to use the %s itself", given,
        *absolute ? "root cgroup" : "runtime's own cgroup");

  size_t len = 0;
  for (size_t i = 0; i < n_kept; i++)
    len += strlen (kept[i]) + 1;
  char *joined = xmalloc (len), *o = joined;
  for (size_t i = 0; i < n_kept; i++)
    o = stpcpy (stpcpy (o, i ? "/" : ""), kept[i]);
  *out = joined;
  return 0;
}

static char *
leaf_in_hierarchy (const ar_cg_hierarchy *h, const char *rel, bool absolute)
{
  if (absolute || h->own_path[0] == '\0')
    return xasprintf ("%s/%s", h->mount_point, rel);
  return xasprintf ("%s/%s/%s", h->mount_point, h->own_path, rel);
}

/* ---- lifecycle ---------------------------------------------------------- */

void
ar_cgroup_free (ar_cgroup *cg)
{
  if (cg == NULL)
    return;
  strv_free_n (cg->paths, cg->n_paths);
  strv_free_n (cg->created, cg->n_created);
  free (cg->unit);
  free (cg);
}

static void
cgroup_freep (ar_cgroup **cg)
{
  ar_cgroup_free (*cg);
  *cg = NULL;
}
#define cleanup_cgroup __attribute__ ((cleanup (cgroup_freep)))

/* mkdir every missing component of `leaf` below `mount_point`, recording
 * each directory this call made. Existing ones are someone else's. */
static int
make_directories (const char *mount_point, const char *leaf, ar_cgroup *cg,
                  ar_error_t **err)
{
  cleanup_free char *path = xstrdup (leaf);
  for (char *p = path + strlen (mount_point) + 1;; p++)
    {
      if (*p != '/' && *p != '\0')
        continue;
      char saved = *p;
      *p = '\0';
      if (ar_cg_mkdir (path) == 0)
        strv_append (&cg->created, &cg->n_created, xstrdup (path));
      else if (errno != EEXIST)
        return ar_error_set (err, errno, "mkdir `%s`", path);
      *p = saved;
      if (saved == '\0')
        return 0;
    }
}

/* runc warns and goes on: processes sharing a cgroup share its limits.
 * (delete leaves a cgroup it did not create, and what runs in it, alone.) */
static void
warn_if_populated (const char *leaf)
{
  cleanup_free char *procs = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  if (ar_cg_read (leaf, "cgroup.procs", &procs, &ignored) == 0 && procs[0])
    fprintf (stderr,
             "agentrun: warning: cgroup `%s` already has processes: "
             "the container shares it and its limits\n",
             leaf);
}

/* A process put in a frozen cgroup stops in the kernel's freezer before
 * it runs a single instruction, and create would wait for it forever. */
static int
refuse_frozen (const char *leaf, ar_error_t **err)
{
  const char *file = ar_cg_exists (leaf, "freezer.state") ? "freezer.state"
                                                          : "cgroup.freeze";
  cleanup_free char *value = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  if (ar_cg_read (leaf, file, &value, &ignored) < 0
      || strcmp (value, "THAWED") == 0 || strcmp (value, "0") == 0)
    return 0;
  return ar_error_set (err, 0,
                       "cgroup `%s` is frozen (%s: %s): thaw it "
                       "before putting a container in it",
                       leaf, file, value);
}

static int
setup_hierarchy (const ar_cg_hierarchy *h, const char *leaf,
                 const oci_resources *r, ar_cgroup *cg, ar_error_t **err)
{
  size_t first_new = cg->n_created;
  if (make_directories (h->mount_point, leaf, cg, err) < 0)
    return -1;
  strv_append (&cg->paths, &cg->n_paths, xstrdup (leaf));

  /* An existing leaf is joined as is: its knobs are not ours to change. */
  size_t n_new = cg->n_created - first_new;
  if (n_new == 0 || strcmp (cg->created[cg->n_created - 1], leaf) != 0)
    {
      warn_if_populated (leaf);
      return refuse_frozen (leaf, err);
    }

  char *const *created = cg->created + first_new;
  if (h->version == AR_CG_V1)
    return ar_cg_v1_prepare (h, created, n_new, err) < 0
                   || ar_cg_v1_apply (h, leaf, r, err) < 0
               ? -1
               : 0;
  return ar_cg_v2_prepare (h, created, n_new, r, err) < 0
                 || ar_cg_v2_apply (h, leaf, r, err) < 0
             ? -1
             : 0;
}

/* Create and exec ask this of each path up to three times (where the
 * child is born, which files it writes itself, what the parent moves);
 * the file system under a cgroup directory does not change while we run,
 * so each answer is kept. */
bool
ar_cg_on_cgroup2 (const char *dir)
{
  static struct
  {
    char *dir;
    bool v2;
  } seen[32];
  static size_t n_seen;
  for (size_t i = 0; i < n_seen; i++)
    if (strcmp (seen[i].dir, dir) == 0)
      return seen[i].v2;
  struct statfs fs;
  cleanup_close int fd = ar_cg_open (dir, O_PATH | O_DIRECTORY);
  if (fd < 0 || fstatfs (fd, &fs) < 0)
    return false;
  bool v2 = fs.f_type == CGROUP2_SUPER_MAGIC;
  if (n_seen < sizeof seen / sizeof seen[0])
    seen[n_seen++] = (typeof (seen[0])){ .dir = xstrdup (dir), .v2 = v2 };
  return v2;
}

int
ar_cgroup_open_v2_dir (const ar_cgroup *cg)
{
  for (size_t i = 0; i < cg->n_paths; i++)
    if (ar_cg_on_cgroup2 (cg->paths[i]))
      return ar_cg_open (cg->paths[i], O_PATH | O_DIRECTORY);
  return -1;
}

static bool
is_wanted (const char *dir, unsigned which)
{
  return (which & (ar_cg_on_cgroup2 (dir) ? AR_CGROUP_V2 : AR_CGROUP_V1)) != 0;
}

int
ar_cgroup_enter_only (const ar_cgroup *cg, pid_t pid, unsigned which,
                      ar_error_t **err)
{
  for (size_t i = 0; i < cg->n_paths; i++)
    if (is_wanted (cg->paths[i], which)
        && ar_cg_writef (cg->paths[i], "cgroup.procs", err, "%d", (int) pid)
               < 0)
      return -1;
  return 0;
}

int
ar_cgroup_enter (const ar_cgroup *cg, pid_t pid, ar_error_t **err)
{
  return ar_cgroup_enter_only (cg, pid, AR_CGROUP_V1 | AR_CGROUP_V2, err);
}

/* ---- a process moving itself (v1) -------------------------------------- */

void
ar_cgroup_self_move_close (ar_cgroup_self_move *m)
{
  for (size_t i = 0; i < m->n; i++)
    ar_closep (&m->fds[i]);
  free (m->fds);
  *m = (ar_cgroup_self_move){ 0 };
}

int
ar_cgroup_self_move_open (const ar_cgroup *cg, ar_cgroup_self_move *out,
                          ar_error_t **err)
{
  *out = (ar_cgroup_self_move){ .fds = xcalloc (cg->n_paths + 1, sizeof (int)),
                                .dirs = (const char *const *) cg->paths };
  for (size_t i = 0; i < cg->n_paths; i++)
    {
      out->fds[i] = -1;
      if (!is_wanted (cg->paths[i], AR_CGROUP_V1))
        continue;
      out->fds[i] = ar_cg_open_knob (cg->paths[i], "tasks", O_WRONLY, err);
      out->n = i + 1; /* n: up to the last v1 one; 0 on a v2-only host */
      if (out->fds[i] < 0)
        {
          ar_cgroup_self_move_close (out);
          return -1;
        }
    }
  return 0;
}

int
ar_cgroup_move_self (ar_cgroup_self_move *m, ar_error_t **err)
{
  for (size_t i = 0; i < m->n; i++)
    {
      if (m->fds[i] < 0)
        continue;
      if (ar_cg_write_fd (m->fds[i], "0", m->dirs[i], "tasks", err) < 0)
        return -1;
      ar_closep (&m->fds[i]);
    }
  return 0;
}

/* The systemd driver needs the unified hierarchy, alone, at the root. */
static const ar_cg_hierarchy *
unified_only (const ar_cg_hierarchies *all)
{
  if (all->len != 1 || all->items[0].version != AR_CG_V2
      || strcmp (all->items[0].mount_point, AR_CGROUP_ROOT) != 0)
    return NULL;
  return &all->items[0];
}

static int
create_systemd_unit (const char *id, const char *cgroups_path,
                     const oci_resources *r, pid_t pid, ar_cgroup **out,
                     ar_error_t **err)
{
  ar_cg_systemd_unit u __attribute__ ((cleanup (ar_cg_systemd_unit_clear)))
  = { 0 };
  if (ar_cg_systemd_check_running (err) < 0
      || ar_cg_systemd_parse_path (id, cgroups_path, &u, err) < 0)
    return -1;
  cleanup_hierarchies ar_cg_hierarchies all = { 0 };
  if (ar_cg_discover (&all, err) < 0)
    return -1;
  const ar_cg_hierarchy *v2 = unified_only (&all);
  if (v2 == NULL)
    return ar_error_set (
        err, 0,
        "--systemd-cgroup needs the unified cgroup v2 hierarchy alone at " AR_CGROUP_ROOT
        " (this host mounts cgroup v1 there): use the cgroupfs driver");
  if (check_controllers (&all, r, err) < 0)
    return -1;
  if (pid <= 0)
    return ar_error_set (err, EINVAL,
                         "--systemd-cgroup: a scope needs a process");
  if (ar_cg_systemd_start (&u, id, pid, r, err) < 0)
    return -1;
  cleanup_cgroup ar_cgroup *cg = xcalloc (1, sizeof *cg);
  cg->unit = steal_pointer (&u.unit);
  strv_append (&cg->paths, &cg->n_paths, steal_pointer (&u.dir));
  /* systemd delegates what its slices enable (hugetlb, say, often not). */
  if (ar_cg_v2_check_available (v2, cg->paths[0], r, err) < 0
      || ar_cg_v2_apply (v2, cg->paths[0], r, err) < 0)
    {
      cleanup_error ar_error_t *undo_err = NULL;
      ar_cgroup_destroy (cg, &undo_err);
      return -1;
    }
  *out = steal_pointer (&cg);
  return 0;
}

int
ar_cgroup_create (const char *id, const oci_spec *spec, ar_cgroup_driver driver,
                  pid_t pid, ar_cgroup **out, ar_error_t **err)
{
  const oci_linux *linux_cfg = spec ? spec->linux_cfg : NULL;
  const oci_resources *r = linux_cfg ? linux_cfg->resources : NULL;
  if (driver == AR_CGROUP_SYSTEMD)
    return create_systemd_unit (id, linux_cfg ? linux_cfg->cgroups_path : NULL,
                                r, pid, out, err);
  cleanup_free char *rel = NULL;
  bool absolute = false;
  if (normalize_cgroups_path (id, linux_cfg ? linux_cfg->cgroups_path : NULL,
                              &rel, &absolute, err)
      < 0)
    return -1;

  cleanup_hierarchies ar_cg_hierarchies all = { 0 };
  if (ar_cg_discover (&all, err) < 0 || check_controllers (&all, r, err) < 0)
    return -1;

  cleanup_cgroup ar_cgroup *cg = xcalloc (1, sizeof *cg);
  int ret = 0;
  for (size_t i = 0; i < all.len && ret == 0; i++)
    {
      cleanup_free char *leaf
          = leaf_in_hierarchy (&all.items[i], rel, absolute);
      ret = setup_hierarchy (&all.items[i], leaf, r, cg, err);
    }
  if (ret == 0 && pid > 0)
    ret = ar_cgroup_enter (cg, pid, err);
  if (ret < 0)
    {
      /* Undo everything; the first error is the one worth reporting. */
      cleanup_error ar_error_t *undo_err = NULL;
      ar_cgroup_destroy (cg, &undo_err);
      return -1;
    }
  *out = steal_pointer (&cg);
  return 0;
}

/* ---- processes ---------------------------------------------------------- */

static void
append_pids_from (const char *dir, pid_t **pids, size_t *n)
{
  cleanup_free char *text = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  if (ar_cg_read (dir, "cgroup.procs", &text, &ignored) < 0)
    return; /* gone meanwhile: nothing in it */
  for (char *p = text; *p;)
    {
      char *end;
      long v = strtol (p, &end, 10);
      if (end == p)
        break;
      if (v > 0)
        {
          *pids = xrealloc (*pids, (*n + 1) * sizeof **pids);
          (*pids)[(*n)++] = (pid_t) v;
        }
      p = end;
    }
}

/* The container may make cgroups of its own below ours (cgroupns); its
 * processes there are still the container's. */
static void
collect_pids_recursive (const char *dir, pid_t **pids, size_t *n)
{
  append_pids_from (dir, pids, n);
  cleanup_dir DIR *d = ar_cg_opendir (dir);
  if (d == NULL)
    return;
  for (struct dirent *e; (e = readdir (d));)
    {
      if (e->d_type != DT_DIR || strcmp (e->d_name, ".") == 0
          || strcmp (e->d_name, "..") == 0)
        continue;
      cleanup_free char *sub = xasprintf ("%s/%s", dir, e->d_name);
      collect_pids_recursive (sub, pids, n);
    }
}

int
ar_cgroup_pids (const ar_cgroup *cg, pid_t **pids, size_t *n, ar_error_t **err)
{
  (void) err;
  *pids = NULL;
  *n = 0;
  for (size_t i = 0; i < cg->n_paths && *n == 0; i++)
    collect_pids_recursive (cg->paths[i], pids, n);
  return 0;
}

int
ar_cgroup_kill_all (const ar_cgroup *cg, int sig, ar_error_t **err)
{
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  if (ar_cgroup_pids (cg, &pids, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (kill (pids[i], sig) < 0 && errno != ESRCH)
      return ar_error_set (err, errno, "kill %d", (int) pids[i]);
  return 0;
}

/* ---- destroy ------------------------------------------------------------ */

static bool
is_leaf (const ar_cgroup *cg, const char *dir)
{
  for (size_t i = 0; i < cg->n_paths; i++)
    if (strcmp (cg->paths[i], dir) == 0)
      return true;
  return false;
}

/* SIGKILL everything in one of our leaves; true when it was empty.
 * A v1 freezer holds SIGKILL until thawed, so thaw first. */
static bool
kill_in_leaf (const char *dir)
{
  cleanup_error ar_error_t *ignored = NULL;
  if (ar_cg_exists (dir, "freezer.state"))
    ar_cg_write (dir, "freezer.state", "THAWED", &ignored);
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  collect_pids_recursive (dir, &pids, &n);
  if (n == 0)
    return true;
  if (ar_cg_exists (dir, "cgroup.kill"))
    ar_cg_write (dir, "cgroup.kill", "1", &ignored);
  else
    for (size_t i = 0; i < n; i++)
      kill (pids[i], SIGKILL);
  return false;
}

/* rmdir a leaf and, first, the sub-cgroups the container made inside it.
 * Most leaves have none: the rmdir is tried first, and the directory is
 * read only when the kernel finds something still inside (EBUSY). */
static int
remove_tree (const char *dir)
{
  if (ar_cg_rmdir (dir) == 0 || errno == ENOENT)
    return 0;
  if (errno != EBUSY)
    return -1;
  {
    cleanup_dir DIR *d = ar_cg_opendir (dir);
    if (d == NULL)
      return errno == ENOENT ? 0 : -1;
    for (struct dirent *e; (e = readdir (d));)
      {
        if (e->d_type != DT_DIR || strcmp (e->d_name, ".") == 0
            || strcmp (e->d_name, "..") == 0)
          continue;
        cleanup_free char *sub = xasprintf ("%s/%s", dir, e->d_name);
        if (remove_tree (sub) < 0)
          return -1;
      }
  }
  if (ar_cg_rmdir (dir) < 0 && errno != ENOENT)
    return -1;
  return 0;
}

static int
remove_leaf (const char *dir, long long deadline, ar_error_t **err)
{
  while (remove_tree (dir) < 0)
    {
      if (errno != EBUSY || ar_now_ms () >= deadline)
        return ar_error_set (err, errno, "remove cgroup `%s`", dir);
      ar_sleep_ms (POLL_INTERVAL_MS);
    }
  return 0;
}

/* A parent we made may since hold other containers' cgroups (two ids
 * under one new "/agentrun"): those are not ours, so a parent is removed
 * only when empty, and never searched or killed in. */
static void
remove_parent_if_empty (const char *dir)
{
  ar_cg_rmdir (dir);
}

/* rmdir every leaf that has nothing left in it and forget it; true when
 * none is left. A leaf still holding a process or a sub-cgroup stays
 * (EBUSY), as do the parents, removed after the leaves. */
static bool
remove_empty_leaves (ar_cgroup *cg)
{
  size_t kept = 0;
  bool leaves_left = false;
  for (size_t i = 0; i < cg->n_created; i++)
    {
      char *dir = cg->created[i];
      if (is_leaf (cg, dir))
        {
          if (ar_cg_rmdir (dir) == 0 || errno == ENOENT)
            {
              free (dir);
              continue;
            }
          leaves_left = true;
        }
      cg->created[kept++] = dir;
    }
  for (size_t i = kept; i < cg->n_created; i++)
    cg->created[i] = NULL;
  cg->n_created = kept;
  return !leaves_left;
}

/* Empty the scope, then let systemd stop it and remove its cgroup. */
static int
destroy_systemd_unit (ar_cgroup *cg, ar_error_t **err)
{
  long long deadline = ar_now_ms () + SETTLE_TIMEOUT_MS;
  while (!kill_in_leaf (cg->paths[0]) && ar_now_ms () < deadline)
    ar_sleep_ms (POLL_INTERVAL_MS);
  if (ar_cg_systemd_stop (cg->unit, err) < 0)
    return -1;
  free (steal_pointer (&cg->unit));
  return 0;
}

int
ar_cgroup_destroy (ar_cgroup *cg, ar_error_t **err)
{
  if (cg && cg->unit)
    return destroy_systemd_unit (cg, err);
  if (cg == NULL || cg->n_created == 0)
    return 0;
  long long deadline = ar_now_ms () + SETTLE_TIMEOUT_MS;

  /* Killed processes usually leave within a millisecond: poll fast first.
   * Most leaves are empty by now (the init's exit took its pid namespace
   * along): the search for processes starts only when one will not go. */
  for (long delay = 1; !remove_empty_leaves (cg);
       delay = delay * 2 < POLL_INTERVAL_MS ? delay * 2 : POLL_INTERVAL_MS)
    {
      bool empty = true;
      for (size_t i = 0; i < cg->n_created; i++)
        if (is_leaf (cg, cg->created[i]))
          empty &= kill_in_leaf (cg->created[i]);
      if (empty || ar_now_ms () >= deadline)
        break;
      ar_sleep_ms (delay);
    }

  /* Deepest first: `created` lists parents before children. A leaf that
   * will not go (one hierarchy) does not keep the others: each is tried,
   * and the first failure is reported. */
  ar_error_t *first = NULL;
  while (cg->n_created > 0)
    {
      const char *dir = cg->created[cg->n_created - 1];
      ar_error_t *step = NULL;
      if (!is_leaf (cg, dir))
        remove_parent_if_empty (dir);
      else if (remove_leaf (dir, deadline, &step) < 0)
        ar_error_free (ar_error_keep_first (&first, &step));
      free (cg->created[--cg->n_created]);
      cg->created[cg->n_created] = NULL;
    }
  return ar_error_pass (err, first);
}

/* ---- freeze ------------------------------------------------------------- */

static int
wait_for_file_line (const char *dir, const char *file, const char *wanted,
                    ar_error_t **err)
{
  long long deadline = ar_now_ms () + SETTLE_TIMEOUT_MS;
  for (;;)
    {
      cleanup_free char *text = NULL;
      if (ar_cg_read (dir, file, &text, err) < 0)
        return -1;
      for (char *save = NULL, *l = strtok_r (text, "\n", &save); l;
           l = strtok_r (NULL, "\n", &save))
        if (strcmp (l, wanted) == 0)
          return 0;
      if (ar_now_ms () >= deadline)
        return ar_error_set (err, ETIMEDOUT, "`%s/%s` did not become \"%s\"",
                             dir, file, wanted);
      ar_sleep_ms (POLL_INTERVAL_MS);
    }
}

const char *
ar_cgroup_freezer (const ar_cgroup *cg, const char **file)
{
  static const char *const files[] = { "freezer.state", "cgroup.freeze" };
  for (size_t f = 0; f < 2; f++)
    for (size_t i = 0; cg && i < cg->n_paths; i++)
      if (ar_cg_exists (cg->paths[i], files[f]))
        {
          *file = files[f];
          return cg->paths[i];
        }
  return NULL;
}

int
ar_cgroup_freeze (const ar_cgroup *cg, bool frozen, ar_error_t **err)
{
  const char *file;
  const char *dir = ar_cgroup_freezer (cg, &file);
  if (dir == NULL)
    return ar_error_set (err, 0,
                         "no freezer: neither a v1 freezer hierarchy "
                         "nor cgroup v2 is available");
  bool v1 = strcmp (file, "freezer.state") == 0;
  const char *state
      = v1 ? (frozen ? "FROZEN" : "THAWED") : (frozen ? "1" : "0");
  if (ar_cg_write (dir, file, state, err) < 0)
    return -1;
  return v1 ? wait_for_file_line (dir, file, state, err)
            : wait_for_file_line (dir, "cgroup.events",
                                  frozen ? "frozen 1" : "frozen 0", err);
}

bool
ar_cgroup_is_frozen (const ar_cgroup *cg)
{
  const char *file;
  const char *dir = ar_cgroup_freezer (cg, &file);
  cleanup_free char *value = NULL;
  if (dir == NULL || ar_cg_read (dir, file, &value, NULL) < 0)
    return false;
  if (strcmp (file, "freezer.state") == 0)
    return strncmp (value, "FROZEN", 6) == 0;
  return value[0] == '1';
}

/* ---- persistence -------------------------------------------------------- */

char *
ar_cgroup_serialize (const ar_cgroup *cg)
{
  size_t len = 1 + (cg->unit ? strlen ("unit ") + strlen (cg->unit) + 1 : 0);
  for (size_t i = 0; i < cg->n_paths; i++)
    len += strlen ("path ") + strlen (cg->paths[i]) + 1;
  for (size_t i = 0; i < cg->n_created; i++)
    len += strlen ("created ") + strlen (cg->created[i]) + 1;
  char *text = xmalloc (len), *o = text;
  *o = '\0';
  for (size_t i = 0; i < cg->n_paths; i++)
    o += sprintf (o, "path %s\n", cg->paths[i]);
  for (size_t i = 0; i < cg->n_created; i++)
    o += sprintf (o, "created %s\n", cg->created[i]);
  if (cg->unit)
    sprintf (o, "unit %s\n", cg->unit);
  return text;
}

/* The state file is ours, but a path from it decides what gets removed:
 * accept only plain directories strictly below AR_CGROUP_ROOT. */
static bool
safe_state_path (const char *path)
{
  size_t n = strlen (AR_CGROUP_ROOT);
  if (strncmp (path, AR_CGROUP_ROOT "/", n + 1) != 0 || path[n + 1] == '\0')
    return false;
  cleanup_strv char **parts = split (path + n + 1, '/');
  for (char **p = parts; *p; p++)
    if (strcmp (*p, "..") == 0 || strcmp (*p, ".") == 0)
      return false;
  for (const char *p = path; *p; p++)
    if (iscntrl ((unsigned char) *p))
      return false;
  return strstr (path, "//") == NULL && path[strlen (path) - 1] != '/';
}

int
ar_cgroup_deserialize (const char *text, ar_cgroup **out, ar_error_t **err)
{
  cleanup_cgroup ar_cgroup *cg = xcalloc (1, sizeof *cg);
  cleanup_strv char **lines = split (text, '\n');
  for (size_t i = 0; lines[i]; i++)
    {
      const char *line = lines[i];
      const char *value = strchr (line, ' ');
      size_t key_len = value ? (size_t) (value - line) : 0;
      if (key_len == 4 && strncmp (line, "unit", 4) == 0
          && ar_cg_systemd_is_scope_name (value + 1) && cg->unit == NULL)
        {
          cg->unit = xstrdup (value + 1);
          continue;
        }
      if (value == NULL || !safe_state_path (value + 1))
        return ar_error_set (err, 0, "cgroup state line %zu: invalid \"%s\"",
                             i + 1, line);
      if (key_len == 4 && strncmp (line, "path", 4) == 0)
        strv_append (&cg->paths, &cg->n_paths, xstrdup (value + 1));
      else if (key_len == 7 && strncmp (line, "created", 7) == 0)
        strv_append (&cg->created, &cg->n_created, xstrdup (value + 1));
      else
        return ar_error_set (err, 0,
                             "cgroup state line %zu: unknown key in "
                             "\"%s\"",
                             i + 1, line);
    }
  *out = steal_pointer (&cg);
  return 0;
}

/* cpuset and pids use the same files on v1 and v2. */
int
ar_cg_apply_cpuset (const char *dir, const oci_cpu *c, ar_error_t **err)
{
  if (c == NULL)
    return 0;
  if (c->cpus && *c->cpus && ar_cg_write (dir, "cpuset.cpus", c->cpus, err) < 0)
    return -1;
  if (c->mems && *c->mems && ar_cg_write (dir, "cpuset.mems", c->mems, err) < 0)
    return -1;
  return 0;
}

int
ar_cg_apply_pids (const char *dir, const oci_resources *r, ar_error_t **err)
{
  if (!r->pids_limit.set)
    return 0;
  /* The spec: zero or below means no limit. */
  if (r->pids_limit.value <= 0)
    return ar_cg_write (dir, "pids.max", "max", err);
  return ar_cg_writef (dir, "pids.max", err, "%" PRId64, r->pids_limit.value);
}

/* One "DEVICE hca_handle=N hca_object=M" line per device, as the kernel
 * takes it; a limit the spec leaves out is "max". */
int
ar_cg_apply_rdma (const char *dir, const oci_resources *r, ar_error_t **err)
{
  for (size_t i = 0; i < r->n_rdma; i++)
    {
      const oci_rdma_limit *l = &r->rdma[i];
      if (strpbrk (l->device, " \t\n=") != NULL)
        return ar_error_set (err, 0,
                             "linux.resources.rdma[\"%s\"]: invalid "
                             "device name",
                             l->device);
      char handles[16] = "max", objects[16] = "max";
      if (l->hca_handles.set)
        snprintf (handles, sizeof handles, "%" PRIu32, l->hca_handles.value);
      if (l->hca_objects.set)
        snprintf (objects, sizeof objects, "%" PRIu32, l->hca_objects.value);
      if (ar_cg_writef (dir, "rdma.max", err, "%s hca_handle=%s hca_object=%s",
                        l->device, handles, objects)
          < 0)
        return ar_error_prefix (err, "linux.resources.rdma[\"%s\"]", l->device);
    }
  return 0;
}

const ar_cg_resource_controller ar_cg_resource_controllers[] = {
  { "memory", "memory", "memory" }, { "cpu", "cpu", "cpu" },
  { "cpuset", "cpuset", "cpuset" }, { "pids", "pids", "pids" },
  { "blkio", "io", "blockIO" },     { "hugetlb", "hugetlb", "hugepageLimits" },
  { "rdma", "rdma", "rdma" },
};
const size_t ar_cg_n_resource_controllers
    = sizeof ar_cg_resource_controllers / sizeof ar_cg_resource_controllers[0];
