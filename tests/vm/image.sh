#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Build the test VM's disk image: Debian 12 with systemd as PID 1 and only
# cgroup v2, the engines, crun, and an ordinary user for rootless tests.
# Built once into $AGENTRUN_VM_DIR (default /var/cache/agentrun-vm, outside
# the work tree and /tmp) and reused while this recipe is unchanged; every
# boot runs on a throw-away overlay (tests/vm/boot.sh), never on the image.
#
#   tests/vm/image.sh            # prints the image directory
#
# Needs root and Debian's packages: qemu-system-x86 qemu-utils debootstrap
# linux-image-amd64 initramfs-tools (installed when missing).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
VM_DIR=${AGENTRUN_VM_DIR:-/var/cache/agentrun-vm}

# What the guest gets on top of debootstrap's minbase.
BASE_PKGS=systemd,systemd-sysv,dbus,udev,iproute2,kmod,procps,libpam-systemd,dbus-user-session,ca-certificates
GUEST_PKGS=(
	crun podman conmon uidmap passt fuse-overlayfs slirp4netns containernetworking-plugins
	golang-github-containers-common catatonit iptables docker.io containerd apparmor
	busybox-static strace bats jq nftables dnsmasq-base curl openssl util-linux
	patch python3-minimal git bsdextrautils file
	libseccomp2 libyajl2 libcap2 libselinux1 libsystemd0 tini hyperfine bc
	nodejs criu
)
HOST_PKGS=(qemu-system-x86 qemu-utils debootstrap linux-image-amd64 initramfs-tools)

die() { echo "vm/image: $*" >&2; exit 1; }

