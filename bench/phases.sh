#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Where a `run` and a `sandbox` spend their time, phase by phase, from
# agentrun's own --debug timings (no other runtime prints them):
#
#   bench/phases.sh [N]   (N of each, alternating; default 15)
#
#   run      `agentrun run` of the busybox `true` bundle (bench/lib.bash)
#   sandbox  `agentrun sandbox -- true` over the same rootfs (bench/run.sh's)
#
# Prints, per phase, the median in milliseconds of each and the
# difference. BENCH_STATE_TMPFS and BENCH_HOLD_CPUSET apply as in
# bench/run.sh. Timings of one process: they leave out its exec and
# dynamic start, which bench/run.sh's wall clock includes.
set -euo pipefail

N=${1:-15}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
WORK=$(mktemp -d /tmp/agentrun-bench-phases.XXXXXX)
# shellcheck source=bench/lib.bash
. "$TOP/bench/lib.bash"
# Only agentrun prints phases: the state root and clean-up are its alone.
# shellcheck disable=SC2034
RUNTIMES=(agentrun)
trap bench_cleanup EXIT
bench_prepare bench/phases.sh
mkdir -p "$WORK/ws"

# The "phase N.NN ms" pairs of one --debug timings line, one per line.
phases() {
	grep -o 'timings: .*' | sed 's/^timings: //; s/"$//; s/ ms (/ ms, /; s/)//' \
		| tr ',' '\n' | awk 'NF >= 2 { print $1, $2 }'
}

for i in $(seq 1 "$N"); do
	runtime_bin agentrun --root "$WORK/root-agentrun" --debug run -b "$WORK/bundle" "p$i" 2>&1 \
		</dev/null | phases >>"$WORK/run"
	runtime_bin agentrun --root "$WORK/root-agentrun" --debug sandbox --no-tty \
		--rootfs "$WORK/bundle/rootfs" --workspace "$WORK/ws" -- true 2>&1 </dev/null \
		| phases >>"$WORK/sandbox"
done

echo "# $(date -u +%F) $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); medians of $N, ms"
printf '%-12s %8s %8s %8s\n' phase run sandbox diff
awk '
	function median(list,   n, a, i, j, t) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return n == 0 ? 0 : (n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2)
	}
	FNR == 1 { file++ }
	# In the order of the sandbox, which has every phase of a run and more.
	{ if (file == 2 && !($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
	  v[file, $1] = v[file, $1] " " $2 }
	END { for (k = 1; k <= n; k++) { p = order[k]; r = median(v[1, p]); s = median(v[2, p])
	      printf "%-12s %8.2f %8.2f %8.2f\n", p, r, s, s - r } }
' "$WORK/run" "$WORK/sandbox"
