#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Inside the test VM, from the copied tree (tests/vm/run.sh starts it): run
# the bats suites named as arguments and end with "N passed, N failed".
#
#   tests/vm/guest-suites.sh SUITE...
#
# Emulated (TCG), a bats run keeps one vCPU busy and leaves the other
# idle, so Docker's, containerd's and the CRI suites (~10 s a container
# there) run beside the rest (both Podmans' among them, for balance), as
# two bats runs at once that take about as long as each other (~25 min
# each beside CI's host stages). Each has its own run prefix and scratch
# dir, so one's checks for leftovers never see the other's containers, and
# zz_cleanup.bats checks each once both are done. The engines' suites
# share nothing with the rest that a test counts: their containers run
# under the engines' own units, with their own names (rootless Podman,
# which shares the test user with the rootless sandbox suites, runs in
# the same bats run as they do, one after the other). Lines are prefixed
# with the run's name.
#
# Environment: SUITE_TIMEOUT bounds each run in seconds (default 1260; tests/vm/run.sh gives VM_TIMEOUT - 300).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

. tests/tap_count.bash
passed=0
failed=0
count() {
	echo "$1:"
	tap_count "$1"
	passed=$((passed + TAP_PASSED))
	failed=$((failed + TAP_FAILED))
}

# run_bats NAME FILE...: one bats run of its own (prefix, scratch dir),
# its TAP in $OUT/NAME.tap, its lines on stdout prefixed with [NAME].
run_bats() {
	local name=$1
	shift
	mkdir -p "$OUT/$name.base"
	AGENTRUN_TEST_RUN=agentrun-test-vm$$-$name AGENTRUN_TEST_BASE=$OUT/$name.base \
		timeout -k 10 "${SUITE_TIMEOUT:-1260}" bats --tap --timing "$@" </dev/null 2>&1 \
		| tee "$OUT/$name.tap" | sed -u "s/^/[$name] /"
}

engines=()
others=()
alone=()
for s in "$@"; do
	f=tests/$s.bats
	[ -f "$f" ] || { echo "no $f"; failed=$((failed + 1)); continue; }
	case $s in
	# Balanced by time (CI at ee29a59, 2026-12-02, beside the host's
	# stages, tests' own times: engines 2007 s, CRI ~1180 s of it, the
	# rest with both Podmans 1690 s; Docker's tests that no host kind
	# changes, ~200 s, then went to the host only). Rootless Podman goes
	# with the rootless sandbox suites, whose user it shares; rootful
	# Podman with them too, for balance.
	engines/docker | engines/containerd | engines/cri) engines+=("$f") ;;
	# The host's firewall changes under it (dockerd's FORWARD policy):
	# nothing else runs meanwhile.
	egress_firewall) alone+=("$f") ;;
	*) others+=("$f") ;;
	esac
done

# The id ranges a sandbox's user namespace is leased from, as make install
# gives them.
contrib/agentrun-ids.sh >/dev/null || { echo "agentrun-ids failed"; failed=$((failed + 1)); }

# Two levels below /tmp, as every suite's scratch must be.
# Searchable by the ids a user namespace maps, as bats's own run dir is made.
OUT=$(mktemp -d /tmp/agentrun-vm.XXXXXX) && chmod 0711 "$OUT" || exit 1
runs=()
[ ${#engines[@]} -eq 0 ] || { run_bats engines "${engines[@]}" & runs+=(engines); }
[ ${#others[@]} -eq 0 ] || { run_bats rest "${others[@]}" & runs+=(rest); }
wait
[ ${#alone[@]} -eq 0 ] || { run_bats alone "${alone[@]}"; runs+=(alone); }
for r in "${runs[@]}"; do
	AGENTRUN_TEST_RUN=agentrun-test-vm$$-$r AGENTRUN_TEST_BASE=$OUT/$r.base \
		bats --tap tests/zz_cleanup.bats </dev/null 2>&1 | tee "$OUT/$r-cleanup.tap" | sed "s/^/[$r cleanup] /"
done
for r in "${runs[@]}"; do
	count "$OUT/$r.tap"
	count "$OUT/$r-cleanup.tap"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