need_host_packages() {
	local missing=() p
	for p in "${HOST_PKGS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "vm/image: installing ${missing[*]}" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

# The newest Debian kernel on the host: QEMU boots it directly and the
# guest gets its modules (overlay, 9p and others are modules).
kernel_version() {
	local v
	v=$(find /boot -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' | sed 's/^vmlinuz-//' | sort -V | tail -1)
	[ -n "$v" ] && [ -d "/lib/modules/$v" ] || die "no Debian kernel in /boot (apt-get install linux-image-amd64)"
	echo "$v"
}

mirror() {
	local m
	m=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	[ -n "$m" ] || m=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
	[ -n "$m" ] || die "no Debian mirror in /etc/apt"
	echo "$m"
}

# The recipe's own hash: a changed package list or guest set-up makes a
# new image.
recipe_stamp() {
	cat "$HERE/image.sh" "$HERE/guest-init.sh" | sha256sum | cut -c1-16
}

in_chroot() {
	local root=$1
	shift
	unshare -m -- sh -c '
		root=$1; shift
		mount -t proc proc "$root/proc"
		mount -t sysfs sys "$root/sys"
		mount --rbind /dev "$root/dev"
		chroot "$root" "$@"' sh "$root" "$@"
}

configure_guest() {
	local root=$1 kver=$2
	echo agentrun-vm >"$root/etc/hostname"
	printf '127.0.0.1 localhost\n127.0.1.1 agentrun-vm\n' >"$root/etc/hosts"
	echo '/dev/vda / ext4 rw,relatime 0 1' >"$root/etc/fstab"
	# The guest's one job: run what the host put in the share, then stop.
	install -m 0755 "$HERE/guest-init.sh" "$root/usr/local/sbin/agentrun-vm-init"
	cat >"$root/etc/systemd/system/agentrun-vm.service" <<-'EOF'
	[Unit]
	Description=Run the agentrun test script from the host's share
	After=multi-user.target
	[Service]
	Type=simple
	Delegate=yes
	ExecStart=/usr/local/sbin/agentrun-vm-init
	StandardOutput=journal+console
	StandardError=journal+console
	[Install]
	WantedBy=multi-user.target
	EOF
	ln -sf /etc/systemd/system/agentrun-vm.service \
		"$root/etc/systemd/system/multi-user.target.wants/agentrun-vm.service"
	# Nothing else that waits for a network or a login.
	ln -sf /dev/null "$root/etc/systemd/system/systemd-networkd-wait-online.service"
	ln -sf /dev/null "$root/etc/systemd/system/getty@tty1.service"
	ln -sf /dev/null "$root/etc/systemd/system/serial-getty@ttyS0.service"
	# Rootless: an ordinary user with subordinate ids, lingering, and the
	# controllers delegated to user sessions.
	in_chroot "$root" useradd -m -u 1000 -s /bin/bash tester
	echo 'tester:100000:65536' >"$root/etc/subuid"
	echo 'tester:100000:65536' >"$root/etc/subgid"
	mkdir -p "$root/var/lib/systemd/linger" "$root/etc/systemd/system/user@.service.d"
	touch "$root/var/lib/systemd/linger/tester"
	printf '[Service]\nDelegate=cpu cpuset io memory pids\n' \
		>"$root/etc/systemd/system/user@.service.d/delegate.conf"
	mkdir -p "$root/lib/modules"
	cp -a "/lib/modules/$kver" "$root/lib/modules/"
	in_chroot "$root" depmod "$kver"
	# Docker, containerd and Podman start only when a test starts them.
	rm -f "$root"/etc/systemd/system/multi-user.target.wants/{docker,containerd}.service \
		"$root"/etc/systemd/system/sockets.target.wants/docker.socket
}

# A small initrd: only what finds and mounts the root disk (saves ~10 s
# of boot against Debian's default one).
make_initrd() {
	local kver=$1 out=$2 conf
	conf=$(mktemp -d "$VM_DIR/initramfs-conf.XXXXXX")
	cp -a /etc/initramfs-tools/. "$conf/"
	sed -i 's/^MODULES=.*/MODULES=list/' "$conf/initramfs.conf"
	printf '%s\n' virtio_pci virtio_blk ext4 crc32c_generic >"$conf/modules"
	mkinitramfs -d "$conf" -o "$out" "$kver"
	rm -rf "$conf"
}

build() {
	local kver=$1 stamp=$2 work root
	work=$(mktemp -d "$VM_DIR/build.XXXXXX")
	root=$work/rootfs
	echo "vm/image: debootstrap (about a minute)" >&2
	debootstrap --variant=minbase --include="$BASE_PKGS" bookworm "$root" "$(mirror)" >"$work/debootstrap.log" 2>&1 \
		|| { tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
	echo "vm/image: guest packages" >&2
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	# No service starts inside the chroot.
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	in_chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${GUEST_PKGS[@]}" >"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log" >&2; die "guest packages failed"; }
	rm -f "$root/usr/sbin/policy-rc.d"
	in_chroot "$root" apt-get clean
	configure_guest "$root" "$kver"
	make_initrd "$kver" "$work/initrd.img" 2>"$work/initrd.log" || { tail "$work/initrd.log" >&2; die "mkinitramfs failed"; }
	echo "vm/image: disk" >&2
	truncate -s 6G "$work/disk.img"
	mkfs.ext4 -q -F -d "$root" "$work/disk.img"
	rm -rf "$root"
	echo "$kver" >"$work/kernel"
	echo "$stamp" >"$work/stamp"
	rm -rf "$VM_DIR/image"
	mv "$work" "$VM_DIR/image"
}

main() {
	[ "$(id -u)" -eq 0 ] || die "needs root"
	need_host_packages
	mkdir -p "$VM_DIR"
	local kver stamp
	kver=$(kernel_version)
	stamp=$(recipe_stamp)-$kver
	exec 9>"$VM_DIR/lock"
	flock 9
	if [ "$(cat "$VM_DIR/image/stamp" 2>/dev/null)" != "$stamp" ]; then
		rm -rf "$VM_DIR"/build.*
		build "$kver" "$stamp"
	fi
	echo "$VM_DIR/image"
}

main "$@"
