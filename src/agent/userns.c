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
#include <sys/file.h>
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

/* /run/agentrun-ids/root-SLOT: where the container's root overlay is
 * shown to it. */
static char *
alias_path (unsigned slot)
{
  return xasprintf (AR_USERNS_LEASE_DIR "/root-%u", slot);
}

static void
remove_alias (unsigned slot)
{
  cleanup_free char *alias = alias_path (slot);
  cleanup_error ar_error_t *ignored = NULL;
  ar_hostfs_unmount_and_remove (alias, &ignored);
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

/* The lease of `slot` names a state dir that no longer records it. */
static bool
lease_is_stale (int lease_dir, unsigned slot)
{
  cleanup_free char *holder = lease_holder (lease_dir, slot);
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
  if (fd < 0 && errno == EEXIST && lease_is_stale (lease_dir, slot))
    {
      remove_alias (slot);
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
      /* Entered by the containers' roots (their aliases), listed by none. */
      if (mkdir (AR_USERNS_LEASE_DIR, 0711) < 0 && errno != EEXIST)
        return ar_error_set (err, errno, "mkdir `%s`", AR_USERNS_LEASE_DIR);
      fd = open (AR_USERNS_LEASE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0
      || ((st.st_mode & 07777) != 0711 && fchmod (fd, 0711) < 0))
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
write_record (const char *state_dir, const char *text, ar_error_t **err)
{
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
      cleanup_free char *text = xasprintf ("%u %u %u %u\n", lease->slot,
                                           lease->uid, lease->gid, size);
      if (write_record (state_dir, text, err) < 0)
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

int
ar_agent_userns_alias_root (const ar_userns_lease *lease, char **root,
                            ar_error_t **err)
{
  cleanup_free char *alias = alias_path (lease->slot);
  remove_alias (lease->slot);
  if (mkdir (alias, 0710) < 0 || chown (alias, 0, lease->gid) < 0
      || chmod (alias, 0710) < 0)
    return ar_error_set (err, errno, "make `%s`", alias);
  if (mount (*root, alias, NULL, MS_BIND, NULL) < 0
      || mount (NULL, alias, NULL, MS_PRIVATE, NULL) < 0)
    {
      int saved = errno;
      remove_alias (lease->slot);
      return ar_error_set (err, saved, "bind `%s` on `%s`", *root, alias);
    }
  free (*root);
  *root = steal_pointer (&alias);
  return 0;
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
joins_any (const oci_spec *spec)
{
  for (size_t i = 0; i < spec->linux_cfg->n_namespaces; i++)
    if (spec->linux_cfg->namespaces[i].path)
      return true;
  return false;
}

int
ar_agent_userns_prepare (const ar_agent_plan *plan, const char *state_dir,
                         oci_spec *spec, ar_userns_lease *lease, bool *leased,
                         ar_error_t **err)
{
  *leased = false;
  /* Without root the runtime is in a user namespace of its own already,
   * holding the caller's ids only. A spec that brings one keeps it, and
   * one that joins another container's namespaces (a pod's) keeps the
   * owner those have. */
  if (!plan->userns || ar_userns_unprivileged () || spec->linux_cfg == NULL
      || oci_spec_find_namespace (spec, OCI_NS_USER) || joins_any (spec))
    return 0;
  if (take_lease (plan->userns_user, plan->userns_size, state_dir, lease, err)
      < 0)
    return ar_error_prefix (err, "user namespace");
  *leased = true;
  oci_linux *l = spec->linux_cfg;
  l->namespaces
      = xrealloc (l->namespaces, (l->n_namespaces + 1) * sizeof *l->namespaces);
  l->namespaces[l->n_namespaces++]
      = (oci_namespace){ .type = OCI_NS_USER, .path = NULL };
  set_mapping (&l->uid_mappings, &l->n_uid_mappings, lease->uid, lease->size);
  set_mapping (&l->gid_mappings, &l->n_gid_mappings, lease->gid, lease->size);
  clamp_ping_range (&l->sysctl, lease->size);
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
        {
          remove_alias (lease.slot);
          unlinkat (lease_dir, name_of (lease.slot).text, 0);
        }
    }
  cleanup_free char *record = ar_hostfs_join (state_dir, AR_USERNS_RECORD);
  unlink (record);
}
