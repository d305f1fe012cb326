/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "device_rules.h"
#include "../util/cleanup.h"

#include <string.h>

typedef struct
{
  const char *type;
  int64_t major, minor; /* -1: any */
  const char *access;
} default_rule;

static const default_rule defaults[] = {
  { "c", -1, -1, "m" },    { "b", -1, -1, "m" }, /* mknod, not use */
  { "c", 1, 3, "rwm" },    { "c", 1, 5, "rwm" }, /* null, zero */
  { "c", 1, 7, "rwm" },    { "c", 1, 8, "rwm" }, /* full, random */
  { "c", 1, 9, "rwm" },    { "c", 5, 0, "rwm" }, /* urandom, tty */
  { "c", 5, 1, "rwm" },    { "c", 5, 2, "rwm" }, /* console, ptmx */
  { "c", 136, -1, "rwm" },                       /* pty slaves */
};

static void
append_rule (oci_resources *r, const char *type, int64_t major, int64_t minor,
             const char *access)
{
  r->devices = xrealloc (r->devices, (r->n_devices + 1) * sizeof *r->devices);
  r->devices[r->n_devices++] = (oci_device_rule){
    .allow = true,
    .type = xstrdup (type),
    .major = { .set = major >= 0, .value = major },
    .minor = { .set = minor >= 0, .value = minor },
    .access = xstrdup (access),
  };
}

void
ar_device_rules_add_defaults (oci_spec *spec)
{
  oci_linux *lnx = spec->linux_cfg;
  if (lnx == NULL || lnx->resources == NULL || lnx->resources->n_devices == 0)
    return;
  oci_resources *r = lnx->resources;
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
    append_rule (r, defaults[i].type, defaults[i].major, defaults[i].minor,
                 defaults[i].access);
}
