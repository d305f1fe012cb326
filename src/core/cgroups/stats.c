/* SPDX-License-Identifier: Apache-2.0 */
/* Statistics and OOM notification for `events`, read from the container's
 * own cgroup files. Which hierarchy answers is decided by which files a
 * directory has, so v1, v2 and hybrid need no separate code paths above
 * this file: on hybrid hosts the v1 controllers win, since a v2 directory
 * there has only the core files. Nothing here writes, except registering
 * an eventfd in the container's own cgroup.event_control (v1). */
#include "config.h"
#include "internal.h"
#include "../../util/cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>

/* ---- small readers ------------------------------------------------------ */

/* The first directory of the container that has `file`. */
static const char *
dir_with (const ar_cgroup *cg, const char *file)
{
  for (size_t i = 0; i < cg->n_paths; i++)
    if (ar_cg_exists (cg->paths[i], file))
      return cg->paths[i];
  return NULL;
}

static bool
is_v2_dir (const char *dir)
{
  return ar_cg_exists (dir, "cgroup.controllers");
}

static char *
read_or_empty (const char *dir, const char *file)
{
  char *text = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  if (ar_cg_read (dir, file, &text, &ignored) < 0)
    return xstrdup ("");
  return text;
}

/* A number, or "max" (v2's no-limit) as `if_max`; 0 when unreadable. */
static uint64_t
read_value (const char *dir, const char *file, uint64_t if_max)
{
  cleanup_free char *text = read_or_empty (dir, file);
  if (strcmp (text, "max") == 0)
    return if_max;
  return strtoull (text, NULL, 10);
}

/* "key value" lines (cpu.stat, memory.stat, memory.events); 0 when absent. */
static uint64_t
keyed_value (const char *text, const char *key)
{
  size_t n = strlen (key);
  for (const char *l = text; l && *l; l = strchr (l, '\n'), l = l ? l + 1 : l)
    if (strncmp (l, key, n) == 0 && l[n] == ' ')
      return strtoull (l + n + 1, NULL, 10);
  return 0;
}

static uint64_t
keyed_file_value (const char *dir, const char *file, const char *key)
{
  cleanup_free char *text = read_or_empty (dir, file);
  return keyed_value (text, key);
}

/* ---- cpu ----------------------------------------------------------------- */

static void
read_percpu (const char *dir, ar_cgroup_stats *s)
{
  cleanup_free char *text = read_or_empty (dir, "cpuacct.usage_percpu");
  for (char *p = text, *end;; p = end)
    {
      uint64_t v = strtoull (p, &end, 10);
      if (end == p)
        break;
      s->cpu_percpu = xrealloc (s->cpu_percpu,
                                (s->n_cpu_percpu + 1) * sizeof *s->cpu_percpu);
      s->cpu_percpu[s->n_cpu_percpu++] = v;
    }
}

static void
read_cpu_usage (const ar_cgroup *cg, ar_cgroup_stats *s)
{
  const char *v1 = dir_with (cg, "cpuacct.usage");
  if (v1)
    {
      /* cpuacct.stat counts USER_HZ ticks. */
      uint64_t ns_per_tick = 1000000000ull / (uint64_t) sysconf (_SC_CLK_TCK);
      cleanup_free char *stat = read_or_empty (v1, "cpuacct.stat");
      s->has_cpu = true;
      s->cpu_total = read_value (v1, "cpuacct.usage", 0);
      s->cpu_user = keyed_value (stat, "user") * ns_per_tick;
      s->cpu_kernel = keyed_value (stat, "system") * ns_per_tick;
      read_percpu (v1, s);
      return;
    }
  for (size_t i = 0; i < cg->n_paths; i++)
    if (is_v2_dir (cg->paths[i]) && ar_cg_exists (cg->paths[i], "cpu.stat"))
      {
        /* v2's core cpu.stat exists without the cpu controller. */
        cleanup_free char *stat = read_or_empty (cg->paths[i], "cpu.stat");
        s->has_cpu = true;
        s->cpu_total = keyed_value (stat, "usage_usec") * 1000;
        s->cpu_user = keyed_value (stat, "user_usec") * 1000;
        s->cpu_kernel = keyed_value (stat, "system_usec") * 1000;
        return;
      }
}

