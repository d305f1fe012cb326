#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Build a minimal root filesystem from Debian's busybox-static.
#
#   images/busybox.sh [DIR]     (default: images/out/busybox/rootfs)
#
# The result is what the tests, the benchmark and the quick start run in:
# one static busybox with a symlink per applet, the directories a runtime
# mounts over, and just enough of /etc for `id`, `whoami` and name lookups.
# Nothing is downloaded: the binary comes from the busybox-static package.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
DEST=${1:-$HERE/out/busybox/rootfs}
BUSYBOX=${BUSYBOX:-/bin/busybox}

die() { echo "busybox.sh: $*" >&2; exit 1; }

# A dynamically linked busybox would need the host's libc in the rootfs.
check_busybox() {
	[ -x "$BUSYBOX" ] || die "$BUSYBOX not found: apt-get install busybox-static"
	if LC_ALL=C file -L "$BUSYBOX" 2>/dev/null | grep -q 'dynamically linked'; then
		die "$BUSYBOX is dynamically linked: apt-get install busybox-static"
	fi
}

make_tree() {
	local d
	for d in bin sbin usr/bin usr/sbin proc sys dev etc tmp root home/test run var/tmp var/log mnt; do
		mkdir -p "$DEST/$d"
	done
	chmod 1777 "$DEST/tmp" "$DEST/var/tmp"
	chmod 0700 "$DEST/root"
	chown 1000:1000 "$DEST/home/test"
}

# `busybox --install -s /bin`, run chrooted so the links point at the
# rootfs's own /bin/busybox: one exec instead of ~270 `ln` calls. Without
# root (no chroot) fall back to making the relative links one by one.
install_applets() {
	install -m 0755 "$BUSYBOX" "$DEST/bin/busybox"
	if [ "$(id -u)" -eq 0 ] && chroot "$DEST" /bin/busybox --install -s /bin 2>/dev/null; then
		return 0
	fi
	local applet
	while read -r applet; do
		[ "$applet" = busybox ] || ln -sf busybox "$DEST/bin/$applet"
	done < <("$BUSYBOX" --list)
}

write_etc() {
	cat >"$DEST/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
test:x:1000:1000:test user:/home/test:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PASSWD
	cat >"$DEST/etc/group" <<'GROUP'
root:x:0:
test:x:1000:
extra:x:1001:test
nogroup:x:65534:
GROUP
	cat >"$DEST/etc/hosts" <<'HOSTS'
127.0.0.1	localhost
::1	localhost ip6-localhost ip6-loopback
HOSTS
	: >"$DEST/etc/resolv.conf"
	echo "agentrun-busybox" >"$DEST/etc/hostname"
	chmod 0644 "$DEST/etc/passwd" "$DEST/etc/group" "$DEST/etc/hosts"
}

main() {
	check_busybox
	# Build next to the destination and rename, so a reader never sees a
	# half-made rootfs and an interrupted build leaves no partial tree.
	local final=$DEST
	mkdir -p "$(dirname "$final")"
	DEST=$(mktemp -d "$final.tmp.XXXXXX")
	trap 'rm -rf --one-file-system "$DEST"' EXIT
	chmod 0755 "$DEST"
	make_tree
	install_applets
	write_etc
	rm -rf --one-file-system "$final"
	mv "$DEST" "$final"
	trap - EXIT
	echo "$final"
}

main "$@"
