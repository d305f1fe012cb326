#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What the egress controller adds to a sandbox's start:
#
#   bench/egress.sh [N]     (N runs of each, interleaved; default 15)
#
#   none       `agentrun sandbox` with egress none (a fresh netns with
#              lo only: no hook at all)
#   allowlist  the same with 20 --allow-net entries (12 addresses and
#              networks, 4 address:port, 4 domain names): veth, /30
#              lease, host NAT elements, the in-netns filter and the
#              per-container resolver
#
# The workload is `date +%s%N`: the time it prints, minus the time just
# before agentrun started, is the start (until the workload's first
# instruction); the whole run ends when agentrun has exited (delete
# included). Medians in milliseconds, and the differences. CPU: perf's
# task-clock of agentrun and what it forks (the resolver daemon and the
# kernel's deferred netns clean-up are not in it); on a loaded machine
# it is the steadier figure.
#
# GAP=SECONDS sleeps between runs, so that one run's netns teardown (the
# kernel does it in the background, after agentrun has exited) does not
# land in the next one's measurement.
# No packet leaves the sandbox during the run.
set -euo pipefail

N=${1:-15}
GAP=${GAP:-0}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
WORK=$(mktemp -d /tmp/agentrun-bench-egress.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

ALLOW=()
for i in $(seq 1 8); do ALLOW+=(--allow-net "198.51.100.$i"); done
for i in $(seq 1 4); do ALLOW+=(--allow-net "203.0.$((112 + i)).0/24"); done
for i in $(seq 1 4); do ALLOW+=(--allow-net "192.0.2.$((10 + i)):443"); done
ALLOW+=(--allow-net pypi.org --allow-net files.pythonhosted.org:443
	--allow-net '*.npmjs.org' --allow-net github.com:443)

sandbox() {
	"$AGENTRUN" --root "$WORK/root" sandbox --no-tty --workspace "$WORK" "$@" -- date +%s%N
}

# One run: "start_us total_us cpu_us". The times come from a run of its
# own: perf stat's set-up would be in them.
one() {
	local t0 started t1 cpu
	t0=$(date +%s%N)
	started=$(sandbox "$@")
	t1=$(date +%s%N)
	perf stat -x, -e task-clock -o "$WORK/perf" -- "$AGENTRUN" --root "$WORK/root" \
		sandbox --no-tty --workspace "$WORK" "$@" -- true
	cpu=$(awk -F, '/task-clock/ { printf "%d", $1 * 1000 }' "$WORK/perf")
	echo "$(((started - t0) / 1000)) $(((t1 - t0) / 1000)) $cpu"
}

# median COLUMN < runs: in milliseconds
median() { awk -v c="$1" '{ print $c }' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] / 1000 }'; }

# Warm the page cache and the seccomp cache first.
one >/dev/null
one "${ALLOW[@]}" >/dev/null
for _ in $(seq 1 "$N"); do
	one >>"$WORK/none"
	sleep "$GAP"
	one "${ALLOW[@]}" >>"$WORK/allowlist"
	sleep "$GAP"
done
printf 'sandbox with `date`, median of %d, interleaved, gap %ss (ms)\n' "$N" "$GAP"
printf '                      start    whole      cpu\n'
for kind in none allowlist; do
	printf '  %-14s %10.2f %8.2f %8.2f\n' "$kind" "$(median 1 <"$WORK/$kind")" \
		"$(median 2 <"$WORK/$kind")" "$(median 3 <"$WORK/$kind")"
done
diff() { echo "$(median "$1" <"$WORK/allowlist") - $(median "$1" <"$WORK/none")" | bc -l; }
printf '  added by egress  %7.2f %8.2f %8.2f\n' "$(diff 1)" "$(diff 2)" "$(diff 3)"
