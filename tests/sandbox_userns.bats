#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Root inside is nobody outside (issue #42): a sandbox that real root
# starts runs in a user namespace of its own, whose root is a host uid
# range leased from the `agentrun` user's /etc/subuid and /etc/subgid
# ranges (contrib/agentrun-ids.sh), owned by that uid, with its own
# /proc/sys/user limits. Every test here reads something host root could,
# or spends something host root has: each fails on a runtime whose sandbox
# runs as host root.

load helpers
load sandbox_helpers

setup() {
	common_setup_sandbox
	grep -q '^agentrun:' /etc/subuid && grep -q '^agentrun:' /etc/subgid ||
		fail "no range for user agentrun in /etc/subuid and /etc/subgid: run contrib/agentrun-ids.sh"
	RANGE_START=$(awk -F: '$1 == "agentrun" { print $2; exit }' /etc/subuid)
}

# first_host_id: container id 0 on the host, from a uid_map in $output.
first_host_id() {
	awk '$1 == 0 { print $2; exit }' <<<"$output"
}

@test "sandbox_userns: container root maps to an unprivileged range of the agentrun user, never to host root" {
	run sandbox -- sh -c 'cat /proc/self/uid_map /proc/self/gid_map; id -u'
	assert_success
	[ "$(awk '$1 == 0 && $2 == 0' <<<"$output")" = "" ] || fail "a 0 -> 0 line: $output"
	local host
	host=$(first_host_id)
	[ -n "$host" ] && [ "$host" -ge "$RANGE_START" ] || fail "root maps to '$host', not the agentrun range from $RANGE_START: $output"
	[ "$(awk 'NR == 1 { print $3 }' <<<"$output")" = 65536 ] || fail "size: $output"
	assert_equal "${lines[2]}" 0
}

@test "sandbox_userns: the command runs as the range's uid on the host, in a namespace that uid owns" {
	NAP=$((900 + RANDOM % 100))
	started_in_bg sandbox -- sleep "$NAP"
	local pid owner
	pid=$(wait_for_nap)
	[ "$(stat -c %u "/proc/$pid")" -ge "$RANGE_START" ] || fail "process owned by $(stat -c %u "/proc/$pid")"
	grep -E '^Uid:' "/proc/$pid/status" | grep -qvw 0 || fail "a host uid 0: $(grep Uid "/proc/$pid/status")"
	# NS_GET_OWNER_UID: the kernel charges the namespace's counts to it.
	owner=$(perl -e 'open(my $f, "<", $ARGV[0]) or die; my $b = pack("L", 0); ioctl($f, 0xb704, $b) or die "ioctl: $!"; print unpack("L", $b)' "/proc/$pid/ns/user")
	[ "$owner" = "$(stat -c %u "/proc/$pid")" ] || fail "namespace owner $owner"
	kill "$pid"
	wait_bg 10
}

@test "sandbox_userns: a process exec'd into it joins its namespace: the same range, nothing of host root" {
	echo TOKEN-exec >"$TEST_DIR/rootonly"
	chmod 0600 "$TEST_DIR/rootonly"
	NAP=$((900 + RANDOM % 100))
	started_in_bg sandbox -- sleep "$NAP"
	local pid id
	pid=$(wait_for_nap)
	id=$(runtime list -q | head -1)
	run runtime exec "$id" sh -c "cat /proc/self/uid_map; cat $TEST_DIR/rootonly"
	kill "$pid"
	wait_bg 10
	[ "$(first_host_id)" -ge "$RANGE_START" ] || fail "exec'd process maps root to $(first_host_id): $output"
	refute_output_contains TOKEN-exec
	assert_output_contains "Permission denied"
}

@test "sandbox_userns: a root-only file, a 0700 directory and another container's state are closed to it" {
	mkdir -m 0700 "$TEST_DIR/private"
	echo TOKEN-dir >"$TEST_DIR/private/token"
	echo TOKEN-file >"$TEST_DIR/rootonly"
	chmod 0600 "$TEST_DIR/rootonly"
	# A container of the same state root, with a secret in its spec.
	update_config '.process.env += ["API_TOKEN=TOKEN-env"] | .process.args = ["sleep", "60"]'
	runtime run -d --bundle "$BUNDLE" "$CID" >/dev/null
	[ -r "$ROOT/$CID/config.json" ] || fail "no state of $CID"
	run sandbox -- sh -c "cat $TEST_DIR/private/token; cat $TEST_DIR/rootonly; cat $ROOT/$CID/config.json; grep -rl TOKEN- $TEST_DIR 2>/dev/null; echo end"
	runtime delete -f "$CID"
	assert_success
	refute_output_contains TOKEN-
	assert_output_contains "Permission denied"
	assert_output_contains end
}

