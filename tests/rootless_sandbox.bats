#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# `agentrun sandbox` run by an ordinary user (uid 1500 unless AR_TEST_USER, no groups, no
# capabilities): the same sandbox as root gets, from a user namespace of
# its own. Every test ends by checking the user's sandbox left nothing:
# no state or bundle dir, no mount on the host, no process.

load helpers

setup() {
	common_setup
	WS=$TEST_DIR/ws
	mkdir -p "$WS"
	echo original >"$WS/a.txt"
	chown -R "$AR_TEST_USER:$AR_TEST_USER" "$WS"
	export AGENTRUN_CONFIG_DIR=$TEST_DIR/cfg
	mkdir -p "$AGENTRUN_CONFIG_DIR"
	# The user's own processes (its systemd instance, in the VM) are not
	# the test's; nor are those its instance starts later (user_manager_service).
	USER_PIDS_BEFORE=" $(pgrep -u "$AR_TEST_USER" | tr '\n' ' ')"
}

teardown() {
	local left=""
	[ -z "${POOL:-}" ] || user_pool_rm
	[ -n "${TEST_DIR:-}" ] && left=$(user_sandbox_leftovers)
	[ -z "${NETNS_PREFIX:-}" ] || remove_test_netns
	common_teardown
	[ -z "$left" ] || { echo "sandbox left: $left" >&2; return 1; }
}

# A unit of the user's systemd instance (its session bus, started when a
# sandbox first asked for a scope), not in one of agentrun's scopes.
user_manager_service() {
	local cg
	cg=$(cat "/proc/$1/cgroup" 2>/dev/null) || return 1
	[[ $cg == *"/user@$AR_TEST_USER.service/"* && $cg != *"/agentrun-"* ]]
}

# A process of the other bats run that shares this user in the test VM
# (tests/vm/guest-suites.sh: rootless Podman's suite runs beside this
# one): it carries that run's prefix, or is in one of Podman's scopes.
other_runs_process() {
	local env
	env=$(tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | grep '^AGENTRUN_TEST_RUN=') || true
	[ -n "$env" ] && [ "$env" != "AGENTRUN_TEST_RUN=$AR_RUN" ] && return 0
	grep -qs 'libpod' "/proc/$1/cgroup"
}