static void
read_cpu_throttling (const ar_cgroup *cg, ar_cgroup_stats *s)
{
  const char *v1 = dir_with (cg, "cpu.cfs_period_us");
  const char *v2 = v1 ? NULL : dir_with (cg, "cpu.max");
  const char *dir = v1 ? v1 : v2;
  if (dir == NULL)
    return;
  cleanup_free char *stat = read_or_empty (dir, "cpu.stat");
  s->throttling_periods = keyed_value (stat, "nr_periods");
  s->throttled_periods = keyed_value (stat, "nr_throttled");
  s->throttled_time = v1 ? keyed_value (stat, "throttled_time")
                         : keyed_value (stat, "throttled_usec") * 1000;
}

/* ---- memory -------------------------------------------------------------- */

static void
read_memory_raw (const char *dir, ar_cgroup_stats *s)
{
  cleanup_free char *text = read_or_empty (dir, "memory.stat");
  for (char *save = NULL, *l = strtok_r (text, "\n", &save); l;
       l = strtok_r (NULL, "\n", &save))
    {
      char *space = strchr (l, ' ');
      if (space == NULL)
        continue;
      *space = '\0';
      s->memory_raw = xrealloc (s->memory_raw,
                                (s->n_memory_raw + 1) * sizeof *s->memory_raw);
      s->memory_raw[s->n_memory_raw++]
          = (ar_cg_counter){ xstrdup (l), strtoull (space + 1, NULL, 10) };
    }
}

static uint64_t
raw_value (const ar_cgroup_stats *s, const char *key)
{
  for (size_t i = 0; i < s->n_memory_raw; i++)
    if (strcmp (s->memory_raw[i].key, key) == 0)
      return s->memory_raw[i].value;
  return 0;
}

static void
read_memory_v1 (const char *dir, ar_cgroup_stats *s)
{
  s->memory = (ar_cg_memory_entry){
    .usage = read_value (dir, "memory.usage_in_bytes", 0),
    .limit = read_value (dir, "memory.limit_in_bytes", 0),
    .max = read_value (dir, "memory.max_usage_in_bytes", 0),
    .failcnt = read_value (dir, "memory.failcnt", 0),
  };
  /* memsw exists only with swap accounting; it is memory plus swap. */
  s->has_swap = ar_cg_exists (dir, "memory.memsw.usage_in_bytes");
  if (s->has_swap)
    s->swap = (ar_cg_memory_entry){
      .usage = read_value (dir, "memory.memsw.usage_in_bytes", 0),
      .limit = read_value (dir, "memory.memsw.limit_in_bytes", 0),
      .max = read_value (dir, "memory.memsw.max_usage_in_bytes", 0),
      .failcnt = read_value (dir, "memory.memsw.failcnt", 0),
    };
  read_memory_raw (dir, s);
  s->memory_cache = raw_value (s, "cache");
}

static uint64_t
saturating_add (uint64_t a, uint64_t b)
{
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void
read_memory_v2 (const char *dir, ar_cgroup_stats *s)
{
  s->memory = (ar_cg_memory_entry){
    .usage = read_value (dir, "memory.current", 0),
    .limit = read_value (dir, "memory.max", UINT64_MAX),
    .max = read_value (dir, "memory.peak", 0),
    .failcnt = keyed_file_value (dir, "memory.events", "max"),
  };
  /* Reported as memory plus swap, the way v1's memsw counts. */
  s->has_swap = ar_cg_exists (dir, "memory.swap.current");
  if (s->has_swap)
    s->swap = (ar_cg_memory_entry){
      .usage = saturating_add (s->memory.usage,
                               read_value (dir, "memory.swap.current", 0)),
      .limit = saturating_add (s->memory.limit,
                               read_value (dir, "memory.swap.max", UINT64_MAX)),
      .failcnt = keyed_file_value (dir, "memory.swap.events", "max"),
    };
  read_memory_raw (dir, s);
  s->memory_cache = raw_value (s, "file");
}

static void
read_memory (const ar_cgroup *cg, ar_cgroup_stats *s)
{
  const char *v1 = dir_with (cg, "memory.usage_in_bytes");
  const char *v2 = v1 ? NULL : dir_with (cg, "memory.current");
  s->has_memory = v1 || v2;
  if (v1)
    read_memory_v1 (v1, s);
  else if (v2)
    read_memory_v2 (v2, s);
}

/* ---- pids ---------------------------------------------------------------- */

static void
read_pids (const ar_cgroup *cg, ar_cgroup_stats *s)
{
  const char *dir = dir_with (cg, "pids.current");
  if (dir == NULL)
    return;
  s->has_pids = true;
  s->pids_current = read_value (dir, "pids.current", 0);
  s->pids_limit = read_value (dir, "pids.max", 0);
}

/* ---- block I/O ------------------------------------------------------------ */

static const char *
op_name (const char *word)
{
  static const char *const ops[]
      = { "Read", "Write", "Sync", "Async", "Discard", "Total" };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp (word, ops[i]) == 0)
      return ops[i];
  return NULL;
}

