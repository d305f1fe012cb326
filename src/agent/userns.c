/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "userns.h"
#include "hostfs.h"
#include "policy_internal.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/subid.h"
#include "../util/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <linux/nsfs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define SUBUID_FILE "/etc/subuid"
#define SUBGID_FILE "/etc/subgid"

static bool
read_record (int dirfd, const char *name, ar_userns_lease *lease)
{
  cleanup_free char *text = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  if (ar_read_file_at (dirfd, name, 128, &text, NULL, &ignored) < 0)
    return false;
  return sscanf (text, "%u %u %u %u", &lease->slot, &lease->uid, &lease->gid,
                 &lease->size)
         == 4;
}

ar_id_shift
ar_agent_userns_shift (const ar_userns_lease *lease)
{
  return (ar_id_shift){ .uid_from = 0,
                        .uid_to = lease->uid,
                        .gid_from = 0,
                        .gid_to = lease->gid,
                        .count = lease->size };
}

bool
ar_agent_userns_recorded (const char *state_dir, ar_userns_lease *lease)
{
  cleanup_free char *path = ar_hostfs_join (state_dir, AR_USERNS_RECORD);
  return read_record (AT_FDCWD, path, lease);
}

/* A lease file is named by its slot's number. */
typedef struct
{
  char text[16];
} slot_name;

static slot_name
name_of (unsigned slot)
{
  slot_name n;
  snprintf (n.text, sizeof n.text, "%u", slot);
  return n;
}

/* The state dir the lease of `slot` names; NULL when it cannot be read. */
static char *
lease_holder (int lease_dir, unsigned slot)
{
  char *holder = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  if (ar_read_file_at (lease_dir, name_of (slot).text, PATH_MAX, &holder, NULL,
                       &ignored)
      < 0)
    return NULL;
  return holder;
}

/* The lease of `slot`, held by `holder` (NULL: unreadable), names a state
 * dir that no longer records it. */
static bool
lease_is_stale (const char *holder, unsigned slot)
{
  if (holder == NULL)
    return true;
  ar_userns_lease recorded;
  return !ar_agent_userns_recorded (holder, &recorded) || recorded.slot != slot;
}

