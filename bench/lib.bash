# SPDX-License-Identifier: Apache-2.0
# What the benches against crun and runc share (bench/run.sh,
# bench/concurrent.sh, bench/snapshot.sh): timing one command and the
# median and spread of many, the runtimes, a busybox `true` bundle made by
# `crun spec`, the v1 hugetlb mount crun and runc need on a hybrid host,
# and the clean-up. Set WORK, TOP and AGENTRUN before sourcing.

MOUNTED_HUGETLB=""
# runc is compared where it is installed (the test VM has only crun).
RUNTIMES=(agentrun crun)
command -v runc >/dev/null && RUNTIMES+=(runc)

# BENCH_CGROUP_DRIVER=systemd: every runtime with --systemd-cgroup (on a
# systemd host; each makes a transient scope under its default slice).
RT_GLOBAL=()
case ${BENCH_CGROUP_DRIVER:-cgroupfs} in
cgroupfs) ;;
systemd) RT_GLOBAL=(--systemd-cgroup) ;;
*) echo "BENCH_CGROUP_DRIVER: cgroupfs or systemd, not $BENCH_CGROUP_DRIVER" >&2; exit 2 ;;
esac

# BENCH_HOLD_CPUSET=1: hold an empty v1 cpuset cgroup of the bench's own
# for the whole run. While no other cpuset cgroup exists, the kernel
# patches its code on every container's first one (cpuset_css_online's
# static key) and back after its delete: several ms of every run here, of
# every runtime alike. A host with Docker or Kubernetes on cgroup v1 holds
# one (/docker, /kubepods) and never pays it.
HELD_CPUSET=""
hold_cpuset() {
	[ "${BENCH_HOLD_CPUSET:-0}" = 1 ] || return 0
	[ -d /sys/fs/cgroup/cpuset ] && [ "$(stat -fc %T /sys/fs/cgroup/cpuset)" = cgroupfs ] \
		|| { echo "BENCH_HOLD_CPUSET: no v1 cpuset hierarchy here" >&2; exit 2; }
	HELD_CPUSET=/sys/fs/cgroup/cpuset/agentrun-bench-hold.$$
	mkdir "$HELD_CPUSET"
	echo "(holding the empty cpuset cgroup $HELD_CPUSET for the run)"
}

# BENCH_STATE_TMPFS=1: each runtime's --root on a tmpfs of its own, as /run
# is on a host with systemd (where Docker's, containerd's and Podman's
# runtime state lives). This machine's / and /run are ext4 without a
# journal, where every new inode first steps over the inodes freed in the
# last ~30 s (ext4's recently_deleted check): a state file costs more the
# more files every runtime has made and removed lately.
STATE_TMPFS=()
state_on_tmpfs() {
	[ "${BENCH_STATE_TMPFS:-0}" = 1 ] || return 0
	local rt dir
	for rt in "${RUNTIMES[@]}"; do
		dir=$WORK/root-$rt
		mkdir -p "$dir"
		mount -t tmpfs -o mode=0700 tmpfs "$dir"
		STATE_TMPFS+=("$dir")
	done
	echo "(each runtime's state root on a tmpfs of its own)"
}

# The machine's CPU time so far, in clock ticks: "USER SYSTEM IDLE"
# (system with the interrupts' time, idle with the wait for I/O).
cpu_ticks() { awk '$1 == "cpu" { print $2 + $3, $4 + $7 + $8, $5 + $6; exit }' /proc/stat; }

# settle: wait until the machine is quiet: its CPUs 95% idle over half a
# second (at most 60 s). After many containers the kernel still works in
# its own threads (network namespaces' and cgroups' clean-up): without
# this the next batch pays for the last one's.
settle() {
	local deadline=$((SECONDS + 60)) u0 s0 i0 u1 s1 i1 busy
	while [ "$SECONDS" -lt "$deadline" ]; do
		read -r u0 s0 i0 < <(cpu_ticks)
		sleep 0.5
		read -r u1 s1 i1 < <(cpu_ticks)
		busy=$((u1 - u0 + s1 - s0))
		[ $((busy * 20)) -le $((busy + i1 - i0)) ] && return 0
	done
	echo "(settle: still busy after 60 s)" >&2
}

runtime_bin() {
	local rt=$1; shift
	if [ "$rt" = agentrun ]; then "$AGENTRUN" "${RT_GLOBAL[@]}" "$@"; else "$rt" "${RT_GLOBAL[@]}" "$@"; fi
}

# Milliseconds one command takes, from bash's own clock (no fork to time).
time_ms() {
	local t0=$EPOCHREALTIME
	"$@" >/dev/null 2>&1 </dev/null || echo "warning: failed: $*" >&2
	local t1=$EPOCHREALTIME
	echo "scale=3; (${t1/./} - ${t0/./}) / 1000" | bc
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# "MEDIAN (MIN-MAX)" of a file of milliseconds, or "-" when there is none.
spread() {
	[ -s "$1" ] || { echo -; return; }
	printf '%.2f (%.2f-%.2f)' "$(median <"$1")" "$(sort -n "$1" | head -1)" "$(sort -n "$1" | tail -1)"
}

bench_cleanup() {
	local rt id dir
	for rt in agentrun crun runc; do
		[ -d "$WORK/root-$rt" ] || continue
		for id in $(ls "$WORK/root-$rt" 2>/dev/null | grep -v '^\.'); do
			runtime_bin "$rt" --root "$WORK/root-$rt" delete --force "$id" >/dev/null 2>&1 || true
		done
	done
	[ -z "$HELD_CPUSET" ] || rmdir "$HELD_CPUSET" || true
	for dir in "${STATE_TMPFS[@]}"; do umount "$dir" || true; done
	if [ -n "$MOUNTED_HUGETLB" ]; then
		umount /sys/fs/cgroup/hugetlb && rmdir /sys/fs/cgroup/hugetlb || true
	fi
	rm -rf "$WORK"
}

need_hugetlb_v1() {
	# Only the hybrid layout needs it; a v2-only host (the test VM) has hugetlb.
	[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && return 0
	mountpoint -q /sys/fs/cgroup/hugetlb 2>/dev/null && return 0
	mkdir -p /sys/fs/cgroup/hugetlb
	mount -t cgroup -o hugetlb cgroup /sys/fs/cgroup/hugetlb
	MOUNTED_HUGETLB=1
	echo "(mounted hugetlb as cgroup v1 for crun and runc; unmounted at exit)"
}

make_bundle() {
	local dir=$WORK/bundle
	mkdir -p "$dir"
	if [ -d "$TOP/images/out/busybox/rootfs" ]; then
		cp -a "$TOP/images/out/busybox/rootfs" "$dir/rootfs"
	else
		"$TOP/images/busybox.sh" "$dir/rootfs" >/dev/null
	fi
	(cd "$dir" && crun spec)
	jq '.process.terminal = false | .process.args = ["true"]' "$dir/config.json" >"$dir/c" \
		&& mv "$dir/c" "$dir/config.json"
}

# bench_prepare NAME: as root, with agentrun built; the mount and the bundle.
bench_prepare() {
	[ "$(id -u)" -eq 0 ] || { echo "$1: run as root" >&2; exit 1; }
	[ -x "$AGENTRUN" ] || { echo "$1: build agentrun first ($AGENTRUN)" >&2; exit 1; }
	need_hugetlb_v1
	hold_cpuset
	state_on_tmpfs
	make_bundle
}
