/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup v2 has no devices.allow/devices.deny: device access is decided by
 * an eBPF program (BPF_PROG_TYPE_CGROUP_DEVICE) attached to the cgroup.
 * This module turns linux.resources.devices into such a program with the
 * raw bpf() syscall (no libbpf). */
#ifndef AR_CORE_CGROUPS_DEVICES_BPF_H
#define AR_CORE_CGROUPS_DEVICES_BPF_H

#include "../../../oci/spec.h"
#include "../../util/error.h"
#include <linux/bpf.h>
#include <stddef.h>

/* Access bits as the kernel passes them in the high 16 bits of
 * bpf_cgroup_dev_ctx.access_type. */
#define AR_DEVBPF_MKNOD BPF_DEVCG_ACC_MKNOD
#define AR_DEVBPF_READ BPF_DEVCG_ACC_READ
#define AR_DEVBPF_WRITE BPF_DEVCG_ACC_WRITE

/* Compile the rules into instructions (malloc'd). Semantics are those of
 * the v1 list the rules would build: each access bit (r, w, m) of a
 * request is decided by the last rule that matches the device and names
 * that bit; a bit no rule decides is allowed (a fresh v1 cgroup inherits
 * "allow all"), so a leading deny-all makes the list an allowlist. */
int
ar_devices_bpf_build (const oci_device_rule *rules, size_t n_rules,
                      struct bpf_insn **out, size_t *n_out, ar_error_t **err);

/* BPF_PROG_LOAD as a cgroup device program; on a verifier rejection the
 * error ends with the verifier's last line. Returns the program fd. */
int
ar_devices_bpf_load (const struct bpf_insn *insns, size_t n, ar_error_t **err);

/* Build, load and attach (BPF_F_ALLOW_MULTI) the program to the cgroup
 * directory `dir`, then detach the programs attached there before, so an
 * update replaces the rules instead of adding to them. */
int ar_devices_bpf_apply (const char *dir, const oci_device_rule *rules,
                          size_t n_rules, ar_error_t **err);

#endif
