#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Runs last (zz_): the suite must leave the host as it found it. Each
# test's teardown records what the runtime left behind before removing it
# ($AR_BASE/leaks); this file reports those and then looks at the host
# itself for anything of this run: mounts, cgroups, state, processes.

load helpers

setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
}

teardown() {
	:
}

teardown_file() {
	:
}

@test "no test recorded a leak after delete --force" {
	[ -f "$AR_LEAKS" ] || skip "no other suite ran in this bats invocation"
	if [ -s "$AR_LEAKS" ]; then
		cat "$AR_LEAKS" >&2
		fail "$(wc -l <"$AR_LEAKS") leftovers after delete (listed above)"
	fi
}

@test "no mounts left under the test directories" {
	local left
	left=$(mounts_under "$AR_BASE"; grep -F "$AR_RUN" /proc/self/mountinfo || true)
	[ -z "$left" ] || fail "mounts left: $left"
}

@test "no container cgroups left, and the run's parent cgroups are removable" {
	local left
	left=$(find /sys/fs/cgroup -mindepth 1 -maxdepth 8 -type d -name "$AR_RUN-*" 2>/dev/null || true)
	[ -z "$left" ] || fail "cgroups left: $left"
	# Parents made by cgroupsPath /$AR_RUN/<id>: empty now, so rmdir works.
	left=$(ar_remove_run_cgroups)
	[ -z "$left" ] || fail "cannot remove: $left"
}

@test "no state dirs left" {
	local left
	left=$(find "$AR_BASE" -mindepth 1 -maxdepth 1 -name 't.*' 2>/dev/null || true)
	[ -z "$left" ] || fail "test dirs left: $left"
	local r
	for r in /run/agentrun /run/runc /run/crun; do
		[ -d "$r" ] || continue
		left=$(find "$r" -mindepth 1 -maxdepth 1 -name "$AR_RUN*" || true)
		[ -z "$left" ] || fail "state under the default root: $left"
	done
}

@test "no processes of this run left" {
	local pids p
	wait_no_pids "$AR_RUN" || true
	# And anything still running with the run's scratch dir on its command
	# line (a runtime, recvtty, unshare) that is not bats itself.
	pids=$({
		pids_matching "$AR_RUN"
		live_pids_of $(grep -lsF "$AR_BASE" /proc/[0-9]*/cmdline)
	} | sort -un | tr '\n' ' ')
	if [ -n "${pids// /}" ]; then
		for p in $pids; do
			echo "$p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" >&2
		done
		fail "processes left: $pids"
	fi
}