@test "sandbox_userns: agentrun's own places are hidden: the state roots, the secret stores, the id leases" {
	run sandbox --print-policy -- true
	assert_success
	local p
	for p in /run/agentrun /run/agentrun-secrets /etc/agentrun/secrets /run/agentrun-ids /var/lib/docker /var/lib/containerd /run/containerd /var/lib/containers; do
		jq -e --arg p "$p" '.plan.hide | has($p)' <<<"$output" >/dev/null || fail "$p not hidden: $(jq -c .plan.hide <<<"$output")"
	done
	mkdir -p /run/agentrun-ids
	# This sandbox's own --root too, whatever it is.
	# (Under systemd /run is a mount of its own, which the sandbox's root
	# does not show at all.)
	run sandbox -- sh -c "ls -A /run/agentrun-ids 2>/dev/null | wc -l; ls -A $ROOT | wc -l"
	assert_success
	assert_equal "${lines[0]}" 0
	assert_equal "${lines[1]}" 0
}

# hog_then_host TOOL PROFILE TAKE-ARGS...: tests/tools/TOOL, copied into
# the workspace under a short name of its own (pkill matches at most 15
# characters), takes what it can inside a sandbox of PROFILE and holds
# it ("took N (errno E)" in bg.out) while host root tries one of its own
# ($output, "ok" or the error); then the sandbox ends.
hog_then_host() {
	local hog=$AR_TOP/tests/tools/$1 profile=$2 name=hog$RANDOM
	shift 2
	[ -x "$hog" ] || fail "build the tree first (make): no $hog"
	cp "$hog" "$WS/$name"
	started_in_bg sh -c "cd '$WS' && exec '$RUNTIME' --root '$ROOT' --profile $profile sandbox -- ./$name $* hold </dev/null"
	wait_for_file_content "$TEST_DIR/bg.out" took 30
	run "$hog" one
	pkill -x "$name"
	wait_bg 10
}

@test "sandbox_userns: taking every inotify instance inside leaves host root its own" {
	hog_then_host inotify_hog agent take
	assert_success
	assert_output ok
	grep -q '^took 128 ' "$TEST_DIR/bg.out" || fail "the namespace's own limit (128) not met: $(cat "$TEST_DIR/bg.out" "$TEST_DIR/bg.err")"
}

@test "sandbox_userns: keys added inside count against the range's uid, not host root's" {
	# The agent filter refuses add_key; a profile that allows it.
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	echo '{"extends": "agent", "seccomp": "none"}' >"$AGENTRUN_CONFIG_DIR/profiles/keys.json"
	local quota
	quota=$(cat /proc/sys/kernel/keys/maxkeys)
	hog_then_host keys_hog keys take $((quota * 5))
	assert_success
	assert_output ok
	# A uid's quota (kernel.keys.maxkeys, less the keyrings it has), with
	# EDQUOT: host root's quota (root_maxkeys) would have let it take all.
	local took
	took=$(sed -n 's/^took \([0-9]*\) (errno 122)$/\1/p' "$TEST_DIR/bg.out")
	[ -n "$took" ] && [ "$took" -le "$quota" ] || fail "not held to a uid's key quota ($quota): $(cat "$TEST_DIR/bg.out" "$TEST_DIR/bg.err")"
}

@test "sandbox_userns: its own /proc/sys/user limits, from the profile" {
	run sandbox -- sh -c 'cat /proc/sys/user/max_inotify_instances /proc/sys/user/max_user_namespaces'
	assert_success
	assert_equal "${lines[0]}" 128
	assert_equal "${lines[1]}" 64
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	echo '{"extends": "agent", "userNamespace": {"limits": {"max_inotify_instances": 7}}}' >"$AGENTRUN_CONFIG_DIR/profiles/few.json"
	run sh -c "cd '$WS' && '$RUNTIME' --root '$ROOT' --profile few sandbox -- cat /proc/sys/user/max_inotify_instances /proc/sys/user/max_user_namespaces </dev/null"
	assert_success
	assert_equal "${lines[0]}" 7
	assert_equal "${lines[1]}" 64
}

@test "sandbox_userns: a setuid-root program inside gains nothing of host root" {
	echo TOKEN-suid >"$TEST_DIR/rootonly"
	chmod 0600 "$TEST_DIR/rootonly"
	cp /bin/cat "$WS/suid-cat"
	chmod 4755 "$WS/suid-cat"
	run sandbox -- sh -c "./suid-cat $TEST_DIR/rootonly; grep -E '^(Uid|CapEff)' /proc/self/status"
	refute_output_contains TOKEN-suid
	assert_output_contains "Permission denied"
}

