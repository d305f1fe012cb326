#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A config without a mount namespace (runtime-spec: the container shares
# the runtime's): its mounts are made in the host's namespace under the
# rootfs, it enters the rootfs by chroot, and every one of those mounts is
# gone after delete or a failed create. Host mounts are never changed.

load helpers

setup() {
	common_setup
	ROOTFS=$BUNDLE/rootfs
	# Only in this bundle's rootfs: proof the container sees it as "/".
	echo "only-in-bundle $CID" >"$ROOTFS/etc/marker"
}

# no_mount_ns: keep the namespaces in ARGs (types), drop all others.
no_mount_ns() {
	update_config '.linux.namespaces |= map(select(.type as $t | $keep | index($t)))
		| del(.hostname)' --argjson keep "$(json_array "$@")"
}

# Mount points at or under the bundle's rootfs, in the host namespace.
rootfs_mounts() {
	mounts_under "$ROOTFS"
}

# The host's "/" line of mountinfo minus the ids: its flags and propagation.
host_root_mount() {
	awk '$5 == "/" { $1 = ""; $2 = ""; print }' /proc/self/mountinfo
}

@test "no namespaces at all: the host's mount namespace, the bundle's rootfs as /" {
	no_mount_ns
	local before
	before=$(host_root_mount)
	run ctr_run sh -c 'readlink /proc/self/ns/mnt; cat /etc/marker; readlink /proc/self/ns/pid'
	assert_success
	assert_equal "${lines[0]}" "$(readlink /proc/self/ns/mnt)"
	assert_equal "${lines[1]}" "only-in-bundle $CID"
	assert_equal "${lines[2]}" "$(readlink /proc/self/ns/pid)"
	assert_equal "$(host_root_mount)" "$before"
	[ -z "$(rootfs_mounts)" ] || fail "mounts left: $(rootfs_mounts)"
}

@test "no mount namespace: the container's mounts are under the rootfs while it runs, none after delete" {
	no_mount_ns pid
	set_args sleep 1000
	ctr_create
	runtime start "$CID"
	local during
	during=$(rootfs_mounts)
	[[ "$during" == *"$ROOTFS/proc"* ]] || fail "no proc under the rootfs: $during"
	# Nothing outside the rootfs: every new mount of the run is under it.
	run runtime exec "$CID" cat /etc/marker
	assert_success
	assert_output "only-in-bundle $CID"
	runtime delete --force "$CID"
	[ -z "$(rootfs_mounts)" ] || fail "mounts left: $(rootfs_mounts)"
}

@test "no mount namespace: a mount under the rootfs from before create stays after delete" {
	no_mount_ns pid
	mount -t tmpfs -o size=1m agentrun-pre "$ROOTFS/mnt"
	track_mount "$ROOTFS/mnt"
	echo pre-existing >"$ROOTFS/mnt/file"
	update_config '.mounts += [{"destination": "/mnt/over", "type": "tmpfs", "source": "tmpfs"}]'
	set_args sh -c 'cat /mnt/file; grep -c " /mnt/over " /proc/self/mountinfo'
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_success
	assert_equal "${lines[0]}" pre-existing
	assert_equal "${lines[1]}" 1
	assert_equal "$(rootfs_mounts)" "$ROOTFS/mnt"
	assert_equal "$(cat "$ROOTFS/mnt/file")" pre-existing
	umount "$ROOTFS/mnt"
	[ -z "$(rootfs_mounts)" ] || fail "mounts left: $(rootfs_mounts)"
}

@test "no mount namespace: a failed create leaves no mount behind" {
	no_mount_ns
	# Fails after proc, /dev and the rest are mounted.
	update_config '.mounts += [{"destination": "/bad", "type": "bind", "source": "/nonexistent-agentrun-source"}]'
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_output_contains "nonexistent-agentrun-source"
	[ -z "$(rootfs_mounts)" ] || fail "mounts left: $(rootfs_mounts)"
	[ -z "$(state_entries)" ] || fail "state left: $(state_entries)"
}

@test "no mount namespace: exec chroots into the container's root" {
	no_mount_ns pid
	set_args sleep 1000
	update_config '.process.cwd = "/etc"'
	ctr_run_bg
	run runtime exec "$CID" sh -c 'cat /etc/marker; pwd; readlink /proc/self/ns/mnt; ls /proc/1/root/etc/marker'
	assert_success
	assert_equal "${lines[0]}" "only-in-bundle $CID"
	assert_equal "${lines[1]}" /etc
	assert_equal "${lines[2]}" "$(readlink /proc/self/ns/mnt)"
	assert_equal "${lines[3]}" /proc/1/root/etc/marker
	runtime delete --force "$CID"
	[ -z "$(rootfs_mounts)" ] || fail "mounts left: $(rootfs_mounts)"
}

