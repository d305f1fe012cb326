/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "events.h"
#include "container.h"
#include "state.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/pidfd.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

/* ---- JSON ---------------------------------------------------------------- */

static void
gen_key (yajl_gen g, const char *key)
{
  yajl_gen_string (g, (const unsigned char *) key, strlen (key));
}

/* yajl_gen_integer is signed: "no limit" values reach UINT64_MAX. */
static void
gen_u64 (yajl_gen g, const char *key, uint64_t value)
{
  char buf[24];
  int len = snprintf (buf, sizeof buf, "%" PRIu64, value);
  if (key)
    gen_key (g, key);
  yajl_gen_number (g, buf, (size_t) len);
}

static void
gen_cpu (yajl_gen g, const ar_cgroup_stats *s)
{
  gen_key (g, "cpu");
  yajl_gen_map_open (g);
  gen_key (g, "usage");
  yajl_gen_map_open (g);
  gen_u64 (g, "total", s->cpu_total);
  gen_key (g, "percpu");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < s->n_cpu_percpu; i++)
    gen_u64 (g, NULL, s->cpu_percpu[i]);
  yajl_gen_array_close (g);
  gen_u64 (g, "kernel", s->cpu_kernel);
  gen_u64 (g, "user", s->cpu_user);
  yajl_gen_map_close (g);
  gen_key (g, "throttling");
  yajl_gen_map_open (g);
  gen_u64 (g, "periods", s->throttling_periods);
  gen_u64 (g, "throttledPeriods", s->throttled_periods);
  gen_u64 (g, "throttledTime", s->throttled_time);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
}

static void
gen_memory_entry (yajl_gen g, const char *key, const ar_cg_memory_entry *e)
{
  gen_key (g, key);
  yajl_gen_map_open (g);
  gen_u64 (g, "limit", e->limit);
  gen_u64 (g, "usage", e->usage);
  gen_u64 (g, "max", e->max);
  gen_u64 (g, "failcnt", e->failcnt);
  yajl_gen_map_close (g);
}

static void
gen_memory (yajl_gen g, const ar_cgroup_stats *s)
{
  gen_key (g, "memory");
  yajl_gen_map_open (g);
  gen_u64 (g, "cache", s->memory_cache);
  gen_memory_entry (g, "usage", &s->memory);
  if (s->has_swap)
    gen_memory_entry (g, "swap", &s->swap);
  gen_key (g, "raw");
  yajl_gen_map_open (g);
  for (size_t i = 0; i < s->n_memory_raw; i++)
    gen_u64 (g, s->memory_raw[i].key, s->memory_raw[i].value);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
}

static void
gen_pids (yajl_gen g, const ar_cgroup_stats *s)
{
  gen_key (g, "pids");
  yajl_gen_map_open (g);
  gen_u64 (g, "current", s->pids_current);
  gen_u64 (g, "limit", s->pids_limit);
  yajl_gen_map_close (g);
}