@test "sandbox_userns: two sandboxes at once get disjoint ranges" {
	NAP=$((900 + RANDOM % 100))
	started_in_bg sandbox -- sh -c "cat /proc/self/uid_map; sleep $NAP"
	local pid first
	pid=$(wait_for_nap)
	run sandbox -- cat /proc/self/uid_map
	assert_success
	first=$(awk '$1 == 0 { print $2 }' "/proc/$pid/uid_map")
	local second
	second=$(first_host_id)
	kill "$pid"
	wait_bg 10
	[ -n "$first" ] && [ -n "$second" ] || fail "uid maps: '$first' '$second'"
	[ $((first > second ? first - second : second - first)) -ge 65536 ] || fail "ranges overlap: $first and $second"
}

@test "sandbox_userns: a lease left by a killed sandbox is taken again; a finished one is given back" {
	mkdir -p /run/agentrun-ids
	local slot attempt
	# A lease whose state dir is gone (what a SIGKILLed create leaves) in
	# the lowest free slot. Suites running beside this one (the VM's
	# engines) may free a lower slot meanwhile, which the sandbox then
	# rightly takes first: then again.
	for attempt in 1 2 3 4 5; do
		slot=0
		while [ -e "/run/agentrun-ids/$slot" ]; do slot=$((slot + 1)); done
		printf %s "$TEST_DIR/state/gone" >"/run/agentrun-ids/$slot"
		run sandbox -- cat /proc/self/uid_map
		assert_success
		[ "$(first_host_id)" -lt $((RANGE_START + slot * 65536)) ] || break
		[ "$(cat "/run/agentrun-ids/$slot" 2>/dev/null)" != "$TEST_DIR/state/gone" ] || rm -f "/run/agentrun-ids/$slot"
	done
	[ "$(first_host_id)" = $((RANGE_START + slot * 65536)) ] || fail "slot $slot not taken again: $output"
	[ ! -e "/run/agentrun-ids/$slot" ] || fail "lease $slot kept after the sandbox ended: $(cat "/run/agentrun-ids/$slot")"
	# Only leases live there: no mount, nothing for a container to enter.
	[ "$(stat -c %a /run/agentrun-ids)" = 700 ] || fail "mode $(stat -c %a /run/agentrun-ids)"
	! grep -q ' /run/agentrun-ids' /proc/self/mountinfo || fail "a mount under /run/agentrun-ids"
}

@test "sandbox_userns: the workspace is the sandbox's: edits, new programs and git commits work, what leaves is the caller's" {
	git -C "$WS" init -q
	git -C "$WS" -c user.email=t@t -c user.name=t add -A
	git -C "$WS" -c user.email=t@t -c user.name=t commit -qm base
	mkdir -p "$TEST_DIR/out"
	run sandbox -o "$TEST_DIR/out" --diff "$TEST_DIR/ws.diff" -- sh -c '
		set -e
		stat -c "ws %u" . a.txt
		echo edited >>a.txt
		printf "#!/bin/sh\necho built\n" >build.sh
		chmod +x build.sh && ./build.sh
		git -c user.email=a@a -c user.name=agent add a.txt build.sh
		git -c user.email=a@a -c user.name=agent commit -qm "agent work" && echo committed
		echo artifact >/output/result.txt'
	assert_success
	[ "$(grep -c '^ws 0$' <<<"$output")" = 2 ] || fail "workspace not container root's: $output"
	assert_output_contains built
	assert_output_contains committed
	grep -q '^+edited$' "$TEST_DIR/ws.diff" || fail "edit not in the diff"
	[ -s "$TEST_DIR/ws.diff.bundle" ] || fail "no bundle of the commit"
	local out
	out=$(echo "$TEST_DIR"/out/sandbox-*/result.txt)
	[ "$(stat -c %u:%g "$out")" = "$(stat -c %u:%g "$TEST_DIR/out")" ] || fail "output owned by $(stat -c %u:%g "$out")"
	[ "$(stat -c %u "$TEST_DIR/ws.diff")" = 0 ] || fail "diff owner"
	[ "$(tail -1 "$WS/a.txt")" = original ] || fail "the real workspace changed"
}

@test "sandbox_userns: no range for the profile's user is one line naming the file, and nothing is left" {
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	echo '{"extends": "agent", "userNamespace": {"subidUser": "agentrun-test-none"}}' >"$AGENTRUN_CONFIG_DIR/profiles/norange.json"
	run sh -c "cd '$WS' && '$RUNTIME' --root '$ROOT' --profile norange sandbox -- echo RAN-COMMAND </dev/null"
	assert_failure
	refute_output_contains RAN-COMMAND
	assert_output_contains "/etc/subuid: no range for user \`agentrun-test-none\`"
	[ "${#lines[@]}" = 1 ] || fail "more than one line: $output"
}

