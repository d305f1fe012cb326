# SPDX-License-Identifier: Apache-2.0
# Shared set-up for the engine suites (docker.bats, podman.bats,
# containerd.bats, cri.bats): each starts the real engine from Debian's
# packages on a private socket, data root and state dir under one temp dir,
# imports an image made from the project's busybox rootfs (no registry is
# reachable), and at the end stops exactly the processes it started, by
# pid, and unmounts what they left under the temp dir. The shell-only
# pieces are in eng.bash (tests/cri/critest.sh uses them too); this file
# adds what needs bats: asserts, skips, and messages on fd 3.
#
# Environment (and AGENTRUN, ENG_TIMEOUT: see eng.bash):
#   ENG_KEEP=1    keep the temp dir (logs, daemon configs) after the suite.
#
# Host quirks handled here rather than by a manual step:
#   - hard rlimits cannot be raised (no CAP_SYS_RESOURCE, nofile hard 20000):
#     every engine gets default ulimits inside the current hard limits;
#   - hybrid cgroups: every engine is set to its cgroupfs driver (agentrun
#     has no systemd driver and there is no systemd here anyway).

bats_require_minimum_version 1.5.0

source "$BATS_TEST_DIRNAME/eng.bash"
source "$BATS_TEST_DIRNAME/../host_kind.bash"

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

# Under a pseudo-terminal, for -it: `script` gives the engine a real tty.
# The engine's stdout comes back through the pty, so CRs are stripped.
eng_tty() {
	local cmd
	printf -v cmd '%q ' "$@"
	timeout --kill-after=5 "$ENG_TIMEOUT" script -qec "$cmd" /dev/null </dev/null \
		| tr -d '\r\0'
	return "${PIPESTATUS[0]}"
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

# A suite that cannot run here skips each of its tests, saying why.
# Debian 12's bats (1.8.2) counts a skip in setup_file as the file's
# failure, so setup_file records the reason and returns instead
# (`eng_require ... || return 0`), and setup() skips (eng_skip_if_file_skipped:
# lib's own setup, and the first line of a suite's own).
eng_skip_file() {
	export ENG_FILE_SKIP="$*"
	return 1
}

eng_skip_if_file_skipped() {
	[ -z "${ENG_FILE_SKIP:-}" ] || skip "$ENG_FILE_SKIP"
}

setup() {
	eng_skip_if_file_skipped
}

# Skip the whole file (from setup_file) when a tool is missing.
eng_require() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || eng_skip_file "$c is not installed (apt-get install the engine's Debian package)" || return 1
	done
	[ "$(id -u)" -eq 0 ] || eng_skip_file "the engines' suites need root"
}

# One temp dir per suite (ENG_PARENT/NAME.XXXXXX); the runtime binary and
# the rootfs tarball in it.
eng_setup_dir() {
	local name=$1 src=${AGENTRUN:-$ENG_TOP/agentrun}
	[ -x "$src" ] || eng_skip_file "no agentrun binary at $src: build it first (make)" || return 1
	ENG_T=$(eng_make_dir "$name")
	export ENG_T
	eng_prepare_dir "$src"
}

# ---------------------------------------------------------------- teardown

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
	eng_cleanup_dir
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
	eng_remove_parent
	return 0
}

# ---------------------------------------------------------------- images

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

