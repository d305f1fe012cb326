#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What --diff costs a sandbox on a large git repository:
#
#   bench/diff.sh [N] [ROUNDS] [FILES]   (default 30 runs, 3 rounds, 10000 files)
#   BENCH_REPO=DIR bench/diff.sh [N] [ROUNDS]
#
# A git repository of FILES small files (one commit) in a temp dir, or a
# clone of the repository DIR (its first tracked text file is the one
# changed; BENCH_BUILD=1 also builds it there, as a developer's checkout
# holds build outputs git ignores); from
# inside it, `agentrun sandbox` with a command that changes one line,
# with and without --diff, alternating run by run. Wall time of each
# whole command (fork to exit); medians in milliseconds per round and the
# difference. Needs root (the sandbox's overlays) and git.
set -euo pipefail

N=${1:-30}
ROUNDS=${2:-3}
FILES=${3:-10000}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
command -v git >/dev/null || { echo "bench/diff: no git (apt-get install git)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/agentrun-bench-diff.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

repo=$WORK/repo
target=d5/f5.txt
if [ -n "${BENCH_REPO:-}" ]; then
	git clone -q "$BENCH_REPO" "$repo"
	target=$(git -C "$repo" ls-files '*.md' | head -1)
	if [ "${BENCH_BUILD:-0}" = 1 ]; then
		(cd "$repo" && ./autogen.sh && ./configure && make -j"$(nproc)") >"$WORK/build.log" 2>&1 \
			|| { echo "bench/diff: the build failed: $WORK/build.log" >&2; exit 1; }
	fi
else
	mkdir -p "$repo"
	(cd "$repo" && for d in $(seq 0 99); do
		mkdir "d$d"
		for f in $(seq 0 $((FILES / 100 - 1))); do echo "file $d/$f" >"d$d/f$f.txt"; done
	done)
	git -C "$repo" init -q
	git -C "$repo" add -A
	git -C "$repo" -c user.name=bench -c user.email=bench@localhost commit -qm base
fi

ms() {
	local t0=$EPOCHREALTIME
	"$@" >/dev/null 2>&1 || { echo "bench/diff: failed: $*" >&2; exit 1; }
	local t1=$EPOCHREALTIME
	echo $(( ${t1/./} - ${t0/./} ))
}
median() { sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f", m / 1000 }'; }

change="echo change >>$target"
echo "# $(date -u +%F) $(uname -r), $(nproc) cpus; ${BENCH_REPO:-a generated repository}: $(git -C "$repo" ls-files | wc -l) tracked files, $(find "$repo" -path "$repo/.git" -prune -o -type f -print | wc -l) in all; $N runs each, interleaved, $ROUNDS rounds"
echo "# round  without_ms  with_diff_ms  diff_cost_ms"
cd "$repo"
for r in $(seq 1 "$ROUNDS"); do
	: >"$WORK/a"; : >"$WORK/b"
	for i in $(seq 1 "$N"); do
		ms "$AGENTRUN" --root "$WORK/state" sandbox --no-tty -- sh -c "$change" >>"$WORK/a"
		ms "$AGENTRUN" --root "$WORK/state" sandbox --no-tty --diff "$WORK/out.diff" -- sh -c "$change" >>"$WORK/b"
	done
	grep -q '^+change$' "$WORK/out.diff" || { echo "bench/diff: the diff lacks the change" >&2; exit 1; }
	a=$(median <"$WORK/a")
	b=$(median <"$WORK/b")
	echo "$r $a $b $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", b - a }')"
done
