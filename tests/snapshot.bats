#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Snapshots of an agent container (agentrun snapshot) and forks from them
# (sandbox --from ID:NAME): a snapshot keeps the container's root as it
# was, byte for byte (contents, deletions, renames, modes, owners, times,
# hard links, symlinks, special files, extended attributes); forks start
# from it and diverge without seeing each other or the container; the
# snapshots count against the overlay's size limit; the audit log records
# them; bad input is one line that leaves nothing.

load helpers

setup() {
	common_setup
	CFG=$TEST_DIR/cfg
	AUDIT=$TEST_DIR/audit.log
	mkdir -p "$CFG/profiles"
	export AGENTRUN_CONFIG_DIR=$CFG
	write_profile '{}'
	# Where the tests' agent writes: a directory of the image.
	mkdir -p "$BUNDLE/rootfs/opt"
}

teardown() {
	common_teardown
}

# write_profile JSON: the test profile `t` (agent, this test's audit log),
# JSON merged over it.
write_profile() {
	jq -n --arg audit "$AUDIT" --argjson extra "$1" \
		'{extends: "agent", audit: {path: $audit}} * $extra' >"$CFG/profiles/t.json"
}

agent() {
	runtime --profile t "$@"
}

# agent_bg: a command that starts a container's init, which keeps its
# stdout and stderr (rollback, as run --detach).
agent_bg() {
	runtime_bg --profile t "$@"
}

# start_agent: the container $CID with the agent profile, its init asleep.
start_agent() {
	set_args sleep 600
	agent run --detach --bundle "$BUNDLE" "$CID"
}

# fork ARG...: a sandbox from snapshot ARG1 of $CID running the rest.
fork() {
	local snap=$1
	shift
	(cd "$TEST_DIR" && agent sandbox --from "$CID:$snap" -- "$@")
}

# What the tests compare: every entry below /etc and /opt with its type
# and mode, owner, size, link count and mtime, and each file's checksum.
MANIFEST='cd / && find etc opt -xdev | sort | while read -r f; do
	stat -c "%n %A %u:%g %s %h %Y" "$f"
	if [ -f "$f" ] && [ ! -L "$f" ]; then md5sum "$f"; fi
done'

# change_root: one of each kind of change an agent makes.
change_root() {
	agent exec "$CID" sh -c '
		echo changed >>/etc/passwd
		rm /etc/group
		mv /etc/hostname /etc/hostname.moved
		rm -rf /etc/network && mkdir /etc/network && echo new >/etc/network/only
		mkdir -p /opt/tree/deep/er
		echo x >/opt/tree/deep/er/f
		chmod 0604 /opt/tree/deep/er/f
		echo secret >/opt/tree/private && chmod 0640 /opt/tree/private
		ln /opt/tree/deep/er/f /opt/tree/hard
		ln -s deep/er/f /opt/tree/sym
		mkfifo /opt/tree/fifo
		dd if=/dev/urandom of=/opt/big bs=64k count=16 2>/dev/null
		chmod 4755 /opt/big
		touch -d "2001-02-03 04:05:06" /opt/tree/deep/er/f
		mkdir /opt/a && echo a >/opt/a/x && mv /opt/a /opt/b'
	# Owners the agent's capabilities cannot give, and an extended
	# attribute (trusted.*: a tmpfs before Linux 6.6 takes no user.*):
	# set from the host, through the overlay.
	local merged=$ROOT/$CID/overlay/merged
	chown 1000:1001 "$merged/opt/tree/deep/er/f"
	chown -h 1002:1003 "$merged/opt/tree/sym"
	chown 1004:1005 "$merged/opt/tree/deep"
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "trusted.agentrun-test", b"v1")' "$merged/opt/big"
}

