/* SPDX-License-Identifier: Apache-2.0 */
/* The systemd cgroup driver (--systemd-cgroup): the container's cgroup is
 * a transient scope unit made by systemd over D-Bus, with Delegate=yes,
 * in the slice that cgroupsPath names ("slice:prefix:name", runc's form).
 * The main limits go in as unit properties, so systemd's view of the unit
 * is the container's; then every resource is written into the delegated
 * cgroup by the same code as for cgroupfs. Delete empties the cgroup and
 * stops the unit; systemd removes the cgroup. cgroup v2 only: the hosts
 * that use this driver (Docker, Podman, the kubelet on current
 * distributions) have nothing else. */
#include "config.h"
#include "internal.h"
#include "sdbus.h"
#include "../../util/userns.h"
#include "../../util/cleanup.h"
#include "../../util/clock.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SYSTEMD_DEST "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER "org.freedesktop.systemd1.Manager"
#define JOB_TIMEOUT_USEC (10 * 1000 * 1000ULL)
#define CALL_TIMEOUT_USEC (10 * 1000 * 1000ULL)

/* ---- cgroupsPath ------------------------------------------------------ */

/* Without root the units are the user's systemd instance's, and its slices
 * sit below its own cgroup (user.slice/user-UID.slice/user@UID.service),
 * not at the root of the hierarchy. ar_cg_systemd_check_running looks the
 * manager's ControlGroup up once (as runc does); the directories
 * ar_cg_systemd_parse_path works out are below it. NULL: the root (the
 * system manager's, or no lookup made: parse_path alone stays pure). */
static char *manager_cgroup;

static bool
valid_unit_word (const char *s)
{
  if (*s == '\0')
    return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
          || (*p >= '0' && *p <= '9') || strchr (":-_.\\@", *p)))
      return false;
  return true;
}

/* A unit name from the state file goes to systemd's StopUnit: a scope's
 * name and nothing else. */
bool
ar_cg_systemd_is_scope_name (const char *name)
{
  size_t n = strlen (name);
  return n > 6 && strcmp (name + n - 6, ".scope") == 0
         && valid_unit_word (name);
}

/* "a-b-c.slice" lives at a.slice/a-b.slice/a-b-c.slice; "-.slice" is the
 * root. NULL when it is no valid slice name. */
static char *
slice_dir (const char *slice)
{
  size_t n = strlen (slice);
  if (strcmp (slice, "-.slice") == 0)
    return xstrdup ("");
  if (n <= 6 || strcmp (slice + n - 6, ".slice") != 0
      || !valid_unit_word (slice) || slice[0] == '-' || strstr (slice, "--")
      || slice[n - 7] == '-')
    return NULL;
  cleanup_free char *stem = xasprintf ("%.*s", (int) (n - 6), slice);
  char *dir = xstrdup ("");
  for (char *dash = stem;; dash++)
    {
      dash = strchr (dash, '-');
      cleanup_free char *part = xasprintf (
          "%.*s.slice", dash ? (int) (dash - stem) : (int) strlen (stem), stem);
      char *longer = xasprintf ("%s%s%s", dir, *dir ? "/" : "", part);
      free (dir);
      dir = longer;
      if (dash == NULL)
        return dir;
    }
}

