# Shared set-up for the engine suites (docker.bats, podman.bats,
# containerd.bats): each starts the real engine from Debian's packages on a
# private socket, data root and state dir under one temp dir, imports an
# image made from the project's busybox rootfs (no registry is reachable),
# and at the end stops exactly the processes it started, by pid, and
# unmounts what they left under the temp dir.
#
# Environment:
#   AGENTRUN      runtime under test (default: ./agentrun at the top of the
#                 tree). It is copied into the temp dir so a rebuild in the
#                 middle of a run does not swap the binary under a daemon.
#   ENG_KEEP=1    keep the temp dir (logs, daemon configs) after the suite.
#   ENG_TIMEOUT   seconds one engine command may take (default 60).
#
# Host quirks handled here rather than by a manual step:
#   - hard rlimits cannot be raised (no CAP_SYS_RESOURCE, nofile hard 20000):
#     every engine gets default ulimits inside the current hard limits;
#   - hybrid cgroups: every engine is set to its cgroupfs driver (agentrun
#     has no systemd driver and there is no systemd here anyway).

bats_require_minimum_version 1.5.0

ENG_TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
ENG_TIMEOUT=${ENG_TIMEOUT:-60}
ENG_IMAGE_TAG=agentrun-busybox:test
# containerd namespace (Docker's and ctr's): names everything we make.
ENG_NS=agentrun-test

# ---------------------------------------------------------------- asserts

eng_show() {
	echo "--- status: ${status:-?}"
	printf '%s\n' "--- output:" "${output:-}"
}

fail() {
	echo "FAIL: $*" >&2
	eng_show >&2
	return 1
}

assert_success() { [ "$status" -eq 0 ] || fail "expected success, got $status"; }
assert_status() { [ "$status" -eq "$1" ] || fail "expected status $1, got $status"; }
assert_failure() { [ "$status" -ne 0 ] || fail "expected failure, got 0"; }
assert_contains() { [[ "$output" == *"$1"* ]] || fail "expected output to contain '$1'"; }
refute_contains() { [[ "$output" != *"$1"* ]] || fail "expected output not to contain '$1'"; }

# Run a command with a time limit and no stdin (engines that attach stdin
# would otherwise eat the test's).
eng_run() {
	timeout --kill-after=5 "$ENG_TIMEOUT" "$@" </dev/null
}

# Under a pseudo-terminal, for -it: `script` gives the engine a real tty.
# The engine's stdout comes back through the pty, so CRs are stripped.
eng_tty() {
	local cmd
	printf -v cmd '%q ' "$@"
	timeout --kill-after=5 "$ENG_TIMEOUT" script -qec "$cmd" /dev/null </dev/null \
		| tr -d '\r\0'
	return "${PIPESTATUS[0]}"
}

# Retry a condition for up to N tenths of a second. The condition is run
# anew each time: pass a function, not an expanded `test "$(...)"`.
eng_wait() {
	local tries=$1
	shift
	while ! "$@" 2>/dev/null; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.1
	done
}

# The host kind: systemd as init and cgroup v2 only, where Docker, Podman
# and the kubelet use the systemd cgroup driver (the test VM, tests/vm/),
# or not (this development machine: cgroupfs).
eng_systemd_host() {
	[ -d /run/systemd/system ] && [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]
}

# In a container: its memory limit, cpu quota and period, pids limit, a
# line each, from the v2 files or the v1 ones.
ENG_CG_LIMITS='if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	cat /sys/fs/cgroup/memory.max; tr " " "\n" </sys/fs/cgroup/cpu.max; cat /sys/fs/cgroup/pids.max
else
	cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/cpu/cpu.cfs_quota_us \
		/sys/fs/cgroup/cpu/cpu.cfs_period_us /sys/fs/cgroup/pids/pids.max
fi'

# A container process for the lifecycle tests: says "started", and on
# SIGTERM "stopping" and exit status 3.
ENG_SLEEPER='echo started; trap "echo stopping; exit 3" TERM; while :; do sleep 0.2; done'

