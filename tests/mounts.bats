#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The root filesystem: mounts from the config, bind mounts, readonly root,
# masked and read-only paths, symlink safety, devices.

load helpers

# add_mount DEST TYPE SOURCE [OPTION...]
add_mount() {
	local dest=$1 type=$2 src=$3; shift 3
	update_config '.mounts += [{"destination": $d, "type": $t, "source": $s, "options": $o}]' \
		--arg d "$dest" --arg t "$type" --arg s "$src" --argjson o "$(json_array "$@")"
}

drop_mount() {
	update_config '.mounts |= map(select(.destination != $d))' --arg d "$1"
}

# The container's view: "destination type options" per mount.
MOUNTS_CMD='awk "{print \$2, \$3, \$4}" /proc/self/mounts'

@test "proc, sysfs, tmpfs, devpts, shm and mqueue are mounted as configured" {
	run ctr_run sh -c "$MOUNTS_CMD"
	assert_success
	local want
	for want in "/proc proc" "/sys sysfs" "/dev tmpfs" "/dev/pts devpts" \
		"/dev/shm tmpfs" "/dev/mqueue mqueue"; do
		grep -q "^$want " <<<"$output" || fail "no $want mount"
	done
	# The config says /sys is read-only.
	grep -q '^/sys sysfs ro,' <<<"$output" || fail "/sys not read-only"
}

@test "a mount left out of the config is not made" {
	drop_mount /dev/mqueue
	run ctr_run sh -c "$MOUNTS_CMD"
	assert_success
	refute_output_contains "/dev/mqueue mqueue"
}

@test "the v1 cgroup hierarchy is mounted read-only at /sys/fs/cgroup" {
	[ -d "$AR_CGROUP_V1/memory" ] || skip "host has no v1 memory controller"
	update_config '.linux.cgroupsPath = $p' --arg p "$(test_cgroups_path)"
	run ctr_run sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes; echo 1 > /sys/fs/cgroup/memory/memory.limit_in_bytes'
	assert_failure
	[[ "${lines[0]}" =~ ^[0-9]+$ ]] || fail "memory controller not readable"
	assert_output_contains "Read-only file system"
}

@test "bind mount of a host dir, read-write" {
	local src
	src=$(host_dir rw)
	echo from-host >"$src/in"
	add_mount /mnt/rw bind "$src" bind rw
	run ctr_run sh -c 'cat /mnt/rw/in; echo from-ctr > /mnt/rw/out'
	assert_success
	assert_output from-host
	assert_equal "$(cat "$src/out")" from-ctr
}

@test "bind mount of a host dir, read-only" {
	local src
	src=$(host_dir ro)
	echo from-host >"$src/in"
	add_mount /mnt/ro bind "$src" bind ro
	run ctr_run sh -c 'cat /mnt/ro/in; echo x > /mnt/ro/out'
	assert_failure
	assert_equal "${lines[0]}" from-host
	assert_output_contains "Read-only file system"
	[ ! -e "$src/out" ] || fail "write reached the host"
}

@test "bind mount of a single host file" {
	local src
	src=$(host_dir files)
	echo file-content >"$src/f"
	touch "$BUNDLE/rootfs/etc/bound"
	add_mount /etc/bound bind "$src/f" bind ro
	run ctr_run cat /etc/bound
	assert_success
	assert_output file-content
}

@test "bind mount creates a missing destination inside the rootfs" {
	local src
	src=$(host_dir mk)
	echo x >"$src/x"
	add_mount /new/deep/dir bind "$src" bind
	run ctr_run cat /new/deep/dir/x
	assert_success
	assert_output x
}

@test "rbind carries submounts, bind does not" {
	local src
	src=$(host_dir tree)
	mkdir -p "$src/sub"
	mount -t tmpfs -o size=1m tmpfs "$src/sub"
	track_mount "$src/sub"
	echo in-submount >"$src/sub/f"
	add_mount /mnt/r bind "$src" rbind
	add_mount /mnt/b bind "$src" bind
	run ctr_run sh -c 'cat /mnt/r/sub/f; ls /mnt/b/sub | wc -l'
	assert_success
	assert_equal "${lines[0]}" in-submount
	assert_equal "${lines[1]}" 0
}

@test "readonly root: writes fail, /dev and tmpfs mounts stay writable" {
	update_config '.root.readonly = true'
	add_mount /tmp tmpfs tmpfs nosuid nodev
	run ctr_run sh -c 'touch /dev/shm/ok && touch /tmp/ok && echo writable; touch /rootfile'
	assert_failure
	assert_equal "${lines[0]}" writable
	assert_output_contains "Read-only file system"
	[ ! -e "$BUNDLE/rootfs/rootfile" ] || fail "write reached the rootfs"
}

