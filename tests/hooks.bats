#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# OCI hooks: every phase, the state on stdin, args, env, failure, timeout.

load helpers

setup() {
	common_setup
	# Hooks record into a host dir that the container also sees at /hooks
	# (startContainer runs inside the container).
	HOOKS=$(host_dir hooks)
	chmod 0777 "$HOOKS"
	update_config '.mounts += [{"destination": "/hooks", "type": "bind", "source": $s, "options": ["bind", "rw"]}]' \
		--arg s "$HOOKS"
	# One script, on the host and in the rootfs: phase name and output dir
	# as arguments; state from stdin into PHASE.json, phase into order.
	cat >"$TEST_DIR/hook.sh" <<'EOF'
#!/bin/sh
phase=$1 dir=$2
cat >"$dir/$phase.json"
echo "$phase" >>"$dir/order"
EOF
	chmod 0755 "$TEST_DIR/hook.sh"
	cp "$TEST_DIR/hook.sh" "$BUNDLE/rootfs/hook.sh"
}

# hook PHASE: a hook entry that records PHASE (host or container path).
hook_json() {
	local phase=$1 script=$TEST_DIR/hook.sh dir=$HOOKS
	if [ "$phase" = startContainer ]; then
		script=/hook.sh
		dir=/hooks
	fi
	jq -cn --arg p "$script" --arg ph "$phase" --arg d "$dir" \
		'{"path": $p, "args": ["hook.sh", $ph, $d]}'
}

add_hook() {
	update_config '.hooks[$ph] += [$h]' --arg ph "$1" --argjson h "${2:-$(hook_json "$1")}"
}

@test "every phase runs in order with the state on stdin" {
	local ph
	for ph in prestart createRuntime createContainer startContainer poststart poststop; do
		add_hook "$ph"
	done
	set_args sleep 1000
	ctr_create
	local pid
	pid=$(ctr_pid)
	assert_equal "$(cat "$HOOKS/order")" $'prestart\ncreateRuntime\ncreateContainer'
	runtime start "$CID"
	wait_for_state "$CID" running
	wait_for_file "$HOOKS/poststart.json"
	assert_equal "$(cat "$HOOKS/order")" $'prestart\ncreateRuntime\ncreateContainer\nstartContainer\npoststart'
	[ ! -e "$HOOKS/poststop.json" ] || fail "poststop ran before delete"

	runtime kill "$CID" KILL
	wait_for_state "$CID" stopped
	[ ! -e "$HOOKS/poststop.json" ] || fail "poststop ran before delete"
	runtime delete "$CID"
	wait_for_file "$HOOKS/poststop.json"

	for ph in prestart createRuntime createContainer startContainer poststart poststop; do
		jq -e --arg id "$CID" --arg b "$BUNDLE" \
			'.id == $id and .bundle == $b and (.ociVersion | length > 0)' \
			"$HOOKS/$ph.json" >/dev/null || fail "$ph got: $(cat "$HOOKS/$ph.json")"
	done
	for ph in prestart createRuntime createContainer startContainer poststart; do
		jq -e --argjson pid "$pid" '.pid == $pid' "$HOOKS/$ph.json" >/dev/null \
			|| fail "$ph: pid is not $pid: $(cat "$HOOKS/$ph.json")"
	done
	assert_equal "$(jq -r .status "$HOOKS/createRuntime.json")" creating
	assert_equal "$(jq -r .status "$HOOKS/startContainer.json")" created
	assert_equal "$(jq -r .status "$HOOKS/poststart.json")" running
	assert_equal "$(jq -r .status "$HOOKS/poststop.json")" stopped
}

@test "annotations reach the hooks" {
	update_config '.annotations = {"org.example.hooked": "yes"}'
	add_hook createRuntime
	set_args true
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_success
	assert_equal "$(jq -r '.annotations["org.example.hooked"]' "$HOOKS/createRuntime.json")" yes
}