# Whether the process PID is frozen: its v1 freezer, or v2's cgroup.freeze.
eng_frozen() {
	local cg
	cg=$(awk -F: '$2 == "freezer" { print $3 }' "/proc/$1/cgroup")
	if [ -n "$cg" ]; then
		[ "$(cat "/sys/fs/cgroup/freezer$cg/freezer.state")" = FROZEN ]
	else
		cg=$(awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup")
		[ "$(cat "/sys/fs/cgroup$cg/cgroup.freeze")" = 1 ]
	fi
}

# A GET to port 8080 of an address, from busybox in a container:
# "reached" when the connection is made, "refused" when it is not.
ENG_GET='get() { printf "GET / HTTP/1.0\\r\\n\\r\\n" | nc -w 3 "$1" 8080 >/dev/null 2>&1 && echo reached || echo refused; }; get'

# eng_listen PID ADDR: a web server on ADDR:8080 in the network namespace
# of PID (one the suite made, such as its daemon's), stopped at teardown.
eng_listen() {
	mkdir -p "$ENG_T/www"
	echo "hello from the test host" >"$ENG_T/www/index.html"
	nsenter -t "$1" -n busybox httpd -f -p "$2:8080" -h "$ENG_T/www" 3>&- &
	eng_track_pid $!
}

# ---------------------------------------------------------------- setup

# Skip the whole file (from setup_file) when a tool is missing.
eng_require() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || skip "$c is not installed (apt-get install the engine's Debian package)"
	done
	[ "$(id -u)" -eq 0 ] || skip "the engines' suites need root"
}