static void
gen_blkio_list (yajl_gen g, const char *key, const ar_cg_blkio_entry *v,
                size_t n)
{
  gen_key (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen_map_open (g);
      gen_u64 (g, "major", v[i].major);
      gen_u64 (g, "minor", v[i].minor);
      gen_key (g, "op");
      gen_key (g, v[i].op);
      gen_u64 (g, "value", v[i].value);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

static void
gen_blkio (yajl_gen g, const ar_cgroup_stats *s)
{
  gen_key (g, "blkio");
  yajl_gen_map_open (g);
  gen_blkio_list (g, "ioServiceBytesRecursive", s->io_service_bytes,
                  s->n_io_service_bytes);
  gen_blkio_list (g, "ioServicedRecursive", s->io_serviced, s->n_io_serviced);
  yajl_gen_map_close (g);
}

static void
gen_hugetlb (yajl_gen g, const ar_cgroup_stats *s)
{
  gen_key (g, "hugetlb");
  yajl_gen_map_open (g);
  for (size_t i = 0; i < s->n_hugetlb; i++)
    {
      gen_key (g, s->hugetlb[i].page_size);
      yajl_gen_map_open (g);
      gen_u64 (g, "usage", s->hugetlb[i].usage);
      gen_u64 (g, "max", s->hugetlb[i].max);
      gen_u64 (g, "failcnt", s->hugetlb[i].failcnt);
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
}

static char *
finish (yajl_gen g)
{
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (g, &buf, &len);
  char *out = xasprintf ("%.*s", (int) len, buf);
  yajl_gen_free (g);
  return out;
}

static yajl_gen
event_open (const char *type, const char *id)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    abort ();
  yajl_gen_map_open (g);
  gen_key (g, "type");
  gen_key (g, type);
  gen_key (g, "id");
  gen_key (g, id);
  return g;
}

char *
ar_stats_event_json (const char *id, const ar_cgroup_stats *s)
{
  yajl_gen g = event_open ("stats", id);
  gen_key (g, "data");
  yajl_gen_map_open (g);
  if (s->has_cpu)
    gen_cpu (g, s);
  if (s->has_memory)
    gen_memory (g, s);
  if (s->has_pids)
    gen_pids (g, s);
  gen_blkio (g, s);
  gen_hugetlb (g, s);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  return finish (g);
}

/* ---- the loop ------------------------------------------------------------ */

/* One JSON object a line, flushed: the reader is usually a pipe. */
static int
emit_line (char *json, ar_error_t **err)
{
  cleanup_free char *line = json;
  if (puts (line) == EOF || fflush (stdout) == EOF)
    return ar_error_set (err, errno, "write event");
  return 0;
}

static int
emit_stats (const char *id, const ar_cgroup *cg, ar_error_t **err)
{
  ar_cgroup_stats s;
  if (ar_cgroup_stats_read (cg, &s, err) < 0)
    return -1;
  char *json = ar_stats_event_json (id, &s);
  ar_cgroup_stats_clear (&s);
  return emit_line (json, err);
}

static int
emit_ooms (const char *id, ar_cgroup_oom_watch *w, ar_error_t **err)
{
  /* runc reports one event per wakeup, however many kills it covers. */
  if (ar_cgroup_oom_watch_take (w) == 0)
    return 0;
  yajl_gen g = event_open ("oom", id);
  yajl_gen_map_close (g);
  return emit_line (finish (g), err);
}

static void
oom_watch_closep (ar_cgroup_oom_watch *w)
{
  ar_cgroup_oom_watch_close (w);
}

static void
cgroup_freep (ar_cgroup **cg)
{
  ar_cgroup_free (*cg);
}

/* Until the init exits: stats every interval, OOMs as they come. */
static int
stream (const char *id, const ar_cgroup *cg, int pidfd, long interval_ms,
        ar_error_t **err)
{
  __attribute__ ((cleanup (oom_watch_closep))) ar_cgroup_oom_watch w;
  if (ar_cgroup_oom_watch_open (cg, &w, err) < 0)
    return -1;
  long long next_tick = ar_now_ms () + interval_ms;
  for (;;)
    {
      struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN },
                             { .fd = w.fd, .events = POLLIN } };
      long long wait = next_tick - ar_now_ms ();
      int n = poll (p, w.fd >= 0 ? 2 : 1, wait > 0 ? (int) wait : 0);
      if (n < 0 && errno != EINTR)
        return ar_error_set (err, errno, "poll");
      if (emit_ooms (id, &w, err) < 0)
        return -1;
      if (n > 0 && (p[0].revents & (POLLIN | POLLHUP)))
        return 0; /* the container stopped */
      if (ar_now_ms () >= next_tick)
        {
          if (emit_stats (id, cg, err) < 0)
            return -1;
          next_tick += interval_ms;
        }
    }
}

int
ar_container_events (const char *root, const char *id, bool stats_once,
                     long interval_ms, ar_error_t **err)
{
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  if (ar_container_load (root, id, &state_fd, &st, err) < 0)
    return -1;
  /* The pidfd pins the init; checked against the recorded start time. */
  cleanup_close int pidfd = ar_pidfd_open (st->pid);
  ar_status status = ar_state_status (state_fd, st);
  if (pidfd < 0 || status == AR_STATUS_STOPPED || !ar_state_init_alive (st))
    return ar_error_set (err, 0, "container not running: `%s`", id);
  __attribute__ ((cleanup (cgroup_freep))) ar_cgroup *cg = NULL;
  if (ar_container_cgroup_for (st, "to read", &cg, err) < 0)
    return -1;
  if (stats_once)
    return emit_stats (id, cg, err);
  return stream (id, cg, pidfd, interval_ms, err);
}
