/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"
#include "../../oci/oci.h"
#include "../core/update.h"
#include "../util/cleanup.h"
#include "../util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const ar_option options[] = {
  { "resources", 'r', true,
    "a linux.resources JSON object from FILE, or - for stdin" },
  { "memory", 0, true, "memory limit in bytes (k, m, g suffixes; -1: none)" },
  { "memory-reservation", 0, true, "memory soft limit in bytes" },
  { "memory-swap", 0, true, "memory plus swap limit in bytes (-1: none)" },
  { "cpu-shares", 0, true, "relative CPU weight" },
  { "cpu-share", 0, true, "the same (runc's name)" },
  { "cpu-quota", 0, true, "CPU time in microseconds per period (-1: none)" },
  { "cpu-period", 0, true, "CFS period in microseconds" },
  { "cpu-rt-runtime", 0, true, "realtime runtime in microseconds" },
  { "cpu-rt-period", 0, true, "realtime period in microseconds" },
  { "cpuset-cpus", 0, true, "CPUs to run on (0-3,5)" },
  { "cpuset-mems", 0, true, "memory nodes to use (0-1)" },
  { "pids-limit", 0, true, "maximum number of processes (-1 or 0: none)" },
  { "blkio-weight", 0, true, "block I/O weight, 10 to 1000" },
  { 0 }
};
enum
{
  OPT_RESOURCES,
  OPT_MEMORY,
  OPT_MEMORY_RESERVATION,
  OPT_MEMORY_SWAP,
  OPT_CPU_SHARES,
  OPT_CPU_SHARE,
  OPT_CPU_QUOTA,
  OPT_CPU_PERIOD,
  OPT_CPU_RT_RUNTIME,
  OPT_CPU_RT_PERIOD,
  OPT_CPUSET_CPUS,
  OPT_CPUSET_MEMS,
  OPT_PIDS_LIMIT,
  OPT_BLKIO_WEIGHT,
  OPT_COUNT
};
AR_OPTIONS_MATCH (options, OPT_COUNT - 1);

static const ar_command_doc doc
    = { "update", "[OPTIONS] CONTAINER_ID",
        "Change the resource limits of a running container. Flags override the "
        "values from --resources." };

/* ---- values -------------------------------------------------------------- */

/* Bytes as runc and Docker write them: "1024", "512k", "1.5g", "64MiB",
 * binary multiples; "-1" for no limit. */
static int
parse_memory (const char *flag, const char *text, int64_t *out,
              ar_error_t **err)
{
  if (strcmp (text, "-1") == 0)
    {
      *out = -1;
      return 0;
    }
  char *end;
  errno = 0;
  double number = strtod (text, &end);
  if (end == text || errno != 0 || number < 0 || text[0] == '-'
      || text[0] == '+' || strchr ("0123456789", text[0]) == NULL)
    goto invalid;
  const char *unit = end;
  double scale = 1;
  const char *units = "kmgtp";
  const char *u = *unit ? strchr (units, (char) (*unit | 0x20)) : NULL;
  if (u)
    {
      for (const char *p = units; p <= u; p++)
        scale *= 1024;
      unit++;
      if (*unit == 'i' || *unit == 'I')
        unit++;
    }
  if (*unit == 'b' || *unit == 'B')
    unit++;
  if (*unit != '\0' || number * scale >= 9.2e18)
    goto invalid;
  *out = (int64_t) (number * scale);
  return 0;
invalid:
  return ar_error_set (err, 0,
                       "--%s: invalid size \"%s\" (bytes, with an optional "
                       "k, m, g, t or p suffix, or -1 for no limit)",
                       flag, text);
}

static int
parse_i64 (const char *flag, const char *text, int64_t min, int64_t *out,
           ar_error_t **err)
{
  char *end;
  errno = 0;
  long long v = strtoll (text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || v < min)
    return ar_error_set (err, 0, "--%s: invalid number \"%s\"", flag, text);
  *out = v;
  return 0;
}

static int
parse_u64 (const char *flag, const char *text, uint64_t *out, ar_error_t **err)
{
  int64_t v;
  if (parse_i64 (flag, text, 0, &v, err) < 0)
    return -1;
  *out = (uint64_t) v;
  return 0;
}

/* ---- --resources ---------------------------------------------------------- */

static int
read_stdin (char **data, size_t *len, ar_error_t **err)
{
  size_t cap = 4096, used = 0;
  cleanup_free char *buf = xmalloc (cap);
  for (;;)
    {
      if (used == cap)
        {
          if (cap > OCI_MAX_FILE_SIZE)
            return ar_error_set (err, 0, "<stdin>: larger than %u bytes",
                                 OCI_MAX_FILE_SIZE);
          cap *= 2;
          buf = xrealloc (buf, cap);
        }
      ssize_t n = read (STDIN_FILENO, buf + used, cap - used);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return ar_error_set (err, errno, "read stdin");
      if (n == 0)
        break;
      used += (size_t) n;
    }
  *data = steal_pointer (&buf);
  *len = used;
  return 0;
}

static int
load_resources (const char *source, oci_resources **out, ar_error_t **err)
{
  cleanup_free char *data = NULL;
  size_t len = 0;
  bool from_stdin = strcmp (source, "-") == 0;
  if (from_stdin ? read_stdin (&data, &len, err) < 0
                 : ar_read_file_at (AT_FDCWD, source, OCI_MAX_FILE_SIZE, &data,
                                    &len, err)
                       < 0)
    return -1;
  return oci_resources_parse (data, len, from_stdin ? "<stdin>" : source, out,
                              err);
}