@test "no mount namespace: rootfsPropagation is refused, naming the JSON path" {
	no_mount_ns
	update_config '.linux.rootfsPropagation = "rshared"'
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_failure 125
	assert_output_contains "config.json: .linux.rootfsPropagation: \`rshared\` needs a mount namespace"
	[ -z "$(rootfs_mounts)" ] || fail "mounts left: $(rootfs_mounts)"
}

@test "no mount namespace: a user namespace is refused, and so is joining the runtime's own mount namespace" {
	no_mount_ns
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_failure 125
	assert_output_contains "config.json: .linux.namespaces: a user namespace needs a mount namespace"
	no_mount_ns
	update_config '.linux.namespaces = [{"type": "mount", "path": "/proc/self/ns/mnt"}]'
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_failure 125
	assert_output_contains "config.json: .linux.namespaces[0].path:"
	assert_output_contains "the runtime's own mount namespace"
	[ -z "$(rootfs_mounts)" ] || fail "mounts left: $(rootfs_mounts)"
}

@test "no mount namespace: run in the foreground, run --detach with delete, and kill and delete of a created container all clean up" {
	no_mount_ns pid
	run ctr_run cat /etc/marker
	assert_success
	[ -z "$(rootfs_mounts)" ] || fail "run: mounts left: $(rootfs_mounts)"

	set_args sleep 1000
	ctr_run_bg
	[ -n "$(rootfs_mounts)" ] || fail "run --detach: no mounts while running"
	runtime kill "$CID" KILL
	wait_for_state "$CID" stopped
	runtime delete "$CID"
	[ -z "$(rootfs_mounts)" ] || fail "run --detach: mounts left: $(rootfs_mounts)"

	ctr_create
	runtime kill "$CID" KILL
	wait_for_state "$CID" stopped
	runtime delete "$CID"
	[ -z "$(rootfs_mounts)" ] || fail "created: mounts left: $(rootfs_mounts)"
}

@test "no mount namespace: read-only root and --no-pivot remount only the container's own bind" {
	no_mount_ns
	update_config '.root.readonly = true'
	set_args sh -c 'cat /etc/marker; touch /x 2>/dev/null && echo writable || echo read-only'
	run runtime run --no-pivot --bundle "$BUNDLE" "$CID"
	assert_success
	assert_equal "${lines[0]}" "only-in-bundle $CID"
	assert_equal "${lines[1]}" read-only
	touch "$ROOTFS/host-can-write" || fail "the host's view of the rootfs became read-only"
	[ -z "$(rootfs_mounts)" ] || fail "mounts left: $(rootfs_mounts)"
}

@test "no mount namespace: under a shared mount, nothing reaches the host outside the rootfs" {
	no_mount_ns pid
	# The bundle and a host directory bound into the container on shared
	# mounts: what the container mounts must not propagate out of them.
	mount --bind "$BUNDLE" "$BUNDLE"
	track_mount "$BUNDLE"
	mount --make-shared "$BUNDLE"
	local shared
	shared=$(host_dir shared)
	mount --bind "$shared" "$shared"
	track_mount "$shared"
	mount --make-shared "$shared"
	update_config '.mounts += [{"destination": "/shared", "type": "bind", "source": $s, "options": ["rbind"]},
		{"destination": "/shared/sub", "type": "tmpfs", "source": "tmpfs"}]' --arg s "$shared"
	set_args sleep 1000
	ctr_run_bg
	run runtime exec "$CID" sh -c 'grep -c " /shared/sub " /proc/self/mountinfo'
	assert_output 1
	[ -z "$(mounts_under "$shared" | grep -vx "$shared")" ] || fail "propagated to the host dir: $(mounts_under "$shared")"
	runtime delete --force "$CID"
	[ -z "$(rootfs_mounts)" ] || fail "mounts left: $(rootfs_mounts)"
	assert_equal "$(mounts_under "$BUNDLE")" "$BUNDLE"
	umount "$shared"
	umount "$BUNDLE"
}

@test "no mount namespace: a rootfs path with a space (\\040 in mountinfo) is cleaned up too" {
	no_mount_ns pid
	set_args sleep 1000
	local spaced="$TEST_DIR/with space"
	mkdir "$spaced"
	mv "$BUNDLE" "$spaced/bundle"
	runtime_bg run --detach --bundle "$spaced/bundle" "$CID"
	local escaped="$TEST_DIR/with\\040space/bundle/rootfs"
	grep -qF " $escaped/proc " /proc/self/mountinfo || fail "no proc at $escaped/proc"
	runtime delete --force "$CID"
	run grep -F "$escaped" /proc/self/mountinfo
	assert_failure 1
}
