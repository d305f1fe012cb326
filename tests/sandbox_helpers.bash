# The set-up of the sandbox suites run as root (sandbox.bats,
# sandbox_cli.bats): a workspace of three files, this test's own
# configuration dir, and a teardown that fails the test when the sandbox
# left anything behind.

setup() {
	common_setup
	WS=$TEST_DIR/ws
	mkdir -p "$WS"
	echo original >"$WS/a.txt"
	echo keep >"$WS/keep.txt"
	echo doomed >"$WS/gone.txt"
	touch "$TEST_DIR/marker"
	# The configuration dir is this test's: no /etc/agentrun/agentrun.json
	# of the host changes what the sandbox does.
	export AGENTRUN_CONFIG_DIR=$TEST_DIR/cfg
	mkdir -p "$AGENTRUN_CONFIG_DIR"
}

teardown() {
	local left=""
	[ -n "${TEST_DIR:-}" ] && left=$(sandbox_leftovers)
	common_teardown
	[ -z "$left" ] || { echo "sandbox left: $left" >&2; return 1; }
}

# What a finished sandbox must not leave behind.
sandbox_leftovers() {
	local p
	[ -d "$ROOT" ] || return 0
	find "$ROOT" -mindepth 1 -maxdepth 1 ! -name .seccomp-cache ! -name .sandbox ! -name .audit-heads -printf 'state %p\n'
	[ ! -d "$ROOT/.sandbox" ] || find "$ROOT/.sandbox" -mindepth 1 -printf 'bundle %p\n'
	mounts_under "$ROOT" | sed 's/^/mount /'
	mounts_under "$TEST_DIR" | sed 's/^/mount /'
	for p in $(grep -lsF -- "$ROOT" /proc/[0-9]*/cmdline | sed -n 's|^/proc/\([0-9]*\)/.*|\1|p' | live_pids); do
		[ "$p" = "$$" ] || [ "$p" = "$BASHPID" ] || echo "process $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
	done
	find /sys/fs/cgroup -mindepth 1 -maxdepth 4 -type d -name 'sandbox-*' -newer "$TEST_DIR/marker" 2>/dev/null | sed 's/^/cgroup /'
}

# sandbox ARG...: agentrun sandbox in the workspace, no terminal, stdin
# from /dev/null.
sandbox() {
	(cd "$WS" && runtime sandbox "$@")
}