@test "snapshot: a fork sees the root as it was, byte for byte; the container goes on unfrozen" {
	start_agent
	change_root
	local before
	before=$(agent exec "$CID" sh -c "$MANIFEST")
	[ "$(grep -c . <<<"$before")" -gt 20 ] || fail "manifest too short: $before"
	run agent snapshot "$CID" one
	assert_success
	assert_output ""
	[ "$(ctr_status)" = running ] || fail "status after the snapshot: $(ctr_status)"
	# Changed after the snapshot: the fork must not see it.
	agent exec "$CID" sh -c 'echo later >/opt/later; echo more >>/opt/b/x'

	run fork one sh -c "$MANIFEST"
	assert_success
	[ "$output" = "$before" ] || fail "fork differs: $(diff <(echo "$before") <(echo "$output"))"
	# The snapshot's copy keeps the attribute, as the container had it.
	run python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "trusted.agentrun-test").decode())' \
		"$ROOT/$CID/overlay/snapshots/one/root/opt/big"
	assert_output "v1"
	# The deletion is a whiteout, the replaced directory opaque.
	[ -c "$ROOT/$CID/overlay/snapshots/one/root/etc/group" ] || fail "no whiteout for /etc/group"
	run agent exec "$CID" cat /opt/later
	assert_output "later"
}

@test "snapshot: two forks diverge without seeing each other, the container or a later fork" {
	start_agent
	agent exec "$CID" sh -c 'echo base >/opt/shared'
	agent snapshot "$CID" base
	fork base sh -c 'echo one >/opt/shared; echo 1 >/opt/only-one; sleep 1; cat /opt/shared; ls /opt' >"$TEST_DIR/one" &
	local one=$!
	run fork base sh -c 'sleep 0.5; echo two >/opt/shared; cat /opt/shared; ls /opt'
	assert_success
	assert_output "two
shared"
	wait "$one"
	run cat "$TEST_DIR/one"
	assert_output "one
only-one
shared"
	run agent exec "$CID" sh -c 'cat /opt/shared; ls /opt'
	assert_output "base
shared"
	run fork base cat /opt/shared
	assert_output "base"
}

@test "snapshot: ls shows each with its size, json too; rm removes it; the audit log records them and the fork's origin" {
	start_agent
	agent exec "$CID" sh -c 'printf 12345 >/opt/five'
	agent snapshot "$CID" first
	agent exec "$CID" sh -c 'printf 1234567890 >/opt/ten'
	agent snapshot take "$CID" second
	run agent snapshot ls "$CID"
	assert_success
	[ "${lines[0]}" = "NAME                     CREATED                       ENTRIES        BYTES" ] || fail "header: ${lines[0]}"
	[ "$(awk 'NR > 1 { print $1 }' <<<"$output" | paste -sd' ')" = "first second" ] || fail "names: $output"
	run agent snapshot ls --format json "$CID"
	assert_success
	[ "$(jq -r '[.[] | "\(.name):\(.bytes)"] | join(" ")' <<<"$output")" = "first:5 second:15" ] || fail "json: $output"
	[ "$(jq -r '.[0].rootfs' <<<"$output")" = "$BUNDLE/rootfs" ] || fail "rootfs: $output"

	fork second true
	run agent snapshot rm "$CID" first
	assert_success
	[ ! -e "$ROOT/$CID/overlay/snapshots/first" ] || fail "first still there"
	run agent snapshot ls --format json "$CID"
	[ "$(jq -r '[.[].name] | join(" ")' <<<"$output")" = "second" ] || fail "after rm: $output"

	jq -se 'any(.[]; .event == "snapshot" and .name == "first" and .bytes == 5 and .entries > 0 and .ms >= 0)' "$AUDIT" >/dev/null ||
		fail "no snapshot event: $(cat "$AUDIT")"
	jq -se 'any(.[]; .event == "snapshot-rm" and .name == "first")' "$AUDIT" >/dev/null || fail "no snapshot-rm event"
	jq -se --arg d "$ROOT/$CID/overlay/snapshots/second" 'any(.[]; .event == "create" and .from == $d)' "$AUDIT" >/dev/null ||
		fail "the fork's create does not name its snapshot"
	run agent audit "$AUDIT"
	assert_success
}

@test "snapshot: a paused container stays paused; a stopped one can still be snapshotted" {
	start_agent
	agent exec "$CID" sh -c 'echo p >/opt/p'
	runtime pause "$CID"
	run agent snapshot "$CID" paused
	assert_success
	[ "$(ctr_status)" = paused ] || fail "status: $(ctr_status)"
	runtime resume "$CID"
	runtime kill "$CID" KILL
	wait_for_state "$CID" stopped
	run agent snapshot "$CID" stopped
	assert_success
	run fork stopped cat /opt/p
	assert_output "p"
}

