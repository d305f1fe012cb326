#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Inside the test VM (agentrun-vm.service, started by systemd): wait until
# the system is up, mount the host's share, run its run-in-guest.sh as
# root, leave the output and the exit status in the share, power off.
set -u
share=/mnt/host
modprobe -a 9pnet_virtio 9p
mkdir -p "$share"
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576 host "$share"; then
	echo "agentrun-vm: the host's share did not mount" >/dev/console
	systemctl poweroff
	exit 1
fi
# "degraded" is fine too: only wait for the boot to be over.
systemctl is-system-running --wait >/dev/null 2>&1 || true
cd "$share" || exit 1
bash "$share/run-in-guest.sh" >"$share/out.log" 2>&1
echo $? >"$share/status.tmp" && mv "$share/status.tmp" "$share/status"
sync
systemctl poweroff
