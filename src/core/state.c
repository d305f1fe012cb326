/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "state.h"
#include "../../oci/oci.h"
#include "cgroups/cgroups.h"
#include "../util/cleanup.h"
#include "../util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#define STATE_MAX_SIZE (4u << 20)

const char *
ar_status_name (ar_status status)
{
  switch (status)
    {
    case AR_STATUS_CREATING:
      return "creating";
    case AR_STATUS_CREATED:
      return "created";
    case AR_STATUS_RUNNING:
      return "running";
    case AR_STATUS_PAUSED:
      return "paused";
    case AR_STATUS_STOPPED:
      return "stopped";
    }
  return "unknown";
}

int
ar_state_validate_id (const char *id, ar_error_t **err)
{
  size_t len = strlen (id);
  if (len == 0 || len > 1024)
    return ar_error_set (err, 0,
                         "invalid container id: must be 1 to 1024 characters");
  if (strcmp (id, ".") == 0 || strcmp (id, "..") == 0)
    return ar_error_set (err, 0, "invalid container id `%s`", id);
  /* runc takes ".x"; here the state root keeps agentrun's own files
   * beside the containers (.seccomp-cache, .sandbox, .audit-heads). */
  if (id[0] == '.')
    return ar_error_set (
        err, 0,
        "invalid container id `%s`: ids starting with '.' are kept for agentrun's own files",
        id);
  for (const char *p = id; *p; p++)
    {
      unsigned char c = (unsigned char) *p;
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'
                || c == '+';
      if (!ok)
        return ar_error_set (
            err, 0,
            "invalid container id `%s`: only letters, digits and _-.+ are allowed",
            id);
    }
  return 0;
}

static void
gen_string (yajl_gen g, const char *key, const char *value)
{
  yajl_gen_string (g, (const unsigned char *) key, strlen (key));
  yajl_gen_string (g, (const unsigned char *) value, strlen (value));
}

static void
gen_integer (yajl_gen g, const char *key, long long value)
{
  yajl_gen_string (g, (const unsigned char *) key, strlen (key));
  yajl_gen_integer (g, value);
}

int
ar_state_save (int state_dirfd, const ar_state *s, ar_error_t **err)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    abort ();
  yajl_gen_map_open (g);
  gen_string (g, "id", s->id);
  gen_integer (g, "pid", s->pid);
  gen_integer (g, "startTime", (long long) s->start_time);
  gen_string (g, "bundle", s->bundle);
  gen_string (g, "rootfs", s->rootfs);
  gen_string (g, "created", s->created);
  gen_integer (g, "owner", s->owner);
  if (s->cgroup)
    gen_string (g, "cgroup", s->cgroup);
  yajl_gen_string (g, (const unsigned char *) "annotations", 11);
  yajl_gen_map_open (g);
  for (size_t i = 0; i < s->annotations.len; i++)
    gen_string (g, s->annotations.items[i].key, s->annotations.items[i].value);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);

  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (g, &buf, &len);
  int r = ar_write_file_atomic_at (state_dirfd, AR_STATE_FILE,
                                   (const char *) buf, len, 0600, err);
  yajl_gen_free (g);
  return r;
}

static char *
tree_string (yajl_val root, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_string);
  return v ? xstrdup (YAJL_GET_STRING (v)) : NULL;
}

static long long
tree_integer (yajl_val root, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_number);
  return v && YAJL_IS_INTEGER (v) ? YAJL_GET_INTEGER (v) : 0;
}

static void
tree_annotations (yajl_val root, oci_map *map)
{
  const char *path[] = { "annotations", NULL };
  yajl_val v = yajl_tree_get (root, path, yajl_t_object);
  if (!YAJL_IS_OBJECT (v))
    return;
  size_t n = YAJL_GET_OBJECT (v)->len;
  map->items = xcalloc (n, sizeof *map->items);
  for (size_t i = 0; i < n; i++)
    {
      yajl_val value = YAJL_GET_OBJECT (v)->values[i];
      if (!YAJL_IS_STRING (value))
        continue;
      map->items[map->len].key = xstrdup (YAJL_GET_OBJECT (v)->keys[i]);
      map->items[map->len].value = xstrdup (YAJL_GET_STRING (value));
      map->len++;
    }
}