# One temp dir per suite; the runtime binary and the rootfs tarball in it.
eng_setup_dir() {
	local name=$1 src=${AGENTRUN:-$ENG_TOP/agentrun}
	[ -x "$src" ] || skip "no agentrun binary at $src: build it first (make)"
	ENG_T=$(mktemp -d "${TMPDIR:-/tmp}/agentrun-$name.XXXXXX")
	export ENG_T
	mkdir -p "$ENG_T/bin"
	install -m 0755 "$src" "$ENG_T/bin/agentrun"
	# The agent profile by the binary's name, as `make install` links it.
	ln -s agentrun "$ENG_T/bin/agentrun-agent"
	export ENG_AGENTRUN=$ENG_T/bin/agentrun
	: >"$ENG_T/pids"
	# Every container's cgroup goes under this parent, named after the
	# temp dir, so teardown removes exactly the cgroups this suite made.
	export ENG_CG=${ENG_T##*/}
	eng_rootfs_tar "$ENG_T/rootfs.tar"
}

# The project's busybox rootfs, as a tarball for the importers. Built
# afresh in the temp dir (it takes a moment): the shared copy under images/out
# may be rebuilt by another suite while this one reads it.
eng_rootfs_tar() {
	local rootfs=$ENG_T/rootfs
	"$ENG_TOP/images/busybox.sh" "$rootfs" >/dev/null
	tar -C "$rootfs" --numeric-owner -cf "$1" .
}

# Some engines create these host paths whatever their flags say (containerd
# 1.6 puts shim sockets under /run/containerd/s; Podman keeps a blob cache
# under /var/lib/containers/cache and netavark/CNI state under
# /run/containers). Remember which did not exist, to remove them at teardown
# if they are still empty and so provably ours.
eng_note_host_paths() {
	local p
	for p in "$@"; do
		[ -e "$p" ] || echo "$p" >>"$ENG_T/host-paths"
	done
}

# The same for a directory tree an engine fills (CNI's IPAM and cache
# under /var/lib/cni): when it did not exist before, it is all ours.
eng_note_host_trees() {
	local p
	for p in "$@"; do
		[ -e "$p" ] || echo "$p" >>"$ENG_T/host-trees"
	done
}

# Remember a pid we started; teardown stops exactly these.
eng_track_pid() {
	echo "$1" >>"$ENG_T/pids"
}

# Start a daemon in the background, logging to $ENG_T/NAME.log; its pid
# goes to ENG_DAEMON_PID. fd 3 is closed: bats waits for whoever holds it.
eng_start_daemon() {
	local name=$1
	shift
	"$@" >"$ENG_T/$name.log" 2>&1 3>&- </dev/null &
	ENG_DAEMON_PID=$!
	eng_track_pid "$ENG_DAEMON_PID"
}

# Wait for a unix socket to answer: CHECK is a command that succeeds once
# the daemon serves requests.
eng_wait_ready() {
	local what=$1 pid=$2
	shift 2
	local i
	for i in $(seq 300); do
		"$@" >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "$what did not come up; its log:" >&2
	tail -n 30 "$ENG_T/$what.log" >&2 || true
	return 1
}

# ---------------------------------------------------------------- teardown

# Container processes outlive their daemon when the shim is reparented to
# init; they are found by the private paths in their command line, which no
# process outside this suite can have.
eng_find_our_pids() {
	local p cmd
	for p in /proc/[0-9]*; do
		cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
		[[ "$cmd" == *"$ENG_T/"* ]] && echo "${p#/proc/}"
	done
	return 0
}

eng_stop_pid() {
	local pid=$1 i
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for i in $(seq 150); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}

# Everything mounted under the temp dir, deepest first.
eng_unmount_all() {
	local m
	awk -v t="$ENG_T/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo \
		| sort -r | while read -r m; do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
		done
}

eng_remove_host_paths() {
	local p
	if [ -f "$ENG_T/host-trees" ]; then
		while read -r p; do rm -rf "$p"; done <"$ENG_T/host-trees"
	fi
	[ -f "$ENG_T/host-paths" ] || return 0
	# Deepest first so parents empty out.
	sort -r "$ENG_T/host-paths" | while read -r p; do
		if [ -d "$p" ]; then
			rmdir "$p" 2>/dev/null || true
		else
			rm -f "$p"
		fi
	done
}

# The suite's cgroup parent in every hierarchy, children first; rmdir only
# removes empty cgroups, so a live one is never torn down under a process.
# What still runs in them is the suite's own (a container whose engine
# was stopped before it): killed first, by pid.
eng_remove_cgroups() {
	[ -n "${ENG_CG:-}" ] || return 0
	local top pid
	for top in /sys/fs/cgroup/*/"$ENG_CG" /sys/fs/cgroup/"$ENG_CG"; do
		[ -d "$top" ] || continue
		for pid in $(find "$top" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u); do
			kill -KILL "$pid" 2>/dev/null || true
		done
	done
	for top in /sys/fs/cgroup/*/"$ENG_CG" /sys/fs/cgroup/"$ENG_CG"; do
		[ -d "$top" ] || continue
		eng_wait 50 eng_rmdir_tree "$top" || true
	done
}

# rmdir every cgroup of a tree, children first; fails while any is left.
eng_rmdir_tree() {
	find "$1" -depth -type d -exec rmdir {} \; 2>/dev/null
	[ ! -d "$1" ]
}

# v1 controllers the kernel lists for us that are mounted nowhere here:
# containerd's cgroup loader (shim metrics, docker stats) fails on them
# ("cgroups: cannot find cgroup mount destination"), whatever the runtime.
eng_unmounted_v1_controllers() {
	local id ctl rest
	while IFS=: read -r id ctl rest; do
		[ "$id" != 0 ] && [ -n "$ctl" ] || continue
		awk -v c="$ctl" '$9 == "cgroup" && ("," $NF ",") ~ ("," c ",") { f = 1 } END { exit !f }' \
			/proc/self/mountinfo || echo "$ctl"
	done </proc/self/cgroup
}

eng_teardown_dir() {
	[ -n "${ENG_T:-}" ] && [ -d "$ENG_T" ] || return 0
	local pid
	while read -r pid; do
		[ -n "$pid" ] && eng_stop_pid "$pid"
	done <"$ENG_T/pids"
	for pid in $(eng_find_our_pids); do
		eng_stop_pid "$pid"
	done
	eng_unmount_all
	eng_remove_cgroups
	eng_remove_host_paths
	if [ "${ENG_KEEP:-0}" = 1 ]; then
		echo "# kept $ENG_T" >&3
		return 0
	fi
	# A shim may still be releasing a mount: one more round before giving up.
	rm -rf "$ENG_T" 2>/dev/null || {
		sleep 1
		eng_unmount_all
		rm -rf "$ENG_T" || echo "# teardown: could not remove $ENG_T" >&3
	}
	return 0
}

# ---------------------------------------------------------------- containerd

# A containerd config's own paths: root, state and sockets under DIR.
eng_containerd_paths() {
	local t=$1
	echo 'version = 2'
	echo "root = \"$t/root\""
	echo "state = \"$t/state\""
	echo '[grpc]'
	echo "  address = \"$t/containerd.sock\""
	echo '[ttrpc]'
	echo "  address = \"$t/containerd.sock.ttrpc\""
	echo '[debug]'
	echo "  address = \"$t/debug.sock\""
	echo '[metrics]'
	echo '  address = ""'
}

# contrib/containerd/config.toml as shipped, so the file users copy is what
# is tested: only the binaries' paths change (to $ENG_T/bin), the cgroup
# driver follows the host, and EXTRA (an option line) follows BinaryName.
eng_containerd_handlers() {
	local extra=${1:-}
	grep -v '^version' "$ENG_TOP/contrib/containerd/config.toml" \
		| sed -e "s|BinaryName = \"/usr/local/sbin/\(agentrun[^\"]*\)\"|BinaryName = \"$ENG_T/bin/\1\"${extra:+\\n    $extra}|" \
			-e "s|SystemdCgroup = .*|SystemdCgroup = $(eng_systemd_host && echo true || echo false)|"
}

# ---------------------------------------------------------------- images

# The project's rootfs as image REF (image config CONFIG, JSON) in
# namespace NS of the suite's containerd ($ENG_T/containerd.sock).
eng_containerd_image() {
	local ns=$1 ref=$2 config=$3 archive
	archive=$(mktemp "$ENG_T/image.XXXXXX")
	eng_oci_archive "$ENG_T/rootfs.tar" "$archive" "$ref" "$config"
	eng_run ctr --address "$ENG_T/containerd.sock" -n "$ns" image import "$archive" >/dev/null
	rm -f "$archive"
}

# An OCI image layout archive of the rootfs tarball as its single layer,
# for `ctr image import` (which takes no plain rootfs tarball). CONFIG is
# the image config's "config" object as JSON.
eng_oci_archive() {
	local layer=$1 out=$2 name=$3 config=$4 d
	d=$(mktemp -d "$ENG_T/oci.XXXXXX")
	mkdir -p "$d/blobs/sha256"
	local ldig
	ldig=$(eng_blob "$d" "$layer")
	jq -cn --argjson c "$config" --arg diff "sha256:$ldig" \
		'{architecture: "amd64", os: "linux", config: $c,
		  rootfs: {type: "layers", diff_ids: [$diff]}}' >"$d/config"
	local cdig
	cdig=$(eng_blob "$d" "$d/config")
	jq -cn --arg cd "sha256:$cdig" --argjson cs "$(stat -c %s "$d/config")" \
		--arg ld "sha256:$ldig" --argjson ls "$(stat -c %s "$layer")" \
		'{schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
		  config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $cd, size: $cs},
		  layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $ld, size: $ls}]}' \
		>"$d/manifest"
	local mdig
	mdig=$(eng_blob "$d" "$d/manifest")
	jq -cn --arg md "sha256:$mdig" --argjson ms "$(stat -c %s "$d/manifest")" --arg n "$name" \
		'{schemaVersion: 2, manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json",
		  digest: $md, size: $ms, platform: {architecture: "amd64", os: "linux"},
		  annotations: {"io.containerd.image.name": $n, "org.opencontainers.image.ref.name": $n}}]}' \
		>"$d/index.json"
	echo '{"imageLayoutVersion": "1.0.0"}' >"$d/oci-layout"
	tar -C "$d" -cf "$out" oci-layout index.json blobs
	rm -rf "$d"
}

# Store FILE as a blob of layout D; print its digest.
eng_blob() {
	local dig
	dig=$(sha256sum "$2" | cut -d' ' -f1)
	cp "$2" "$1/blobs/sha256/$dig"
	echo "$dig"
}

# A seccomp profile in Docker's format that denies mkdir with EPERM.
eng_seccomp_profile() {
	cat >"$1" <<'EOF'
{
  "defaultAction": "SCMP_ACT_ALLOW",
  "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
  "syscalls": [
    {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}
  ]
}
EOF
}

# Does agentrun know a global flag yet (features still being added)?
eng_agentrun_has() {
	"$ENG_AGENTRUN" --help 2>&1 | grep -q -- "$1"
}