int
ar_cg_systemd_parse_path (const char *id, const char *cgroups_path,
                          ar_cg_systemd_unit *out, ar_error_t **err)
{
  *out = (ar_cg_systemd_unit){ 0 };
  /* A user instance's units go to its user.slice, as runc puts them. */
  const char *default_slice
      = ar_userns_unprivileged () ? "user.slice" : "system.slice";
  cleanup_free char *given
      = cgroups_path && *cgroups_path
            ? xstrdup (cgroups_path)
            : xasprintf ("%s:agentrun:%s", default_slice, id);
  char *first = strchr (given, ':');
  char *second = first ? strchr (first + 1, ':') : NULL;
  if (second == NULL || strchr (second + 1, ':'))
    return ar_error_set (
        err, 0,
        "config.json: .linux.cgroupsPath: \"%s\": --systemd-cgroup wants \"slice:prefix:name\"",
        given);
  *first = *second = '\0';
  const char *slice = *given ? given : default_slice;
  const char *prefix = first + 1, *name = second + 1;
  if (!valid_unit_word (name) || (*prefix && !valid_unit_word (prefix)))
    return ar_error_set (
        err, 0,
        "config.json: .linux.cgroupsPath: \"%s:%s:%s\": prefix and name must be non-empty unit name characters",
        slice, prefix, name);
  size_t n = strlen (name);
  if (n > 6 && strcmp (name + n - 6, ".slice") == 0)
    return ar_error_set (
        err, 0,
        "config.json: .linux.cgroupsPath: \"%s:%s:%s\": a slice as the container's own unit is not supported; name a scope",
        slice, prefix, name);
  cleanup_free char *dir = slice_dir (slice);
  if (dir == NULL)
    return ar_error_set (
        err, 0,
        "config.json: .linux.cgroupsPath: \"%s\" is not a slice name (NAME.slice, dashes for nesting)",
        slice);
  out->slice = xstrdup (slice);
  /* runc writes "prefix-name.scope"; with no prefix, "name.scope". */
  out->unit = *prefix ? xasprintf ("%s-%s.scope", prefix, name)
                      : xasprintf ("%s.scope", name);
  const char *root = manager_cgroup ? manager_cgroup : "";
  out->dir
      = *dir ? xasprintf ("%s%s/%s/%s", AR_CGROUP_ROOT, root, dir, out->unit)
             : xasprintf ("%s%s/%s", AR_CGROUP_ROOT, root, out->unit);
  return 0;
}

void
ar_cg_systemd_unit_clear (ar_cg_systemd_unit *u)
{
  free (u->slice);
  free (u->unit);
  free (u->dir);
  *u = (ar_cg_systemd_unit){ 0 };
}

/* ---- the bus ---------------------------------------------------------- */

typedef struct
{
  const ar_sdbus_api *api;
  sd_bus *bus;
  sd_bus_slot *jobs;
  const char *waiting_for; /* job object path */
  char *result;            /* its JobRemoved result, once seen */
} systemd_conn;

static void
conn_close (systemd_conn *c)
{
  if (c->api == NULL)
    return;
  if (c->jobs)
    c->api->slot_unref (c->jobs);
  if (c->bus)
    c->api->flush_close_unref (c->bus);
  free (c->result);
  *c = (systemd_conn){ 0 };
}
#define cleanup_conn __attribute__ ((cleanup (conn_close)))

static int
on_job_removed (sd_bus_message *m, void *data, sd_bus_error *unused)
{
  (void) unused;
  systemd_conn *c = data;
  uint32_t id;
  const char *job, *unit, *result;
  if (c->api->read (m, "uoss", &id, &job, &unit, &result) < 0)
    return 0;
  if (c->waiting_for && strcmp (job, c->waiting_for) == 0 && c->result == NULL)
    c->result = xstrdup (result);
  return 0;
}

static int
systemd_running (ar_error_t **err)
{
  if (access ("/run/systemd/system", F_OK) < 0)
    return ar_error_set (
        err, 0,
        "--systemd-cgroup: systemd is not running on this host (no /run/systemd/system): use the cgroupfs driver");
  return 0;
}

static int
bus_open (systemd_conn *c, ar_error_t **err)
{
  if (systemd_running (err) < 0 || ar_sdbus_load (&c->api, err) < 0)
    return -1;
  /* Without root, units are the user's own, in its systemd instance
   * (user@UID.service, which delegates cgroups to it), as runc does. */
  bool user = ar_userns_unprivileged ();
  int r = user ? c->api->open_user (&c->bus) : c->api->open_system (&c->bus);
  if (r < 0 && user)
    return ar_error_set (
        err, -r,
        "--systemd-cgroup: cannot reach the systemd user instance on the user bus ($XDG_RUNTIME_DIR/bus): without root it needs a login session or lingering (loginctl enable-linger)");
  if (r < 0)
    return ar_error_set (
        err, -r, "--systemd-cgroup: cannot reach systemd on the system bus");
  return 0;
}

