/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "sdbus.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define LIBSYSTEMD "libsystemd.so.0"

static const struct
{
  const char *symbol;
  size_t offset;
} symbols[] = {
  { "sd_bus_open_system", offsetof (ar_sdbus_api, open_system) },
  { "sd_bus_open_user", offsetof (ar_sdbus_api, open_user) },
  { "sd_bus_flush_close_unref", offsetof (ar_sdbus_api, flush_close_unref) },
  { "sd_bus_message_new_method_call",
    offsetof (ar_sdbus_api, new_method_call) },
  { "sd_bus_message_append", offsetof (ar_sdbus_api, append) },
  { "sd_bus_message_open_container", offsetof (ar_sdbus_api, open_container) },
  { "sd_bus_message_close_container",
    offsetof (ar_sdbus_api, close_container) },
  { "sd_bus_message_unref", offsetof (ar_sdbus_api, message_unref) },
  { "sd_bus_call", offsetof (ar_sdbus_api, call) },
  { "sd_bus_message_read", offsetof (ar_sdbus_api, read) },
  { "sd_bus_error_free", offsetof (ar_sdbus_api, error_free) },
  { "sd_bus_error_has_name", offsetof (ar_sdbus_api, error_has_name) },
  { "sd_bus_match_signal", offsetof (ar_sdbus_api, match_signal) },
  { "sd_bus_slot_unref", offsetof (ar_sdbus_api, slot_unref) },
  { "sd_bus_process", offsetof (ar_sdbus_api, process) },
  { "sd_bus_wait", offsetof (ar_sdbus_api, wait) },
  { "sd_bus_get_property_string",
    offsetof (ar_sdbus_api, get_property_string) },
};

static ar_sdbus_api loaded;
static bool done;

void
ar_sdbus_message_unrefp (sd_bus_message **m)
{
  if (*m && done)
    loaded.message_unref (*m);
  *m = NULL;
}

void
ar_sdbus_error_freep (sd_bus_error *e)
{
  if (done)
    loaded.error_free (e);
}

int
ar_sdbus_load (const ar_sdbus_api **api, ar_error_t **err)
{
  if (done)
    {
      *api = &loaded;
      return 0;
    }
  void *lib = dlopen (LIBSYSTEMD, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    return ar_error_set (
        err, 0, "--systemd-cgroup: cannot load %s (%s): install libsystemd0",
        LIBSYSTEMD, dlerror ());
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++)
    {
      void *fn = dlsym (lib, symbols[i].symbol);
      if (fn == NULL)
        return ar_error_set (err, 0, "--systemd-cgroup: %s has no %s",
                             LIBSYSTEMD, symbols[i].symbol);
      /* POSIX: a function pointer and void * convert through memcpy. */
      memcpy ((char *) &loaded + symbols[i].offset, &fn, sizeof fn);
    }
  done = true;
  *api = &loaded;
  return 0;
}
