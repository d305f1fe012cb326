#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Run the OCI runtime-tools validation suite against a runtime and print a
# TAP summary.
#
#   RUNTIME_TOOLS_DIR=/path/to/built/runtime-tools tests/conformance.sh \
#       [--check] [--out DIR] [VALIDATION...]
#
# RUNTIME_TOOLS_DIR is a checkout of github.com/opencontainers/runtime-tools
# where `make runtimetest validation-executables` has already been run; this
# script never builds it. RUNTIME is the runtime under test (default: the
# agentrun at the top of this tree). VALIDATIONs are names such as `killsig`
# (default: every validation/*/*.t).
#
# --check  compare with tests/conformance-known-failures.txt and exit 1 if a
#          validation fails in a way not listed there. A validation with an
#          unlisted failure is run again up to CONFORMANCE_RETRIES times
#          (default 1) first: killsig races the program's own trap set-up.
# --out    keep each validation's TAP output and stderr in DIR.
# --systemd-cgroup  run the runtime with that global flag (the systemd
#          cgroup driver); entries marked [systemd] in the known list apply.
#
# The suite runs containers under the runtime's default --root with random
# ids, makes its bundles under TMPDIR and cgroups named cgrouptest and
# testdir/cgrouptest. All of it lives under one temp dir here, and whatever
# a failing validation leaves behind is removed at the end.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
RUNTIME=${RUNTIME:-$top/agentrun}
retries=${CONFORMANCE_RETRIES:-1}
per_test_timeout=${CONFORMANCE_TIMEOUT:-300}
known=$top/tests/conformance-known-failures.txt
check=false
out=""
driver=cgroupfs

while [ $# -gt 0 ]; do
	case $1 in
	--check) check=true; shift ;;
	--out) out=$2; shift 2 ;;
	--systemd-cgroup) driver=systemd; shift ;;
	--) shift; break ;;
	-*) echo "conformance.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done

die() { echo "conformance.sh: $*" >&2; exit 2; }

[ -n "${RUNTIME_TOOLS_DIR:-}" ] || die "set RUNTIME_TOOLS_DIR to a built runtime-tools checkout"
rt=$(cd "$RUNTIME_TOOLS_DIR" && pwd)
[ -x "$rt/runtimetest" ] || die "$rt/runtimetest missing: run 'make runtimetest validation-executables' there"
RUNTIME=$(command -v "$RUNTIME") || die "runtime not found"
[ "$(id -u)" -eq 0 ] || die "the validations run real containers: run as root"

if [ $# -gt 0 ]; then
	names=("$@")
else
	names=()
	for t in "$rt"/validation/*/*.t; do
		names+=("$(basename "$t" .t)")
	done
fi
[ ${#names[@]} -gt 0 ] || die "no validation executables under $rt/validation"

work=$(mktemp -d "${TMPDIR:-/tmp}/conformance.XXXXXX")
[ -n "$out" ] || out=$work/out
mkdir -p "$out" "$work/tmp"
# The validations take a runtime path only: the driver flag goes in a
# wrapper.
if [ "$driver" = systemd ]; then
	printf '#!/bin/sh\nexec %q --systemd-cgroup "$@"\n' "$RUNTIME" >"$work/runtime"
	chmod 755 "$work/runtime"
	RUNTIME=$work/runtime
fi
# mktemp's 0700 would keep out a container whose root is mapped to another
# host uid (linux_uid_mappings, linux_ns_nopath).
chmod 0755 "$work" "$work/tmp"

# ------------------------------------------------------------ cleanup

# The cgroups the suite's configs name, absolute and relative to our own
# cgroup, in every mounted hierarchy; deepest first.
suite_cgroups() {
	local mnt ctl own rel
	while read -r mnt ctl; do
		own=$(awk -F: -v c="$ctl" '$2 == c { print $3; exit }' /proc/self/cgroup)
		for rel in testdir/cgrouptest/container testdir/cgrouptest testdir cgrouptest; do
			echo "$mnt/$rel"
			[ -n "$own" ] && [ "$own" != / ] && echo "$mnt$own/$rel"
		done
	done < <(cgroup_mounts)
}

# "MOUNTPOINT CONTROLLERS" per cgroup mount (CONTROLLERS as in
# /proc/self/cgroup: "cpu,cpuacct", "name=systemd", empty for cgroup2).
cgroup_mounts() {
	awk '{
		split($0, a, " - "); split(a[1], g, " "); split(a[2], f, " ");
		if (f[1] == "cgroup2") { print g[5]; next }
		if (f[1] != "cgroup") next;
		n = split(f[3], o, ","); ctl = "";
		for (i = 1; i <= n; i++)
			if (o[i] !~ /^(rw|ro|nosuid|nodev|noexec|relatime|clone_children|xattr|noprefix|cpuset_v2_mode|release_agent=.*)$/)
				ctl = (ctl == "" ? o[i] : ctl "," o[i]);
		print g[5], ctl }' /proc/self/mountinfo
}

suite_cgroups | while read -r d; do [ -d "$d" ] && echo "$d"; done | sort -u >"$work/cgroups.before" || true
"$RUNTIME" list -q 2>/dev/null | sort >"$work/containers.before" || true

cleanup() {
	local id m d
	# Containers the suite left behind (a validation that died midway).
	for id in $(comm -13 "$work/containers.before" <("$RUNTIME" list -q 2>/dev/null | sort) 2>/dev/null); do
		"$RUNTIME" delete --force "$id" >/dev/null 2>&1 || true
	done
	# Mounts under our temp dir: a rootfsPropagation=shared validation
	# lets the container's mounts propagate back into this namespace.
	for m in $(awk -v d="$work" 'index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	for d in $(suite_cgroups | sort -ru); do
		[ -d "$d" ] && ! grep -qxF "$d" "$work/cgroups.before" && rmdir "$d" 2>/dev/null || true
	done
	if [ "$out" = "$work/out" ]; then
		rm -rf --one-file-system "$work"
	else
		rm -rf --one-file-system "$work/tmp" "$work/cgroups.before" "$work/containers.before"
		rmdir "$work" 2>/dev/null || true
	fi
}
trap cleanup EXIT

# ------------------------------------------------------------ known failures

# A hugetlb hierarchy a container's cgroup gets the controller from: v1,
# or a cgroup2 root that passes it down (cgroup.subtree_control).
host_has_hugetlb() {
	cgroup_mounts | awk '$2 ~ /(^|,)hugetlb(,|$)/ { f = 1 } END { exit !f }' \
		|| grep -qsw hugetlb /sys/fs/cgroup/cgroup.subtree_control \
		|| grep -qsw hugetlb /sys/fs/cgroup/unified/cgroup.subtree_control
}

is_v2_only() {
	[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]
}

# Lines "[cond] NAME | DESCRIPTION-GLOB | reason"; cond is optional:
# [no-hugetlb] applies only when this host has no hugetlb hierarchy;
# [v2] only on a cgroup v2-only host, [v1] only on a v1 or hybrid one;
# [systemd] only with --systemd-cgroup.
known_patterns() {
	local line cond name glob
	[ -f "$known" ] || return 0
	while IFS= read -r line; do
		[[ "$line" =~ ^[[:space:]]*(#|$) ]] && continue
		cond=""
		if [[ "$line" =~ ^\[([a-z0-9-]+)\][[:space:]]*(.*)$ ]]; then
			cond=${BASH_REMATCH[1]}
			line=${BASH_REMATCH[2]}
		fi
		case $cond in
		"") ;;
		no-hugetlb) host_has_hugetlb && continue ;;
		v2) is_v2_only || continue ;;
		v1) is_v2_only && continue ;;
		systemd) [ "$driver" = systemd ] || continue ;;
		*) continue ;;
		esac
		name=$(sed 's/[[:space:]]*|.*//' <<<"$line")
		glob=$(awk -F' [|] ' '{ print $2 }' <<<"$line")
		printf '%s\t%s\n' "$name" "$glob"
	done <"$known"
}