/* The user instance's own cgroup, its ControlGroup property. */
static int
find_manager_cgroup (ar_error_t **err)
{
  cleanup_conn systemd_conn c = { 0 };
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  char *found = NULL;
  if (bus_open (&c, err) < 0)
    return -1;
  int r = c.api->get_property_string (c.bus, SYSTEMD_DEST, SYSTEMD_PATH,
                                      SYSTEMD_MANAGER, "ControlGroup", &e,
                                      &found);
  if (r < 0)
    return ar_error_set (err, -r,
                         "systemd: the user instance's ControlGroup: %s",
                         e.message ? e.message : strerror (-r));
  /* No "." or ".." components (unit names never start with a dot). */
  if (found[0] != '/' || strstr (found, "/."))
    {
      ar_error_set (
          err, 0,
          "systemd: the user instance's ControlGroup `%s` is no cgroup path",
          found);
      free (found);
      return -1;
    }
  if (strcmp (found, "/") == 0)
    found[0] = '\0';
  manager_cgroup = found;
  return 0;
}

bool
ar_cgroup_user_systemd_available (void)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  if (xdg == NULL || xdg[0] != '/' || systemd_running (NULL) < 0
      || !ar_cg_on_cgroup2 (AR_CGROUP_ROOT))
    return false;
  cleanup_free char *bus = xasprintf ("%s/bus", xdg);
  return access (bus, F_OK) == 0;
}

int
ar_cg_systemd_check_running (ar_error_t **err)
{
  if (systemd_running (err) < 0)
    return -1;
  if (manager_cgroup || !ar_userns_unprivileged ())
    return 0;
  return find_manager_cgroup (err);
}

static int
conn_open (systemd_conn *c, ar_error_t **err)
{
  if (bus_open (c, err) < 0)
    return -1;
  /* Before any job exists, so its JobRemoved cannot be missed. */
  int r
      = c->api->match_signal (c->bus, &c->jobs, SYSTEMD_DEST, SYSTEMD_PATH,
                              SYSTEMD_MANAGER, "JobRemoved", on_job_removed, c);
  if (r < 0)
    return ar_error_set (err, -r,
                         "--systemd-cgroup: subscribe to systemd's JobRemoved");
  return 0;
}

static int
bus_error (const sd_bus_error *e, int r, const char *what, const char *unit,
           ar_error_t **err)
{
  return ar_error_set (err, -r, "systemd: %s %s: %s", what, unit,
                       e->message ? e->message : strerror (-r));
}

/* Wait for the job a call returned (its object path in `reply`). */
static int
wait_job (systemd_conn *c, sd_bus_message *reply, const char *what,
          const char *unit, ar_error_t **err)
{
  const char *job;
  int r = c->api->read (reply, "o", &job);
  if (r < 0)
    return ar_error_set (err, -r, "systemd: %s %s: no job in the reply", what,
                         unit);
  cleanup_free char *path = xstrdup (job);
  c->waiting_for = path;
  long long deadline = ar_now_ms () + (long long) (JOB_TIMEOUT_USEC / 1000);
  while (c->result == NULL)
    {
      r = c->api->process (c->bus, NULL);
      if (r < 0)
        return ar_error_set (err, -r, "systemd: %s %s: reading the bus", what,
                             unit);
      if (r > 0)
        continue;
      long long left = deadline - ar_now_ms ();
      if (left <= 0)
        return ar_error_set (err, ETIMEDOUT,
                             "systemd: %s %s: the job did not finish", what,
                             unit);
      c->api->wait (c->bus, (uint64_t) left * 1000);
    }
  c->waiting_for = NULL;
  if (strcmp (c->result, "done") != 0)
    return ar_error_set (err, 0, "systemd: %s %s: job %s", what, unit,
                         c->result);
  return 0;
}

