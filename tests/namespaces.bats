#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# New namespaces, joined namespaces, id mappings, hostname, time offsets.

load helpers

# The container's view of one of its namespaces vs the host's.
host_ns() {
	readlink "/proc/self/ns/$1"
}

# without_ns TYPE: drop a namespace from the config (share the host's).
without_ns() {
	update_config '.linux.namespaces |= map(select(.type != $t))' --arg t "$1"
}

# with_ns TYPE [PATH]: ensure a namespace entry, joining PATH if given.
with_ns() {
	without_ns "$1"
	if [ $# -gt 1 ]; then
		update_config '.linux.namespaces += [{"type": $t, "path": $p}]' --arg t "$1" --arg p "$2"
	else
		update_config '.linux.namespaces += [{"type": $t}]' --arg t "$1"
	fi
}

# A new user namespace with root mapped to host 100000 (65536 ids), and a
# read-only root: the image is host root's, unmapped, so nobody inside.
with_mapped_userns() {
	with_ns user
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .root.readonly = true'
}

# A host process in a fresh network namespace that this test owns (no
# named netns: nothing under /run/netns to leak).
start_netns_holder() {
	unshare --net sleep 1000 &
	NETNS_PID=$!
	track_pid "$NETNS_PID"
	local i
	for i in $(seq 1 100); do
		[ "$(readlink "/proc/$NETNS_PID/ns/net" 2>/dev/null)" != "$(host_ns net)" ] && return 0
		sleep 0.02
	done
	fail "unshare did not make a network namespace"
}

@test "pid: the process is pid 1 and sees only its own processes" {
	run ctr_run sh -c 'echo $$; ls -d /proc/[0-9]* | wc -l'
	assert_success
	assert_equal "${lines[0]}" 1
	# sh, ls and wc (the subshell of the pipe at most adds one more).
	[ "${lines[1]}" -le 4 ] || fail "container sees ${lines[1]} processes"
}

@test "uts: hostname comes from the config" {
	update_config '.hostname = "ctr-host"'
	run ctr_run hostname
	assert_success
	assert_output ctr-host
	[ "$(hostname)" != ctr-host ] || fail "host hostname changed"
}

@test "uts: domainname comes from the config" {
	# runtime-spec 1.1; runc 1.1.5 ignores it.
	update_config '.domainname = "ctr.example"'
	run ctr_run cat /proc/sys/kernel/domainname
	assert_success
	assert_output ctr.example
	[ "$(cat /proc/sys/kernel/domainname)" != ctr.example ] || fail "host domainname changed"
}

@test "new uts, ipc, net and mount namespaces differ from the host's" {
	local t
	for t in uts ipc network mount; do with_ns "$t"; done
	run ctr_run sh -c 'for n in uts ipc net mnt pid; do readlink /proc/self/ns/$n; done'
	assert_success
	local i=0 n
	for n in uts ipc net mnt pid; do
		[ "${lines[$i]}" != "$(host_ns "$n")" ] || fail "$n namespace is the host's"
		i=$((i + 1))
	done
}

@test "a namespace left out of the config is shared with the host" {
	without_ns network
	without_ns ipc
	update_config 'del(.hostname)'
	without_ns uts
	run ctr_run sh -c 'for n in net ipc uts; do readlink /proc/self/ns/$n; done'
	assert_success
	assert_equal "${lines[0]}" "$(host_ns net)"
	assert_equal "${lines[1]}" "$(host_ns ipc)"
	assert_equal "${lines[2]}" "$(host_ns uts)"
}

@test "net: a new network namespace has only loopback" {
	with_ns network
	run ctr_run sh -c 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "'
	assert_success
	assert_output lo
}

@test "net: joining a namespace by path" {
	start_netns_holder
	with_ns network "/proc/$NETNS_PID/ns/net"
	run ctr_run readlink /proc/self/ns/net
	assert_success
	assert_output "$(readlink "/proc/$NETNS_PID/ns/net")"
}

@test "net, uts: with a new user namespace, namespaces of the host's are still joined by path (as runc does)" {
	# A pod's network namespace belongs to the host's user namespace: the
	# container's new user namespace could not join it from inside.
	start_netns_holder
	with_mapped_userns
	with_ns network "/proc/$NETNS_PID/ns/net"
	with_ns uts "/proc/$NETNS_PID/ns/uts"
	update_config 'del(.hostname)'
	run ctr_run sh -c 'readlink /proc/self/ns/net; readlink /proc/self/ns/uts; cat /proc/self/uid_map'
	assert_success
	assert_equal "${lines[0]}" "$(readlink "/proc/$NETNS_PID/ns/net")"
	assert_equal "${lines[1]}" "$(readlink "/proc/$NETNS_PID/ns/uts")"
	assert_equal "$(echo "${lines[2]}" | tr -s ' ' | sed 's/^ //')" "0 100000 65536"
}

@test "joining a namespace that does not exist fails" {
	with_ns network /proc/999999999/ns/net
	run ctr_run true
	assert_failure
}

@test "joining a path that is not a namespace of that type fails" {
	start_netns_holder
	with_ns uts "/proc/$NETNS_PID/ns/net"
	run ctr_run true
	assert_failure
}

@test "pid and uts: a second container joins the first one's" {
	update_config '.hostname = "first-host"'
	with_ns uts
	set_args sleep 1000
	ctr_run_bg "$CID-a"
	local pid
	pid=$(ctr_pid "$CID-a")

	with_ns pid "/proc/$pid/ns/pid"
	with_ns uts "/proc/$pid/ns/uts"
	update_config 'del(.hostname)'
	run ctr_run sh -c 'hostname; tr "\0" " " </proc/1/cmdline'
	assert_success
	assert_equal "${lines[0]}" first-host
	assert_equal "${lines[1]}" "sleep 1000 "
}

@test "user and pid: joining another's user namespace (and a host network namespace), the pid namespace is new and /proc its own, as in a pod" {
	start_netns_holder
	with_mapped_userns
	with_ns network "/proc/$NETNS_PID/ns/net"
	set_args sleep 1000
	ctr_run_bg "$CID-a"
	local pid
	pid=$(ctr_pid "$CID-a")

	update_config 'del(.linux.uidMappings, .linux.gidMappings)'
	with_ns user "/proc/$pid/ns/user"
	with_ns pid
	run ctr_run sh -c 'echo $$; id -u; tr "\0" " " </proc/1/cmdline; echo; readlink /proc/self/ns/net; readlink /proc/self/ns/user'
	assert_success
	assert_equal "${lines[0]}" 1
	assert_equal "${lines[1]}" 0
	[[ "${lines[2]}" == "sh -c "* ]] || fail "/proc is not the container's: its pid 1 is ${lines[2]}"
	assert_equal "${lines[3]}" "$(readlink "/proc/$NETNS_PID/ns/net")"
	assert_equal "${lines[4]}" "$(readlink "/proc/$pid/ns/user")"
}

@test "user: uid and gid mappings" {
	with_ns user
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 200000, "size": 65536}]'
	# Owned by host root, so unmapped (nobody) inside: nothing to write.
	update_config '.root.readonly = true'
	set_args sh -c 'id -u; id -g; cat /proc/self/uid_map /proc/self/gid_map; sleep 1000'
	ctr_run_bg
	local pid
	pid=$(ctr_pid)
	wait_for_state "$CID" running
	# From the host, the process runs as the mapped ids.
	assert_equal "$(stat -c %u "/proc/$pid")" 100000
	assert_equal "$(stat -c %g "/proc/$pid")" 200000
	assert_equal "$(awk '{print $1, $2, $3}' "/proc/$pid/uid_map")" "0 100000 65536"
	[ "$(readlink "/proc/$pid/ns/user")" != "$(host_ns user)" ] || fail "no new user namespace"
}

