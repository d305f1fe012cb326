#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Boot the test VM once: the guest runs SHARE/run-in-guest.sh as root and
# powers off. The disk is the cached image under a throw-away overlay
# (-snapshot), so every boot starts from the same pristine guest.
#
#   tests/vm/boot.sh SHARE [SECONDS]
#
# SHARE is a directory the guest mounts at /mnt/host (9p); the script's
# output lands in SHARE/out.log and is printed, the exit status is the
# script's (124 when the guest did not finish within SECONDS, default
# 1500: QEMU is then stopped by its pid). QEMU runs without KVM (TCG):
# /dev/kvm on this machine kind is a nested device a stock kernel cannot
# use.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SHARE=${1:?usage: tests/vm/boot.sh SHARE [SECONDS]}
LIMIT=${2:-1500}

die() { echo "vm/boot: $*" >&2; exit 1; }

[ -f "$SHARE/run-in-guest.sh" ] || die "$SHARE/run-in-guest.sh: no script to run"
IMAGE=$("$HERE/image.sh") || die "no image"
KVER=$(cat "$IMAGE/kernel")
rm -f "$SHARE/status" "$SHARE/out.log"

# Console to a file: the boot log is there when something goes wrong.
qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 4G -nographic -no-reboot \
	-kernel "/boot/vmlinuz-$KVER" -initrd "$IMAGE/initrd.img" \
	-append "root=/dev/vda rw console=ttyS0 systemd.unified_cgroup_hierarchy=1 quiet panic=-1" \
	-drive "file=$IMAGE/disk.img,if=virtio,format=raw,snapshot=on" \
	-virtfs "local,path=$SHARE,mount_tag=host,security_model=none" \
	-nic none </dev/null >"$SHARE/console.log" 2>&1 &
QEMU=$!

deadline=$((SECONDS + LIMIT))
while kill -0 "$QEMU" 2>/dev/null; do
	if [ "$SECONDS" -ge "$deadline" ]; then
		echo "vm/boot: the guest did not finish within ${LIMIT}s; stopping QEMU (pid $QEMU)" >&2
		kill -TERM "$QEMU" 2>/dev/null
		sleep 2
		kill -KILL "$QEMU" 2>/dev/null
		wait "$QEMU" 2>/dev/null
		tail -30 "$SHARE/console.log" >&2
		[ -f "$SHARE/out.log" ] && cat "$SHARE/out.log"
		exit 124
	fi
	sleep 1
done
wait "$QEMU" 2>/dev/null
[ -f "$SHARE/out.log" ] && cat "$SHARE/out.log"
if [ ! -f "$SHARE/status" ]; then
	echo "vm/boot: the guest stopped without a status; the console's end:" >&2
	tail -30 "$SHARE/console.log" >&2
	exit 1
fi
exit "$(cat "$SHARE/status")"
