/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "pod.h"
#include "policy_internal.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"

#include <string.h>

/* containerd's key first, then CRI-O's. */
static const char *
first_annotation (const oci_spec *spec, const char *containerd,
                  const char *crio)
{
  const char *value = oci_map_get (&spec->annotations, containerd);
  return value ? value : oci_map_get (&spec->annotations, crio);
}

const char *
ar_pod_container_type (const oci_spec *spec)
{
  return first_annotation (spec, "io.kubernetes.cri.container-type",
                           "io.kubernetes.cri-o.ContainerType");
}

bool
ar_pod_is_sandbox (const oci_spec *spec)
{
  const char *type = ar_pod_container_type (spec);
  return type && strcmp (type, "sandbox") == 0;
}

const char *
ar_pod_sandbox_id (const oci_spec *spec)
{
  const char *type = ar_pod_container_type (spec);
  if (type == NULL || strcmp (type, "container") != 0)
    return NULL;
  const char *id = first_annotation (spec, "io.kubernetes.cri.sandbox-id",
                                     "io.kubernetes.cri-o.SandboxID");
  return id && *id ? id : NULL;
}

static bool
contains (char *const *items, size_t n, const char *item)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (items[i], item) == 0)
      return true;
  return false;
}

/* The same entries, in any order. */
static bool
same_entries (char *const *a, size_t na, char *const *b, size_t nb)
{
  for (size_t i = 0; i < na; i++)
    if (!contains (b, nb, a[i]))
      return false;
  for (size_t i = 0; i < nb; i++)
    if (!contains (a, na, b[i]))
      return false;
  return true;
}

static char *
joined (char *const *items, size_t n)
{
  char *list = NULL;
  for (size_t i = 0; i < n; i++)
    xappend (&list, ",", items[i]);
  return list ? list : xstrdup ("");
}

static int
differs (const char *annotation, const char *container, const char *pod,
         ar_error_t **err)
{
  return ar_error_set (
      err, 0,
      "annotation run.agentrun.%s: the container asks for `%s`, its pod has `%s`: a "
      "pod's containers share its network namespace and the pod's egress "
      "filter; set it on the pod (containerd's pod_annotations pass it to "
      "every container)",
      annotation, container, pod);
}

static int
check_entries (const char *annotation, char *const *container, size_t nc,
               char *const *pod, size_t np, ar_error_t **err)
{
  if (same_entries (container, nc, pod, np))
    return 0;
  cleanup_free char *c = joined (container, nc);
  cleanup_free char *p = joined (pod, np);
  return differs (annotation, c, p, err);
}

int
ar_pod_check_egress (const ar_agent_plan *container, const ar_agent_plan *pod,
                     ar_error_t **err)
{
  if (container->egress != pod->egress)
    return differs ("egress", ar_egress_mode_name (container->egress),
                    ar_egress_mode_name (pod->egress), err);
  return check_entries ("egress.allow", container->egress_allow,
                        container->n_egress_allow, pod->egress_allow,
                        pod->n_egress_allow, err)
                 < 0
             ? -1
             : check_entries ("ingress", container->ingress.items,
                              container->ingress.len, pod->ingress.items,
                              pod->ingress.len, err);
}