@test "user: inside, the mapped root is uid 0" {
	with_mapped_userns
	run ctr_run sh -c 'id -u; id -g; cat /proc/self/uid_map'
	assert_success
	assert_equal "${lines[0]}" 0
	assert_equal "${lines[1]}" 0
	assert_equal "$(echo "${lines[2]}" | tr -s ' ' | sed 's/^ //')" "0 100000 65536"
}

@test "user: the namespace is owned by the host uid its root maps to, not by root" {
	with_mapped_userns
	set_args sleep 1000
	ctr_run_bg
	local pid owner
	pid=$(ctr_pid)
	wait_for_state "$CID" running
	# NS_GET_OWNER_UID: the kernel charges the namespace's per-user counts
	# (inotify instances, namespaces) to this uid, not to host root.
	owner=$(perl -e 'open(my $f, "<", $ARGV[0]) or die; my $b = pack("L", 0); ioctl($f, 0xb704, $b) or die "ioctl: $!"; print unpack("L", $b)' "/proc/$pid/ns/user")
	assert_equal "$owner" 100000
}

@test "user: process.oomScoreAdj reaches a container in a user namespace" {
	with_mapped_userns
	# Docker sends one for every container; raising it needs no capability.
	update_config '.process.oomScoreAdj = 500'
	run ctr_run cat /proc/self/oom_score_adj
	assert_success
	assert_output 500
	# And an exec'd process, which joins the namespace.
	set_args sleep 1000
	ctr_run_bg
	wait_for_state "$CID" running
	echo '{"args": ["cat", "/proc/self/oom_score_adj"], "cwd": "/", "oomScoreAdj": 600}' >"$TEST_DIR/proc.json"
	run runtime exec --process "$TEST_DIR/proc.json" "$CID"
	assert_success
	assert_output 600
}