static void
append_blkio (ar_cg_blkio_entry **v, size_t *n, ar_cg_blkio_entry e)
{
  *v = xrealloc (*v, (*n + 1) * sizeof **v);
  (*v)[(*n)++] = e;
}

/* v1: "8:0 Read 4096" lines; a last "Total N" without a device is the sum
 * over devices and is left out. */
static void
read_blkio_v1_file (const char *dir, const char *file, ar_cg_blkio_entry **v,
                    size_t *n)
{
  cleanup_free char *text = read_or_empty (dir, file);
  for (char *save = NULL, *l = strtok_r (text, "\n", &save); l;
       l = strtok_r (NULL, "\n", &save))
    {
      unsigned major, minor;
      char word[16];
      uint64_t value;
      if (sscanf (l, "%u:%u %15s %" SCNu64, &major, &minor, word, &value) == 4
          && op_name (word))
        append_blkio (
            v, n, (ar_cg_blkio_entry){ major, minor, op_name (word), value });
    }
}

static void
read_blkio_v1 (const char *dir, ar_cgroup_stats *s)
{
  /* The proportional-weight files count only with CFQ/BFQ; the throttle
   * ones always do. */
  cleanup_free char *cfq
      = read_or_empty (dir, "blkio.io_service_bytes_recursive");
  bool use_cfq = strchr (cfq, ':') != NULL;
  read_blkio_v1_file (dir,
                      use_cfq ? "blkio.io_service_bytes_recursive"
                              : "blkio.throttle.io_service_bytes_recursive",
                      &s->io_service_bytes, &s->n_io_service_bytes);
  read_blkio_v1_file (dir,
                      use_cfq ? "blkio.io_serviced_recursive"
                              : "blkio.throttle.io_serviced_recursive",
                      &s->io_serviced, &s->n_io_serviced);
}

/* v2: "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6". */
static void
read_io_v2 (const char *dir, ar_cgroup_stats *s)
{
  static const struct
  {
    const char *key;
    const char *op;
    bool bytes;
  } fields[] = {
    { "rbytes", "Read", true },    { "wbytes", "Write", true },
    { "dbytes", "Discard", true }, { "rios", "Read", false },
    { "wios", "Write", false },    { "dios", "Discard", false },
  };
  cleanup_free char *text = read_or_empty (dir, "io.stat");
  for (char *save = NULL, *l = strtok_r (text, "\n", &save); l;
       l = strtok_r (NULL, "\n", &save))
    {
      unsigned major, minor;
      if (sscanf (l, "%u:%u", &major, &minor) != 2)
        continue;
      for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        {
          cleanup_free char *key = xasprintf (" %s=", fields[i].key);
          const char *at = strstr (l, key);
          if (at == NULL)
            continue;
          ar_cg_blkio_entry e = { major, minor, fields[i].op,
                                  strtoull (at + strlen (key), NULL, 10) };
          if (fields[i].bytes)
            append_blkio (&s->io_service_bytes, &s->n_io_service_bytes, e);
          else
            append_blkio (&s->io_serviced, &s->n_io_serviced, e);
        }
    }
}

static void
read_blkio (const ar_cgroup *cg, ar_cgroup_stats *s)
{
  const char *v1 = dir_with (cg, "blkio.throttle.io_service_bytes_recursive");
  const char *v2 = v1 ? NULL : dir_with (cg, "io.stat");
  if (v1)
    read_blkio_v1 (v1, s);
  else if (v2)
    read_io_v2 (v2, s);
}

/* ---- hugetlb -------------------------------------------------------------- */

/* "hugetlb.2MB.current" (v2) or "hugetlb.2MB.usage_in_bytes" (v1): the
 * page size, NULL for any other file. */
