#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What the name gate (hooks/egress_gate.c) costs an allowed connection,
# as root:
#
#   bench/name_gate.sh A B [N] [ROUNDS] [MB]   (default 30, 3 rounds, 100 MB)
#
# A and B are `agentrun` programs (say, a build before the gate and one
# with it). A test host in a network namespace of the bench's own serves
# HTTP (busybox httpd: a small page and an MB-megabyte file) under the
# name bench.test (its dnsmasq answers it); no packet goes anywhere else.
# Per round, one sandbox of A and one of B (`--allow-net bench.test`,
# taking turns at going first) each fetch the page N times with curl,
# each time on a new connection, then the file BENCH_DOWNLOADS times
# (default 5). Prints per round the medians (min-max) of the time to the
# first byte (curl's time_starttransfer) in milliseconds and of the
# downloads' rates in MB/s, with B-A and B/A. BENCH_RATE=RATE (tc's, say 1gbit) shapes the test
# host's link to that rate, as a real network is; unshaped, a download
# over the local veth is bound by the CPU alone.
set -euo pipefail

A=${1:?usage: bench/name_gate.sh A B [N] [ROUNDS] [MB]}
B=${2:?usage: bench/name_gate.sh A B [N] [ROUNDS] [MB]}
N=${3:-30}
ROUNDS=${4:-3}
MB=${5:-100}
DOWNLOADS=${BENCH_DOWNLOADS:-5}
[ "$(id -u)" = 0 ] || { echo "bench/name_gate.sh: run as root" >&2; exit 1; }
for tool in dnsmasq curl busybox ip nsenter; do
	command -v "$tool" >/dev/null || { echo "bench/name_gate.sh: $tool is not installed" >&2; exit 1; }
done
WORK=$(mktemp -d /tmp/agentrun-bench-gate.XXXXXX)
NET=10.251.99
LINK=agb$$
HOST_PID=""
cleanup() {
	[ -n "$HOST_PID" ] && kill -KILL "$HOST_PID" 2>/dev/null
	local p
	for p in $(pgrep -f "$WORK" || true); do kill -KILL "$p" 2>/dev/null || true; done
	ip link del "$LINK" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/www" "$WORK/ws" "$WORK/config/profiles" "$WORK/root"
chmod 0755 "$WORK" "$WORK/ws"
echo "a small page" >"$WORK/www/page.html"
head -c "$((MB * 1048576))" /dev/zero >"$WORK/www/file.bin"
unshare -n sh -c 'echo $$ >"$1"; exec sleep 36000' sh "$WORK/host.pid" &
for _ in $(seq 1 50); do [ -s "$WORK/host.pid" ] && break; sleep 0.05; done
HOST_PID=$(cat "$WORK/host.pid")
in_host() { nsenter -t "$HOST_PID" -n "$@"; }
ip link add "$LINK" type veth peer name eth0 netns "$HOST_PID"
ip addr add "$NET.1/24" dev "$LINK"
ip link set "$LINK" up
in_host ip link set lo up
in_host ip addr add "$NET.2/24" dev eth0
in_host ip link set eth0 up
if [ -n "${BENCH_RATE:-}" ]; then
	in_host tc qdisc add dev eth0 root tbf rate "$BENCH_RATE" burst 1mb latency 50ms
fi
in_host busybox httpd -p "$NET.2:80" -h "$WORK/www"
in_host dnsmasq -C /dev/null --no-resolv --no-hosts --bind-interfaces \
	--listen-address="$NET.2" --port=53 --pid-file="$WORK/dnsmasq.pid" \
	--address=/bench.test/"$NET.2"
echo "{\"extends\": \"agent\", \"network\": {\"upstream\": \"$NET.2\"}}" \
	>"$WORK/config/profiles/bench.json"
for _ in $(seq 1 50); do
	in_host sh -c "exec 3<>/dev/tcp/$NET.2/80" 2>/dev/null && break
	sleep 0.1
done

# fetch BIN: one sandbox; a line "first MS" per page fetch, "rate MB/S" per download of the file.
fetch() {
	(cd "$WORK/ws" && AGENTRUN_CONFIG_DIR=$WORK/config "$1" --root "$WORK/root" --profile bench \
		sandbox --no-tty --allow-net bench.test -- bash -c '
		getent hosts bench.test >/dev/null
		for i in $(seq 1 '"$N"'); do
			curl -s -o /dev/null -w "first %{time_starttransfer}\n" http://bench.test/page.html
		done
		for i in $(seq 1 '"$DOWNLOADS"'); do
			curl -s -o /dev/null -w "rate %{speed_download}\n" http://bench.test/file.bin
		done' </dev/null)
}

stats() { # KEY SCALE FILE: median (min-max) of KEY's values times SCALE
	awk -v k="$1" -v s="$2" '$1 == k { print $2 * s }' "$3" | sort -g | awk '
		{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.3f %.3f %.3f\n", m, v[1], v[NR] }'
}

echo "# $(date -u +%F) $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); $N fetches a round, $ROUNDS rounds, ${MB} MB file $DOWNLOADS times, link ${BENCH_RATE:-unshaped}"
echo "# A $A"
echo "# B $B"
for round in $(seq 1 "$ROUNDS"); do
	if [ $((round % 2)) = 1 ]; then
		fetch "$A" >"$WORK/a.$round"; fetch "$B" >"$WORK/b.$round"
	else
		fetch "$B" >"$WORK/b.$round"; fetch "$A" >"$WORK/a.$round"
	fi
	read -r fa fa_lo fa_hi < <(stats first 1000 "$WORK/a.$round")
	read -r fb fb_lo fb_hi < <(stats first 1000 "$WORK/b.$round")
	read -r ra ra_lo ra_hi < <(stats rate 0.00000095367431640625 "$WORK/a.$round")
	read -r rb rb_lo rb_hi < <(stats rate 0.00000095367431640625 "$WORK/b.$round")
	awk -v r="$round" -v fa="$fa" -v fal="$fa_lo" -v fah="$fa_hi" -v fb="$fb" -v fbl="$fb_lo" \
		-v fbh="$fb_hi" -v ra="$ra" -v rb="$rb" -v ral="$ra_lo" -v rah="$ra_hi" -v rbl="$rb_lo" -v rbh="$rb_hi" 'BEGIN {
		printf "%d first byte  A %.2f (%.2f-%.2f)  B %.2f (%.2f-%.2f)  B-A %+.2f ms\n", r, fa, fal, fah, fb, fbl, fbh, fb - fa
		printf "%d download    A %.0f (%.0f-%.0f)  B %.0f (%.0f-%.0f) MB/s  B/A %.2f\n", r, ra, ral, rah, rb, rbl, rbh, rb / ra }'
done