@test "sandbox_userns: a range too small for one container's size is one line naming the files, and nothing is left" {
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	local have
	have=$(awk -F: '$1 == "agentrun" { print $3; exit }' /etc/subuid)
	echo "{\"extends\": \"agent\", \"userNamespace\": {\"size\": $((have + 1))}}" >"$AGENTRUN_CONFIG_DIR/profiles/toobig.json"
	run sh -c "cd '$WS' && '$RUNTIME' --root '$ROOT' --profile toobig sandbox -- echo RAN-COMMAND </dev/null"
	assert_failure
	refute_output_contains RAN-COMMAND
	assert_output_contains "/etc/subuid, /etc/subgid: the range of user \`agentrun\` holds fewer than $((have + 1)) ids"
	[ "${#lines[@]}" = 1 ] || fail "more than one line: $output"
	[ -z "$(ls -A "$ROOT" | grep -v '^\.')" ] || fail "left in --root: $(ls -A "$ROOT")"
}

@test "sandbox_userns: a --root below a directory others may not enter (as Docker's exec root) works" {
	mkdir -m 0700 "$TEST_DIR/closed"
	run sh -c "cd '$WS' && '$RUNTIME' --root '$TEST_DIR/closed/state' sandbox -- sh -c 'cat /proc/self/uid_map; echo RAN-COMMAND' </dev/null"
	assert_success
	assert_output_contains RAN-COMMAND
	[ "$(first_host_id)" -ge "$RANGE_START" ] || fail "root maps to $(first_host_id)"
	# Its root was shown to it through /run/agentrun-ids; nothing of that
	# is left, and the closed directory stays as it was.
	[ "$(stat -c %a "$TEST_DIR/closed")" = 700 ] || fail "mode changed"
	[ -z "$(ls -A "$TEST_DIR/closed/state" | grep -v '^\.')" ] || fail "left: $(ls -A "$TEST_DIR/closed/state")"
}

@test "sandbox_userns: a --rootfs that is an overlay mount (an engine's image) is idmapped layer by layer" {
	local lower=$TEST_DIR/lower ovl=$TEST_DIR/ovl
	cp -a "$AR_ROOTFS" "$lower"
	mkdir -p "$lower$WS" "$TEST_DIR/up/etc" "$TEST_DIR/work" "$ovl"
	echo from-upper >"$TEST_DIR/up/etc/layered"
	mount -t overlay overlay -o "lowerdir=$lower,upperdir=$TEST_DIR/up,workdir=$TEST_DIR/work" "$ovl"
	track_mount "$ovl"
	run sandbox --rootfs "$ovl" -- sh -c 'stat -c "%u:%g" /etc/passwd /etc/layered; cat /etc/layered; echo x >/etc/new && echo wrote'
	umount "$ovl"
	assert_success
	[ "$(grep -c '^0:0$' <<<"$output")" = 2 ] || fail "layers not container root's: $output"
	assert_output_contains from-upper
	assert_output_contains wrote
	[ ! -e "$TEST_DIR/up/etc/new" ] && [ ! -e "$lower/etc/new" ] || fail "a write reached the image"
}

@test "sandbox_userns: a --rootfs that cannot be idmapped (relative overlay layers) is one line naming it, and nothing is left" {
	local ovl=$TEST_DIR/ovl
	cp -a "$AR_ROOTFS" "$TEST_DIR/lower"
	mkdir -p "$TEST_DIR/lower$WS" "$TEST_DIR/up" "$TEST_DIR/work" "$ovl"
	(cd "$TEST_DIR" && mount -t overlay overlay -o lowerdir=lower,upperdir=up,workdir=work "$ovl")
	track_mount "$ovl"
	run sandbox --rootfs "$ovl" -- echo RAN-COMMAND
	local st=$status out=$output
	# The same root, not idmapped, for a profile without the namespace.
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	echo '{"extends": "agent", "userNamespace": {"enabled": false}}' >"$AGENTRUN_CONFIG_DIR/profiles/nous.json"
	run sh -c "cd '$WS' && '$RUNTIME' --root '$ROOT' --profile nous sandbox --rootfs '$ovl' -- echo RAN-COMMAND </dev/null"
	umount "$ovl"
	assert_success
	assert_output RAN-COMMAND
	status=$st output=$out
	assert_failure
	refute_output_contains RAN-COMMAND
	assert_output_contains "rootfs \`$ovl\`: an overlay whose layer \`up\` is a relative path cannot be idmapped"
	[ "$(grep -c . <<<"$output")" = 1 ] || fail "more than one line: $output"
}
