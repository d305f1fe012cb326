# SPDX-License-Identifier: Apache-2.0
# The set-up of the sandbox suites run as root (sandbox.bats,
# sandbox_cli.bats): a workspace of three files, this test's own
# configuration dir, and a teardown that fails the test when the sandbox
# left anything behind.

setup() {
	common_setup_sandbox
}

common_setup_sandbox() {
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
	sandbox_teardown
}

# sandbox ARG...: agentrun sandbox in the workspace, no terminal, stdin
# from /dev/null.
sandbox() {
	(cd "$WS" && runtime sandbox "$@")
}