@test "without readonly the root is writable" {
	update_config '.root.readonly = false'
	run ctr_run touch /rootfile
	assert_success
	[ -e "$BUNDLE/rootfs/rootfile" ] || fail "file not in rootfs"
}

@test "tmpfs size option limits the mount" {
	add_mount /mnt/small tmpfs tmpfs size=1m
	run ctr_run sh -c 'df -k /mnt/small | tail -1 | awk "{print \$2}"; dd if=/dev/zero of=/mnt/small/big bs=1k count=2048 2>&1'
	assert_failure
	assert_equal "${lines[0]}" 1024
	assert_output_contains "No space left on device"
}

@test "tmpfs noexec and nosuid options apply" {
	add_mount /mnt/noexec tmpfs tmpfs noexec nosuid mode=1777
	run ctr_run sh -c 'cp /bin/busybox /mnt/noexec/bb && /mnt/noexec/bb true'
	assert_failure
	assert_output_contains "Permission denied"
	run ctr_run sh -c "$MOUNTS_CMD | grep '^/mnt/noexec '"
	assert_output_contains "nosuid"
	assert_output_contains "noexec"
}

@test "maskedPaths: files read empty, directories look empty" {
	mkdir -p "$BUNDLE/rootfs/secret-dir"
	echo s1 >"$BUNDLE/rootfs/secret-dir/key"
	echo s2 >"$BUNDLE/rootfs/secret-file"
	# /proc/kcore where the kernel has it; /proc/interrupts always has text.
	update_config '.linux.maskedPaths = ["/proc/kcore", "/proc/interrupts", "/secret-dir",
		"/secret-file", "/no/such/path"]'
	run ctr_run sh -c 'wc -c < /proc/interrupts; ls -A /secret-dir | wc -l; wc -c < /secret-file
		[ ! -e /proc/kcore ] || wc -c < /proc/kcore'
	assert_success
	assert_equal "${lines[0]}" 0
	assert_equal "${lines[1]}" 0
	assert_equal "${lines[2]}" 0
	[ -z "${lines[3]:-}" ] || assert_equal "${lines[3]}" 0
}

@test "without maskedPaths the real files show" {
	update_config '.linux.maskedPaths = []'
	run ctr_run sh -c 'wc -c < /proc/interrupts'
	assert_success
	[ "$output" -gt 0 ] || fail "/proc/interrupts reads $output bytes"
}

@test "readonlyPaths: /proc/sys and a rootfs dir become read-only" {
	mkdir -p "$BUNDLE/rootfs/ro-dir" "$BUNDLE/rootfs/rw-dir"
	update_config '.linux.readonlyPaths = ["/proc/sys", "/ro-dir"]'
	run ctr_run sh -c "$MOUNTS_CMD | grep -E '^/(proc/sys|ro-dir) ' | cut -d' ' -f1,3 | cut -d, -f1; touch /rw-dir/ok && echo rw-ok; touch /ro-dir/x"
	assert_failure
	assert_output_contains "/proc/sys ro"
	assert_output_contains "/ro-dir ro"
	assert_output_contains "rw-ok"
	assert_output_contains "Read-only file system"
}

@test "readonlyPaths: writing a sysctl under /proc/sys fails" {
	update_config '.linux.readonlyPaths = ["/proc/sys"]
		| .process.capabilities.bounding += ["CAP_NET_ADMIN", "CAP_SYS_ADMIN"]
		| .process.capabilities.effective += ["CAP_NET_ADMIN", "CAP_SYS_ADMIN"]
		| .process.capabilities.permitted += ["CAP_NET_ADMIN", "CAP_SYS_ADMIN"]'
	run ctr_run sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'
	assert_failure
	assert_output_contains "Read-only file system"
}

@test "a symlink in the rootfs cannot redirect a mount to the host" {
	local src
	src=$(host_dir payload)
	echo payload >"$src/marker"
	# Absolute and relative links that would point at the host's /etc if
	# followed outside the rootfs.
	ln -s /etc "$BUNDLE/rootfs/evil-abs"
	ln -s ../../../../../../../../../../etc "$BUNDLE/rootfs/evil-rel"
	add_mount "/evil-abs/$CID-a" bind "$src" bind
	add_mount "/evil-rel/$CID-r" bind "$src" bind
	add_mount "/evil-abs/$CID-t" tmpfs tmpfs size=1m
	run ctr_run sh -c "cat /etc/$CID-a/marker /etc/$CID-r/marker; grep -c ' /etc/$CID-t ' /proc/self/mountinfo"
	assert_success
	assert_equal "${lines[0]}" payload
	assert_equal "${lines[1]}" payload
	assert_equal "${lines[2]}" 1
	# The destinations were made in the rootfs, never on the host.
	local n
	for n in a r t; do
		[ ! -e "/etc/$CID-$n" ] || { rmdir "/etc/$CID-$n"; fail "created /etc/$CID-$n on the host"; }
		[ -d "$BUNDLE/rootfs/etc/$CID-$n" ] || fail "no $CID-$n dir in the rootfs's /etc"
	done
}