@test "user: an idmapped bind (mounts[].uidMappings, or the idmap option) shows host root's files as container root's" {
	with_mapped_userns
	mkdir -p "$TEST_DIR/src/sub" "$BUNDLE"/rootfs/mnt/{own,opt,plain}
	echo data >"$TEST_DIR/src/f"
	local maps='"uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}], "gidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	update_config '.mounts += [
		({"destination": "/mnt/own", "type": "bind", "source": $src, "options": ["bind"]} + {'"$maps"'}),
		{"destination": "/mnt/opt", "type": "bind", "source": $src, "options": ["bind", "idmap"]},
		{"destination": "/mnt/plain", "type": "bind", "source": $src, "options": ["bind"]}]' --arg src "$TEST_DIR/src"
	run ctr_run sh -c 'stat -c "%n %u:%g" /mnt/own/f /mnt/opt/f /mnt/plain/f; echo more >>/mnt/own/f && echo wrote'
	assert_success
	assert_output_contains "/mnt/own/f 0:0"
	assert_output_contains "/mnt/opt/f 0:0"
	assert_output_contains "/mnt/plain/f 65534:65534"
	assert_output_contains wrote
	# The host's file, written through the mount, keeps its owner.
	[ "$(stat -c %u:%g "$TEST_DIR/src/f")" = 0:0 ] || fail "owner changed on the host"
	[ "$(tail -1 "$TEST_DIR/src/f")" = more ]
}

@test "user: an idmapped mount that cannot be is one line naming it, and nothing is left" {
	with_mapped_userns
	update_config '.mounts += [{"destination": "/mnt/t", "type": "tmpfs", "source": "tmpfs", "options": ["idmap"]}]'
	run ctr_run true
	assert_failure
	assert_output_contains "config.json: .mounts["
	assert_output_contains "only a bind mount can be idmapped"
	[ "${#lines[@]}" = 1 ] || fail "more than one line: $output"
	update_config '.mounts |= map(select(.destination != "/mnt/t")) | .mounts += [{"destination": "/mnt/u", "type": "bind", "source": "/tmp", "options": ["bind"], "uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}]}]'
	run ctr_run true
	assert_failure
	assert_output_contains "needs uidMappings and gidMappings"
	[ "${#lines[@]}" = 1 ] || fail "more than one line: $output"
	[ -z "$(runtime list -q)" ] || fail "left: $(runtime list)"
}

@test "cgroup: a cgroup namespace makes the container's cgroup its root" {
	update_config '.linux.cgroupsPath = $p' --arg p "$(test_cgroups_path)"
	with_ns cgroup
	run ctr_run cat /proc/self/cgroup
	assert_success
	# Every hierarchy (v1 and the hugetlb cgroup2) shows / inside.
	local line
	for line in "${lines[@]}"; do
		[[ "$line" == *:/ ]] || fail "not rooted: $line"
	done
	refute_output_contains "$AR_RUN"
}