/* ---- flags onto the resources --------------------------------------------- */

static oci_memory *
memory_of (oci_resources *r)
{
  if (r->memory == NULL)
    r->memory = xcalloc (1, sizeof *r->memory);
  return r->memory;
}

static oci_cpu *
cpu_of (oci_resources *r)
{
  if (r->cpu == NULL)
    r->cpu = xcalloc (1, sizeof *r->cpu);
  return r->cpu;
}

static int
set_memory_flags (const ar_parsed *p, oci_resources *r, ar_error_t **err)
{
  static const struct
  {
    int option;
    size_t offset;
  } fields[] = {
    { OPT_MEMORY, offsetof (oci_memory, limit) },
    { OPT_MEMORY_RESERVATION, offsetof (oci_memory, reservation) },
    { OPT_MEMORY_SWAP, offsetof (oci_memory, swap) },
  };
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
    {
      int o = fields[i].option;
      if (!p->present[o])
        continue;
      oci_opt_i64 *field
          = (oci_opt_i64 *) ((char *) memory_of (r) + fields[i].offset);
      if (parse_memory (options[o].long_name, p->value[o], &field->value, err)
          < 0)
        return -1;
      field->set = true;
    }
  return 0;
}

static int
set_u64_flag (const ar_parsed *p, int o, oci_opt_u64 *field, ar_error_t **err)
{
  if (!p->present[o])
    return 0;
  field->set = true;
  return parse_u64 (options[o].long_name, p->value[o], &field->value, err);
}

static int
set_i64_flag (const ar_parsed *p, int o, int64_t min, oci_opt_i64 *field,
              ar_error_t **err)
{
  if (!p->present[o])
    return 0;
  field->set = true;
  return parse_i64 (options[o].long_name, p->value[o], min, &field->value, err);
}

static int
set_cpu_flags (const ar_parsed *p, oci_resources *r, ar_error_t **err)
{
  bool any = false;
  for (int o = OPT_CPU_SHARES; o <= OPT_CPUSET_MEMS; o++)
    any |= p->present[o];
  if (!any)
    return 0;
  oci_cpu *c = cpu_of (r);
  if (set_u64_flag (p, OPT_CPU_SHARES, &c->shares, err) < 0
      || set_u64_flag (p, OPT_CPU_SHARE, &c->shares, err) < 0
      || set_i64_flag (p, OPT_CPU_QUOTA, -1, &c->quota, err) < 0
      || set_u64_flag (p, OPT_CPU_PERIOD, &c->period, err) < 0
      || set_i64_flag (p, OPT_CPU_RT_RUNTIME, -1, &c->realtime_runtime, err) < 0
      || set_u64_flag (p, OPT_CPU_RT_PERIOD, &c->realtime_period, err) < 0)
    return -1;
  if (p->present[OPT_CPUSET_CPUS])
    {
      free (c->cpus);
      c->cpus = xstrdup (p->value[OPT_CPUSET_CPUS]);
    }
  if (p->present[OPT_CPUSET_MEMS])
    {
      free (c->mems);
      c->mems = xstrdup (p->value[OPT_CPUSET_MEMS]);
    }
  return 0;
}

static int
set_blkio_weight (const ar_parsed *p, oci_resources *r, ar_error_t **err)
{
  if (!p->present[OPT_BLKIO_WEIGHT])
    return 0;
  int64_t w;
  if (parse_i64 ("blkio-weight", p->value[OPT_BLKIO_WEIGHT], 0, &w, err) < 0)
    return -1;
  if (w != 0 && (w < 10 || w > 1000))
    return ar_error_set (err, 0,
                         "--blkio-weight: %" PRId64 " is not between 10 and "
                         "1000",
                         w);
  if (r->block_io == NULL)
    r->block_io = xcalloc (1, sizeof *r->block_io);
  r->block_io->weight = (oci_opt_u32){ true, (uint32_t) w };
  return 0;
}

static bool
any_option (const ar_parsed *p)
{
  for (int o = 0; o < OPT_COUNT; o++)
    if (p->present[o])
      return true;
  return false;
}

static void
resources_freep (oci_resources **r)
{
  oci_resources_free (*r);
}

int
ar_cmd_update (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("update", &p, 1, "CONTAINER_ID", err) < 0)
    return -1;
  if (!any_option (&p))
    return ar_error_set (err, 0,
                         "update: nothing to change: give "
                         "--resources or a limit such as --memory");

  __attribute__ ((cleanup (resources_freep))) oci_resources *res = NULL;
  if (p.present[OPT_RESOURCES])
    {
      if (load_resources (p.value[OPT_RESOURCES], &res, err) < 0)
        return -1;
    }
  else
    res = xcalloc (1, sizeof *res);
  if (set_memory_flags (&p, res, err) < 0 || set_cpu_flags (&p, res, err) < 0
      || set_i64_flag (&p, OPT_PIDS_LIMIT, -1, &res->pids_limit, err) < 0
      || set_blkio_weight (&p, res, err) < 0)
    return -1;
  return ar_container_update (g->root, p.args[0], res, err) < 0 ? -1 : 0;
}