@test "a rootfs whose /proc is a symlink is refused" {
	rmdir "$BUNDLE/rootfs/proc"
	ln -s /etc "$BUNDLE/rootfs/proc"
	run ctr_run true
	assert_failure
	[ -z "$(mounts_under /etc)" ] || fail "something mounted under host /etc"
}

@test "a rootfs whose /sys is a symlink is refused" {
	rmdir "$BUNDLE/rootfs/sys"
	ln -s /tmp "$BUNDLE/rootfs/sys"
	run ctr_run true
	assert_failure
}

# dev_link_refused PATH: the rootfs's PATH is a symlink to a directory
# elsewhere in the rootfs; the container must be refused, naming PATH, with
# nothing mounted or made where the link points and no state left.
dev_link_refused() {
	local path=$1
	mkdir -p "$BUNDLE/rootfs/elsewhere"
	rm -rf "${BUNDLE:?}/rootfs$path"
	mkdir -p "$(dirname "$BUNDLE/rootfs$path")"
	ln -s /elsewhere "$BUNDLE/rootfs$path"
	run ctr_run true
	assert_failure 125
	assert_output_contains "rootfs$path: not a directory (symlink)"
	assert_equal "$(wc -l <<<"$output")" 1
	[ -z "$(ls -A "$BUNDLE/rootfs/elsewhere")" ] || fail "written through the link: $(ls -A "$BUNDLE/rootfs/elsewhere")"
	[ -z "$(mounts_under "$TEST_DIR")" ] || fail "mounts left: $(mounts_under "$TEST_DIR")"
	[ -z "$(state_entries)" ] || fail "state left: $(state_entries)"
}

@test "a rootfs whose /dev is a symlink is refused, with the config's /dev tmpfs" {
	dev_link_refused /dev
}

@test "a rootfs whose /dev is a symlink is refused, with no /dev mounts in the config" {
	# The runtime's own device set-up (nodes, /dev/fd, ptmx) then goes into
	# the image's /dev.
	update_config '.mounts |= map(select(.destination | startswith("/dev") | not))'
	dev_link_refused /dev
}

@test "a rootfs whose /dev/pts, /dev/shm or /dev/mqueue is a symlink is refused" {
	# Under the config's /dev tmpfs these are fresh directories; without it
	# they are the image's own.
	update_config '.mounts |= map(select(.destination != "/dev"))'
	local sub
	for sub in pts shm mqueue; do
		rm -rf "$BUNDLE/rootfs/dev" "$BUNDLE/rootfs/elsewhere"
		mkdir "$BUNDLE/rootfs/dev"
		dev_link_refused "/dev/$sub"
	done
}

@test "/dev/pts, /dev/shm and /dev/mqueue of the image are hidden by the config's /dev tmpfs" {
	mkdir -p "$BUNDLE/rootfs/elsewhere"
	ln -s /elsewhere "$BUNDLE/rootfs/dev/pts"
	ln -s /elsewhere "$BUNDLE/rootfs/dev/shm"
	run ctr_run sh -c "$MOUNTS_CMD"
	assert_success
	grep -q '^/dev/pts devpts ' <<<"$output" || fail "no /dev/pts devpts mount"
	[ -z "$(ls -A "$BUNDLE/rootfs/elsewhere")" ] || fail "written through the link"
}

@test "the default devices exist and work" {
	run ctr_run sh -c '
		for d in null zero full random urandom tty; do
			[ -c /dev/$d ] || echo "missing /dev/$d"
		done
		echo discard > /dev/null && echo null-ok
		head -c 16 /dev/zero | wc -c
		head -c 16 /dev/urandom | wc -c
		echo x > /dev/full || echo full-refused
		for l in ptmx fd stdin stdout stderr; do readlink /dev/$l; done'
	refute_output_contains missing
	assert_output_contains null-ok
	assert_equal "${lines[1]}" 16
	assert_equal "${lines[2]}" 16
	assert_output_contains "No space left on device"
	assert_output_contains full-refused
	assert_output_contains "pts/ptmx"
	assert_output_contains "/proc/self/fd"
}