static int
claim_slot (int lease_dir, unsigned slot, const char *state_dir)
{
  slot_name name = name_of (slot);
  int fd = openat (lease_dir, name.text,
                   O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool taken = fd < 0 && errno == EEXIST;
  cleanup_free char *holder = taken ? lease_holder (lease_dir, slot) : NULL;
  if (taken && lease_is_stale (holder, slot))
    {
      unlinkat (lease_dir, name.text, 0);
      fd = openat (lease_dir, name.text,
                   O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    }
  if (fd < 0)
    return -1;
  int r = ar_write_all (fd, state_dir, strlen (state_dir));
  close (fd);
  return r;
}

static int
open_lease_dir (ar_error_t **err)
{
  int fd = open (AR_USERNS_LEASE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    {
      /* Root's alone: containers reach their roots by an fd their init
       * opened while it could (core/init.c), never through here. */
      if (mkdir (AR_USERNS_LEASE_DIR, 0700) < 0 && errno != EEXIST)
        return ar_error_set (err, errno, "mkdir `%s`", AR_USERNS_LEASE_DIR);
      fd = open (AR_USERNS_LEASE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0
      || ((st.st_mode & 07777) != 0700 && fchmod (fd, 0700) < 0))
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      return ar_error_set (err, saved, "open `%s`", AR_USERNS_LEASE_DIR);
    }
  if (flock (fd, LOCK_EX) < 0)
    {
      int saved = errno;
      close (fd);
      return ar_error_set (err, saved, "lock `%s`", AR_USERNS_LEASE_DIR);
    }
  return fd;
}

/* The state dir is new: the record is made once, never replaced. */
static int
write_record (const char *state_dir, const ar_userns_lease *lease,
              ar_error_t **err)
{
  cleanup_free char *text = xasprintf ("%u %u %u %u\n", lease->slot, lease->uid,
                                       lease->gid, lease->size);
  cleanup_free char *path = ar_hostfs_join (state_dir, AR_USERNS_RECORD);
  cleanup_close int fd
      = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || ar_write_all (fd, text, strlen (text)) < 0)
    return ar_error_set (err, errno, "write `%s`", path);
  return 0;
}

static int
take_lease (const char *user, uint32_t size, const char *state_dir,
            ar_userns_lease *lease, ar_error_t **err)
{
  ar_subid_range uids, gids;
  if (ar_subid_find (SUBUID_FILE, user, &uids, err) < 0
      || ar_subid_find (SUBGID_FILE, user, &gids, err) < 0)
    return -1;
  uint32_t n = (uids.count < gids.count ? uids.count : gids.count) / size;
  if (n == 0)
    return ar_error_set (
        err, 0,
        "%s, %s: the range of user `%s` holds fewer than %u ids, the size of one container's: make it larger",
        SUBUID_FILE, SUBGID_FILE, user, size);
  cleanup_close int lease_dir = open_lease_dir (err);
  if (lease_dir < 0)
    return -1;
  for (unsigned slot = 0; slot < n; slot++)
    {
      if (claim_slot (lease_dir, slot, state_dir) < 0)
        continue;
      *lease = (ar_userns_lease){ .slot = slot,
                                  .uid = uids.start + slot * size,
                                  .gid = gids.start + slot * size,
                                  .size = size };
      if (write_record (state_dir, lease, err) < 0)
        {
          unlinkat (lease_dir, name_of (slot).text, 0);
          return -1;
        }
      return 0;
    }
  return ar_error_set (
      err, 0,
      "%s: all %u ranges of %u ids of user `%s` are in use by running containers: give the user a larger range",
      SUBUID_FILE, n, size, user);
}

static void
set_mapping (oci_id_mapping **m, size_t *n, uint32_t host, uint32_t size)
{
  free (*m);
  *m = xcalloc (1, sizeof **m);
  **m = (oci_id_mapping){ .container_id = 0, .host_id = host, .size = size };
  *n = 1;
}

/* The kernel takes only groups the namespace maps: Docker asks for
 * "0 2147483647" (every group may ping), which becomes every group the
 * container has. */
static void
clamp_ping_range (oci_map *sysctl, uint32_t size)
{
  const char *key = "net.ipv4.ping_group_range";
  const char *value = oci_map_get (sysctl, key);
  unsigned long lo, hi;
  if (value == NULL || sscanf (value, "%lu %lu", &lo, &hi) != 2)
    return;
  unsigned long top = size - 1;
  cleanup_free char *clamped
      = lo > top ? xstrdup ("1 0") /* none */
                 : xasprintf ("%lu %lu", lo, hi < top ? hi : top);
  ar_map_set (sysctl, key, clamped);
}

static bool
is_bind (const oci_mount *m)
{
  if (m->type && strcmp (m->type, "bind") == 0)
    return true;
  for (size_t i = 0; i < m->options.len; i++)
    if (strcmp (m->options.items[i], "bind") == 0
        || strcmp (m->options.items[i], "rbind") == 0)
      return true;
  return false;
}

/* The spec's own binds of directories (an engine's volumes, a pod's) show
 * the container's root what host root owns there, as under runc and as
 * Kubernetes has it for a pod with a user namespace: idmapped onto the
 * lease where the filesystem can be. Files and sockets stay as they are:
 * a host service's socket bound in (docker.sock) stays closed to it. */
static void
idmap_directory_binds (oci_spec *spec, const ar_userns_lease *lease)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      oci_mount *m = &spec->mounts[i];
      struct stat st;
      if (!is_bind (m) || m->source == NULL || m->n_uid_mappings > 0
          || m->n_gid_mappings > 0 || stat (m->source, &st) < 0
          || !S_ISDIR (st.st_mode))
        continue;
      set_mapping (&m->uid_mappings, &m->n_uid_mappings, lease->uid,
                   lease->size);
      set_mapping (&m->gid_mappings, &m->n_gid_mappings, lease->gid,
                   lease->size);
      m->idmap_optional = true;
    }
}

/* A user namespace entry: new (`path` NULL) or joined (taken). */
static void
add_user_namespace (oci_linux *l, char *path)
{
  l->namespaces
      = xrealloc (l->namespaces, (l->n_namespaces + 1) * sizeof *l->namespaces);
  l->namespaces[l->n_namespaces++]
      = (oci_namespace){ .type = OCI_NS_USER, .path = path };
}

/* What the namespaces a spec joins by path are owned by. */
typedef struct
{
  bool host_pid_or_mount; /* a pid, ipc or mount one of the host's user ns */
  char *owner_path;       /* /proc/PID/ns/user of another's owner, or NULL */
  ino_t owner_ino;
} joined_owners;