# failures NAME: one line per failed check, "NAME: description"; a
# validation that stopped without reporting a failure (util.Fatal) shows
# as "NAME: exit status N".
failures() {
	local n=$1 rc
	sed -n 's/^not ok [0-9]* *-* *//p' "$out/$n.tap" | sed "s|^|$n: |"
	rc=$(cat "$out/$n.rc")
	if [ "$rc" != 0 ] && ! grep -q '^not ok' "$out/$n.tap"; then
		echo "$n: exit status $rc"
	fi
}

is_known() {
	local name=$1 desc=$2 kn kg
	while IFS=$'\t' read -r kn kg; do
		# shellcheck disable=SC2053 # the name and the description are globs
		[[ "$name" == $kn ]] && [[ "$desc" == $kg ]] && return 0
	done < <(known_patterns)
	return 1
}

unexpected() {
	local n=$1 line
	failures "$n" | while IFS= read -r line; do
		is_known "$n" "${line#"$n: "}" || echo "$line"
	done
}

# ------------------------------------------------------------ run

run_one() {
	local n=$1 rc=0
	(
		cd "$rt"
		TMPDIR=$work/tmp RUNTIME=$RUNTIME timeout -k 10 "$per_test_timeout" \
			"./validation/$n/$n.t" >"$out/$n.tap" 2>"$out/$n.err" </dev/null
	) || rc=$?
	echo "$rc" >"$out/$n.rc"
}

total_ok=0
total_not_ok=0
: >"$out/unexpected"
for n in "${names[@]}"; do
	[ -x "$rt/validation/$n/$n.t" ] || die "no validation $n in $rt"
	run_one "$n"
	if $check; then
		try=0
		while [ -n "$(unexpected "$n")" ] && [ "$try" -lt "$retries" ]; do
			try=$((try + 1))
			echo "# $n: unexpected failure, retry $try" >&2
			run_one "$n"
		done
		unexpected "$n" >>"$out/unexpected"
	fi
	ok=$(grep -c '^ok' "$out/$n.tap" || true)
	not_ok=$(grep -c '^not ok' "$out/$n.tap" || true)
	total_ok=$((total_ok + ok))
	total_not_ok=$((total_not_ok + not_ok))
	printf '%-40s ok %4d  not ok %3d  exit %s\n' "$n" "$ok" "$not_ok" "$(cat "$out/$n.rc")"
done

echo "# runtime: $RUNTIME"
echo "# validations: ${#names[@]}"
echo "# ok: $total_ok"
echo "# not ok: $total_not_ok"
for n in "${names[@]}"; do
	failures "$n"
done | sed 's/^/# failed: /'

if $check; then
	if [ -s "$out/unexpected" ]; then
		sed 's/^/# UNEXPECTED: /' "$out/unexpected"
		exit 1
	fi
	echo "# every failure is listed in tests/conformance-known-failures.txt"
fi
