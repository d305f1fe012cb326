#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# An unprivileged sandbox against bubblewrap, as an ordinary user:
#
#   bench/rootless.sh [N] [ROUNDS]     (default 30 runs of each, 3 rounds)
#
#   agentrun  `agentrun sandbox --no-tty -- true` (the host's / under the
#             ephemeral overlay, workspace overlay, hidden paths, seccomp,
#             no network, the audit head; delete included)
#   pooled    `agentrun sandbox --pool bench --no-tty -- true`: the same
#             sandbox made ahead (`agentrun pool create bench --size 3`,
#             as the user, before the loop); each take starts a filler in
#             the background, whose work overlaps the commands after it
#   bwrap     `bwrap --unshare-all --ro-bind / / true` (Debian's
#             bubblewrap: a read-only bind of /, new namespaces)
#   floor     `unshare -rmpfinu true` (util-linux: the same namespaces and
#             nothing else, what any sandbox pays)
#
# Runs as BENCH_USER (default uid 1500) through setpriv, from a workspace
# of its own under a temp dir, with an XDG_RUNTIME_DIR there that is a
# tmpfs of the user's, mode 0700, as logind makes /run/user/UID on the
# users' hosts (on this machine's ext4 /tmp each state file agentrun
# writes costs about half a millisecond more); the commands
# alternate run by run. Wall time of each whole command (fork to exit),
# medians in milliseconds per round, and agentrun/bwrap per round.
set -euo pipefail

N=${1:-30}
ROUNDS=${2:-3}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
U=${BENCH_USER:-1500}
command -v bwrap >/dev/null || { echo "bench/rootless: no bwrap (apt-get install bubblewrap)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/agentrun-bench-rootless.XXXXXX)
as_user() {
	setpriv --reuid="$U" --regid="$U" --clear-groups \
		env XDG_RUNTIME_DIR="$WORK/xdg" HOME="$WORK" AGENTRUN="$AGENTRUN" "$@"
}
# A round cut short leaves its pool: its sandboxes go with it.
trap 'as_user "$AGENTRUN" pool rm bench >/dev/null 2>&1 || true; umount "$WORK/xdg" 2>/dev/null; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws" "$WORK/xdg"
chown -R "$U:$U" "$WORK"
mount -t tmpfs -o "mode=0700,uid=$U,gid=$U,size=64m" tmpfs "$WORK/xdg"
chmod 0711 "$WORK"

# One shell of the user's runs the interleaved loop and times each
# command with bash's $EPOCHREALTIME (no fork for a clock): what each line
# of "ms" holds is the command alone, fork to exit.
cat >"$WORK/loop.sh" <<'EOF2'
n=$1 out=$2; shift 2
ms() { local t0=$EPOCHREALTIME; "$@" >/dev/null 2>&1 || { echo "bench/rootless: failed: $*" >&2; exit 1; }
	local t1=$EPOCHREALTIME; echo $(( (${t1/./} - ${t0/./}) )); }
: >"$out.a"; : >"$out.b"; : >"$out.c"; : >"$out.p"
"$AGENTRUN" pool create bench --size 3 2>/dev/null || { echo "bench/rootless: pool create failed" >&2; exit 1; }
for i in $(seq 1 "$n"); do
	ms "$AGENTRUN" sandbox --no-tty -- true >>"$out.a"
	ms "$AGENTRUN" sandbox --pool bench --no-tty -- true >>"$out.p"
	ms bwrap --unshare-all --ro-bind / / true >>"$out.b"
	ms unshare -rmpfinu true >>"$out.c"
done
"$AGENTRUN" pool rm bench
EOF2
chmod 0755 "$WORK/loop.sh"

median() { sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f", m / 1000 }'; }

range() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.1f-%.1f", lo / 1000, hi / 1000 }'; }

echo "# $(date -u +%F) $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg), uid $U; $N runs each, interleaved, $ROUNDS rounds"
echo "# round  agentrun_ms  pooled_ms  bwrap_ms  floor_ms  agentrun/bwrap  pooled/bwrap  (medians; min-max of each)"
for r in $(seq 1 "$ROUNDS"); do
	(cd "$WORK/ws" && as_user bash "$WORK/loop.sh" "$N" "$WORK/ms")
	a=$(median <"$WORK/ms.a")
	p=$(median <"$WORK/ms.p")
	b=$(median <"$WORK/ms.b")
	c=$(median <"$WORK/ms.c")
	echo "$r $a $p $b $c $(awk -v a="$a" -v p="$p" -v b="$b" 'BEGIN { printf "%.2f %.2f", a / b, p / b }')" \
		" ($(range <"$WORK/ms.a") $(range <"$WORK/ms.p") $(range <"$WORK/ms.b") $(range <"$WORK/ms.c"))"
done
