# SPDX-License-Identifier: Apache-2.0
# Shared set-up for the bats suites in tests/.
#
# Every test gets its own temporary directory holding a runtime state dir
# (--root) and a fresh bundle copied from a per-run template. Container ids
# carry a per-run prefix (agentrun-test-XXXXXXXX) so anything left behind on
# the host is attributable. teardown() deletes the test's containers with the
# runtime, then looks for what is still there (state dirs, mounts, cgroups,
# processes), records it in $AR_BASE/leaks for zz_cleanup.bats to report,
# and finally removes it so one broken test does not poison the next.
#
# Environment:
#   RUNTIME            runtime binary under test (default: ./agentrun at the
#                      top of the tree); any runc-compatible CLI works.
#   AGENTRUN_TEST_RUN  per-run prefix; tests/run.sh sets it so all files
#                      share one; otherwise derived from the bats run dir.
#   AGENTRUN_TEST_BASE per-run scratch dir (default: inside BATS_RUN_TMPDIR,
#                      which bats removes at the end).
#   AR_TIMEOUT         seconds a single runtime call may take (default 30).
#   AR_TEST_USER       run the runtime as this unprivileged uid (rootless):
#                      the bundle maps it to root in a user namespace, the
#                      state root and XDG_RUNTIME_DIR are the uid's own. A
#                      suite named rootless_*.bats (a link to another suite)
#                      sets it to AR_ROOTLESS_UID (default 1500) unless
#                      given; the VM names its user with a systemd user
#                      instance and /etc/subuid ranges.

bats_require_minimum_version 1.5.0

AR_TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
source "$AR_TOP/tests/host_kind.bash"
source "$AR_TOP/tests/binaries.bash"
RUNTIME=${RUNTIME:-$AR_TOP/agentrun}
AR_TIMEOUT=${AR_TIMEOUT:-30}

# One prefix per bats invocation: derived from BATS_RUN_TMPDIR, which is the
# same for every file of one run, unless tests/run.sh chose it.
if [ -z "${AGENTRUN_TEST_RUN:-}" ]; then
	AGENTRUN_TEST_RUN=agentrun-test-$(printf '%s' "$BATS_RUN_TMPDIR" | sha256sum | cut -c1-8)
fi
AR_RUN=$AGENTRUN_TEST_RUN
AR_BASE=${AGENTRUN_TEST_BASE:-$BATS_RUN_TMPDIR/agentrun}
AR_LEAKS=$AR_BASE/leaks
AR_ROOTFS=${AGENTRUN_TEST_ROOTFS:-$AR_TOP/images/out/busybox/rootfs}
AR_CGROUP_V1=/sys/fs/cgroup
case ${BATS_TEST_FILENAME##*/} in
rootless_*) AR_TEST_USER=${AR_TEST_USER:-${AR_ROOTLESS_UID:-1500}} ;;
esac
AR_TEST_USER=${AR_TEST_USER:-}
AR_TEMPLATE=$AR_BASE/template${AR_TEST_USER:+-$AR_TEST_USER}

# ---------------------------------------------------------------- asserts

# Show what a failed `run` produced: bats prints this only on failure.
ar_show() {
	echo "--- status: ${status:-?}"
	echo "--- output:"
	printf '%s\n' "${output:-}"
	if [ -n "${stderr:-}" ]; then
		echo "--- stderr:"
		printf '%s\n' "$stderr"
	fi
}

fail() {
	echo "FAIL: $*" >&2
	ar_show >&2
	return 1
}

assert_success() {
	[ "$status" -eq 0 ] || fail "expected success, got status $status"
}

