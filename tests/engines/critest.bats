#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Kubernetes' CRI validation suite (critest) through tests/cri/critest.sh:
# a private containerd with handler runc, then agentrun, side by side.
# Fails when agentrun fails a test that runc passes. Skipped unless CRITEST
# names a critest build (crictl beside it): a fresh machine cannot fetch
# cri-tools, so CI's has none; .ci/run passes the one under
# /var/cache/agentrun-critest when a developer built it there.

load lib

@test "critest: every CRI validation test that passes under runc passes under agentrun" {
	[ -n "${CRITEST:-}" ] || skip "CRITEST is not set (a critest build: see docs/engines.md)"
	run timeout --kill-after=10 1800 env AGENTRUN="${AGENTRUN:-$ENG_TOP/agentrun}" \
		"$ENG_TOP/tests/cri/critest.sh" "$CRITEST"
	# critest.sh exits 0 when it cannot run (no critest, a missing tool):
	# that is a skip here, not a pass.
	if [[ "$output" == *"critest.sh: skipped:"* ]]; then
		skip "$(grep -m1 'critest.sh: skipped:' <<<"$output")"
	fi
	tail -n 12 <<<"$output" | sed 's/^/# /' >&3
	[ "$status" -eq 0 ] || fail "critest.sh exited $status"
}