@test "snapshot: snapshots count against the overlay's limit; one that does not fit fails in one line and leaves nothing" {
	host_kind_neutral
	write_profile '{"overlay": {"size": "8m"}}'
	# A rootfs of 10,000 more files, of which the agent changes a few at a time.
	mkdir -p "$BUNDLE/rootfs/data"
	(cd "$BUNDLE/rootfs/data" && seq 1 10000 | xargs touch)
	start_agent
	local i
	for i in $(seq 1 100); do
		agent exec "$CID" sh -c "echo $i >/data/current; echo $i >>/data/log"
		agent snapshot "$CID" "s$i" || fail "snapshot $i failed"
	done
	run agent snapshot ls --format json "$CID"
	[ "$(jq length <<<"$output")" = 100 ] || fail "not 100 snapshots"
	run fork s57 sh -c 'cat /data/current; wc -l </data/log; [ ! -s /data/58 ] && ls /data | wc -l'
	assert_success
	assert_output "57
57
10002"
	# 5 MiB more than the tmpfs has left: refused, and no half-made copy.
	agent exec "$CID" sh -c 'dd if=/dev/zero of=/opt/big bs=1M count=5 2>/dev/null'
	run agent snapshot "$CID" toobig
	assert_failure
	[ "${#lines[@]}" -eq 1 ] || fail "not one line: $output"
	assert_output_contains "agentrun: container \`$CID\`: snapshot \`toobig\`: root layer: copy \`opt/big\`: No space left on device"
	run ls -A "$ROOT/$CID/overlay/snapshots"
	[ "$(grep -c . <<<"$output")" = 100 ] || fail "left: $output"
	[ "$(ctr_status)" = running ] || fail "left frozen: $(ctr_status)"
}

@test "snapshot: bad input is one line naming what is wrong, and changes nothing" {
	start_agent
	agent exec "$CID" sh -c 'echo x >/opt/x'
	agent snapshot "$CID" good

	check() {
		local want=$1
		shift
		run "$@"
		assert_failure
		[ "${#lines[@]}" -eq 1 ] || fail "not one line: $output"
		assert_output "$want"
	}
	check "agentrun: container \`$CID\`: snapshot \`good\` exists" agent snapshot "$CID" good
	check "agentrun: container \`$CID\`: snapshot: name \`.x\`: expected 1 to 64 letters, digits, '_', '.' and '-', not first '.' or '-'" \
		agent snapshot "$CID" .x
	check "agentrun: container does not exist: \`nosuch\`" agent snapshot nosuch s
	check "agentrun: container \`$CID\`: snapshot \`nope\`: no such snapshot" agent snapshot rm "$CID" nope
	check "agentrun: snapshot ls: --format: unknown format \`xml\` (table or json)" agent snapshot ls --format xml "$CID"
	check "agentrun: snapshot: expected CONTAINER_ID NAME, ls CONTAINER_ID or rm CONTAINER_ID NAME (agentrun snapshot --help)" \
		agent snapshot "$CID"
	check "agentrun: sandbox: --from \`$CID:\`: expected CONTAINER_ID:NAME" fork "" true
	check "agentrun: sandbox: --from \`$CID:nope\`: container \`$CID\` has no snapshot \`nope\`" fork nope true
	check "agentrun: sandbox: --from \`$CID:good\`: the snapshot's rootfs is \`$BUNDLE/rootfs\`, not \`/\` (leave --rootfs out to take it)" \
		agent sandbox --from "$CID:good" --rootfs / -- true
	check "agentrun: sandbox: --from with --pool: a pooled sandbox was made ahead, not from a snapshot" \
		agent sandbox --from "$CID:good" --pool p -- true

	# A container made without the agent profile has no layers to keep.
	local plain=$CID-plain
	runtime run --detach --bundle "$BUNDLE" "$plain"
	check "agentrun: snapshot: container \`$plain\` has no ephemeral overlay (created without the agent profile)" \
		agent snapshot "$plain" s
	runtime delete --force "$plain"

	run ls -A "$ROOT/$CID/overlay/snapshots"
	assert_output "good"
	[ "$(ctr_status)" = running ] || fail "status: $(ctr_status)"
}