# assert_failure [STATUS]: nonzero, or exactly STATUS when given.
assert_failure() {
	if [ $# -gt 0 ]; then
		[ "$status" -eq "$1" ] || fail "expected status $1, got $status"
	else
		[ "$status" -ne 0 ] || fail "expected failure, got status 0"
	fi
}

assert_output() {
	[ "$output" = "$1" ] || fail "expected output '$1'"
}

assert_output_contains() {
	[[ "$output" == *"$1"* ]] || fail "expected output to contain '$1'"
}

refute_output_contains() {
	[[ "$output" != *"$1"* ]] || fail "expected output not to contain '$1'"
}

assert_equal() {
	[ "$1" = "$2" ] || fail "expected '$2', got '$1'"
}

# ---------------------------------------------------------------- runtime

# The runtime under test with this test's state dir. stdin is /dev/null so
# a container whose process reads stdin sees EOF instead of hanging on the
# terminal bats was started from; timeout bounds a hung runtime.
runtime() {
	timeout -k 5 "$AR_TIMEOUT" "${AR_AS_USER[@]}" "$RUNTIME" --root "$ROOT" "$@" </dev/null
}

# Same, keeping the caller's stdin (for tests that feed the container).
runtime_stdin() {
	timeout -k 5 "$AR_TIMEOUT" "${AR_AS_USER[@]}" "$RUNTIME" --root "$ROOT" "$@"
}

# The state root and runtime dir of a rootless test: the user's own (its
# bundle came from the user's template).
ar_setup_test_user() {
	# A tree under root's home (the VM copies it to /root) is out of the
	# user's reach: it runs copies of the binaries (the egress hook beside).
	local bin=$AR_BASE/user-bin
	if [ -x "$bin/agentrun" ]; then
		RUNTIME=$bin/agentrun
	elif ! setpriv --reuid="$AR_TEST_USER" --regid="$AR_TEST_USER" --clear-groups test -x "$RUNTIME"; then
		(
			flock 9
			if [ ! -x "$bin/agentrun" ]; then
				mkdir -p "$bin" && chmod 0755 "$bin"
				ar_copy_binaries "$RUNTIME" "$bin"
			fi
		) 9>"$AR_BASE/.user-bin.lock"
		RUNTIME=$bin/agentrun
	fi
	AR_AS_USER=(setpriv --reuid="$AR_TEST_USER" --regid="$AR_TEST_USER" --clear-groups
		env XDG_RUNTIME_DIR="$TEST_DIR/xdg" HOME="$TEST_DIR")
	mkdir -m 0700 "$TEST_DIR/xdg"
	chown "$AR_TEST_USER:$AR_TEST_USER" "$TEST_DIR" "$ROOT" "$TEST_DIR/xdg"
}

# The user's systemd instance, where there is one (the VM's user lingers):
# its XDG_RUNTIME_DIR in $xdg, or the test is skipped.
require_user_systemd() {
	xdg=/run/user/$AR_TEST_USER
	[ -S "$xdg/bus" ] && [ -d /run/systemd/system ] && [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] \
		|| skip "uid $AR_TEST_USER has no systemd user instance on cgroup v2 (the VM's user has)"
}

# user_scopes PREFIX: the user instance's scopes agentrun-PREFIX*.scope.
user_scopes() {
	find "/sys/fs/cgroup/user.slice/user-$AR_TEST_USER.slice/user@$AR_TEST_USER.service" \
		-name "agentrun-$1*.scope" 2>/dev/null
}

# For commands that leave a container behind (create, run --detach): the
# container inherits the runtime's stdout and stderr, and a pipe it holds
# open would keep bats's `run` waiting forever. So they go to files in the
# test dir, and the runtime's own error output is replayed on failure.
runtime_bg() {
	local log=$TEST_DIR/runtime_bg.$$.$RANDOM rc=0
	runtime "$@" >"$log.out" 2>"$log.err" || rc=$?
	if [ "$rc" -ne 0 ]; then
		cat "$log.out" "$log.err" >&2
	fi
	return "$rc"
}

# update_config FILTER [JQ ARGS...]: edit this test's config.json in place.
update_config() {
	local filter=$1; shift
	jq "$@" "$filter" "$BUNDLE/config.json" >"$BUNDLE/config.json.new" \
		&& mv "$BUNDLE/config.json.new" "$BUNDLE/config.json"
}

# The arguments as named jq --arg values 0, 1, ... in $AR_JQ_NAMED: jq
# would parse a positional "-c" as its own option. A jq filter turns them
# back into an array with $AR_JQ_ARRAY.
AR_JQ_ARRAY='($ARGS.named | to_entries | sort_by(.key | tonumber) | map(.value))'
ar_jq_named() {
	AR_JQ_NAMED=()
	local i=0 arg
	for arg in "$@"; do
		AR_JQ_NAMED+=(--arg "$i" "$arg")
		i=$((i + 1))
	done
}

# json_array ARG...: the arguments as a JSON array of strings.
json_array() {
	ar_jq_named "$@"
	jq -cn "$AR_JQ_ARRAY" "${AR_JQ_NAMED[@]}"
}

# set_args ARG...: the container's process.args (one jq, not two).
set_args() {
	ar_jq_named "$@"
	update_config ".process.args = $AR_JQ_ARRAY" "${AR_JQ_NAMED[@]}"
}

# ctr_run ARG...: run ARGs to completion in a fresh container (id $CID),
# e.g. `run ctr_run sh -c 'id -u'`.
ctr_run() {
	set_args "$@"
	runtime run --bundle "$BUNDLE" "$CID"
}

# ctr_create [ID]: create (not start) a container from $BUNDLE.
ctr_create() {
	runtime_bg create --bundle "$BUNDLE" "${1:-$CID}"
}

# ctr_run_bg [ID]: run --detach a container from $BUNDLE.
ctr_run_bg() {
	runtime_bg run --detach --bundle "$BUNDLE" "${1:-$CID}"
}

ctr_status() {
	runtime state "${1:-$CID}" | jq -r .status
}

ctr_pid() {
	runtime state "${1:-$CID}" | jq -r .pid
}

# wait_for_state ID STATUS [SECONDS]: poll `state` until it reports STATUS.
wait_for_state() {
	local id=$1 want=$2 limit=${3:-10} got=""
	local deadline=$((SECONDS + limit))
	while [ "$SECONDS" -le "$deadline" ]; do
		got=$(runtime state "$id" 2>/dev/null | jq -r .status 2>/dev/null) || true
		[ "$got" = "$want" ] && return 0
		sleep 0.05
	done
	echo "container $id: status '$got', expected '$want' within ${limit}s" >&2
	return 1
}

# wait_for_file PATH [SECONDS]
wait_for_file() {
	local path=$1 limit=${2:-10}
	local deadline=$((SECONDS + limit))
	while [ ! -e "$path" ]; do
		[ "$SECONDS" -le "$deadline" ] || { echo "no $path after ${limit}s" >&2; return 1; }
		sleep 0.05
	done
}

# wait_for_file_content PATH PATTERN [SECONDS]: until a line of PATH
# matches the grep PATTERN.
wait_for_file_content() {
	local path=$1 pattern=$2 limit=${3:-10}
	local deadline=$((SECONDS + limit))
	until grep -q -- "$pattern" "$path" 2>/dev/null; do
		[ "$SECONDS" -le "$deadline" ] || { echo "no \"$pattern\" in $path after ${limit}s" >&2; return 1; }
		sleep 0.05
	done
}

# track_pid PID: a host process this test started; teardown kills it.
track_pid() {
	echo "$1" >>"$TEST_DIR/pids"
}

# approver RULE...: `agentrun approve` on $APPROVER with these rules (one
# argument a line), its pid in $APPROVER_PID, its decisions in
# $TEST_DIR/approve.log.
approver() {
	APPROVER=$TEST_DIR/approve.sock
	printf '%s\n' "$@" >"$TEST_DIR/rules"
	"$RUNTIME" approve --socket "$APPROVER" --rules "$TEST_DIR/rules" \
		</dev/null >"$TEST_DIR/approve.log" 2>"$TEST_DIR/approve.err" &
	APPROVER_PID=$!
	track_pid "$APPROVER_PID"
	wait_for_file "$APPROVER"
}

# The gate daemons (comm agentrun-gate: secrets.ask, programs.ask) of
# this test's state root.
gates_left() {
	pgrep -a -x agentrun-gate | grep -F -- "$ROOT" || true
}

wait_for_no_gates() {
	local i
	for i in $(seq 1 40); do
		[ -z "$(gates_left)" ] && return 0
		sleep 0.05
	done
	fail "a gate outlived its sandbox: $(gates_left)"
}

# started_in_bg CMD...: CMD in the background with no terminal; its pid in
# $BG. The caller waits for what it started.
started_in_bg() {
	"$@" </dev/null >"$TEST_DIR/bg.out" 2>"$TEST_DIR/bg.err" &
	BG=$!
	track_pid "$BG"
}

# wait_for_nap: the pid of this test's `sleep $NAP` (a number of its own),
# once it runs.
wait_for_nap() {
	local i p
	for i in $(seq 1 100); do
		p=$(pgrep -xf "sleep $NAP" | head -1) || true
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.05
	done
	echo "sleep $NAP never ran: $(cat "$TEST_DIR/bg.err" 2>/dev/null)" >&2
	return 1
}

# connected_to ID: a taker's connection to the pooled sandbox ID's socket
# waits in its accept queue: /proc/net/unix names the listener and the
# queued peer by the address it was bound at (.new-ID, then renamed).
connected_to() {
	local i
	for i in $(seq 1 200); do
		[ "$(grep -c -- "/.new-$1\$" /proc/net/unix)" -ge 2 ] && return 0
		sleep 0.05
	done
	fail "no taker connected to $1: $(grep -- "/.new-$1\$" /proc/net/unix)"
}

# wait_bg SECONDS: wait for $BG, killing it if it runs longer; its status
# in $RC.
wait_bg() {
	local i
	for i in $(seq 1 $(($1 * 20))); do
		pid_alive "$BG" || break
		sleep 0.05
	done
	pid_alive "$BG" && kill -KILL "$BG"
	RC=0
	wait "$BG" || RC=$?
}

# What a finished sandbox must not leave behind: its state and bundle
# dirs, mounts, processes, and cgroups made since $TEST_DIR/marker.
sandbox_leftovers() {
	local p
	[ -d "$ROOT" ] || return 0
	find "$ROOT" -mindepth 1 -maxdepth 1 ! -name .seccomp-cache ! -name .sandbox ! -name .audit-heads -printf 'state %p\n'
	[ ! -d "$ROOT/.sandbox" ] || find "$ROOT/.sandbox" -mindepth 1 -printf 'bundle %p\n'
	# $ROOT is below $TEST_DIR.
	mounts_under "$TEST_DIR" | sed 's/^/mount /'
	for p in $(live_pids_of $(grep -lsF -- "$ROOT" /proc/[0-9]*/cmdline)); do
		echo "process $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
	done
	local c
	for c in $(find /sys/fs/cgroup -mindepth 1 -maxdepth 4 -type d -name 'sandbox-*' -newer "$TEST_DIR/marker" 2>/dev/null); do
		cgroup_left_behind "$c" && echo "cgroup $c"
	done
}

# cgroup_left_behind DIR: DIR is empty and still there a moment later.
# Suites run side by side, and another one's live sandbox (one made by an
# engine suite's `agentrun sandbox --from`) also matches sandbox-*: it
# has processes, or it is gone by then.
cgroup_left_behind() {
	[ -z "$(cat "$1/cgroup.procs" 2>/dev/null)" ] || return 1
	sleep 0.2
	[ -d "$1" ] && [ -z "$(cat "$1/cgroup.procs" 2>/dev/null)" ]
}

# A sandbox suite's teardown: the common one, and the test fails when its
# sandbox left something (sandbox_leftovers).
sandbox_teardown() {
	local left=""
	[ -n "${TEST_DIR:-}" ] && left=$(sandbox_leftovers)
	common_teardown
	[ -z "$left" ] || { echo "sandbox left: $left" >&2; return 1; }
}

# track_mount PATH: a host mount this test made itself; teardown unmounts
# it before it looks for mounts the runtime left behind.
track_mount() {
	echo "$1" >>"$TEST_DIR/mounts"
}

# A host directory for bind mounts, inside this test's dir.
host_dir() {
	local d=$TEST_DIR/host/$1
	mkdir -p "$d"
	echo "$d"
}

# tool_bin NAME [CC FLAGS...]: tests/tools/NAME.c, built once per run into
# the scratch dir so the source tree stays clean; prints its path.
tool_bin() {
	local name=$1 bin=$AR_BASE/$1
	shift
	if [ ! -x "$bin" ]; then
		(
			flock 9
			[ -x "$bin" ] || cc -O2 -Wall -Wextra -Werror "$@" -o "$bin.tmp" \
				"$AR_TOP/tests/tools/$name.c" && mv "$bin.tmp" "$bin"
		) 9>"$AR_BASE/.$name.lock"
	fi
	echo "$bin"
}

# The console-socket receiver (tests/tools/recvtty.c): the tree's build,
# which the test VM (no compiler) has too, or one built now.
recvtty_bin() {
	if [ -x "$AR_TOP/tests/tools/recvtty" ]; then
		echo "$AR_TOP/tests/tools/recvtty"
	else
		tool_bin recvtty
	fi
}

# run_with_terminal ARG...: run ARGs with process.terminal and a console
# socket served by tests/tools/recvtty; $output is what the container wrote
# to its terminal (CRs dropped), $status the runtime's status.
run_with_terminal() {
	local sock=$TEST_DIR/console.sock out=$TEST_DIR/console.out rtty
	rtty=$(recvtty_bin)
	update_config '.process.terminal = true'
	set_args "$@"
	rm -f "$sock"
	"$rtty" -t 20 "$sock" >"$out" 2>"$out.err" &
	local rpid=$!
	track_pid "$rpid"
	wait_for_file "$sock"
	status=0
	runtime_bg run --detach --console-socket "$sock" --bundle "$BUNDLE" "$CID" || status=$?
	if [ "$status" -ne 0 ]; then
		kill "$rpid" 2>/dev/null || true
	fi
	local rc=0
	wait "$rpid" || rc=$?
	output=$(tr -d '\r' <"$out")
	mapfile -t lines <<<"$output"
	[ "$status" -ne 0 ] || [ "$rc" -eq 0 ] || { cat "$out.err" >&2; status=$rc; }
}

# cgroup v1 dir of a controller for a cgroupsPath (this host is v1 + a
# hugetlb-only cgroup2, see DESIGN.md / the issue).
cgroup_v1_dir() {
	echo "$AR_CGROUP_V1/$1/${2#/}"
}

# A unique cgroupsPath for this test, under the run's parent cgroup.
test_cgroups_path() {
	echo "/$AR_RUN/${1:-$CID}"
}

is_cgroup_v2_only() {
	[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]
}

# ---------------------------------------------------------------- set-up

# The per-run template bundle: rootfs copied once from images/out, config
# from images/bundle.sh, made writable and tagged so teardown can find the
# container's processes (AGENTRUN_TEST_ID in the environment).
ar_prepare_run() {
	# Made once per run; every test after the first takes this way out.
	[ -f "$AR_TEMPLATE/config.json" ] && return 0
	mkdir -p "$AR_BASE"
	# bats makes its run dir 0700; user-namespace tests need the bundle
	# path searchable by the mapped (unprivileged) ids.
	if [ "${AR_BASE%/*}" = "$BATS_RUN_TMPDIR" ]; then
		chmod 0711 "$BATS_RUN_TMPDIR"
	fi
	chmod 0711 "$AR_BASE"
	(
		flock 9
		[ -f "$AR_TEMPLATE/config.json" ] && exit 0
		[ ! -f "$AR_BASE/template/config.json" ] || { ar_prepare_user_template; exit; }
		if [ ! -x "$AR_ROOTFS/bin/busybox" ]; then
			"$AR_TOP/images/busybox.sh" "$AR_ROOTFS" >/dev/null
		fi
		rm -rf "$AR_BASE/template.tmp"
		ROOTFS=$AR_ROOTFS "$AR_TOP/images/bundle.sh" "$AR_BASE/template.tmp" true >/dev/null
		# Writable, and tagged with a placeholder common_setup fills in
		# with sed: jq per test costs ~0.4 s under the VM's emulation.
		jq '.root.readonly = false | .process.env += ["AGENTRUN_TEST_ID=@AR_CID@"]' \
			"$AR_BASE/template.tmp/config.json" >"$AR_BASE/template.tmp/config.json.new"
		mv "$AR_BASE/template.tmp/config.json.new" "$AR_BASE/template.tmp/config.json"
		mv "$AR_BASE/template.tmp" "$AR_BASE/template"
		touch "$AR_LEAKS"
		[ -z "$AR_TEST_USER" ] || ar_prepare_user_template
	) 9>"$AR_BASE/.lock"
}

# A rootless suite's template: the user's own rootfs, the bundle mapping
# the user to root in a user namespace, as `agentrun spec --rootless` run
# by that user makes it.
ar_prepare_user_template() {
	local t=$AR_TEMPLATE.tmp
	rm -rf "$t"
	cp -a "$AR_BASE/template" "$t"
	chown -R "$AR_TEST_USER:$AR_TEST_USER" "$t/rootfs"
	jq '.linux.namespaces |= (map(select(.type != "user")) + [{type: "user"}])
		| .linux.uidMappings = [{containerID: 0, hostID: $u, size: 1}]
		| .linux.gidMappings = [{containerID: 0, hostID: $u, size: 1}]' --argjson u "$AR_TEST_USER" \
		"$t/config.json" >"$t/config.json.new"
	mv "$t/config.json.new" "$t/config.json"
	mv "$t" "$AR_TEMPLATE"
}

# Every process a test's set-up and teardown start costs ~50 ms in the
# test VM's emulation, on each of the ~200 tests there: they use shell
# built-ins where one does the job.
common_setup() {
	[ "$EUID" -eq 0 ] || skip "the suites run real containers: run as root"
	[ -x "$RUNTIME" ] || { echo "RUNTIME $RUNTIME is not executable: build agentrun (make) or set RUNTIME" >&2; return 1; }
	ar_prepare_run
	local tag=${BATS_TEST_FILENAME##*/}
	tag=${tag%.bats}
	CID=$AR_RUN-$tag-$BATS_TEST_NUMBER
	# Searchable by others: a container in a user namespace runs as a
	# mapped uid that must still reach the bundle. Named by the test's
	# number in this bats run (short: sockets go below it), or made by
	# mktemp where that name is taken (another run sharing the base).
	TEST_DIR=$AR_BASE/t.$BATS_SUITE_TEST_NUMBER
	if ! mkdir -m 0711 "$TEST_DIR" 2>/dev/null; then
		TEST_DIR=$(mktemp -d "$AR_BASE/t.XXXXXX") && chmod 0711 "$TEST_DIR" || return 1
	fi
	ROOT=$TEST_DIR/state
	BUNDLE=$TEST_DIR/bundle
	mkdir "$ROOT"
	cp -a "$AR_TEMPLATE" "$BUNDLE"
	sed -i "s/@AR_CID@/$CID/" "$BUNDLE/config.json"
	AR_AS_USER=()
	[ -z "$AR_TEST_USER" ] || ar_setup_test_user
}

# ---------------------------------------------------------------- teardown

ar_leak() {
	echo "$BATS_TEST_FILENAME: $BATS_TEST_DESCRIPTION: $*" >>"$AR_LEAKS"
	echo "leak: $*" >&2
}

# Host processes belonging to containers whose id starts with PREFIX (the
# test's CID, or the whole run's prefix): found by the AGENTRUN_TEST_ID the
# template puts in every container's environment, or by cgroup membership.
pids_matching() {
	local prefix=$1
	# Two greps over /proc rather than a bash loop over it: bats traces
	# every shell command, which makes per-process loops slow. -z: environ
	# is a list of NUL-terminated strings.
	live_pids_of $(
		grep -lsazE "^AGENTRUN_TEST_ID=${prefix}([-.].*)?\$" /proc/[0-9]*/environ
		grep -lsE "/${prefix}([-./].*)?\$" /proc/[0-9]*/cgroup
	)
}

# live_pids_of PATH...: the processes the /proc/PID/... paths name (as a
# `grep -l` over /proc prints them), once each, still running, and not
# this shell. The loop sees only the matches, almost always none: ps and
# sort start only when there is one.
live_pids_of() {
	local f pid pids=()
	for f in "$@"; do
		pid=${f#/proc/}
		pid=${pid%%/*}
		[ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ] || pids+=("$pid")
	done
	[ ${#pids[@]} -eq 0 ] || printf '%s\n' "${pids[@]}" | sort -un | live_pids
	return 0
}

# Filter a list of pids (stdin) down to those not yet exited. Zombies do
# not count: on this host pid 1 is slow to reap orphans, and a zombie holds
# no resources a container could leak.
live_pids() {
	local pids
	pids=$(paste -sd, -)
	[ -n "$pids" ] || return 0
	ps -o pid=,stat= -p "$pids" 2>/dev/null | awk '$2 !~ /^Z/ { print $1 }'
}

# pid_alive PID: running (not a zombie).
pid_alive() {
	[ -n "$(echo "$1" | live_pids)" ]
}

# Mount points (host mount namespace) under DIR, deepest last.
mounts_under() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo
}

# cgroup dirs named ID or ID-* or ID.* anywhere in the hierarchy.
cgroups_named() {
	find /sys/fs/cgroup -mindepth 1 -maxdepth 8 -type d \( -name "$1" -o -name "$1-*" -o -name "$1.*" \) 2>/dev/null
}

# Container state dirs in this test's --root. Hidden entries are the
# runtime's own (agentrun keeps a seccomp cache there), not containers.
state_entries() {
	local e
	# A glob leaves out the hidden ones.
	for e in "$ROOT"/*; do
		[ -e "$e" ] || [ -L "$e" ] && echo "${e##*/}"
	done
	return 0
}

container_ids_in_root() {
	local ids
	# A runtime keeps a directory per container in its root (runc, crun and
	# agentrun do): none there, nothing to list, and no runtime to start.
	ids=$(state_entries)
	[ -n "$ids" ] || return 0
	ids+=$'\n'$(runtime list -q 2>/dev/null)
	printf '%s\n' "$ids" | grep -v '^$' | sort -u
}

kill_tracked_pids() {
	[ -f "$TEST_DIR/pids" ] || return 0
	local p
	while read -r p; do
		kill -KILL "$p" 2>/dev/null || true
	done <"$TEST_DIR/pids"
	while read -r p; do
		wait "$p" 2>/dev/null || true
	done <"$TEST_DIR/pids"
}

# Poll: a process killed by `delete --force` may take a moment to go.
wait_no_pids() {
	local prefix=$1 i
	for ((i = 0; i < 40; i++)); do
		[ -z "$(pids_matching "$prefix")" ] && return 0
		sleep 0.05
	done
	return 1
}

common_teardown() {
	[ -n "${TEST_DIR:-}" ] && [ -d "$TEST_DIR" ] || return 0
	local id p m cg ids cgroups

	kill_tracked_pids
	if [ -f "$TEST_DIR/mounts" ]; then
		tac "$TEST_DIR/mounts" | while read -r m; do umount -l "$m" 2>/dev/null || true; done
	fi
	# Asked again after the deletes only when there was something to delete.
	ids=$(container_ids_in_root)
	for id in $ids; do
		runtime delete --force "$id" >/dev/null 2>&1 || true
	done

	# What the runtime failed to clean up is a leak: record, then remove.
	if ! wait_no_pids "$CID"; then
		for p in $(pids_matching "$CID"); do
			ar_leak "process $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null))"
			kill -KILL "$p" 2>/dev/null || true
		done
	fi
	[ -z "$ids" ] || for id in $(container_ids_in_root); do
		ar_leak "state dir $ROOT/$id"
	done
	for m in $(mounts_under "$TEST_DIR" | tac); do
		ar_leak "mount $m"
		umount -l "$m" 2>/dev/null || true
	done
	cgroups=$(cgroups_named "$CID")
	[ -z "$cgroups" ] || for cg in $(sort -r <<<"$cgroups"); do
		ar_leak "cgroup $cg"
		rmdir "$cg" 2>/dev/null || true
	done
	rm -rf --one-file-system "$TEST_DIR"
}

# The parents that cgroupsPath /$AR_RUN/<id> made, in every hierarchy.
# rmdir only removes empty ones; one that still has children is a leak.
ar_remove_run_cgroups() {
	local d
	for d in $(find /sys/fs/cgroup -mindepth 1 -maxdepth 8 -depth -type d -name "$AR_RUN" 2>/dev/null); do
		rmdir "$d" 2>/dev/null || echo "$d"
	done
}

setup() {
	common_setup
}

teardown_file() {
	local left
	left=$(ar_remove_run_cgroups)
	if [ -n "$left" ] && [ -d "$AR_BASE" ]; then
		echo "$BATS_TEST_FILENAME: cgroups not empty at the end of the file: $left" >>"$AR_LEAKS"
	fi
}

teardown() {
	common_teardown
}

# A sanitizer build (configure --enable-sanitizers): ASan's runtime takes
# locks with futex even after the container's seccomp filter is loaded, so
# a profile that denies futex makes the init spin instead of failing.
skip_if_sanitized() {
	if "$RUNTIME" --version 2>/dev/null | grep -q '^build: sanitizers'; then
		skip "sanitizer build: a filter that denies futex starves ASan's runtime"
	fi
}
