#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The agent profile's host side, driven step by step through the unit test
# binary (tests/unit/test_agent_host, built by `make check`) and checked
# with independent tools: coreutils sha256sum for the audit chain and the
# manifest, find/stat for what an export leaves, /proc/self/mountinfo for
# what is left mounted. Needs root for the mounts.

bats_require_minimum_version 1.5.0
load export_check

AR_TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
DRIVER=${AGENT_HOST_DRIVER:-$AR_TOP/tests/unit/test_agent_host}

setup() {
	[ -x "$DRIVER" ] || skip "build it first: make check"
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	W=$BATS_TEST_TMPDIR/w
	mkdir -p "$W"
}

teardown() {
	# Whatever a failed test left mounted below its directory goes now, and
	# the test fails if there was something.
	local left
	left=$(awk -v d="$BATS_TEST_TMPDIR" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
	if [ -n "$left" ]; then
		echo "left mounted:" "$left" >&2
		while read -r m; do umount -l "$m"; done <<<"$left"
		return 1
	fi
}

fail() {
	echo "FAIL: $*" >&2
	return 1
}

# A digest of a tree: names, types, modes, owners, sizes and contents.
tree_digest() {
	(cd "$1" && find . -printf '%p %y %m %U %G %s %l\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0r sha256sum) | sha256sum
}

@test "the unit tests pass and leave nothing mounted or behind" {
	run env TMPDIR="$W" "$DRIVER"
	echo "$output"
	[ "$status" -eq 0 ] || fail "unit tests failed"
	[[ "$output" == *" 0 failed"* ]] || fail "no summary"
	[ -z "$(ls -A "$W")" ] || fail "left: $(ls -A "$W")"
}

@test "audit: each prev is coreutils' sha256 of the line before" {
	local log=$W/audit.log
	"$DRIVER" audit-append "$log" c1 create
	"$DRIVER" audit-append "$log" $'c"2\n\xc3\xa9' exec '"argv":["sh","-c","echo \"x\""],"status":0'
	"$DRIVER" audit-append "$log" c1 fs-changes '"created":["/a"],"truncated":false'
	"$DRIVER" audit-append "$log" c1 delete
	[ "$(wc -l <"$log")" -eq 4 ]
	[ "$(stat -c %a "$log")" = 600 ]
	local prev=0000000000000000000000000000000000000000000000000000000000000000 line n=0
	while IFS= read -r line; do
		n=$((n + 1))
		jq -e . <<<"$line" >/dev/null || fail "line $n is not JSON"
		[ "$(jq -r .prev <<<"$line")" = "$prev" ] || fail "line $n: bad prev"
		[[ "$(jq -r .time <<<"$line")" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$ ]] || fail "line $n: time"
		prev=$(printf '%s' "$line" | sha256sum | cut -d' ' -f1)
	done <"$log"
	[ "$(sed -n 2p "$log" | jq -r .id)" = $'c"2\n\xc3\xa9' ]
	run "$DRIVER" audit-verify "$log"
	[ "$output" = 0 ]
}

@test "audit: an edited, a removed and a cut line show" {
	local log=$W/audit.log i
	for i in 1 2 3 4 5; do "$DRIVER" audit-append "$log" c1 "event-$i"; done
	cp "$log" "$W/orig"

	sed -i '2s/event-2/event-X/' "$log"
	run "$DRIVER" audit-verify "$log"
	[ "$output" = 3 ] || fail "edit: $output"

	sed '3d' "$W/orig" >"$log"
	run "$DRIVER" audit-verify "$log"
	[ "$output" = 3 ] || fail "removal: $output"

	head -c -20 "$W/orig" >"$log"
	run "$DRIVER" audit-verify "$log"
	[ "$output" = 5 ] || fail "cut: $output"
	# The next append starts a line of its own; the cut still shows.
	"$DRIVER" audit-append "$log" c1 after-cut
	[ "$(wc -l <"$log")" -eq 6 ]
	run "$DRIVER" audit-verify "$log"
	[ "$output" = 5 ] || fail "after cut: $output"
}

@test "overlay: writes stay in the layer, the rootfs is unchanged, changes are listed" {
	local rootfs=$W/rootfs state=$W/state merged before
	mkdir -p "$rootfs/etc" "$rootfs/d/sub" "$state"
	echo original >"$rootfs/etc/conf"
	echo gone >"$rootfs/del"
	echo in-d >"$rootfs/d/sub/f"
	ln -s /etc/passwd "$rootfs/link"
	chmod 0751 "$rootfs"
	before=$(tree_digest "$rootfs")

	merged=$("$DRIVER" overlay-prepare "$state" "$rootfs" $((4 << 20)) 1000)
	[ "$merged" = "$state/overlay/merged" ]
	[ "$(stat -c %a "$merged")" = 751 ] || fail "root mode not the rootfs's"
	echo changed >"$merged/etc/conf"
	echo new >"$merged/new"
	rm "$merged/del"
	rm -r "$merged/d" && mkdir "$merged/d"
	rm "$merged/link" && ln -s /somewhere "$merged/link"
	[ "$(cat "$merged/etc/conf")" = changed ]
	[ "$(tree_digest "$rootfs")" = "$before" ] || fail "rootfs changed"

	run "$DRIVER" overlay-changes "$state"
	[ "$status" -eq 0 ]
	echo "$output"
	[ "$(jq -c .created <<<"$output")" = '["/new"]' ]
	[ "$(jq -c .modified <<<"$output")" = '["/etc/conf","/link"]' ]
	[ "$(jq -c .deleted <<<"$output")" = '["/del"]' ]
	[ "$(jq -c .replaced <<<"$output")" = '["/d"]' ]

	"$DRIVER" overlay-teardown "$state"
	[ ! -e "$state/overlay" ]
	[ "$(tree_digest "$rootfs")" = "$before" ] || fail "rootfs changed"
	# Twice is fine.
	"$DRIVER" overlay-teardown "$state"
	run "$DRIVER" overlay-changes "$state"
	[ "$output" = "{}" ]
}

@test "overlay: a full layer gives ENOSPC inside and nothing outside" {
	local rootfs=$W/rootfs state=$W/state merged
	mkdir -p "$rootfs" "$state"
	merged=$("$DRIVER" overlay-prepare "$state" "$rootfs" $((1 << 20)) 100)
	run dd if=/dev/zero of="$merged/fill" bs=64k count=100
	[ "$status" -ne 0 ]
	[[ "$output" == *"No space left"* ]] || fail "$output"
	[ ! -e "$rootfs/fill" ]
	df -k "$W" >/dev/null
	"$DRIVER" overlay-teardown "$state"
}

@test "output: a hostile tree exports as plain files with a true manifest" {
	local state=$W/state host=$W/host out dest i
	mkdir -p "$state" "$host"
	"$DRIVER" output-prepare "$state" $((4 << 20)) 1000
	out=$state/output
	[ "$(stat -c '%u:%g %a' "$out")" = "1234:5678 755" ]
	mkdir -p "$out/docs/deep"
	echo report >"$out/docs/report.md"
	printf 'binary\0data' >"$out/docs/deep/blob"
	echo x >"$out/setuid" && chmod 6755 "$out/setuid"
	echo x >"$out/sticky-dir-file" && mkdir "$out/sticky" && chmod 1777 "$out/sticky"
	ln -s / "$out/root"
	ln -s ../../../../../../etc/passwd "$out/docs/passwd"
	ln -s loop "$out/loop"
	echo shared >"$out/a" && ln "$out/a" "$out/docs/b"
	mkfifo "$out/fifo"
	mknod "$out/tty" c 5 0
	touch "$out/$(printf 'evil\nname')" "$out/$(printf 'bad\xffutf8')"
	# Deeper than the export goes.
	local p=$out/nest
	for i in $(seq 1 140); do p=$p/n; done
	mkdir -p "$p" && echo deep >"$p/file"

	"$DRIVER" output-export "$state" "$host" ctr1 $((4 << 20)) 1000
	dest=$host/ctr1
	# Only regular files and directories, none with special bits, every
	# file listed in the manifest with its size and hash; all the host
	# dir's owner's.
	check_export "$dest"
	[ -z "$(find "$dest" ! -user root)" ]
	[ "$(stat -c %a "$dest/setuid")" = 755 ]
	[ "$(stat -c %a "$dest/sticky")" = 777 ]
	[ ! -e "$dest/a" ] && [ ! -e "$dest/docs/b" ]
	# Nothing outside the destination.
	[ "$(ls -A "$host")" = ctr1 ]
	local manifest=$dest/manifest.json
	local reasons
	reasons=$(jq -r '.withheld[].reason' "$manifest" | sort | uniq -c | awk '{ $1 = $1 } 1')
	echo "$reasons"
	[[ "$reasons" == *"3 symlink"* ]]
	[[ "$reasons" == *"2 hard link"* ]]
	[[ "$reasons" == *"1 fifo"* ]]
	[[ "$reasons" == *"1 device node"* ]]
	[[ "$reasons" == *"2 name is not printable UTF-8"* ]]
	[[ "$reasons" == *"1 nested too deeply"* ]]

	"$DRIVER" output-teardown "$state"
	[ ! -e "$out" ]
}

@test "output: quota, an existing destination and a symlinked host dir are refused" {
	local state=$W/state host=$W/host i
	mkdir -p "$state" "$host"
	"$DRIVER" output-prepare "$state" $((1 << 20)) 100
	for i in $(seq 1 20); do head -c 1000 /dev/urandom >"$state/output/f$i"; done

	"$DRIVER" output-export "$state" "$host" q 5500 100
	[ "$(jq '.files | length' "$host/q/manifest.json")" = 5 ]
	[ "$(jq -r '[.withheld[].reason] | unique | .[]' "$host/q/manifest.json")" = "byte quota exceeded" ]
	"$DRIVER" output-export "$state" "$host" n 0 3
	[ "$(jq '.files | length' "$host/n/manifest.json")" = 3 ]

	run "$DRIVER" output-export "$state" "$host" q 0 0
	[ "$status" -ne 0 ]
	[[ "$output" == *"File exists"* ]] || fail "$output"

	ln -s "$host" "$W/link"
	run "$DRIVER" output-export "$state" "$W/link" s 0 0
	[ "$status" -ne 0 ]
	[ ! -e "$host/s" ]

	"$DRIVER" output-teardown "$state"
}
