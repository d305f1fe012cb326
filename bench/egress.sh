#!/bin/bash
# What the egress controller adds to a sandbox's start:
#
#   bench/egress.sh [N]     (N runs of each, interleaved; default 15)
#
#   none       `agentrun sandbox -- true` (egress none: a fresh netns with
#              lo, no hook at all)
#   allowlist  the same with 20 --allow-net entries (16 CIDRs and
#              addresses, 4 domain names: veth, /30 lease, host NAT table,
#              in-netns filter and the per-container resolver)
#
# Prints the median wall and CPU time of each (milliseconds) and the
# differences.
# `true` sends nothing: no packet leaves the sandbox during the run.
set -euo pipefail

N=${1:-15}
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

# One run: "wall_us cpu_us" (CPU: perf's task-clock of agentrun and the
# hooks it runs; the resolver daemon and the kernel's deferred netns
# clean-up are not in it). On a loaded machine the CPU figure is the
# steadier one.
one() {
	local t0 t1 cpu
	t0=$(date +%s%N)
	cpu=$(perf stat -x, -e task-clock -- "$AGENTRUN" --root "$WORK/root" sandbox --no-tty \
		--workspace "$WORK" "$@" -- true 2>&1 >/dev/null | awk -F, '/task-clock/ { print $1 }')
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000)) $(echo "$cpu" | awk '{ printf "%d", $1 * 1000 }')"
}

# median COLUMN < runs: in milliseconds
median() { awk -v c="$1" '{ print $c }' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] / 1000 }'; }

# Warm the page cache and the seccomp cache first.
one >/dev/null
one "${ALLOW[@]}" >/dev/null
for _ in $(seq 1 "$N"); do
	one >>"$WORK/none"
	one "${ALLOW[@]}" >>"$WORK/allowlist"
done
printf 'sandbox start+true, median of %d, interleaved (ms)\n' "$N"
printf '                         wall      cpu\n'
for kind in none allowlist; do
	printf '  %-20s %8.2f %8.2f\n' "$kind" "$(median 1 <"$WORK/$kind")" "$(median 2 <"$WORK/$kind")"
done
printf '  added by the egress controller: %.2f ms wall, %.2f ms cpu\n' \
	"$(echo "$(median 1 <"$WORK/allowlist") - $(median 1 <"$WORK/none")" | bc -l)" \
	"$(echo "$(median 2 <"$WORK/allowlist") - $(median 2 <"$WORK/none")" | bc -l)"