user_sandbox_leftovers() {
	[ -d "$ROOT" ] || return 0
	find "$ROOT" -mindepth 1 -maxdepth 1 ! -name .seccomp-cache ! -name .sandbox ! -name .audit-heads -printf 'state %p\n'
	[ ! -d "$ROOT/.sandbox" ] || find "$ROOT/.sandbox" -mindepth 1 -printf 'bundle %p\n'
	[ ! -d "$TEST_DIR/xdg/agentrun-egress" ] || find "$TEST_DIR/xdg/agentrun-egress" -mindepth 1 -printf 'egress %p\n'
	[ ! -d "$TEST_DIR/xdg/netns" ] || find "$TEST_DIR/xdg/netns" -mindepth 1 -printf 'netns %p\n'
	mounts_under "$TEST_DIR" | sed 's/^/mount /'
	local p left=()
	for p in $(pgrep -u "$AR_TEST_USER" | live_pids); do
		[[ $USER_PIDS_BEFORE == *" $p "* ]] && continue
		user_manager_service "$p" 2>/dev/null && continue
		other_runs_process "$p" 2>/dev/null && continue
		left+=("$p")
	done
	# One that ends by itself within a second (the other run's, whose
	# /proc entry was gone before it could be told apart) is no leak.
	[ ${#left[@]} -eq 0 ] || sleep 1
	for p in "${left[@]}"; do
		pid_alive "$p" && echo "process $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
	done
	return 0
}

# user_pool VERB ARGS...: `agentrun pool` as the test user, in $WS.
user_pool() {
	as_user_in_ws "$RUNTIME" --root "$ROOT" pool "$@"
}

# The pool goes, and with it the filler a take started (it ends once it
# has the lock and sees no pool).
user_pool_rm() {
	user_pool rm "$POOL" >/dev/null 2>&1 || true
	local i
	for i in $(seq 1 100); do
		[ -z "$(live_pids_of $(grep -lsF -- "pool fill $POOL" /proc/[0-9]*/cmdline))" ] && return 0
		sleep 0.05
	done
}

# The processes holding this test's pooled sandboxes' namespaces (their
# command line is the filler's, with this test's state root).
holders() {
	local p
	for p in $(pgrep -u "$AR_TEST_USER" -x agentrun-hold | live_pids); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$ROOT" && echo "$p"
	done
	return 0
}

# assert_pasta_gone MESSAGE: pasta exits once the sandbox's netns goes
# (within 2 s), else MESSAGE.
assert_pasta_gone() {
	local i
	for i in $(seq 1 40); do
		[ -n "$(pgrep -u "$AR_TEST_USER" 'pasta|passt' | live_pids)" ] || return 0
		sleep 0.05
	done
	fail "$1"
}

# wait_for_port ADDR PORT: until a TCP server listens there (5 s).
wait_for_port() {
	local i
	for i in $(seq 1 100); do
		(exec 3<>"/dev/tcp/$1/$2") 2>/dev/null && return 0
		sleep 0.05
	done
	echo "nothing listens on $1:$2" >&2
	return 1
}

# as_user_in_ws [VAR=VALUE...] CMD...: CMD as the test user, in $WS,
# within AR_TIMEOUT seconds.
as_user_in_ws() {
	(cd "$WS" && timeout -k 5 "$AR_TIMEOUT" "${AR_AS_USER[@]}" "$@" </dev/null)
}

# user_sandbox ARGS...: `agentrun sandbox` as the test user, in $WS.
user_sandbox() {
	as_user_in_ws "$RUNTIME" --root "$ROOT" sandbox --no-tty "$@"
}

@test "user sandbox: the command runs as the user's mapped root and its status comes back" {
	run user_sandbox -- sh -c 'echo "uid:$(id -u)"; cat /proc/self/uid_map; exit 7'
	assert_failure 7
	assert_output_contains "$(printf "%10u %10u %10u" 0 "$AR_TEST_USER" 1)"
	assert_output_contains "uid:0"
	# Its default limits have no cgroup here: said, by name.
	assert_output_contains "not enforced"
	assert_output_contains "memory"
}

@test "user sandbox: the host's root and the workspace are writable, ephemeral, and --diff has the workspace's changes" {
	run user_sandbox --diff "$TEST_DIR/ch.diff" -- sh -c 'echo changed >a.txt; echo new >b.txt
		touch /usr/agentrun-probe && echo root-write-ok; cat /etc/os-release | head -1'
	assert_success
	assert_output_contains root-write-ok
	assert_output_contains "PRETTY_NAME"
	[ ! -e /usr/agentrun-probe ] || fail "a write reached the host's /usr"
	assert_equal "$(cat "$WS/a.txt")" original
	[ ! -e "$WS/b.txt" ] || fail "the real workspace was written"
	grep -q '^+changed' "$TEST_DIR/ch.diff" || fail "no change of a.txt in the diff"
	grep -q '^+new' "$TEST_DIR/ch.diff" || fail "no b.txt in the diff"
}

@test "user sandbox: --rootfs the user owns is the root, under the overlay; one of host root's names the directory it cannot add to" {
	local own=$TEST_DIR/own-rootfs theirs=$TEST_DIR/root-rootfs
	cp -a "$AR_ROOTFS" "$own"
	cp -a "$AR_ROOTFS" "$theirs"
	chown -R 0:0 "$theirs"
	echo from-rootfs >"$own/marker"
	chown -R "$AR_TEST_USER:$AR_TEST_USER" "$own"
	run user_sandbox --rootfs "$own" -- sh -c 'cat /marker; echo x >/etc/added && echo write-ok; cat a.txt'
	assert_success
	assert_output_contains from-rootfs
	assert_output_contains write-ok
	assert_output_contains original
	[ ! -e "$own/etc/added" ] || fail "a write reached the rootfs"

	# Host root's rootfs: overlayfs cannot copy /tmp (owner unmapped) up
	# to make the workspace's mount point in it.
	run user_sandbox --rootfs "$theirs" -- true
	assert_failure
	assert_output_contains "is owned by an id outside the user namespace"
}

@test "user sandbox: a secret at /run/secrets, its host file hidden; /output exported to the user; the audit log verifies" {
	echo s3cr3t >"$TEST_DIR/token"
	mkdir -p "$TEST_DIR/out"
	chown "$AR_TEST_USER:$AR_TEST_USER" "$TEST_DIR/token" "$TEST_DIR/out"
	chmod 0600 "$TEST_DIR/token"
	run user_sandbox -s "tok=$TEST_DIR/token" -o "$TEST_DIR/out" --audit "$TEST_DIR/audit.log" -- \
		sh -c "cat /run/secrets/tok; cat '$TEST_DIR/token' || echo source-hidden; echo artifact >/output/r.txt"
	assert_success
	assert_output_contains s3cr3t
	assert_output_contains source-hidden
	local got
	got=$(find "$TEST_DIR/out" -name r.txt)
	[ -n "$got" ] || fail "no r.txt exported"
	assert_equal "$(cat "$got")" artifact
	assert_equal "$(stat -c %u "$got")" "$AR_TEST_USER"
	run "$RUNTIME" audit "$TEST_DIR/audit.log"
	assert_success
	grep -q '"event":"create"' "$TEST_DIR/audit.log" || fail "no create in the audit log"
	! grep -q s3cr3t "$TEST_DIR/audit.log" || fail "the secret reached the audit log"
}

@test "user sandbox: /root and /etc/shadow are hidden; seccomp and no_new_privs are on" {
	run user_sandbox -- sh -c 'echo "root:$(ls -A /root | wc -l)"; echo "shadow:$(wc -c </etc/shadow)"; grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status'
	assert_success
	assert_output_contains "root:0"
	assert_output_contains "shadow:0"
	assert_output_contains $'NoNewPrivs:\t1'
	assert_output_contains $'Seccomp:\t2'
}

@test "user sandbox: the wall-clock limit ends the command" {
	run user_sandbox --timeout 1s -- sleep 30
	assert_failure 124
	assert_output_contains "wall-clock limit"
}

@test "user sandbox: no network by default; the host's loopback is out of reach" {
	busybox httpd -f -p 127.0.0.1:18931 -h "$TEST_DIR" &
	track_pid $!
	wait_for_port 127.0.0.1 18931
	run user_sandbox -- sh -c 'echo "links:$(ip -o link | grep -cv " lo:")"; timeout 3 busybox wget -q -O /dev/null http://127.0.0.1:18931/ && echo reached || echo refused'
	assert_output_contains refused
	refute_output_contains reached
	assert_output_contains "links:0"
}

@test "user sandbox: no process in it can write the runtime's binary through /proc/*/exe, root's or the user's own" {
	# A binary the user owns is one the sandbox's root (the user, mapped)
	# could write: it runs from a sealed copy. Root's is out of its reach.
	mkdir -p "$TEST_DIR/own"
	ar_copy_binaries "$RUNTIME" "$TEST_DIR/own"
	chown -R "$AR_TEST_USER:$AR_TEST_USER" "$TEST_DIR/own"
	local bin before
	for bin in "$RUNTIME" "$TEST_DIR/own/agentrun"; do
		before=$(cat "$bin" "$(ar_runtime_program "$bin")" | sha256sum)
		run as_user_in_ws \
			"$bin" --root "$ROOT" sandbox --no-tty -- sh -c '
				for f in /proc/[0-9]*/exe; do
					echo x >>"$f" 2>/dev/null && echo "appended $f"
				done; readlink /proc/1/exe'
		assert_success
		refute_output_contains appended
		[ "$(cat "$bin" "$(ar_runtime_program "$bin")" | sha256sum)" = "$before" ] || fail "$bin changed"
	done
	# The user's own binary ran as the sealed copy (/proc/1/exe, the
	# sandbox's init, is the memfd), root's as itself.
	assert_output_contains "memfd:agentrun"
}

# Test hosts in namespaces of the test's own: the sandbox runs in CLIENT,
# which reaches HOST1 (10.77.1.2) and HOST2 (10.77.2.2), each serving its
# name over HTTP; CLIENT's own loopback serves "client-loopback".
make_test_network() {
	NETNS_PREFIX=ar$$
	local c=${NETNS_PREFIX}c h
	ip netns add "$c"
	ip -n "$c" link set lo up
	for h in 1 2; do
		ip netns add "${NETNS_PREFIX}h$h"
		ip link add "v$h" netns "$c" type veth peer name e0 netns "${NETNS_PREFIX}h$h"
		ip -n "$c" addr add "10.77.$h.1/24" dev "v$h"
		ip -n "$c" link set "v$h" up
		ip -n "${NETNS_PREFIX}h$h" addr add "10.77.$h.2/24" dev e0
		ip -n "${NETNS_PREFIX}h$h" link set e0 up
		ip -n "${NETNS_PREFIX}h$h" link set lo up
		mkdir -p "$TEST_DIR/www$h"
		echo "host$h" >"$TEST_DIR/www$h/index.html"
		ip netns exec "${NETNS_PREFIX}h$h" busybox httpd -f -p 80 -h "$TEST_DIR/www$h" &
		track_pid $!
	done
	ip -n "$c" route add default via 10.77.1.2
	mkdir -p "$TEST_DIR/wwwc"
	echo client-loopback >"$TEST_DIR/wwwc/index.html"
	ip netns exec "$c" busybox httpd -f -p 127.0.0.1:80 -h "$TEST_DIR/wwwc" &
	track_pid $!
	sleep 0.3
}

remove_test_netns() {
	kill_tracked_pids
	local n
	for n in c h1 h2; do ip netns del "$NETNS_PREFIX$n" 2>/dev/null || true; done
}

# as_user_in_client_netns TUN_MODE CMD...: CMD as the test user in the
# test network's client netns, as a user runs it: XDG_RUNTIME_DIR is
# /run/user/UID, on a tmpfs of the netns's own mount namespace, so
# nothing of it reaches the host;
# /dev/net/tun is a node of mode TUN_MODE bound there too (udev makes it
# 0666; a host without udev may have 0600). SIGPIPE is ignored, as under
# a systemd service: the pasta it spawns must still get default signals
# (Debian 12's pasta exits otherwise). Ends with a line "netns dir: ."
# when $XDG_RUNTIME_DIR/netns was left empty; exits with CMD's status.
as_user_in_client_netns() {
	local tun_mode=$1 xdg=/run/user/$AR_TEST_USER
	shift
	ip netns exec "${NETNS_PREFIX}c" bash -c 'trap "" PIPE
		mount -t tmpfs -o mode=0755 tmpfs /run && mkdir -p "$1" && chown "$2:$2" "$1" && chmod 0700 "$1" || exit 99
		mknod -m "$4" /run/tun c 10 200 && mount --bind /run/tun /dev/net/tun || exit 99
		d=$1 && cd "$3" && shift 4 && "$@"
		status=$?
		echo "netns dir: $(ls -A "$d/netns" 2>&1)."
		exit $status' _ "$xdg" "$AR_TEST_USER" "$WS" "$tun_mode" \
		timeout 30 "${AR_AS_USER[@]}" XDG_RUNTIME_DIR="$xdg" "$@" </dev/null
}

# user_sandbox_in_client_netns TUN_MODE SANDBOX_ARGS...: `sandbox
# --no-tty SANDBOX_ARGS` that way.
user_sandbox_in_client_netns() {
	local tun_mode=$1
	shift
	as_user_in_client_netns "$tun_mode" "$RUNTIME" --root "$ROOT" sandbox --no-tty "$@"
}

@test "user sandbox: --allow-net reaches the allowed test host through pasta, not another, nor the host's loopback" {
	command -v pasta >/dev/null || skip "no pasta (apt-get install passt)"
	make_test_network
	run user_sandbox_in_client_netns 0666 --allow-net 10.77.1.2 -- \
		sh -c 'for a in 10.77.1.2 10.77.2.2 127.0.0.1; do echo "$a: $(timeout 3 busybox wget -q -O- http://$a/ || echo refused)"; done
			gw=$(ip route | sed -n "s/^default via \([^ ]*\).*/\1/p"); echo "gateway $gw: $(timeout 3 busybox wget -q -O- http://$gw/ || echo refused)"'
	assert_success
	assert_output_contains "10.77.1.2: host1"
	assert_output_contains "10.77.2.2: refused"
	assert_output_contains "127.0.0.1: refused"
	# The gateway is the real one (host1), never the client's loopback.
	refute_output_contains client-loopback
	# pasta was given $XDG_RUNTIME_DIR/netns/agentrun-ID (where the AppArmor
	# profile Debian ships for it allows), which is gone afterwards; pasta
	# exits when it goes.
	assert_output_contains "netns dir: ."
	assert_pasta_gone "pasta outlived the sandbox"
}

@test "user sandbox: --allow-net NAME reaches that name, and its address by no other name (the name gate)" {
	command -v pasta >/dev/null || skip "no pasta (apt-get install passt)"
	command -v dnsmasq >/dev/null || skip "no dnsmasq (contrib/install-deps.sh)"
	make_test_network
	# good.test and evil.test: one address (host1), as sites behind one
	# CDN edge are; the resolver answers only the allowed one.
	ip netns exec "${NETNS_PREFIX}h1" dnsmasq -C /dev/null --no-resolv --no-hosts \
		--bind-interfaces --listen-address=10.77.1.2 --port=53 --pid-file="$TEST_DIR/dnsmasq.pid" \
		--address=/good.test/10.77.1.2 --address=/evil.test/10.77.1.2
	track_pid "$(cat "$TEST_DIR/dnsmasq.pid")"
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	echo '{"extends": "agent", "network": {"upstream": "10.77.1.2"}}' >"$AGENTRUN_CONFIG_DIR/profiles/names.json"
	chmod -R a+rX "$AGENTRUN_CONFIG_DIR"
	run as_user_in_client_netns 0666 "$RUNTIME" --root "$ROOT" --profile names sandbox --no-tty \
		--allow-net good.test -- sh -c '
			echo "good: $(timeout 3 busybox wget -q -O- http://good.test/ || echo refused)"
			echo "evil: $(timeout 3 busybox wget -q -O- --header "Host: evil.test" http://good.test/ || echo refused)"'
	assert_success
	assert_output_contains "good: host1"
	assert_output_contains "evil: refused"
	assert_pasta_gone "pasta outlived the sandbox"
}

@test "user sandbox: --allow-net 0.0.0.0/0 reaches other hosts but none of the host's own addresses (a service on 0.0.0.0)" {
	command -v pasta >/dev/null || skip "no pasta (apt-get install passt)"
	make_test_network
	# A service of "the host" (the client netns the user runs in) on every
	# address: 10.77.2.1 stands for docker0's 172.17.0.1.
	mkdir -p "$TEST_DIR/wwwh"
	echo host-service >"$TEST_DIR/wwwh/index.html"
	ip netns exec "${NETNS_PREFIX}c" busybox httpd -f -p 0.0.0.0:8081 -h "$TEST_DIR/wwwh" &
	track_pid $!
	sleep 0.3
	run user_sandbox_in_client_netns 0666 --allow-net 0.0.0.0/0 -- \
		sh -c 'echo "other host: $(timeout 3 busybox wget -q -O- http://10.77.2.2/ || echo refused)"
			echo "host: $(timeout 3 busybox wget -q -O- http://10.77.2.1:8081/ || echo refused)"'
	assert_success
	assert_output_contains "other host: host2"
	assert_output_contains "host: refused"
	refute_output_contains host-service
}

@test "user sandbox: --approver: a held connection goes through once the user's approver allows it, another is refused" {
	command -v pasta >/dev/null || skip "no pasta (apt-get install passt)"
	make_test_network
	local dir=$TEST_DIR/approver
	mkdir -p "$dir" && chown "$AR_TEST_USER:$AR_TEST_USER" "$dir"
	printf '%s\n' "allow-once connect 10.77.2.2:80" "deny * *" >"$dir/rules"
	"${AR_AS_USER[@]}" "$RUNTIME" approve --socket "$dir/sock" --rules "$dir/rules" \
		</dev/null >"$dir/log" 2>&1 &
	local approver=$!
	track_pid "$approver"
	wait_for_file "$dir/sock"
	run user_sandbox_in_client_netns 0666 --allow-net 10.77.1.2 --approver "$dir/sock" -- \
		sh -c 'for a in 10.77.1.2 10.77.2.2 127.0.0.1; do echo "$a: $(timeout 8 busybox wget -q -O- http://$a/ || echo refused)"; done'
	assert_success
	assert_output_contains "10.77.1.2: host1"
	assert_output_contains "10.77.2.2: host2"
	assert_output_contains "127.0.0.1: refused"
	grep -q "connect 10.77.2.2:80: allow-once (rule" "$dir/log" || fail "approver: $(cat "$dir/log")"
	run grep -c "10.77.1.2\|127.0.0.1" "$dir/log"
	assert_output "0"
	assert_pasta_gone "pasta outlived the sandbox"
	kill -TERM "$approver"
	wait "$approver" || true
	[ ! -e "$dir/sock" ] || fail "approve left its socket"
}

@test "user sandbox: --allow-net where /dev/net/tun is not the user's says so in one line, and leaves nothing" {
	command -v pasta >/dev/null || skip "no pasta (apt-get install passt)"
	make_test_network
	run user_sandbox_in_client_netns 0600 --allow-net 10.77.1.2 -- echo ran
	assert_failure
	refute_output_contains ran
	assert_output_contains "/dev/net/tun is mode 0600, not read-writable by this user"
	[ "$(grep -c '^agentrun: .*tun' <<<"$output")" = 1 ] || fail "not one line: $output"
	assert_output_contains "netns dir: ."
	[ -z "$(pgrep -u "$AR_TEST_USER" 'pasta|passt' | live_pids)" ] || fail "pasta left running"
}

@test "user sandbox: under a systemd user instance its limits hold, in a delegated scope that goes with it" {
	local xdg
	require_user_systemd
	AR_TIMEOUT=60 run as_user_in_ws \
		XDG_RUNTIME_DIR="$xdg" "$RUNTIME" --root "$ROOT" sandbox --no-tty --memory 32m --pids 40 -- \
		sh -c 'cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max; head -c 100m /dev/zero | tail >/dev/null; echo "tail $?"'
	assert_output_contains 33554432
	assert_output_contains 40
	assert_output_contains "tail 137"
	refute_output_contains "not enforced"
	[ -z "$(user_scopes sandbox-)" ] || fail "scope left: $(user_scopes sandbox-)"
	# The profile's own defaults too, without a word about them.
	AR_TIMEOUT=60 run as_user_in_ws \
		XDG_RUNTIME_DIR="$xdg" "$RUNTIME" --root "$ROOT" sandbox --no-tty -- cat /sys/fs/cgroup/pids.max
	assert_success
	refute_output_contains "not enforced"
	[[ ${lines[-1]} =~ ^[0-9]+$ ]] || fail "no pids limit: ${lines[-1]}"
}

@test "user sandbox: --memory without a delegated cgroup is refused by name, and runs with --rootless-limits=ignore" {
	run user_sandbox --memory 64m -- true
	assert_failure
	# In the sandbox's own terms, with advice a user can follow: the flag
	# goes before the verb.
	assert_output_contains "agentrun: sandbox: --memory 64m: no cgroup to enforce it in without root"
	assert_output_contains "agentrun --rootless-limits=ignore sandbox"
	refute_output_contains "config.json"
	[ "${#lines[@]}" -eq 1 ] || fail "more than one line"
	run as_user_in_ws \
		"$RUNTIME" --root "$ROOT" --rootless-limits=ignore sandbox --no-tty --memory 64m -- echo ran
	assert_success
	assert_output_contains ran
	assert_output_contains "not enforced"
}

@test "user sandbox: --ask-secrets and --ask-program need root (fanotify permission events): one line each, nothing left" {
	local sock=$TEST_DIR/approve.sock
	run user_sandbox --approver "$sock" --ask-program 'git push' -- echo ran
	assert_failure
	assert_output_contains "programs.ask needs root (fanotify's permission events)"
	refute_output_contains ran
	[ "${#lines[@]}" -eq 1 ] || fail "more than one line"
	echo tok >"$TEST_DIR/tok" && chown "$AR_TEST_USER" "$TEST_DIR/tok"
	run user_sandbox --approver "$sock" --ask-secrets --secret "T=$TEST_DIR/tok" -- echo ran
	assert_failure
	assert_output_contains "secrets.ask needs root"
	[ "${#lines[@]}" -eq 1 ] || fail "more than one line"
	[ -z "$(state_entries)" ] || fail "left: $(state_entries)"
}

@test "user sandbox: without XDG_RUNTIME_DIR or --root, one line says where state goes" {
	run bash -c 'cd "$1" && shift && "$@"' _ "$WS" \
		setpriv --reuid="$AR_TEST_USER" --regid="$AR_TEST_USER" --clear-groups env -u XDG_RUNTIME_DIR "$RUNTIME" sandbox --no-tty -- true </dev/null
	assert_failure
	assert_output_contains "XDG_RUNTIME_DIR"
	[ "${#lines[@]}" -eq 1 ] || fail "more than one line"
}

@test "user pool: sandboxes made ahead without root; a take is confined as a fresh one, with --diff and /output; rm leaves nothing" {
	POOL=up$$
	mkdir -p "$TEST_DIR/out"
	chown "$AR_TEST_USER:$AR_TEST_USER" "$TEST_DIR/out"
	run user_pool create "$POOL" --size 2 -o "$TEST_DIR/out"
	assert_success
	run user_pool list
	assert_output_contains "$POOL"$'\t2\t2'
	# Each waiting sandbox's overlay lives in namespaces its holder keeps.
	assert_equal "$(holders | wc -l)" 2

	run as_user_in_ws "$RUNTIME" --root "$ROOT" sandbox --pool "$POOL" --diff "$TEST_DIR/ch.diff" -- \
		sh -c 'echo changed >a.txt; echo artifact >/output/r.txt; cat /proc/self/uid_map
			grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status; echo "shadow:$(wc -c </etc/shadow)"; exit 4'
	assert_failure 4
	assert_output_contains "$(printf "%10u %10u %10u" 0 "$AR_TEST_USER" 1)"
	assert_output_contains $'NoNewPrivs:\t1'
	assert_output_contains $'Seccomp:\t2'
	assert_output_contains "shadow:0"
	grep -q '^+changed' "$TEST_DIR/ch.diff" || fail "no change of a.txt in the diff"
	assert_equal "$(cat "$WS/a.txt")" original
	local got
	got=$(find "$TEST_DIR/out" -name r.txt)
	[ -n "$got" ] || fail "no r.txt exported"
	assert_equal "$(cat "$got")" artifact

	# The filler the take started makes the pool whole again.
	local i
	for i in $(seq 1 200); do
		[ "$(holders | wc -l)" -eq 2 ] && break
		sleep 0.05
	done
	assert_equal "$(holders | wc -l)" 2
	run user_pool rm "$POOL"
	assert_success
	[ -z "$(holders)" ] || fail "holders left: $(holders)"
}

@test "user pool: a sandbox whose namespaces' holder was killed is deleted with a warning, and the take runs in the next one" {
	POOL=uq$$
	run user_pool create "$POOL" --size 1
	assert_success
	local h id
	h=$(holders)
	[ -n "$h" ] || fail "no holder"
	id=$(ls "$ROOT/.pool/$POOL/ready")
	kill -KILL $h
	run as_user_in_ws "$RUNTIME" --root "$ROOT" sandbox --pool "$POOL" -- echo ran
	assert_success
	assert_output_contains ran
	assert_output_contains "warning: pool \`$POOL\`: container \`$id\`: its namespaces are gone"
	[ ! -e "$ROOT/$id" ] || fail "the broken sandbox's state is left"
}

@test "user pool: an init killed after the take connected is deleted with a warning, and the take runs in the next one" {
	POOL=ur$$
	run user_pool create "$POOL" --size 1
	assert_success
	local id pid
	id=$(ls "$ROOT/.pool/$POOL/ready")
	pid=$(jq -r .pid "$ROOT/$id/state.json")
	kill -STOP "$pid"
	started_in_bg as_user_in_ws "$RUNTIME" --root "$ROOT" sandbox --pool "$POOL" -- echo ran
	connected_to "$id"
	kill -KILL "$pid"
	wait_bg 30
	[ "$RC" -eq 0 ] || fail "status $RC: $(cat "$TEST_DIR/bg.out" "$TEST_DIR/bg.err")"
	grep -qx ran "$TEST_DIR/bg.out" || fail "$(cat "$TEST_DIR/bg.out" "$TEST_DIR/bg.err")"
	grep -qF "warning: pool \`$POOL\`: container \`$id\`: its init is gone; deleted, another taken" "$TEST_DIR/bg.err" \
		|| fail "$(cat "$TEST_DIR/bg.err")"
	[ ! -e "$ROOT/$id" ] || fail "the dead sandbox's state is left"
}

@test "user pool: --allow-net: a pooled sandbox reaches the allowed test host and not another; rm leaves no pasta, netns file or lease" {
	command -v pasta >/dev/null || skip "no pasta (apt-get install passt)"
	make_test_network
	POOL=un$$
	# Made, taken (which starts a filler for the next one) and removed in
	# one go: the client netns and its /run are this command's.
	run as_user_in_client_netns 0666 sh -c '
		"$1" --root "$2" pool create "$3" --size 1 --allow-net 10.77.1.2 2>/dev/null || exit 90
		"$1" --root "$2" sandbox --pool "$3" -- sh -c "for a in 10.77.1.2 10.77.2.2; do
			echo \"\$a: \$(timeout 3 busybox wget -q -O- http://\$a/ || echo refused)\"; done" || exit 91
		"$1" --root "$2" pool rm "$3" || exit 92' _ "$RUNTIME" "$ROOT" "$POOL"
	assert_success
	assert_output_contains "10.77.1.2: host1"
	assert_output_contains "10.77.2.2: refused"
	assert_output_contains "netns dir: ."
	[ -z "$(holders)" ] || fail "holders left: $(holders)"
	assert_pasta_gone "pasta outlived the pool"
}
