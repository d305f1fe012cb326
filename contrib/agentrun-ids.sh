#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Give the system user `agentrun` the subordinate uid and gid ranges that
# agentrun leases its containers' user namespaces from (the agent
# profile's userNamespace: 65536 ids each). Run as root; safe to run
# again: a user that has a range keeps it.
#
#   contrib/agentrun-ids.sh [USER [COUNT]]
#
# COUNT ids (default 268435456: 4096 containers at once) starting where no
# other range in /etc/subuid or /etc/subgid is, at 2^31 or above.
set -eu
USER_NAME=${1:-agentrun}
COUNT=${2:-268435456}

die() { echo "agentrun-ids: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root"

if ! getent passwd "$USER_NAME" >/dev/null; then
	useradd --system --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin "$USER_NAME" || die "useradd $USER_NAME failed"
fi

# The first id at or above 2^31 past every range in both files.
next_start() {
	cat /etc/subuid /etc/subgid 2>/dev/null | awk -F: '
		BEGIN { s = 2147483648 }
		NF == 3 && $2 + $3 > s { s = $2 + $3 }
		END { printf "%.0f\n", s }'
}

START=$(next_start)
awk -v s="$START" -v n="$COUNT" 'BEGIN { exit !(s + n <= 4294967296) }' ||
	die "no room for $COUNT more ids below 2^32"

add_range() { # FILE
	if [ -f "$1" ] && grep -q "^$USER_NAME:" "$1"; then
		return 0
	fi
	echo "$USER_NAME:$START:$COUNT" >>"$1"
	echo "agentrun-ids: $1: $USER_NAME:$START:$COUNT"
}
add_range /etc/subuid
add_range /etc/subgid