int
ar_state_load (int state_dirfd, ar_state **out, ar_error_t **err)
{
  cleanup_free char *data = NULL;
  if (ar_read_file_at (state_dirfd, AR_STATE_FILE, STATE_MAX_SIZE, &data, NULL,
                       err)
      < 0)
    return -1;
  char errbuf[256];
  yajl_val root = yajl_tree_parse (data, errbuf, sizeof errbuf);
  if (root == NULL)
    return ar_error_set (err, 0, "%s: corrupt state file", AR_STATE_FILE);

  ar_state *s = xcalloc (1, sizeof *s);
  s->id = tree_string (root, "id");
  s->pid = (pid_t) tree_integer (root, "pid");
  s->start_time = (unsigned long long) tree_integer (root, "startTime");
  s->bundle = tree_string (root, "bundle");
  s->rootfs = tree_string (root, "rootfs");
  s->created = tree_string (root, "created");
  s->owner = (uid_t) tree_integer (root, "owner");
  s->cgroup = tree_string (root, "cgroup");
  tree_annotations (root, &s->annotations);
  yajl_tree_free (root);
  if (s->id == NULL || s->bundle == NULL)
    {
      ar_state_free (s);
      return ar_error_set (err, 0, "%s: corrupt state file", AR_STATE_FILE);
    }
  if (s->rootfs == NULL)
    s->rootfs = xstrdup ("");
  if (s->created == NULL)
    s->created = xstrdup ("");
  *out = s;
  return 0;
}

void
ar_state_free (ar_state *s)
{
  if (s == NULL)
    return;
  free (s->id);
  free (s->bundle);
  free (s->rootfs);
  free (s->created);
  free (s->cgroup);
  for (size_t i = 0; i < s->annotations.len; i++)
    {
      free (s->annotations.items[i].key);
      free (s->annotations.items[i].value);
    }
  free (s->annotations.items);
  free (s);
}

void
ar_state_freep (ar_state **s)
{
  ar_state_free (*s);
  *s = NULL;
}

bool
ar_state_init_alive (const ar_state *s)
{
  if (s->pid <= 0)
    return false;
  unsigned long long t = ar_pid_start_time (s->pid);
  return t != 0 && t == s->start_time;
}

static bool
cgroup_frozen (const ar_state *s)
{
  ar_cgroup *cg = NULL;
  if (s->cgroup == NULL || ar_cgroup_deserialize (s->cgroup, &cg, NULL) < 0)
    return false;
  bool frozen = ar_cgroup_is_frozen (cg);
  ar_cgroup_free (cg);
  return frozen;
}

ar_status
ar_state_status (int state_dirfd, const ar_state *s)
{
  if (!ar_state_init_alive (s))
    return AR_STATUS_STOPPED;
  struct stat st;
  if (fstatat (state_dirfd, AR_EXEC_FIFO, &st, 0) == 0
      || fstatat (state_dirfd, AR_AWAIT_TAKE_FILE, &st, 0) == 0)
    return AR_STATUS_CREATED;
  if (cgroup_frozen (s))
    return AR_STATUS_PAUSED;
  return AR_STATUS_RUNNING;
}

oci_state
ar_state_to_oci (const ar_state *s, ar_status status)
{
  return (oci_state){
    .oci_version = AR_OCI_VERSION,
    .id = s->id,
    .status = ar_status_name (status),
    .pid = status == AR_STATUS_STOPPED ? 0 : s->pid,
    .bundle = s->bundle,
    .rootfs = s->rootfs,
    .created = s->created,
    .owner = "",
    .annotations = &s->annotations,
  };
}

char *
ar_state_to_oci_json (const ar_state *s, ar_status status, bool pretty)
{
  oci_state st = ar_state_to_oci (s, status);
  return oci_state_to_json (&st, pretty);
}

char *
ar_now_rfc3339 (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r (&ts.tv_sec, &tm);
  char date[64];
  strftime (date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  return xasprintf ("%s.%09ldZ", date, ts.tv_nsec);
}
