#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Many containers started at once, agentrun against crun (and runc where
# installed), as root:
#
#   bench/concurrent.sh [COUNTS] [ROUNDS]   (default "50 200", 3 rounds)
#
# For each COUNT, each runtime in turn starts COUNT `RUNTIME run` of the
# same busybox `true` bundle (bench/lib.bash) all at once, each with its
# own id, and waits for them all. BENCH_START=forked (the default, the
# figures in docs/) starts each as the loop forks it: each is timed from
# its fork to its exit (bash's own clock), the batch from the first fork
# to the last exit. BENCH_START=together forks all COUNT shells first,
# blocked on one pipe, and releases them with one write: each is timed
# from its release, the batch from that write. Prints per round and
# runtime the p50 and p99 of the single ones in milliseconds, the batch's
# time and its throughput (containers per second), the whole machine's
# CPU time per container, in user and in kernel mode, from the batch's
# start until the machine is quiet again after it (/proc/stat: every
# process's and kernel thread's, so the kernel's deferred clean-up and the
# bench's shells too), and agentrun's throughput over crun's. Each batch
# starts on a quiet machine (settle, bench/lib.bash): the first after the
# set-up, each next after the last one's clean-up. The runtimes take
# turns in a different order each round.
set -euo pipefail

COUNTS=${1:-50 200}
START=${BENCH_START:-forked}
case $START in together | forked) ;; *) echo "BENCH_START: together or forked, not $START" >&2; exit 2 ;; esac
ROUNDS=${2:-3}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
WORK=$(mktemp -d /tmp/agentrun-bench-concurrent.XXXXXX)
# shellcheck source=bench/lib.bash
. "$TOP/bench/lib.bash"
trap bench_cleanup EXIT

# One container, timed alone: its microseconds appended to $2.
one() {
	local rt=$1 out=$2 id=$3 t0 t1
	t0=$EPOCHREALTIME
	runtime_bin "$rt" --root "$WORK/root-$rt" run -b "$WORK/bundle" "$id" >/dev/null 2>&1 </dev/null \
		|| echo "bench/concurrent: $rt run $id failed" >&2
	t1=$EPOCHREALTIME
	echo $((${t1/./} - ${t0/./})) >>"$out"
}

# batch RUNTIME COUNT ROUND: "P50 P99 BATCH_MS PER_SECOND USER_MS SYS_MS"
batch() {
	local rt=$1 n=$2 r=$3 out=$WORK/one-$1-$2-$3 i t0 t1 go lines u0 s0 u1 s1
	: >"$out"
	read -r u0 s0 _ < <(cpu_ticks)
	if [ "$START" = forked ]; then
		t0=$EPOCHREALTIME
		for i in $(seq 1 "$n"); do
			one "$rt" "$out" "c$r-$n-$i" &
		done
	else
		rm -f "$WORK/go"
		mkfifo "$WORK/go"
		exec {go}<>"$WORK/go"
		# bash reads a pipe a byte at a time: one line releases one shell.
		for i in $(seq 1 "$n"); do
			{ read -r -u "$go" _ && exec {go}>&- && one "$rt" "$out" "c$r-$n-$i"; } &
		done
		printf -v lines '%*s' "$n" ''
		t0=$EPOCHREALTIME
		printf '%s' "${lines// /$'\n'}" >&"$go"
	fi
	wait
	t1=$EPOCHREALTIME
	# Until the kernel's clean-up is done: it counts, and the next batch
	# starts on a quiet machine.
	settle
	read -r u1 s1 _ < <(cpu_ticks)
	[ "$START" = forked ] || exec {go}>&-
	local batch_us=$((${t1/./} - ${t0/./}))
	sort -n "$out" | awk -v n="$n" -v b="$batch_us" -v hz="$(getconf CLK_TCK)" \
		-v user=$((u1 - u0)) -v sys=$((s1 - s0)) '{ v[NR] = $1 }
		END { if (NR != n) { print "missing " n - NR; exit 1 }
		      printf "%.1f %.1f %.0f %.1f %.2f %.2f", v[int((NR + 1) / 2)] / 1000, v[int(NR * 0.99 + 0.999)] / 1000,
		             b / 1000, n / (b / 1e6), user * 1000 / hz / n, sys * 1000 / hz / n }'
}

main() {
	bench_prepare bench/concurrent.sh
	settle
	echo "# $(date -u +%F) start $START; cgroup driver ${BENCH_CGROUP_DRIVER:-cgroupfs}; $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); $(crun --version | head -1); $ROUNDS rounds"
	echo "# count round runtime  p50_ms p99_ms batch_ms per_second user_ms sys_ms (CPU per container)"
	local n r rt order line a c
	for n in $COUNTS; do
		for r in $(seq 1 "$ROUNDS"); do
			order=("${RUNTIMES[@]}")
			# Turn the order round by round: nobody always goes first.
			local k
			for k in $(seq 2 "$r"); do
				order=("${order[@]:1}" "${order[0]}")
			done
			for rt in "${order[@]}"; do
				line=$(batch "$rt" "$n" "$r")
				echo "$n $r $rt  $line"
				echo "$line" >"$WORK/line-$rt"
			done
			a=$(cut -d' ' -f4 "$WORK/line-agentrun")
			c=$(cut -d' ' -f4 "$WORK/line-crun")
			echo "$n $r throughput agentrun/crun $(echo "scale=2; $a / $c" | bc)"
		done
	done
	echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
}

main "$@"