@test "run runs poststop when the container is removed" {
	add_hook poststop
	set_args true
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_success
	wait_for_file "$HOOKS/poststop.json"
}

@test "hook args and env are passed as given" {
	# /proc/$$/environ is the environment the runtime gave the hook (a
	# shell would add its own defaults to what `env` shows).
	add_hook createRuntime "$(jq -cn --arg out "$HOOKS/args" \
		'{"path": "/bin/sh", "args": ["sh", "-c", "echo \"$0|$1\" > \"$1\"; tr \"\\0\" \"\\n\" < /proc/$$/environ >> \"$1\"", "zero", $out],
		  "env": ["HOOK_VAR=from-config", "OTHER=x=y"]}')"
	set_args true
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_success
	# env is exactly the hook's: nothing from the runtime's environment.
	assert_equal "$(cat "$HOOKS/args")" "zero|$HOOKS/args"$'\nHOOK_VAR=from-config\nOTHER=x=y'
}

@test "a failing createRuntime hook fails create" {
	add_hook createRuntime '{"path": "/bin/false"}'
	set_args true
	run runtime_bg create --bundle "$BUNDLE" "$CID"
	assert_failure
	run runtime state "$CID"
	assert_failure
}

@test "a failing prestart hook fails run, and the process never starts" {
	add_hook prestart '{"path": "/bin/sh", "args": ["sh", "-c", "exit 3"]}'
	set_args touch /started
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_failure
	[ ! -e "$BUNDLE/rootfs/started" ] || fail "process ran after a failed prestart hook"
	run runtime state "$CID"
	assert_failure
}

@test "a failing createContainer hook fails create" {
	add_hook createContainer '{"path": "/bin/false"}'
	set_args true
	run runtime_bg create --bundle "$BUNDLE" "$CID"
	assert_failure
}

@test "a failing startContainer hook stops the container before the process runs" {
	add_hook startContainer '{"path": "/bin/false"}'
	set_args touch /started
	ctr_create
	# runc's start returns 0 here (the hook runs in init after start has
	# released it); the spec only requires an error and a stopped container.
	runtime start "$CID" || true
	wait_for_state "$CID" stopped
	[ ! -e "$BUNDLE/rootfs/started" ] || fail "process ran after a failed startContainer hook"
}

@test "a failing poststart hook is a warning in runc's words: start succeeds and the process runs on" {
	# The runtime spec's rule, and crun's; runc 1.1.5 kills the container
	# (docs/runc-compat.md).
	add_hook poststart '{"path": "/bin/false"}'
	set_args sleep 1000
	ctr_create
	run runtime start "$CID"
	assert_success
	assert_output_contains "warning: poststart: error running hook #0 (poststart /bin/false): exit status 1"
	assert_equal "$(runtime state "$CID" | jq -r .status)" running
}

@test "a missing hook binary fails create" {
	add_hook createRuntime '{"path": "/no/such/hook"}'
	set_args true
	run runtime_bg create --bundle "$BUNDLE" "$CID"
	assert_failure
}

@test "a failing poststop hook does not stop delete" {
	add_hook poststop '{"path": "/bin/false"}'
	set_args sleep 1000
	ctr_run_bg
	run runtime delete --force "$CID"
	assert_success
	run runtime state "$CID"
	assert_failure
}

@test "a hook that outlives its timeout is killed and fails create" {
	add_hook createRuntime '{"path": "/bin/sh", "args": ["sh", "-c", "exec sleep 20"], "timeout": 1}'
	set_args true
	local start=$SECONDS
	run runtime_bg create --bundle "$BUNDLE" "$CID"
	assert_failure
	[ $((SECONDS - start)) -lt 10 ] || fail "timeout not enforced ($((SECONDS - start))s)"
	run runtime state "$CID"
	assert_failure
}

@test "a hook within its timeout succeeds" {
	add_hook createRuntime '{"path": "/bin/sh", "args": ["sh", "-c", "sleep 0.2"], "timeout": 5}'
	set_args true
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_success
}
