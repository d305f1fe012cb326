/* SPDX-License-Identifier: Apache-2.0 */
/* libsystemd's sd-bus, loaded when the systemd cgroup driver is used and
 * not before: linking it would put libsystemd and its own dependencies in
 * front of every exec of the runtime (about 2 ms each, measured), for a
 * driver most containers never use. */
#ifndef AR_CORE_CGROUPS_SDBUS_H
#define AR_CORE_CGROUPS_SDBUS_H

#include "../../util/error.h"
#include <systemd/sd-bus.h>

typedef struct
{
  int (*open_system) (sd_bus **bus);
  int (*open_user) (sd_bus **bus);
  sd_bus *(*flush_close_unref) (sd_bus *bus);
  int (*new_method_call) (sd_bus *bus, sd_bus_message **m,
                          const char *destination, const char *path,
                          const char *interface, const char *member);
  int (*append) (sd_bus_message *m, const char *types, ...);
  int (*open_container) (sd_bus_message *m, char type, const char *contents);
  int (*close_container) (sd_bus_message *m);
  sd_bus_message *(*message_unref) (sd_bus_message *m);
  int (*call) (sd_bus *bus, sd_bus_message *m, uint64_t usec,
               sd_bus_error *ret_error, sd_bus_message **reply);
  int (*read) (sd_bus_message *m, const char *types, ...);
  void (*error_free) (sd_bus_error *e);
  int (*error_has_name) (const sd_bus_error *e, const char *name);
  int (*match_signal) (sd_bus *bus, sd_bus_slot **ret, const char *sender,
                       const char *path, const char *interface,
                       const char *member, sd_bus_message_handler_t callback,
                       void *userdata);
  sd_bus_slot *(*slot_unref) (sd_bus_slot *slot);
  int (*process) (sd_bus *bus, sd_bus_message **r);
  int (*wait) (sd_bus *bus, uint64_t timeout_usec);
  int (*get_property_string) (sd_bus *bus, const char *destination,
                              const char *path, const char *interface,
                              const char *member, sd_bus_error *ret_error,
                              char **ret);
} ar_sdbus_api;

/* The functions above, from libsystemd.so.0; loaded once per process. */
int ar_sdbus_load (const ar_sdbus_api **api, ar_error_t **err);

/* Cleanup for what the loaded functions made (nothing to do when NULL or
 * empty, so also before anything was loaded). */
void ar_sdbus_message_unrefp (sd_bus_message **m);
void ar_sdbus_error_freep (sd_bus_error *e);
#define cleanup_bus_message __attribute__ ((cleanup (ar_sdbus_message_unrefp)))
#define cleanup_bus_error __attribute__ ((cleanup (ar_sdbus_error_freep)))

#endif