@test "snapshot: a sandbox's workspace goes with it; a fork's --diff is its own; the real workspace is never written" {
	local ws=$TEST_DIR/ws
	mkdir -p "$ws"
	echo original >"$ws/a.txt"
	echo keep >"$ws/keep.txt"
	NAP=$((600 + BATS_SUITE_TEST_NUMBER))
	cd "$ws"
	started_in_bg agent sandbox --rootfs "$BUNDLE/rootfs" -- \
		sh -c "echo edited >a.txt; echo new >b.txt; rm keep.txt; exec sleep $NAP"
	cd "$TEST_DIR"
	wait_for_nap >/dev/null
	local id
	id=$(container_ids_in_root)
	[ -n "$id" ] && [ "$(wc -w <<<"$id")" = 1 ] || fail "sandbox id: $id"
	run agent snapshot "$id" edited
	assert_success

	# The fork takes the workspace from the snapshot, wherever it is run.
	run agent sandbox --from "$id:edited" --diff "$TEST_DIR/fork.diff" -- \
		sh -c 'pwd; cat a.txt b.txt; [ ! -e keep.txt ] && echo gone; echo fork >c.txt'
	assert_success
	assert_output "$ws
edited
new
gone"
	run grep -E '^(\+\+\+|---) ' "$TEST_DIR/fork.diff"
	assert_output "--- a/a.txt
+++ b/a.txt
--- /dev/null
+++ b/b.txt
--- /dev/null
+++ b/c.txt
--- a/keep.txt
+++ /dev/null"
	[ "$(cat "$ws/a.txt")" = original ] && [ -e "$ws/keep.txt" ] && [ ! -e "$ws/b.txt" ] && [ ! -e "$ws/c.txt" ] ||
		fail "the real workspace was written: $(ls "$ws")"
	run agent sandbox --from "$id:edited" --workspace "$TEST_DIR" -- true
	assert_failure
	assert_output "agentrun: sandbox: --from \`$id:edited\`: the snapshot's workspace is \`$ws\`, not \`$TEST_DIR\` (leave --workspace out to take it)"
	kill -TERM "$BG"
	wait_bg 15
}

@test "rollback: the root is the snapshot's again, byte for byte; the init starts afresh; snapshots stay; audited" {
	start_agent
	change_root
	local before pid
	before=$(agent exec "$CID" sh -c "$MANIFEST")
	agent snapshot "$CID" one
	pid=$(ctr_pid)
	agent exec "$CID" sh -c 'echo later >/opt/later; rm -rf /opt/b; echo more >>/etc/passwd; touch /etc/group'
	agent snapshot "$CID" two

	agent_bg rollback "$CID" one
	[ "$(ctr_status)" = running ] || fail "status: $(ctr_status)"
	[ "$(ctr_pid)" != "$pid" ] || fail "the init was not restarted"
	run agent exec "$CID" sh -c "$MANIFEST"
	assert_success
	[ "$output" = "$before" ] || fail "rolled back root differs: $(diff <(echo "$before") <(echo "$output"))"
	run python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "trusted.agentrun-test").decode())' \
		"$ROOT/$CID/overlay/merged/opt/big"
	assert_output "v1"
	# Forward again, to the later snapshot; both are still there.
	agent_bg rollback "$CID" two
	run agent exec "$CID" sh -c 'cat /opt/later; [ ! -e /opt/b ] && [ -e /etc/group ] && echo ok'
	assert_output "later
ok"
	run agent snapshot ls --format json "$CID"
	[ "$(jq -r '[.[].name] | join(" ")' <<<"$output")" = "one two" ] || fail "snapshots: $output"
	[ "$(jq -r 'select(.event == "rollback") | .name' "$AUDIT" | paste -sd' ')" = "one two" ] || fail "audit: $(jq -c . "$AUDIT")"
	[ "$(jq -r 'select(.event == "rollback" or .event == "create" or .event == "start") | .event' "$AUDIT" | paste -sd' ')" = \
		"create start rollback create start rollback create start" ] || fail "audit order: $(jq -r .event "$AUDIT" | paste -sd' ')"
	run agent audit "$AUDIT"
	assert_success
}