static int
manager_call (systemd_conn *c, sd_bus_message *m, sd_bus_message **reply,
              sd_bus_error *e)
{
  return c->api->call (c->bus, m, CALL_TIMEOUT_USEC, e, reply);
}

static int
new_manager_call (systemd_conn *c, const char *method, sd_bus_message **m,
                  ar_error_t **err)
{
  int r = c->api->new_method_call (c->bus, m, SYSTEMD_DEST, SYSTEMD_PATH,
                                   SYSTEMD_MANAGER, method);
  return r < 0 ? ar_error_set (err, -r, "systemd: build %s", method) : 0;
}

/* ResetFailedUnit: a failed unit of that name would block a new one. */
static void
reset_failed (systemd_conn *c, const char *unit)
{
  cleanup_bus_message sd_bus_message *m = NULL;
  cleanup_bus_message sd_bus_message *reply = NULL;
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  cleanup_error ar_error_t *ignored = NULL;
  if (new_manager_call (c, "ResetFailedUnit", &m, &ignored) == 0
      && c->api->append (m, "s", unit) >= 0)
    manager_call (c, m, &reply, &e);
}

/* ---- properties -------------------------------------------------------- */

static int
append_u64 (systemd_conn *c, sd_bus_message *m, const char *name, uint64_t v)
{
  return c->api->append (m, "(sv)", name, "t", v);
}

/* The limits systemd has properties for; the rest (and these again) are
 * written into the cgroup afterwards. */
static int
append_resources (systemd_conn *c, sd_bus_message *m, const oci_resources *r)
{
  int ret = 0;
  const oci_memory *mem = r ? r->memory : NULL;
  if (mem && mem->limit.set && mem->limit.value > 0)
    ret |= append_u64 (c, m, "MemoryMax", (uint64_t) mem->limit.value);
  if (mem && mem->reservation.set && mem->reservation.value > 0)
    ret |= append_u64 (c, m, "MemoryLow", (uint64_t) mem->reservation.value);
  if (r && r->pids_limit.set && r->pids_limit.value > 0)
    ret |= append_u64 (c, m, "TasksMax", (uint64_t) r->pids_limit.value);
  const oci_cpu *cpu = r ? r->cpu : NULL;
  if (cpu && cpu->shares.set && cpu->shares.value > 0)
    ret |= append_u64 (c, m, "CPUWeight",
                       ar_cg_shares_to_weight (cpu->shares.value));
  if (cpu && cpu->quota.set && cpu->quota.value > 0)
    {
      uint64_t period
          = cpu->period.set && cpu->period.value ? cpu->period.value : 100000;
      /* systemd counts CPU time per second, in microseconds. */
      ret |= append_u64 (c, m, "CPUQuotaPerSecUSec",
                         (uint64_t) cpu->quota.value * 1000000 / period);
      ret |= append_u64 (c, m, "CPUQuotaPeriodUSec", period);
    }
  return ret < 0 ? -1 : 0;
}

