#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, as root, from a clean checkout:
#
#   tests/run.sh
#
# builds agentrun (CONFIGURE_ARGS are passed to ./configure), runs the C
# unit tests, builds the busybox test rootfs, runs every bats suite in
# tests/ (the engines' suites in tests/engines/ too when ENGINES=1), and
# ends with one line "N passed, N failed" counting every test (ENGINES=1
# adds Docker, Podman and containerd driving agentrun). Exits
# non-zero when any test failed.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
. tests/tap_count.bash
LOG_DIR=${LOG_DIR:-$TOP/tests/logs}
mkdir -p "$LOG_DIR"

passed=0
failed=0

count() { passed=$((passed + $1)); failed=$((failed + $2)); }

build() {
	echo "== build (${CONFIGURE_ARGS:-default})"
	[ -x configure ] || ./autogen.sh >"$LOG_DIR/autogen.log" 2>&1 || return 1
	# shellcheck disable=SC2086
	./configure ${CONFIGURE_ARGS:-} >"$LOG_DIR/configure.log" 2>&1 || { tail -20 "$LOG_DIR/configure.log"; return 1; }
	make -j"$(nproc)" >"$LOG_DIR/make.log" 2>&1 || { grep -E 'error|Error' "$LOG_DIR/make.log" | head -30; return 1; }
}

# Each unit program prints "N passed, N failed" as its last line. In a
# sanitizer build they also run with LeakSanitizer on (the runtime's own
# runs cannot: LSan stops the world through /proc, which a process that
# joined a container's namespaces no longer sees), and a program whose
# checks passed but that exited non-zero (a leak report) counts as a
# failure.
unit_tests() {
	echo "== unit tests"
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1" \
		make -j"$(nproc)" check >"$LOG_DIR/check.log" 2>&1
	local log line p f
	for log in tests/unit/*.log; do
		line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
		if [ -z "$line" ]; then
			echo "   $(basename "$log" .log): no summary (crashed?)"
			count 0 1
			continue
		fi
		p=${line%% passed*}
		f=${line#*, }; f=${f%% failed*}
		if [ "$f" = 0 ] && ! grep -q '^:test-result: PASS' "${log%.log}.trs"; then
			echo "   $(basename "$log" .log): $line, but it exited non-zero:"
			grep -E 'ERROR: LeakSanitizer|SUMMARY: ' "$log" | head -3 | sed 's/^/      /'
			f=1
		else
			echo "   $(basename "$log" .log): $line"
		fi
		count "$p" "$f"
	done
}

# bats --tap prints "ok N ..." / "not ok N ..." per test. Arguments name
# a subset (tests/run.sh lifecycle cli); zz_cleanup.bats always runs last.
bats_suites() {
	local files=() f
	if [ $# -gt 0 ]; then
		for f in "$@"; do
			f=${f#tests/}; f=${f%.bats}
			[ -f "tests/$f.bats" ] || { echo "no tests/$f.bats"; count 0 1; return; }
			files+=("tests/$f.bats")
		done
		files+=(tests/zz_cleanup.bats)
	else
		files=(tests/*.bats)
		[ "${ENGINES:-0}" = 1 ] && files+=(tests/engines/*.bats)
	fi
	# zz_cleanup.bats checks the host after everything else: run it last.
	local ordered=()
	for f in "${files[@]}"; do [[ $f == */zz_* ]] || ordered+=("$f"); done
	for f in "${files[@]}"; do [[ $f == */zz_* ]] && ordered+=("$f"); done
	echo "== bats: ${ordered[*]}"
	export AGENTRUN_TEST_RUN=${AGENTRUN_TEST_RUN:-agentrun-test-$(head -c4 /dev/urandom | od -An -tx1 | tr -d ' \n')}
	# No stdin (a container reading it gets EOF), and a bound on the whole
	# run so a hung runtime cannot stall CI.
	timeout -k 10 "${SUITE_TIMEOUT:-1500}" bats --tap "${ordered[@]}" </dev/null 2>&1 | tee "$LOG_DIR/bats.tap"
	tap_count "$LOG_DIR/bats.tap"
	count "$TAP_PASSED" "$TAP_FAILED"
}

if ! build; then
	echo "build failed"
	echo "0 passed, 1 failed"
	exit 1
fi
unit_tests
images/busybox.sh >"$LOG_DIR/busybox.log" 2>&1 || { echo "busybox rootfs failed"; count 0 1; }
# The id ranges a sandbox's user namespace is leased from, as make install
# gives them.
if [ "$(id -u)" = 0 ]; then
	contrib/agentrun-ids.sh >"$LOG_DIR/ids.log" 2>&1 || { echo "agentrun-ids failed"; cat "$LOG_DIR/ids.log"; count 0 1; }
fi
bats_suites "$@"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
