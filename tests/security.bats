#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# What a hostile container must not reach: the runtime's binary, host fds
# as its working directory, and the usual kernel knobs under the default
# config.

load helpers

# Both files: agentrun (the launcher) and the runtime it starts.
runtime_sha() {
	cat "$(readlink -f "$RUNTIME")" "$(ar_runtime_program "$RUNTIME")" | sha256sum | cut -d' ' -f1
}

@test "the container cannot write the runtime binary through /proc/*/exe" {
	local before
	before=$(runtime_sha)
	set_args sh -c 'for f in /proc/1/exe /proc/self/exe /proc/[0-9]*/exe; do
			echo x > "$f" 2>/dev/null && echo "wrote $f"
			echo x >> "$f" 2>/dev/null && echo "appended $f"
		done; true'
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_success
	assert_equal "$(runtime_sha)" "$before"
}

@test "/proc/self/exe as the entrypoint does not run or expose the host binary" {
	local before
	before=$(runtime_sha)
	# The runtime's init execs the path inside the container: if that
	# were the runtime's own binary, the container would hold it.
	# Inside, the init's /proc/self/exe leads nowhere the container can
	# reach: the exec fails as for a missing file, and nothing prints the
	# runtime's version.
	set_args /proc/self/exe --version
	run -127 runtime run --bundle "$BUNDLE" "$CID"
	assert_output_contains "exec \`/proc/self/exe\`: No such file or directory"
	refute_output_contains "version "
	assert_equal "$(runtime_sha)" "$before"
	# A script whose interpreter is /proc/self/exe: the same trick
	# through the kernel's #! handling.
	printf '#!/proc/self/exe\n' >"$BUNDLE/rootfs/evil"
	chmod 0755 "$BUNDLE/rootfs/evil"
	set_args /evil
	run -127 runtime run --bundle "$BUNDLE" "$CID"
	assert_output_contains "exec \`/evil\`: No such file or directory"
	refute_output_contains "version "
	assert_equal "$(runtime_sha)" "$before"
}

@test "a process in a created container's pid namespace cannot reach the runtime binary" {
	local before host_id
	before=$(runtime_sha)
	host_id=$(stat -L -c '%d:%i' "$(ar_runtime_program "$RUNTIME")")
	# Container A waits in create: its pid 1 is still the runtime's init.
	set_args sleep 1000
	ctr_create "$CID-a"
	local apid
	apid=$(ctr_pid "$CID-a")
	# B joins A's pid namespace and looks at A's init.
	update_config '.linux.namespaces |= (map(select(.type != "pid")) + [{"type": "pid", "path": $p}])' \
		--arg p "/proc/$apid/ns/pid"
	set_args sh -c 'stat -L -c "%d:%i" /proc/1/exe 2>/dev/null || echo no-access
		echo x >> /proc/1/exe 2>/dev/null && echo wrote-exe
		exec 3</proc/1/exe 2>/dev/null && echo x > /proc/self/fd/3 2>/dev/null && echo wrote-fd; true'
	run runtime run --bundle "$BUNDLE" "$CID-b"
	assert_success
	# Same device and inode would mean B can open the host's binary.
	[ "${lines[0]}" != "$host_id" ] || fail "/proc/1/exe of the waiting init is the host binary ($host_id)"
	refute_output_contains wrote-
	runtime delete --force "$CID-a"
	assert_equal "$(runtime_sha)" "$before"
}

@test "a cwd naming a leaked fd cannot reach the host" {
	local n
	for n in 3 4 5 6 7 8 9; do
		update_config '.process.cwd = $c' --arg c "/proc/self/fd/$n"
		set_args sh -c 'cat ../../../../../../../../etc/hostname'
		run runtime run --bundle "$BUNDLE" "$CID-$n"
		# Refusing is fine; running is fine only inside the container.
		if [ "$status" -eq 0 ] && [ "$output" != agentrun-busybox ]; then
			fail "cwd /proc/self/fd/$n reached outside the container (read '$output')"
		fi
	done
}

@test "no fd of the runtime is open in the container's process" {
	set_args sh -c 'for f in /proc/self/fd/*; do readlink "$f"; done; true'
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_success
	refute_output_contains "$ROOT"
	refute_output_contains "$BUNDLE"
	refute_output_contains "$(readlink -f "$RUNTIME")"
	refute_output_contains "$(ar_runtime_program "$RUNTIME")"
}

@test "the state dir and bundle path are not visible inside" {
	run ctr_run sh -c 'cat /proc/self/mountinfo; ls /'
	assert_success
	refute_output_contains "$ROOT"
	refute_output_contains "state.json"
}

@test "default config: no mount, no sysrq, no kernel knobs" {
	run ctr_run sh -c 'mount -t tmpfs t /mnt 2>&1 || echo mount-refused
		echo h > /proc/sysrq-trigger 2>&1 || echo sysrq-refused
		echo 1 > /proc/sys/kernel/panic 2>&1 || echo sysctl-refused'
	assert_output_contains mount-refused
	assert_output_contains sysrq-refused
	assert_output_contains sysctl-refused
}

@test "default config: the host's root is not reachable" {
	run ctr_run sh -c 'cat /proc/1/root/etc/hostname; ls /proc/1/root/ | grep -c .'
	assert_success
	assert_equal "${lines[0]}" agentrun-busybox
	[ ! -e "$BUNDLE/rootfs/work" ] || fail "unexpected"
}

@test "a container cannot kill processes outside it" {
	sleep 1000 &
	local victim=$!
	track_pid "$victim"
	set_args sh -c "kill -9 $victim; true"
	run runtime run --bundle "$BUNDLE" "$CID"
	pid_alive "$victim" || fail "host process $victim was killed from the container"
}

@test "an SELinux label on a host without SELinux is one line naming the JSON path, and nothing is left" {
	[ -e /sys/fs/selinux/enforce ] && skip "SELinux is enabled here"
	update_config '.process.selinuxLabel = "system_u:system_r:container_t:s0"'
	set_args true
	run --separate-stderr runtime run --bundle "$BUNDLE" "$CID"
	assert_failure
	[[ "$stderr" == *"config.json: .process.selinuxLabel: SELinux is not enabled on this host"* ]] || fail "wrong error: $stderr"
	[ -z "$(state_entries)" ] || fail "state left: $(state_entries)"
}
