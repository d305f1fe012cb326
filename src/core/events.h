/* SPDX-License-Identifier: Apache-2.0 */
/* `agentrun events`: a container's statistics and OOM notifications as
 * JSON lines, in runc's format. */
#ifndef AR_CORE_EVENTS_H
#define AR_CORE_EVENTS_H

#include "cgroups/cgroups.h"
#include "../util/error.h"
#include <stdbool.h>

/* {"type":"stats","id":ID,"data":{...}} for one reading, malloc'd. */
char *ar_stats_event_json (const char *id, const ar_cgroup_stats *stats);

/* stats_once: print one stats event and return. Otherwise print a stats
 * event every interval_ms and an {"type":"oom"} event on each OOM, until
 * the container stops. */
int ar_container_events (const char *root, const char *id, bool stats_once,
                         long interval_ms, ar_error_t **err);

#endif