static char *
hugetlb_page_size (const char *name, bool *v2)
{
  if (strncmp (name, "hugetlb.", 8) != 0)
    return NULL;
  const char *size = name + 8, *dot = strchr (size, '.');
  if (dot == NULL || dot == size)
    return NULL;
  if (strcmp (dot, ".current") != 0 && strcmp (dot, ".usage_in_bytes") != 0)
    return NULL;
  *v2 = strcmp (dot, ".current") == 0;
  return xasprintf ("%.*s", (int) (dot - size), size);
}

static void
read_hugetlb_in (const char *dir, ar_cgroup_stats *s)
{
  cleanup_dir DIR *d = ar_cg_opendir (dir);
  if (d == NULL)
    return;
  for (struct dirent *e; (e = readdir (d));)
    {
      bool v2 = false;
      char *size = hugetlb_page_size (e->d_name, &v2);
      if (size == NULL)
        continue;
      cleanup_free char *prefix = xasprintf ("hugetlb.%s.", size);
      cleanup_free char *usage
          = xasprintf ("%s%s", prefix, v2 ? "current" : "usage_in_bytes");
      cleanup_free char *max = xasprintf ("%smax_usage_in_bytes", prefix);
      cleanup_free char *failcnt
          = xasprintf ("%s%s", prefix, v2 ? "events" : "failcnt");
      ar_cg_hugetlb_entry h = {
        .page_size = size,
        .usage = read_value (dir, usage, 0),
        /* v2 keeps no peak. */
        .max = v2 ? 0 : read_value (dir, max, 0),
        .failcnt = v2 ? keyed_file_value (dir, failcnt, "max")
                      : read_value (dir, failcnt, 0),
      };
      s->hugetlb
          = xrealloc (s->hugetlb, (s->n_hugetlb + 1) * sizeof *s->hugetlb);
      s->hugetlb[s->n_hugetlb++] = h;
    }
}

static void
read_hugetlb (const ar_cgroup *cg, ar_cgroup_stats *s)
{
  for (size_t i = 0; i < cg->n_paths && s->n_hugetlb == 0; i++)
    read_hugetlb_in (cg->paths[i], s);
}

/* ---- entry points --------------------------------------------------------- */

int
ar_cgroup_stats_read (const ar_cgroup *cg, ar_cgroup_stats *out,
                      ar_error_t **err)
{
  *out = (ar_cgroup_stats){ 0 };
  if (dir_with (cg, "cgroup.procs") == NULL)
    return ar_error_set (err, 0, "the container's cgroup is gone");
  read_cpu_usage (cg, out);
  read_cpu_throttling (cg, out);
  read_memory (cg, out);
  read_pids (cg, out);
  read_blkio (cg, out);
  read_hugetlb (cg, out);
  return 0;
}

void
ar_cgroup_stats_clear (ar_cgroup_stats *s)
{
  free (s->cpu_percpu);
  for (size_t i = 0; i < s->n_memory_raw; i++)
    free (s->memory_raw[i].key);
  free (s->memory_raw);
  free (s->io_service_bytes);
  free (s->io_serviced);
  for (size_t i = 0; i < s->n_hugetlb; i++)
    free (s->hugetlb[i].page_size);
  free (s->hugetlb);
  *s = (ar_cgroup_stats){ 0 };
}

/* ---- OOM ------------------------------------------------------------------ */

static int
watch_v1 (const char *dir, ar_cgroup_oom_watch *w, ar_error_t **err)
{
  cleanup_free char *control = xasprintf ("%s/memory.oom_control", dir);
  w->control_fd = ar_cg_open (control, O_RDONLY);
  if (w->control_fd < 0)
    return ar_error_set (err, errno, "open `%s`", control);
  w->fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (w->fd < 0)
    return ar_error_set (err, errno, "eventfd");
  /* The container's own cgroup: registering a listener changes no limit. */
  return ar_cg_writef (dir, "cgroup.event_control", err, "%d %d", w->fd,
                       w->control_fd);
}

