/* SPDX-License-Identifier: Apache-2.0 */
/* The systemd driver's cgroupsPath ("slice:prefix:name") as runc reads it:
 * unit name, slice and the cgroup directory systemd makes; bad forms are
 * refused with the JSON path. Pure: no bus, no cgroup is touched. */
#include "config.h"
#include "unit.h"
#include "../../src/core/cgroups/internal.h"
#include "../../src/util/cleanup.h"

static void
check_path (const char *given, const char *slice, const char *unit,
            const char *dir)
{
  ar_cg_systemd_unit u;
  cleanup_error ar_error_t *err = NULL;
  if (CHECK (ar_cg_systemd_parse_path ("ctr1", given, &u, &err) == 0))
    {
      CHECK_STR (u.slice, slice);
      CHECK_STR (u.unit, unit);
      CHECK_STR (u.dir, dir);
      ar_cg_systemd_unit_clear (&u);
    }
}

static void
check_refused (const char *given, const char *wanted_text)
{
  ar_cg_systemd_unit u;
  cleanup_error ar_error_t *err = NULL;
  CHECK (ar_cg_systemd_parse_path ("ctr1", given, &u, &err) < 0);
  CHECK (err && strstr (ar_error_text (err), ".linux.cgroupsPath") != NULL);
  CHECK (err && strstr (ar_error_text (err), wanted_text) != NULL);
}

static void
test_systemd_paths (void)
{
  check_path ("system.slice:docker:abc", "system.slice", "docker-abc.scope",
              "/sys/fs/cgroup/system.slice/docker-abc.scope");
  /* Nested slices: each dash is a level. */
  check_path ("kubepods-burstable-pod12.slice:cri-containerd:abc",
              "kubepods-burstable-pod12.slice", "cri-containerd-abc.scope",
              "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/"
              "kubepods-burstable-pod12.slice/cri-containerd-abc.scope");
  /* Defaults: an empty slice is system.slice (user.slice without root,
   * which a user namespace of its own is); no prefix, name.scope; no
   * cgroupsPath at all, the default slice:agentrun:<id>. */
  const char *slice = ar_userns_unprivileged () ? "user.slice" : "system.slice";
  cleanup_free char *libpod
      = xasprintf ("/sys/fs/cgroup/%s/libpod-x.scope", slice);
  check_path (":libpod:x", slice, "libpod-x.scope", libpod);
  check_path ("user.slice::x", "user.slice", "x.scope",
              "/sys/fs/cgroup/user.slice/x.scope");
  cleanup_free char *own
      = xasprintf ("/sys/fs/cgroup/%s/agentrun-ctr1.scope", slice);
  check_path (NULL, slice, "agentrun-ctr1.scope", own);
  check_path ("-.slice:p:x", "-.slice", "p-x.scope",
              "/sys/fs/cgroup/p-x.scope");
}

static void
test_systemd_paths_refused (void)
{
  check_refused ("/plain/path", "slice:prefix:name");
  check_refused ("a:b", "slice:prefix:name");
  check_refused ("a.slice:b:c:d", "slice:prefix:name");
  check_refused ("system:docker:abc", "is not a slice name");
  check_refused ("a--b.slice:p:x", "is not a slice name");
  check_refused ("-a.slice:p:x", "is not a slice name");
  check_refused ("a-.slice:p:x", "is not a slice name");
  check_refused ("system.slice:p:", "non-empty");
  check_refused ("system.slice:p:a/b", "non-empty");
  check_refused ("system.slice:p/q:x", "non-empty");
  check_refused ("system.slice:p:pod.slice",
                 "a slice as the container's own unit");
}

static void
test_scope_names (void)
{
  CHECK (ar_cg_systemd_is_scope_name ("docker-abc.scope"));
  CHECK (ar_cg_systemd_is_scope_name ("cri-containerd-a_b:c@1.scope"));
  CHECK (!ar_cg_systemd_is_scope_name (".scope"));
  CHECK (!ar_cg_systemd_is_scope_name ("x.slice"));
  CHECK (!ar_cg_systemd_is_scope_name ("a/b.scope"));
  CHECK (!ar_cg_systemd_is_scope_name ("a b.scope"));
}

int
main (void)
{
  RUN (test_systemd_paths);
  RUN (test_systemd_paths_refused);
  RUN (test_scope_names);
  return unit_finish ();
}