@test "default devices have the standard numbers" {
	run ctr_run stat -c '%n %t:%T' /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty
	assert_success
	assert_equal "$output" "$(printf '%s\n' '/dev/null 1:3' '/dev/zero 1:5' '/dev/full 1:7' \
		'/dev/random 1:8' '/dev/urandom 1:9' '/dev/tty 5:0')"
}

@test "linux.devices adds a device node with mode and owner" {
	update_config '.linux.devices = [{"path": "/dev/mynull", "type": "c", "major": 1, "minor": 3,
			"fileMode": 416, "uid": 1000, "gid": 1001}]
		| .linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"}]
		| .process.user = {"uid": 1000, "gid": 1000}'
	# uid 1000 owns the node (mode 0640): the write passes permission
	# checks and then the device cgroup.
	run ctr_run sh -c 'stat -c "%F %t:%T %a %u %g" /dev/mynull; echo x > /dev/mynull && echo write-ok'
	assert_success
	assert_equal "${lines[0]}" "character special file 1:3 640 1000 1001"
	assert_equal "${lines[1]}" write-ok
}

@test "a linux.devices node under a deny-all rule is made but not usable, as under runc" {
	[ -d "$AR_CGROUP_V1/devices" ] || skip "no v1 devices controller"
	# /dev/kmsg (char 1:11): runc makes the node and applies only
	# linux.resources.devices and its default set, which lacks it.
	update_config '.linux.devices = [{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11, "fileMode": 420}]
		| .linux.resources.devices = [{"allow": false, "access": "rwm"}]
		| .linux.cgroupsPath = $p' --arg p "$(test_cgroups_path)"
	run ctr_run sh -c 'ls /dev/kmsg && echo x >/dev/kmsg && echo written'
	assert_output_contains /dev/kmsg
	assert_output_contains "Operation not permitted"
	refute_output_contains written
	# An allow rule makes it usable; its access read as runc reads it
	# ("rwa" is "rw").
	update_config '.linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 11, "access": "rwa"}]'
	run ctr_run sh -c 'echo agentrun-test >/dev/kmsg && echo written'
	assert_success
	assert_output_contains written
}

@test "the device cgroup denies a node not allowed" {
	[ -d "$AR_CGROUP_V1/devices" ] || skip "no v1 devices controller"
	# As runc does, the runtime's default nodes are allowed on top of a
	# deny-all rule, and mknod of any node is allowed ("m"), but using a
	# node the container made itself is not.
	# loop0 (block 7:0): its driver exists here and it is in no allow-list.
	update_config '.linux.resources.devices = [{"allow": false, "access": "rwm"}]
		| .process.capabilities.bounding += ["CAP_MKNOD"]
		| .process.capabilities.effective += ["CAP_MKNOD"]
		| .process.capabilities.permitted += ["CAP_MKNOD"]
		| .linux.cgroupsPath = $p' --arg p "$(test_cgroups_path)"
	run ctr_run sh -c 'mknod /tmp/myloop b 7 0 && echo made; head -c 1 /tmp/myloop; cat /dev/null && echo null-ok'
	assert_output_contains made
	assert_output_contains "Operation not permitted"
	assert_output_contains null-ok
}

@test "/dev/console is the terminal when process.terminal is set" {
	run_with_terminal sh -c 'stat -c "%t" /dev/console; tty; readlink /proc/self/fd/0'
	assert_success
	# 136 (0x88) is the major of /dev/pts/*.
	assert_equal "${lines[0]}" 88
	assert_equal "${lines[1]}" /dev/pts/0
	assert_equal "${lines[2]}" /dev/pts/0
}

@test "--no-pivot runs the container with chroot" {
	run runtime run --no-pivot --bundle "$BUNDLE" "$CID"
	assert_success
	set_args sh -c 'ls /; cat /etc/hostname'
	run runtime run --no-pivot --bundle "$BUNDLE" "$CID"
	assert_success
	assert_output_contains agentrun-busybox
}

@test "a read-only /dev tmpfs: pts, shm and the device nodes are made first, then it is read-only" {
	update_config '(.mounts[] | select(.destination == "/dev") | .options) += ["ro"]'
	run ctr_run sh -c 'ls -d /dev/pts /dev/shm /dev/null /dev/ptmx; echo x >/dev/null && echo null-ok; touch /dev/x'
	assert_failure
	assert_output_contains "/dev/pts"
	assert_output_contains "/dev/shm"
	assert_output_contains "null-ok"
	assert_output_contains "/dev/x: Read-only file system"
}