static int
watch_v2 (const char *dir, ar_cgroup_oom_watch *w, ar_error_t **err)
{
  cleanup_free char *events = xasprintf ("%s/memory.events", dir);
  w->fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  if (w->fd < 0)
    return ar_error_set (err, errno, "inotify_init1");
  if (inotify_add_watch (w->fd, events, IN_MODIFY) < 0)
    return ar_error_set (err, errno, "watch `%s`", events);
  w->oom_kills = keyed_file_value (dir, "memory.events", "oom_kill");
  return 0;
}

int
ar_cgroup_oom_watch_open (const ar_cgroup *cg, ar_cgroup_oom_watch *w,
                          ar_error_t **err)
{
  *w = (ar_cgroup_oom_watch){ .fd = -1, .control_fd = -1 };
  const char *v1 = dir_with (cg, "memory.oom_control");
  const char *v2 = v1 ? NULL : dir_with (cg, "memory.events");
  if (v1 == NULL && v2 == NULL)
    return 0;
  w->version = v1 ? 1 : 2;
  w->memory_dir = xstrdup (v1 ? v1 : v2);
  int r = v1 ? watch_v1 (v1, w, err) : watch_v2 (v2, w, err);
  if (r < 0)
    ar_cgroup_oom_watch_close (w);
  return r;
}

uint64_t
ar_cgroup_oom_watch_take (ar_cgroup_oom_watch *w)
{
  if (w->version == 1)
    {
      uint64_t count = 0;
      if (read (w->fd, &count, sizeof count) != sizeof count)
        return 0;
      /* The eventfd also fires when the cgroup is removed: not an OOM. */
      return ar_cg_exists (w->memory_dir, "memory.oom_control") ? count : 0;
    }
  if (w->version == 2)
    {
      char buf[4096];
      while (read (w->fd, buf, sizeof buf) > 0)
        ;
      if (!ar_cg_exists (w->memory_dir, "memory.events"))
        return 0;
      uint64_t kills
          = keyed_file_value (w->memory_dir, "memory.events", "oom_kill");
      uint64_t fresh = kills > w->oom_kills ? kills - w->oom_kills : 0;
      w->oom_kills = kills;
      return fresh;
    }
  return 0;
}

void
ar_cgroup_oom_watch_close (ar_cgroup_oom_watch *w)
{
  ar_closep (&w->fd);
  ar_closep (&w->control_fd);
  free (w->memory_dir);
  w->memory_dir = NULL;
  w->version = 0;
}

/* ---- limits hit ------------------------------------------------------------ */

/* Each controller's directory is found once (on v1 hosts a dozen
 * hierarchies hold the container), then read: this runs while a
 * sandbox's init waits to exit. */
void
ar_cgroup_limit_hits_read (const ar_cgroup *cg, ar_cgroup_limit_hits *out)
{
  *out = (ar_cgroup_limit_hits){ 0 };
  const char *memory_v1 = dir_with (cg, "memory.oom_control");
  const char *memory_v2 = memory_v1 ? NULL : dir_with (cg, "memory.events");
  if (memory_v1)
    {
      out->oom_kills
          = keyed_file_value (memory_v1, "memory.oom_control", "oom_kill");
      /* v1's "no limit" is the largest page multiple of a signed 64 bits. */
      uint64_t v = read_value (memory_v1, "memory.limit_in_bytes", 0);
      out->memory_limit = v >= (UINT64_C (1) << 62) ? 0 : v;
    }
  else if (memory_v2)
    {
      out->oom_kills
          = keyed_file_value (memory_v2, "memory.events", "oom_kill");
      out->memory_limit = read_value (memory_v2, "memory.max", 0);
    }
  const char *pids = dir_with (cg, "pids.max");
  if (pids)
    {
      out->refused_forks = keyed_file_value (pids, "pids.events", "max");
      out->pids_limit = read_value (pids, "pids.max", 0);
    }
}

bool
ar_cgroup_memory_peak (const ar_cgroup *cg, uint64_t *bytes)
{
  static const char *const files[]
      = { "memory.max_usage_in_bytes", "memory.peak" };
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
    {
      const char *dir = dir_with (cg, files[i]);
      cleanup_free char *text = NULL;
      cleanup_error ar_error_t *ignored = NULL;
      char *end;
      if (dir == NULL || ar_cg_read (dir, files[i], &text, &ignored) < 0)
        continue;
      errno = 0;
      *bytes = strtoull (text, &end, 10);
      if (errno == 0 && end != text && (*end == '\0' || *end == '\n'))
        return true;
    }
  return false;
}
