#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The OCI runtime-tools validation suite against agentrun, through
# tests/conformance.sh. Skipped unless RUNTIME_TOOLS_DIR points at a
# runtime-tools checkout where `make runtimetest validation-executables`
# has been run (it is never built from here). Fails when a validation
# fails in a way tests/conformance-known-failures.txt does not list. On the
# test VM (systemd, cgroup v2) it runs with the systemd driver, the one
# Docker, Podman and the kubelet use there, and with the cgroupfs driver
# too when AR_CONFORMANCE_CGROUPFS=1 (CI's time budget leaves it out; the
# host's run covers that driver's code on cgroup v1). The entries for that
# host were measured against crun there (tests/conformance_compare.sh).

load helpers

setup() {
	[ -n "${RUNTIME_TOOLS_DIR:-}" ] || skip "RUNTIME_TOOLS_DIR is not set"
	[ -x "$RUNTIME_TOOLS_DIR/runtimetest" ] || skip "no runtimetest in $RUNTIME_TOOLS_DIR"
	[ "$(id -u)" -eq 0 ] || skip "the validations run real containers: run as root"
}

@test "runtime-tools validation suite: no failure beyond the known list" {
	[ "${AR_CONFORMANCE_CGROUPFS:-1}" = 1 ] || skip "the cgroupfs driver's run is left out here (AR_CONFORMANCE_CGROUPFS=1 runs it)"
	run timeout 3600 "$AR_TOP/tests/conformance.sh" --check
	echo "$output" | grep '^#' >&3 || true
	[ "$status" -eq 0 ] || fail "unexpected validation failures"
}

@test "runtime-tools validation suite, systemd cgroup driver: no failure beyond the known list" {
	[ -d /run/systemd/system ] && is_cgroup_v2_only || skip "needs systemd and cgroup v2 (the test VM, tests/vm/)"
	run timeout 3600 "$AR_TOP/tests/conformance.sh" --check --systemd-cgroup
	echo "$output" | grep '^#' >&3 || true
	[ "$status" -eq 0 ] || fail "unexpected validation failures"
}