static ino_t
inode_of (int fd)
{
  struct stat st;
  return fstat (fd, &st) == 0 ? st.st_ino : 0;
}

/* The owner of namespace `ns_fd` joined at `path` (/proc/PID/ns/TYPE):
 * ours, or that process's user namespace. */
static int
note_owner (int ns_fd, const char *path, oci_ns_type type, size_t i,
            joined_owners *o, ar_error_t **err)
{
  static ino_t own;
  if (own == 0)
    {
      cleanup_close int self
          = open ("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
      own = self < 0 ? 0 : inode_of (self);
    }
  cleanup_close int owner = ioctl (ns_fd, NS_GET_USERNS);
  if (owner < 0)
    return ar_error_set (
        err, errno,
        "config.json: .linux.namespaces[%zu].path: `%s`: its user namespace", i,
        path);
  ino_t ino = inode_of (owner);
  if (ino == own)
    {
      o->host_pid_or_mount
          |= type == OCI_NS_PID || type == OCI_NS_IPC || type == OCI_NS_MOUNT;
      return 0;
    }
  int pid;
  char rest[16];
  cleanup_free char *user = NULL;
  cleanup_close int user_fd = -1;
  if (sscanf (path, "/proc/%d/ns/%15s", &pid, rest) == 2)
    {
      user = xasprintf ("/proc/%d/ns/user", pid);
      user_fd = open (user, O_RDONLY | O_CLOEXEC);
    }
  if (user_fd < 0 || inode_of (user_fd) != ino
      || (o->owner_path && o->owner_ino != ino))
    return ar_error_set (
        err, 0,
        "config.json: .linux.namespaces[%zu].path: `%s` belongs to a user namespace that is not the host's nor one this container can join with it: join namespaces of one container, by /proc/PID/ns paths",
        i, path);
  if (o->owner_path == NULL)
    o->owner_path = steal_pointer (&user);
  o->owner_ino = ino;
  return 0;
}

static int
find_joined_owners (const oci_spec *spec, joined_owners *o, ar_error_t **err)
{
  *o = (joined_owners){ .owner_path = NULL };
  for (size_t i = 0; i < spec->linux_cfg->n_namespaces; i++)
    {
      const oci_namespace *ns = &spec->linux_cfg->namespaces[i];
      if (ns->path == NULL)
        continue;
      cleanup_close int fd = open (ns->path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return ar_error_set (
            err, errno, "config.json: .linux.namespaces[%zu].path: open `%s`",
            i, ns->path);
      if (note_owner (fd, ns->path, ns->type, i, o, err) < 0)
        return -1;
    }
  return 0;
}

/* The one extent "0 HOST SIZE" of /proc/PID/{uid,gid}_map. */
static int
read_single_map (const char *user_path, const char *map, uint32_t *host,
                 uint32_t *size, ar_error_t **err)
{
  cleanup_free char *path
      = xasprintf ("%.*s/%s", (int) (strlen (user_path) - strlen ("/ns/user")),
                   user_path, map);
  cleanup_free char *text = NULL;
  if (ar_read_file_at (AT_FDCWD, path, 4096, &text, NULL, err) < 0)
    return -1;
  unsigned inside, out, n;
  int used = 0;
  if (sscanf (text, " %u %u %u %n", &inside, &out, &n, &used) != 3
      || inside != 0 || text[used] != '\0')
    return ar_error_set (
        err, 0,
        "`%s`: the joined user namespace maps more than one range from 0",
        path);
  *host = out;
  *size = n;
  return 0;
}

/* A container joining namespaces of another's user namespace (a pod's
 * containers join their sandbox's) joins that one too, as a pod's
 * containers share one under Kubernetes: its lease is its owner's. */
static int
join_owner (const char *state_dir, const char *owner_path, oci_spec *spec,
            ar_userns_lease *lease, ar_error_t **err)
{
  *lease = (ar_userns_lease){ .slot = UINT_MAX };
  uint32_t gid_size;
  if (read_single_map (owner_path, "uid_map", &lease->uid, &lease->size, err)
          < 0
      || read_single_map (owner_path, "gid_map", &lease->gid, &gid_size, err)
             < 0)
    return -1;
  if (gid_size < lease->size)
    lease->size = gid_size;
  if (write_record (state_dir, lease, err) < 0)
    return -1;
  add_user_namespace (spec->linux_cfg, xstrdup (owner_path));
  return 0;
}

/* Without root the runtime is in a user namespace of its own already,
 * holding the caller's ids only. A spec that brings one keeps it. */
static bool
applies (bool asked, const oci_spec *spec)
{
  return asked && !ar_userns_unprivileged () && spec->linux_cfg != NULL
         && !oci_spec_find_namespace (spec, OCI_NS_USER);
}

/* A pid namespace of the host's, joined or shared (--pid host), would
 * leave a new one's root unable to mount its /proc, an ipc one its
 * /dev/mqueue (--ipc host), a mount one unable to join it: such a
 * container stays as its spec says (docs/profiles.md). */
static bool
takes_lease (const oci_spec *spec, const joined_owners *joined)
{
  return !joined->host_pid_or_mount && joined->owner_path == NULL
         && oci_spec_find_namespace (spec, OCI_NS_PID)
         && oci_spec_find_namespace (spec, OCI_NS_IPC)
         && oci_spec_find_namespace (spec, OCI_NS_MOUNT);
}

bool
ar_profile_leased_uids (const ar_profile *profile, const oci_spec *spec,
                        uint32_t *first, uint32_t *count)
{
  if (!applies (profile->userns, spec))
    return false;
  cleanup_error ar_error_t *ignored = NULL;
  joined_owners joined;
  bool known = find_joined_owners (spec, &joined, &ignored) == 0;
  cleanup_free char *owner_path = joined.owner_path;
  ar_subid_range uids;
  if (!known || !takes_lease (spec, &joined)
      || ar_subid_find (SUBUID_FILE, profile->userns_user, &uids, &ignored) < 0)
    return false;
  *first = uids.start;
  *count = uids.count;
  return true;
}

int
ar_agent_userns_prepare (const ar_agent_plan *plan, const char *state_dir,
                         oci_spec *spec, ar_userns_lease *lease, bool *leased,
                         ar_error_t **err)
{
  *leased = false;
  if (!applies (plan->userns, spec))
    return 0;
  joined_owners joined;
  int r = find_joined_owners (spec, &joined, err);
  cleanup_free char *owner_path = joined.owner_path;
  if (r < 0)
    return ar_error_prefix (err, "user namespace");
  if (owner_path)
    {
      if (join_owner (state_dir, owner_path, spec, lease, err) < 0)
        return ar_error_prefix (err, "user namespace");
      *leased = true;
      idmap_directory_binds (spec, lease);
      return 0;
    }
  if (!takes_lease (spec, &joined))
    return 0;
  if (take_lease (plan->userns_user, plan->userns_size, state_dir, lease, err)
      < 0)
    return ar_error_prefix (err, "user namespace");
  *leased = true;
  oci_linux *l = spec->linux_cfg;
  add_user_namespace (l, NULL);
  set_mapping (&l->uid_mappings, &l->n_uid_mappings, lease->uid, lease->size);
  set_mapping (&l->gid_mappings, &l->n_gid_mappings, lease->gid, lease->size);
  clamp_ping_range (&l->sysctl, lease->size);
  idmap_directory_binds (spec, lease);
  /* Written by the init in its own user namespace, whose counts they are
   * (linux.sysctl "user.*"). */
  for (size_t i = 0; i < plan->userns_limits.len; i++)
    {
      cleanup_free char *key
          = xasprintf ("user.%s", plan->userns_limits.items[i].key);
      ar_map_set (&l->sysctl, key, plan->userns_limits.items[i].value);
    }
  return 0;
}

void
ar_agent_userns_release (const char *state_dir)
{
  ar_userns_lease lease;
  if (!ar_agent_userns_recorded (state_dir, &lease))
    return;
  cleanup_error ar_error_t *ignored = NULL;
  cleanup_close int lease_dir = open_lease_dir (&ignored);
  if (lease_dir >= 0)
    {
      cleanup_free char *holder = lease_holder (lease_dir, lease.slot);
      if (holder && strcmp (holder, state_dir) == 0)
        unlinkat (lease_dir, name_of (lease.slot).text, 0);
    }
  cleanup_free char *record = ar_hostfs_join (state_dir, AR_USERNS_RECORD);
  unlink (record);
}