@test "cgroup: without a cgroup namespace the host path shows" {
	update_config '.linux.cgroupsPath = $p' --arg p "$(test_cgroups_path)"
	without_ns cgroup
	run ctr_run cat /proc/self/cgroup
	assert_success
	# The host's path to the container's cgroup: in the memory hierarchy
	# on v1, in the one line "0::" of a cgroup v2 host.
	if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
		assert_output_contains "0::/"
	else
		assert_output_contains ":memory:/"
	fi
	assert_output_contains "$CID"
}

@test "cgroup: a joined cgroup namespace its user namespace does not own: /sys/fs/cgroup binds the container's own cgroup" {
	# From the container's user namespace a fresh cgroup mount in the
	# host's cgroup namespace is refused (EPERM); what it gets instead is
	# its own cgroup, where its limit shows, not the host's root.
	with_mapped_userns
	with_ns cgroup "/proc/$$/ns/cgroup"
	update_config '.linux.cgroupsPath = $p | .linux.resources.memory = {limit: 33554432}' \
		--arg p "$(test_cgroups_path)"
	run ctr_run sh -c 'cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes'
	assert_success
	assert_equal "$output" 33554432
}

@test "time: offsets move the container's monotonic and boot clocks" {
	[ -e /proc/self/ns/time ] || skip "kernel without time namespaces"
	with_ns time
	# One year ahead; the host's uptime is far below that.
	update_config '.linux.timeOffsets = {"monotonic": {"secs": 31536000, "nanosecs": 0},
		"boottime": {"secs": 31536000, "nanosecs": 0}}'
	run ctr_run sh -c 'cut -d. -f1 /proc/uptime; readlink /proc/self/ns/time'
	assert_success
	local host_up
	host_up=$(cut -d. -f1 /proc/uptime)
	[ "${lines[0]}" -ge $((31536000 + host_up - 5)) ] || fail "uptime ${lines[0]} not offset"
	[ "${lines[1]}" != "$(host_ns time)" ] || fail "no new time namespace"
}

@test "time: without a time namespace the clocks are the host's" {
	[ -e /proc/self/ns/time ] || skip "kernel without time namespaces"
	without_ns time
	run ctr_run cut -d. -f1 /proc/uptime
	assert_success
	[ "$output" -lt 31536000 ] || fail "uptime $output looks offset"
}

@test "ipc: a new ipc namespace does not see the host's message queues" {
	with_ns ipc
	# busybox has ipcs; a fresh namespace lists no queues, segments or sets.
	run ctr_run sh -c 'cat /proc/sysvipc/shm | wc -l; readlink /proc/self/ns/ipc'
	assert_success
	assert_equal "${lines[0]}" 1
	[ "${lines[1]}" != "$(host_ns ipc)" ] || fail "ipc namespace is the host's"
}

@test "user: the device nodes bound from the host are nosuid and noexec like the rest of /dev" {
	with_mapped_userns
	run ctr_run sh -c 'for d in null zero full tty random urandom; do grep " /dev/$d " /proc/self/mountinfo | cut -d" " -f5,6; done; echo x >/dev/null && echo null-writable'
	assert_success
	assert_equal "${#lines[@]}" 7
	local line
	for line in "${lines[@]:0:6}"; do
		[[ "$line" =~ ^/dev/[a-z]+\ [a-z,]*nosuid ]] && [[ "$line" =~ noexec ]] || fail "not nosuid,noexec: $line"
	done
	assert_equal "${lines[6]}" null-writable
}

@test "user: a bind source the mapped root cannot reach (under a mode 000 dir of host root) mounts, as under runc" {
	with_mapped_userns
	mkdir -p "$TEST_DIR/locked/data"
	echo secret-ok >"$TEST_DIR/locked/data/f"
	chmod 000 "$TEST_DIR/locked"
	chmod 755 "$TEST_DIR"
	update_config '.mounts += [{"destination": "/mnt", "type": "bind", "source": $src, "options": ["rbind", "ro"]}]' \
		--arg src "$TEST_DIR/locked/data"
	run ctr_run sh -c 'cat /mnt/f; grep " /mnt " /proc/self/mountinfo'
	chmod 755 "$TEST_DIR/locked"
	assert_success
	assert_equal "${lines[0]}" secret-ok
	# Not a peer of the host's mount: a slave at most.
	[[ "${lines[1]}" != *shared:* ]] || fail "the bind is shared with the host: ${lines[1]}"
}
