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

/* The same entries, in any order. */
static bool
same_entries (const oci_strv *a, const oci_strv *b)
{
  for (size_t i = 0; i < a->len; i++)
    if (!oci_strv_has (b, a->items[i]))
      return false;
  for (size_t i = 0; i < b->len; i++)
    if (!oci_strv_has (a, b->items[i]))
      return false;
  return true;
}

static char *
joined (const oci_strv *v)
{
  char *list = NULL;
  for (size_t i = 0; i < v->len; i++)
    xappend (&list, ",", v->items[i]);
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
check_entries (const char *annotation, const oci_strv *container,
               const oci_strv *pod, ar_error_t **err)
{
  if (same_entries (container, pod))
    return 0;
  cleanup_free char *c = joined (container);
  cleanup_free char *p = joined (pod);
  return differs (annotation, c, p, err);
}

/* A plan's allow entries as a string list (a view, not a copy). */
static oci_strv
allow_of (const ar_agent_plan *plan)
{
  return (oci_strv){ .items = plan->egress_allow, .len = plan->n_egress_allow };
}

int
ar_pod_check_egress (const ar_agent_plan *container, const ar_agent_plan *pod,
                     ar_error_t **err)
{
  if (container->egress != pod->egress)
    return differs ("egress", ar_egress_mode_name (container->egress),
                    ar_egress_mode_name (pod->egress), err);
  oci_strv container_allow = allow_of (container), pod_allow = allow_of (pod);
  return check_entries ("egress.allow", &container_allow, &pod_allow, err) < 0
             ? -1
             : check_entries ("ingress", &container->ingress, &pod->ingress,
                              err);
}
