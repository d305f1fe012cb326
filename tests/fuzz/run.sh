#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Run each libFuzzer target (tests/fuzz/fuzz_*, which `make` builds when
# configure found a compiler for -fsanitize=fuzzer) for SECONDS over its
# seeds in tests/fuzz/corpus/<target>, as many at once as there are
# CPUs, and end with one line "N passed, N failed". A target that
# crashes, leaks, times out on an input or was not built counts as
# failed; its crash input's path is printed and kept (under a temp dir,
# never in the tree).
#
#   tests/fuzz/run.sh [SECONDS]        (default 60)
#
# FUZZ_BIN_DIR: where the built targets are (default: tests/fuzz of this
# tree, as an in-tree build leaves them).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SECONDS_EACH=${1:-60}
BIN_DIR=${FUZZ_BIN_DIR:-$HERE}
TARGETS=(fuzz_oci fuzz_dns fuzz_egress_entry fuzz_policy fuzz_take_command fuzz_peek_name fuzz_egress_gate)
case $SECONDS_EACH in '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;; esac

WORK=$(mktemp -d /tmp/agentrun-fuzz.XXXXXX) || exit 1
passed=0
failed=0
keep=false

# run_target NAME: fuzz it in $WORK/NAME; 0 when it found nothing.
run_target() {
	local name=$1 dir=$WORK/$1 bin=$BIN_DIR/$1
	local -a dict=()
	if [ ! -x "$bin" ]; then
		echo "$name: not built (configure found no compiler for -fsanitize=fuzzer: install clang)"
		return 1
	fi
	mkdir -p "$dir/corpus" "$dir/crashes"
	[ -f "$HERE/$name.dict" ] && dict=("-dict=$HERE/$name.dict")
	# New inputs go to the first dir (the temp one); the seeds are read only.
	(cd "$dir" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 "$bin" "${dict[@]}" \
		-max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$dir/crashes/" "$dir/corpus" "$HERE/corpus/$name" >"$dir/log" 2>&1)
	local status=$? runs
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
	if [ "$status" -eq 0 ] && [ -z "$(ls -A "$dir/crashes")" ]; then
		echo "$name: ok, ${runs:-?} runs in ${SECONDS_EACH}s"
		return 0
	fi
	echo "$name: FAILED (exit $status): $(grep -m1 -E 'ERROR: |SUMMARY: |==[0-9]+==' "$dir/log")"
	local crash
	for crash in "$dir"/crashes/*; do
		[ -e "$crash" ] && echo "   input: $crash"
	done
	echo "   log: $dir/log"
	return 1
}

# The targets are single-threaded: as many at once as there are CPUs,
# each one's report printed whole when it ends.
JOBS=$(nproc 2>/dev/null || echo 1)
pids=()
for target in "${TARGETS[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
	(run_target "$target" >"$WORK/$target.report" 2>&1; echo $? >"$WORK/$target.status") &
	pids+=($!)
done
wait "${pids[@]}" 2>/dev/null
for target in "${TARGETS[@]}"; do
	cat "$WORK/$target.report"
	if [ "$(cat "$WORK/$target.status" 2>/dev/null)" = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		keep=true
	fi
done
if $keep; then
	echo "kept for the failures: $WORK"
else
	rm -rf "$WORK"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