@test "rollback: a stopped container runs again; a created one stays created and starts" {
	start_agent
	agent exec "$CID" sh -c 'echo s >/opt/s'
	agent snapshot "$CID" s
	runtime kill "$CID" KILL
	wait_for_state "$CID" stopped
	agent_bg rollback "$CID" s
	[ "$(ctr_status)" = running ] || fail "status: $(ctr_status)"
	run agent exec "$CID" cat /opt/s
	assert_output "s"

	local created=$CID-c
	agent create --bundle "$BUNDLE" "$created" >/dev/null
	agent snapshot "$created" empty
	agent_bg rollback "$created" empty
	[ "$(ctr_status "$created")" = created ] || fail "status: $(ctr_status "$created")"
	agent_bg start "$created"
	[ "$(ctr_status "$created")" = running ] || fail "status after start: $(ctr_status "$created")"
	runtime delete --force "$created"
}

@test "rollback: what cannot be rolled back is refused in one line and left as it was" {
	start_agent
	agent snapshot "$CID" s
	local pid
	pid=$(ctr_pid)
	run agent rollback "$CID" nope
	assert_failure
	assert_output "agentrun: container \`$CID\` has no snapshot \`nope\`"
	run agent rollback "$CID"
	assert_failure
	[ "${#lines[@]}" -eq 1 ] || fail "not one line: $output"
	[ "$(ctr_status)" = running ] && [ "$(ctr_pid)" = "$pid" ] || fail "touched: $(ctr_status) $(ctr_pid)"

	# A sandbox belongs to its caller, who deletes it when it ends.
	NAP=$((600 + BATS_SUITE_TEST_NUMBER))
	mkdir -p "$TEST_DIR/ws"
	cd "$TEST_DIR/ws"
	started_in_bg agent sandbox --rootfs "$BUNDLE/rootfs" -- sleep "$NAP"
	cd "$TEST_DIR"
	wait_for_nap >/dev/null
	local sb
	sb=$(container_ids_in_root | grep -v "^$CID\$")
	agent snapshot "$sb" s
	run agent rollback "$sb" s
	assert_failure
	assert_output "agentrun: rollback: container \`$sb\` belongs to the \`agentrun run\` or \`sandbox\` that waits for it: roll back one made with create or run --detach"
	kill -TERM "$BG"
	wait_bg 15
}

@test "snapshot: one killed while it copies leaves the container running, and the next one makes it whole" {
	start_agent
	# Long enough to copy to be caught at it: 20,000 files.
	agent exec "$CID" sh -c 'mkdir /opt/many && cd /opt/many && seq 1 20000 | xargs touch'
	agent snapshot "$CID" first
	started_in_bg agent snapshot "$CID" second
	local i
	for i in $(seq 1 200); do
		[ "$(ctr_status)" = paused ] && break
		sleep 0.01
	done
	[ "$(ctr_status)" = paused ] || skip "the copy was over before it could be caught"
	# agentrun itself: not the timeout that runs it, nor its thaw guard.
	local snapshotter
	snapshotter=$(pgrep -o -f -- "^$RUNTIME .*snapshot $CID second") && kill -KILL "$snapshotter" \
		|| { wait_bg 15; skip "the copy was over before it could be caught"; }
	wait_bg 5
	for i in $(seq 1 100); do
		[ "$(ctr_status)" = running ] && break
		sleep 0.02
	done
	[ "$(ctr_status)" = running ] || fail "left $(ctr_status)"
	run agent snapshot ls --format json "$CID"
	[ "$(jq -r '[.[].name] | join(" ")' <<<"$output")" = "first" ] || fail "snapshots: $output"
	agent snapshot "$CID" second
	run ls -A "$ROOT/$CID/overlay/snapshots"
	assert_output "first
second"
}