static int
start_message (systemd_conn *c, const ar_cg_systemd_unit *u, pid_t pid,
               const char *id, const oci_resources *r, sd_bus_message **out,
               ar_error_t **err)
{
  cleanup_bus_message sd_bus_message *m = NULL;
  if (new_manager_call (c, "StartTransientUnit", &m, err) < 0)
    return -1;
  cleanup_free char *description = xasprintf ("agentrun container %s", id);
  int ok = c->api->append (m, "ss", u->unit, "fail") >= 0
           && c->api->open_container (m, 'a', "(sv)") >= 0
           && c->api->append (m, "(sv)", "Description", "s", description) >= 0
           && c->api->append (m, "(sv)", "Slice", "s", u->slice) >= 0
           && c->api->append (m, "(sv)", "Delegate", "b", 1) >= 0
           && c->api->append (m, "(sv)", "DefaultDependencies", "b", 0) >= 0
           && c->api->append (m, "(sv)", "PIDs", "au", 1, (uint32_t) pid) >= 0
           && c->api->append (m, "(sv)", "MemoryAccounting", "b", 1) >= 0
           && c->api->append (m, "(sv)", "TasksAccounting", "b", 1) >= 0
           && c->api->append (m, "(sv)", "CPUAccounting", "b", 1) >= 0
           && c->api->append (m, "(sv)", "IOAccounting", "b", 1) >= 0
           && append_resources (c, m, r) == 0
           && c->api->close_container (m) >= 0
           && c->api->append (m, "a(sa(sv))", 0) >= 0;
  if (!ok)
    return ar_error_set (err, 0, "systemd: build StartTransientUnit %s",
                         u->unit);
  *out = steal_pointer (&m);
  return 0;
}

/* ---- start and stop ----------------------------------------------------- */

int
ar_cg_systemd_start (const ar_cg_systemd_unit *u, const char *id, pid_t pid,
                     const oci_resources *r, ar_error_t **err)
{
  cleanup_conn systemd_conn c = { 0 };
  if (conn_open (&c, err) < 0)
    return -1;
  for (int attempt = 0;; attempt++)
    {
      cleanup_bus_message sd_bus_message *m = NULL;
      cleanup_bus_message sd_bus_message *reply = NULL;
      cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
      if (start_message (&c, u, pid, id, r, &m, err) < 0)
        return -1;
      int rc = manager_call (&c, m, &reply, &e);
      if (rc >= 0)
        return wait_job (&c, reply, "start", u->unit, err);
      /* A unit left failed by an earlier container of this name. */
      if (attempt == 0
          && c.api->error_has_name (&e, "org.freedesktop.systemd1.UnitExists"))
        {
          reset_failed (&c, u->unit);
          continue;
        }
      return bus_error (&e, rc, "start", u->unit, err);
    }
}

int
ar_cg_systemd_set_resources (const char *unit, const oci_resources *r,
                             ar_error_t **err)
{
  cleanup_conn systemd_conn c = { 0 };
  cleanup_bus_message sd_bus_message *m = NULL;
  cleanup_bus_message sd_bus_message *reply = NULL;
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  if (conn_open (&c, err) < 0
      || new_manager_call (&c, "SetUnitProperties", &m, err) < 0)
    return -1;
  bool ok = c.api->append (m, "sb", unit, 1) >= 0
            && c.api->open_container (m, 'a', "(sv)") >= 0
            && append_resources (&c, m, r) == 0
            && c.api->close_container (m) >= 0;
  if (!ok)
    return ar_error_set (err, 0, "systemd: build SetUnitProperties %s", unit);
  int rc = manager_call (&c, m, &reply, &e);
  return rc < 0 ? bus_error (&e, rc, "set properties of", unit, err) : 0;
}

int
ar_cg_systemd_stop (const char *unit, ar_error_t **err)
{
  cleanup_conn systemd_conn c = { 0 };
  if (conn_open (&c, err) < 0)
    return -1;
  cleanup_bus_message sd_bus_message *m = NULL;
  cleanup_bus_message sd_bus_message *reply = NULL;
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  if (new_manager_call (&c, "StopUnit", &m, err) < 0)
    return -1;
  int rc = c.api->append (m, "ss", unit, "replace");
  if (rc >= 0)
    rc = manager_call (&c, m, &reply, &e);
  int ret = 0;
  if (rc >= 0)
    ret = wait_job (&c, reply, "stop", unit, err);
  else if (!c.api->error_has_name (&e, "org.freedesktop.systemd1.NoSuchUnit"))
    ret = bus_error (&e, rc, "stop", unit,
                     err); /* gone already: what stop wants */
  reset_failed (&c, unit);
  return ret;
}
