#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The agent profile end to end: real containers from the busybox bundle
# under a test profile that extends the built-in `agent` one (secrets and
# /output from this test's directories, an audit log), checked from the
# host with independent tools (sha256sum, find, grep, /proc).

load helpers
load export_check

# The 9 capabilities of the agent profile, as a CapEff mask: CHOWN(0)
# DAC_OVERRIDE(1) FOWNER(3) FSETID(4) KILL(5) SETGID(6) SETUID(7)
# SETPCAP(8) NET_BIND_SERVICE(10).
AGENT_CAPS_MASK=00000000000005fb

setup() {
	common_setup
	CFG=$TEST_DIR/cfg
	SEC=$TEST_DIR/sec
	OUT=$TEST_DIR/out
	AUDIT=$TEST_DIR/audit.log
	mkdir -p "$CFG/profiles" "$SEC" "$OUT"
	export AGENTRUN_CONFIG_DIR=$CFG
	write_profile '{}'
	# Random per test, so a hit can only come from this test.
	SECRET=ar-secret-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
	printf '%s' "$SECRET" >"$SEC/tok"
	chmod 0600 "$SEC/tok"
}

teardown() {
	common_teardown
}

# write_profile JSON: the test profile `t`, JSON merged over the base.
write_profile() {
	jq -n --arg sec "$SEC" --arg out "$OUT" --arg audit "$AUDIT" --argjson extra "$1" \
		'{extends: "agent", secrets: {allowedHostDirs: [$sec]},
		  output: {allowedHostDirs: [$out]}, audit: {path: $audit}} * $extra' \
		>"$CFG/profiles/t.json"
}

agent() {
	runtime --profile t "$@"
}

agent_bg() {
	runtime_bg --profile t "$@"
}

# annotate KEY VALUE: run.agentrun.KEY in this test's config.json.
annotate() {
	update_config '.annotations["run.agentrun." + $k] = $v' --arg k "$1" --arg v "$2"
}

with_secret() {
	annotate secret.tok "$SEC/tok"
}

with_output() {
	annotate output "$OUT"
}

# agent_run ARG...: run to completion under the profile.
agent_run() {
	set_args "$@"
	agent run --bundle "$BUNDLE" "$CID"
}

# agent_start ARG...: run --detach under the profile.
agent_start() {
	set_args "$@"
	agent_bg run --detach --bundle "$BUNDLE" "${ID:-$CID}"
}

# sha256 of every regular file, plus every entry's type, mode and target.
tree_manifest() {
	(cd "$1" && find . -type f -exec sha256sum {} + | sort &&
		find . -printf '%p %y %m %U %G %l\n' | sort)
}

# Mounts anywhere below DIR in the host's mount table.
no_mounts_under() {
	local left
	left=$(mounts_under "$1")
	[ -z "$left" ] || fail "still mounted: $left"
}

# Files on DIR's own file system (not the runtime's tmpfs mounts) that
# contain the secret.
secret_files_on_disk() {
	find "$@" -xdev -type f ! -path "$SEC/*" -print0 2>/dev/null | xargs -0r grep -lF -- "$SECRET" || true
}

# audit_has FILTER: some line of the audit log satisfies the jq FILTER.
audit_has() {
	jq -se "any(.[]; $1)" "$AUDIT" >/dev/null
}

# audit_events: the event names of the log, one line.
audit_events() {
	jq -r .event "$AUDIT" | paste -sd' '
}

# The chain checked with coreutils only: each prev is sha256sum of the
# line before.
check_chain_with_sha256sum() {
	local prev line n=0
	prev=$(printf '%064d' 0)
	while IFS= read -r line; do
		n=$((n + 1))
		[ "$(jq -r .prev <<<"$line")" = "$prev" ] || fail "line $n: prev does not match"
		prev=$(printf '%s' "$line" | sha256sum | cut -d' ' -f1)
	done <"$AUDIT"
	[ "$n" -gt 0 ] || fail "empty audit log"
}

# ------------------------------------------------------------- overlay

@test "delete: a cgroup that will not go keeps neither the overlay, the secrets nor the process; a second delete finishes" {
	local cg_path pids_dir blocker pid
	cg_path=$(test_cgroups_path)
	update_config '.linux.cgroupsPath = $p' --arg p "$cg_path"
	with_secret
	agent_start sleep 100
	pid=$(ctr_pid)
	[ -n "$(mounts_under "$ROOT/$CID")" ] || fail "no overlay or secrets mounts to tear down"
	# v1: the pids hierarchy's (memory's must go all the same); v2: the one.
	pids_dir=$(cgroup_v1_dir pids "$cg_path")
	is_cgroup_v2_only && pids_dir=/sys/fs/cgroup$cg_path
	[ -d "$pids_dir" ] || fail "no pids cgroup $pids_dir"
	# A cgroup inside the container's that is a mount point: its rmdir fails
	# with EBUSY, which no kill of the container's processes can change.
	blocker=$pids_dir/blocker
	mkdir "$blocker"
	mount -t tmpfs -o size=4k blocker "$blocker"
	track_mount "$blocker"

	run agent delete --force "$CID"
	assert_failure 1
	assert_output_contains "remove cgroup \`$pids_dir\`: Device or resource busy"
	assert_output_contains "run delete again to retry"
	assert_equal "$(grep -c '^agentrun: ' <<<"$output")" 1
	# Every other step ran: the process, the overlay and secrets tmpfs, the
	# other hierarchies' cgroups are gone.
	! pid_alive "$pid" || fail "container process $pid still alive"
	no_mounts_under "$ROOT"
	is_cgroup_v2_only || [ ! -d "$(cgroup_v1_dir memory "$cg_path")" ] || fail "memory cgroup left"
	[ -z "$(secret_files_on_disk "$ROOT")" ] || fail "secret on disk"
	# What could not be undone keeps its record, and only that.
	[ -f "$ROOT/$CID/state.json" ] || fail "state dir not kept for a retry"
	[ ! -e "$ROOT/$CID/config.json" ] || fail "config.json kept: poststop hooks would run twice"
	audit_has '.event == "delete"' && fail "delete audited though it failed"

	umount "$blocker"
	run agent delete "$CID"
	assert_success
	[ ! -e "$ROOT/$CID" ] || fail "state dir left: $(ls -A "$ROOT/$CID")"
	[ ! -d "$pids_dir" ] || fail "pids cgroup left"
	audit_has '.event == "delete"' || fail "no delete event"
}

@test "overlay: writes land in the layer, the rootfs is unchanged byte for byte, the layer goes at delete" {
	local before
	before=$(tree_manifest "$BUNDLE/rootfs")
	agent_start sh -c 'echo changed >/etc/hostname; echo new >/new-file; rm /etc/group;
		mkdir -p /var/x && echo y >/var/x/y; rm -r /home 2>/dev/null; touch /ready; exec sleep 100'
	wait_for_file "$ROOT/$CID/overlay/merged/ready"
	# The container sees its writes, the bundle does not.
	run agent exec "$CID" sh -c 'cat /etc/hostname /new-file; ls /etc/group 2>&1; true'
	assert_success
	assert_output_contains changed
	assert_output_contains new
	assert_output_contains "No such file"
	[ ! -e "$BUNDLE/rootfs/new-file" ] || fail "write reached the rootfs"
	[ -e "$BUNDLE/rootfs/etc/group" ] || fail "delete reached the rootfs"
	[ "$(tree_manifest "$BUNDLE/rootfs")" = "$before" ] || fail "rootfs changed while running"
	# The upper layer is a size-limited tmpfs under the state dir.
	grep -q " $ROOT/$CID/overlay/merged .* - overlay " /proc/self/mountinfo || fail "no overlay under the state dir"
	[ -n "$(mounts_under "$ROOT/$CID")" ]

	run agent delete --force "$CID"
	assert_success
	[ "$(tree_manifest "$BUNDLE/rootfs")" = "$before" ] || fail "rootfs changed after delete"
	no_mounts_under "$ROOT"
	[ ! -e "$ROOT/$CID" ] || fail "state dir left: $(ls -la "$ROOT/$CID")"
	# The changes were recorded.
	local changes
	changes=$(jq -c 'select(.event == "fs-changes")' "$AUDIT")
	[ "$(jq -c .created <<<"$changes")" = '["/new-file","/ready","/var/x","/var/x/y"]' ] || fail "created: $changes"
	[ "$(jq -c .modified <<<"$changes")" = '["/etc/hostname"]' ] || fail "modified: $changes"
	[ "$(jq -c .deleted <<<"$changes")" = '["/etc/group","/home"]' ] || fail "deleted: $changes"

	# A new container from the same bundle starts from the original.
	run agent_run sh -c 'ls /new-file 2>/dev/null; cat /etc/hostname'
	assert_success
	assert_output "$(cat "$BUNDLE/rootfs/etc/hostname")"
}

@test "overlay: a root the spec asks to be read-only (ReadOnlyRootfs, --read-only) stays so; /output and secrets stay writable" {
	jq '.root.readonly = true' "$BUNDLE/config.json" >"$BUNDLE/c.json" && mv "$BUNDLE/c.json" "$BUNDLE/config.json"
	with_output
	run agent_run sh -c 'touch /x 2>&1; echo "root $?"; echo y >/output/y && echo "output ok"'
	assert_success
	assert_output_contains "Read-only file system"
	assert_output_contains "root 1"
	assert_output_contains "output ok"
}

@test "overlay: filling the layer gives ENOSPC inside and nothing outside" {
	annotate overlay.size 4m
	touch "$TEST_DIR/marker"
	run agent_run sh -c 'dd if=/dev/zero of=/fill bs=64k count=1000; echo "dd=$?"; df -k / | tail -1; echo still-alive >/small 2>&1; echo alive'
	assert_success
	assert_output_contains "No space left on device"
	assert_output_contains "dd=1"
	assert_output_contains alive
	# Nothing the size of the fill appeared on the host's disk.
	[ ! -e "$BUNDLE/rootfs/fill" ] || fail "fill in the rootfs"
	local big
	big=$(find "$TEST_DIR" "$AR_BASE/template" -xdev -newer "$TEST_DIR/marker" -type f -size +1M 2>/dev/null | head) || true
	[ -z "$big" ] || fail "large new files: $big"
	no_mounts_under "$ROOT"
}

# ------------------------------------------------------------- secrets

@test "secrets: /run/secrets/NAME, 0400, the process user's, on a noexec nosuid nodev tmpfs" {
	with_secret
	update_config '.process.user = {uid: 1000, gid: 1000}'
	run agent_run sh -c 'cat /run/secrets/tok; echo; stat -c "%a %u %g" /run/secrets/tok;
		grep " /run/secrets " /proc/self/mountinfo; id -u;
		cp /run/secrets/tok /tmp/x 2>/dev/null; echo > /run/secrets/tok && echo WROTE; true'
	assert_success
	[ "${lines[0]}" = "$SECRET" ] || fail "secret content"
	[ "${lines[1]}" = "400 1000 1000" ] || fail "mode/owner: ${lines[1]}"
	local opts=${lines[2]}
	[[ "$opts" == *" - tmpfs "* ]] || fail "not a tmpfs: $opts"
	local o
	for o in nosuid nodev noexec ro; do
		[[ " ${opts%% - *} " =~ [\ ,]$o[\ ,] ]] || fail "mount lacks $o: $opts"
	done
	[ "${lines[3]}" = 1000 ]
	refute_output_contains WROTE
}

@test "secrets: never in the environment, the command line, the state, logs or the audit log; gone after delete" {
	with_secret
	with_output
	set_args sh -c 'touch /ready; exec sleep 100'
	agent_bg --log "$TEST_DIR/runtime.log" --debug run --detach --bundle "$BUNDLE" "$CID"
	wait_for_file "$ROOT/$CID/overlay/merged/ready"

	# Inside: only the file.
	run agent exec "$CID" sh -c 'tr "\0" "\n" </proc/1/environ; tr "\0" " " </proc/1/cmdline; echo; env; cat /proc/self/cmdline'
	assert_success
	refute_output_contains "$SECRET"
	run agent exec "$CID" cat /run/secrets/tok
	assert_output "$SECRET"
	# Host: state.json, config.json, agent.json and everything else on the
	# state root's disk; `state`, `ps`, the host's view of the processes.
	[ -z "$(secret_files_on_disk "$ROOT" "$BUNDLE")" ] || fail "on disk: $(secret_files_on_disk "$ROOT" "$BUNDLE")"
	run agent state "$CID"
	refute_output_contains "$SECRET"
	local pid
	pid=$(ctr_pid)
	! grep -qaF -- "$SECRET" "/proc/$pid/environ" "/proc/$pid/cmdline" || fail "in the init's environ/cmdline"
	# A secret typed on an exec command line is redacted in the log.
	run agent exec "$CID" sh -c "test \"\$(cat /run/secrets/tok)\" = '$SECRET' && echo same"
	assert_output same

	run agent --log "$TEST_DIR/runtime.log" --debug delete --force "$CID"
	assert_success
	no_mounts_under "$ROOT"
	[ -z "$(secret_files_on_disk "$ROOT" "$BUNDLE" "$OUT" "$TEST_DIR")" ] ||
		fail "on disk after delete: $(secret_files_on_disk "$ROOT" "$BUNDLE" "$OUT" "$TEST_DIR")"
	! grep -qF -- "$SECRET" "$AUDIT" || fail "secret in the audit log"
	grep -q 'redacted: contains secret tok' "$AUDIT" || fail "exec argv not redacted: $(grep '"exec"' "$AUDIT")"
	[ ! -e "$TEST_DIR/runtime.log" ] || ! grep -qF -- "$SECRET" "$TEST_DIR/runtime.log" || fail "secret in the runtime log"

	# A new container with the same id but no secret reads nothing.
	update_config 'del(.annotations["run.agentrun.secret.tok"])'
	run agent_run sh -c 'ls -la /run/secrets 2>&1; cat /run/secrets/tok 2>&1; grep -rlF -- "'"$SECRET"'" /etc /tmp /root /run /var /output 2>/dev/null; echo done'
	refute_output_contains "/run/secrets/tok"$'\n'"$SECRET"
	[[ "$output" != *"$SECRET"$'\n'* ]] || fail "secret readable: $output"
	assert_output_contains done
}

@test "exec under the profile: no_new_privs, and no capability beyond the container's own" {
	agent_start sh -c 'touch /ready; exec sleep 100'
	wait_for_file "$ROOT/$CID/overlay/merged/ready"
	local own
	own=$(grep CapBnd /proc/"$(ctr_pid "$CID")"/status | awk '{ print $2 }')
	# An engine's exec may ask for more (here CAP_SYS_ADMIN, which the
	# profile never grants): the process still gets the container's sets.
	run agent exec --cap CAP_SYS_ADMIN "$CID" sh -c 'grep -E "^(CapBnd|CapEff|NoNewPrivs):" /proc/self/status'
	assert_success
	assert_output_contains "NoNewPrivs:	1"
	assert_output_contains "CapBnd:	$own"
	[ $(( 0x$(awk '/^CapEff/ { print $2 }' <<<"$output") & (1 << 21) )) -eq 0 ] || fail "CAP_SYS_ADMIN granted: $output"
}

@test "secrets: mainOnly hides them from exec'd processes, not from the main one" {
	with_secret
	annotate secrets.mainOnly true
	agent_start sh -c 'if [ "$(cat /run/secrets/tok)" = "'"$SECRET"'" ]; then echo yes >/main-sees; else echo no >/main-sees; fi; exec sleep 100'
	wait_for_file "$ROOT/$CID/overlay/merged/main-sees"
	run agent exec "$CID" cat /main-sees
	assert_output yes
	run agent exec "$CID" sh -c 'cat /run/secrets/tok 2>&1; echo end'
	refute_output_contains "$SECRET"
	assert_output_contains end
	run agent exec "$CID" ls -A /run/secrets
	assert_output ""
	run agent exec --user 1000:1000 "$CID" sh -c 'cat /run/secrets/tok 2>&1'
	refute_output_contains "$SECRET"
	# Another user cannot reach the main process's view either.
	run agent exec --user 1000:1000 "$CID" sh -c 'cat /proc/1/root/run/secrets/tok 2>&1'
	refute_output_contains "$SECRET"
}

@test "secrets: mainOnly: an exec'd process of the same user cannot reach them through /proc/1/root" {
	with_secret
	annotate secrets.mainOnly true
	agent_start sh -c 'touch /ready; exec sleep 100'
	wait_for_file "$ROOT/$CID/overlay/merged/ready"
	run agent exec "$CID" sh -c 'cat /proc/1/root/run/secrets/tok 2>&1; ls /proc | grep -c "^[0-9]"; exit 5'
	refute_output_contains "$SECRET"
	# its own pid namespace: it sees its shell and ls, not the main process
	assert_failure 5
	[ "${lines[-1]}" -le 3 ] || fail "sees the container's processes: ${lines[-1]}"
	# masked paths hold in its /proc too
	run agent exec "$CID" sh -c 'wc -c </proc/keys'
	assert_output 0
}

# ------------------------------------------------------------- output

# Nothing new anywhere under the test dir or /etc, except the export, the
# state root and the audit log.
nothing_outside_dest() {
	local stray
	[ "$(ls -A "$OUT")" = "$CID" ] || fail "in $OUT: $(ls -A "$OUT")"
	stray=$(find "$TEST_DIR" /etc -xdev -newer "$TEST_DIR/marker" ! -type d 2>/dev/null |
		grep -v -e "^$OUT/$CID/" -e "^$ROOT/" -e "^$AUDIT\$" -e "^$TEST_DIR/runtime_bg\." \
			-e "^$BUNDLE/config.json" || true)
	[ -z "$stray" ] || fail "written outside the destination: $stray"
}

@test "output: files arrive under DEST/ID with a manifest whose sha256 match" {
	with_output
	run agent_run sh -c 'mkdir -p /output/a/b && echo report >/output/report.txt &&
		head -c 100000 /dev/urandom >/output/a/b/blob && printf "x\0y" >/output/a/nul && echo in-root-only >/elsewhere'
	assert_success
	local dest=$OUT/$CID
	[ -f "$dest/report.txt" ] && [ "$(cat "$dest/report.txt")" = report ]
	[ "$(stat -c %s "$dest/a/b/blob")" = 100000 ]
	check_export "$dest"
	[ "$(jq '.files | length' "$dest/manifest.json")" = 3 ]
	[ ! -e "$dest/elsewhere" ]
	# The audit log lists the same files and hashes.
	[ "$(jq -c 'select(.event == "output") | [.files[] | [.path, .sha256]] | sort' "$AUDIT")" = \
		"$(jq -c '[.files[] | [.path, .sha256]] | sort' "$dest/manifest.json")" ] || fail "audit output event"
}

@test "output: hostile links, fifos, devices, setuid files and dot names export as plain files only" {
	with_output
	# CAP_MKNOD for the device node: in the spec and in the profile.
	write_profile '{"capabilities": ["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FOWNER","CAP_FSETID","CAP_KILL","CAP_SETGID","CAP_SETUID","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_MKNOD"]}'
	update_config '.process.capabilities |= with_entries(.value += ["CAP_MKNOD","CAP_FOWNER","CAP_FSETID","CAP_CHOWN"])'
	local passwd_before
	passwd_before=$(sha256sum /etc/passwd)
	touch "$TEST_DIR/marker"
	run agent_run sh -c '
		cd /output || exit 1
		echo ok >plain
		ln -s /etc/passwd passwd-link
		ln -s /etc etc-link
		ln -s ../../../../../../../../etc/shadow rel-link
		ln -s "'"$OUT"'" host-dest-link
		ln -s "'"$OUT/$CID"'/../escape" host-escape-link
		mkdir d && ln -s .. d/up
		echo shared >h1 && ln h1 h2
		ln /etc/hostname outside-hardlink 2>/dev/null && echo HARDLINK-OUT || echo "hardlink-out-refused"
		mkfifo fifo
		mknod null c 1 3 2>/dev/null && echo mknod-ok || echo mknod-refused
		echo s >suid && chmod 6755 suid
		mkdir -m 1777 sticky
		echo dots >..dots && echo dots >...
		mkdir -p "a/..b" && echo x >"a/..b/f"
		echo x >"$(printf "nl\nname")"
		ls -la /output'
	assert_success
	assert_output_contains hardlink-out-refused
	# In the agent profile's user namespace the kernel makes no device
	# node; where one is made, it is not exported (below).
	[[ "$output" == *mknod-ok* || "$output" == *mknod-refused* ]] || fail "mknod: $output"
	local dest=$OUT/$CID
	check_export "$dest"
	[ "$(cat "$dest/plain")" = ok ]
	[ "$(stat -c %a "$dest/suid")" = 755 ] || fail "suid mode $(stat -c %a "$dest/suid")"
	[ "$(stat -c %a "$dest/sticky")" = 777 ] || fail "sticky mode"
	[ -f "$dest/..dots" ] && [ -f "$dest/..." ] && [ -f "$dest/a/..b/f" ]
	local n
	for n in passwd-link etc-link rel-link host-dest-link host-escape-link d/up h1 h2 fifo null "$(printf 'nl\nname')"; do
		[ ! -e "$dest/$n" ] && [ ! -L "$dest/$n" ] || fail "exported: $n"
	done
	local reasons
	reasons=$(jq -r '.withheld[].reason' "$dest/manifest.json" | sort | uniq -c | awk '{ $1 = $1 } 1')
	[[ "$reasons" == *"6 symlink"* ]] || fail "symlinks: $reasons"
	[[ "$reasons" == *"2 hard link"* ]] || fail "hard links: $reasons"
	[[ "$reasons" == *"1 fifo"* ]] || fail "fifo: $reasons"
	# (A device node's export is unit-tested too: test_agent_host.)
	[[ "$output" != *mknod-ok* || "$reasons" == *"1 device node"* ]] || fail "device: $reasons"
	[ ! -e "$OUT/escape" ]
	[ "$(sha256sum /etc/passwd)" = "$passwd_before" ]
	nothing_outside_dest
}

@test "output: a file holding a secret is withheld and reported, never exported" {
	with_output
	with_secret
	run agent_run sh -c 'cp /run/secrets/tok /output/leak; (echo header; cat /run/secrets/tok; echo trailer) >/output/embedded; echo fine >/output/fine'
	assert_success
	local dest=$OUT/$CID
	[ -f "$dest/fine" ]
	[ ! -e "$dest/leak" ] && [ ! -e "$dest/embedded" ] || fail "secret file exported"
	jq -r '.withheld[] | .path + ": " + .reason' "$dest/manifest.json"
	[ "$(jq -r '[.withheld[] | select(.reason | test("secret")) | .path] | sort | join(",")' "$dest/manifest.json")" = embedded,leak ]
	[ -z "$(secret_files_on_disk "$OUT" "$ROOT" "$AUDIT")" ] || fail "secret exported"
	! grep -qF -- "$SECRET" "$AUDIT"
	grep -q '"withheld":\[{' "$AUDIT" || fail "withheld files not in the audit log"
}

@test "output: the byte and file quotas hold" {
	with_output
	annotate output.maxFiles 5
	run agent_run sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do echo $i >/output/f$i; done'
	assert_success
	[ "$(jq '.files | length' "$OUT/$CID/manifest.json")" = 5 ]
	[ "$(find "$OUT/$CID" -type f ! -name manifest.json | wc -l)" = 5 ]
	jq -e '[.withheld[].reason] | unique == ["file count quota exceeded"]' "$OUT/$CID/manifest.json" >/dev/null ||
		fail "$(jq -c .withheld "$OUT/$CID/manifest.json")"

	local id2=$CID-bytes
	update_config 'del(.annotations["run.agentrun.output.maxFiles"])'
	annotate output.maxBytes 10000
	# The /output tmpfs itself is only as large as the byte quota: the
	# container hits ENOSPC, and the export stays within the quota.
	set_args sh -c 'for i in 1 2 3 4 5; do head -c 3000 /dev/urandom >/output/f$i; done'
	run agent run --bundle "$BUNDLE" "$id2"
	assert_output_contains "No space left on device"
	local total
	total=$(jq '[.files[].size] | add' "$OUT/$id2/manifest.json")
	[ "$total" -le 10000 ] || fail "exported $total bytes"
	check_export "$OUT/$id2"
}

@test "output: a container swapping files for symlinks while it is deleted writes nothing outside DEST/ID" {
	with_output
	local passwd_before i
	passwd_before=$(sha256sum /etc/passwd)
	touch "$TEST_DIR/marker"
	for i in 1 2 3 4 5; do
		local id=$CID-r$i
		set_args sh -c 'cd /output; mkdir -p real;
			swap() { while :; do
				echo data >f.tmp; mv -f f.tmp f; ln -sfn /etc/passwd f;
				rm -rf d; mkdir d; echo x >d/x; rm -rf d; ln -sfn / d;
				rm -rf real; ln -sfn "'"$OUT"'" real; rm -f real; mkdir real; echo y >real/y;
			done; }
			swap & swap & touch /ready; wait'
		agent_bg run --detach --bundle "$BUNDLE" "$id"
		wait_for_file "$ROOT/$id/overlay/merged/ready"
		sleep 0.$((RANDOM % 5))
		run agent delete --force "$id"
		assert_success
		[ -d "$OUT/$id" ] || fail "no export for $id"
		check_export "$OUT/$id"
		[ ! -e "$OUT/$id/d/etc" ] && [ ! -e "$OUT/$id/f/root" ]
	done
	[ "$(ls -A "$OUT" | sort | paste -sd' ')" = "$(printf '%s\n' "$CID"-r{1..5} | sort | paste -sd' ')" ] ||
		fail "in $OUT: $(ls -A "$OUT")"
	[ "$(sha256sum /etc/passwd)" = "$passwd_before" ]
	local stray
	stray=$(find "$TEST_DIR" /etc -xdev -newer "$TEST_DIR/marker" ! -type d 2>/dev/null |
		grep -v -e "^$OUT/$CID-r[1-5]/" -e "^$ROOT/" -e "^$AUDIT\$" -e "^$TEST_DIR/runtime_bg\." -e "^$BUNDLE/config.json" || true)
	[ -z "$stray" ] || fail "written outside: $stray"
}

@test "output: a destination planted as a symlink is refused, nothing written through it" {
	with_output
	mkdir -p "$TEST_DIR/elsewhere"
	ln -s "$TEST_DIR/elsewhere" "$OUT/$CID"
	run agent_run sh -c 'echo x >/output/x'
	[ -z "$(ls -A "$TEST_DIR/elsewhere")" ] || fail "written through the symlink: $(ls -A "$TEST_DIR/elsewhere")"
	[ -L "$OUT/$CID" ]
	no_mounts_under "$ROOT"
}

# ------------------------------------------------------------- hardened

@test "hardened: 9 capabilities, no_new_privs, seccomp, namespaces and mounts refused" {
	# Ask for more than the profile allows: all an engine gives by default.
	update_config '.process.capabilities |= with_entries(.value = ["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FOWNER","CAP_FSETID","CAP_KILL","CAP_SETGID","CAP_SETUID","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_NET_RAW","CAP_SYS_CHROOT","CAP_MKNOD","CAP_AUDIT_WRITE","CAP_SETFCAP"])
		| .process.noNewPrivileges = false'
	run agent_run sh -c 'grep -E "^(CapEff|CapPrm|CapBnd|CapInh|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status
		unshare -n true 2>&1 && echo UNSHARE-OK
		unshare -m true 2>&1 && echo UNSHARE-M-OK
		mkdir -p /mnt/x; mount -t tmpfs none /mnt/x 2>&1 && echo MOUNT-OK
		mount --bind /bin /mnt/x 2>&1 && echo BIND-OK
		nsenter -t 1 -n true 2>&1 && echo NSENTER-OK
		chroot / true 2>&1 && echo CHROOT-OK
		wc -c </proc/kcore; wc -c </proc/keys; wc -c </proc/timer_list
		ip link 2>&1; echo done'
	assert_success
	assert_output_contains "CapEff:	$AGENT_CAPS_MASK"
	assert_output_contains "CapPrm:	$AGENT_CAPS_MASK"
	assert_output_contains "CapBnd:	$AGENT_CAPS_MASK"
	assert_output_contains "CapInh:	0000000000000000"
	assert_output_contains "CapAmb:	0000000000000000"
	assert_output_contains "NoNewPrivs:	1"
	assert_output_contains "Seccomp:	2"
	local bad
	for bad in UNSHARE-OK UNSHARE-M-OK MOUNT-OK BIND-OK NSENTER-OK CHROOT-OK; do
		refute_output_contains "$bad"
	done
	# The masked files read as empty.
	[ "$(grep -cx '0' <<<"$output")" -ge 2 ] || fail "masked paths not empty"
	# Only loopback.
	refute_output_contains eth
	assert_output_contains done
}

@test "hardened: capabilities the spec adds beyond an engine's defaults (CAP_SYS_PTRACE, CAP_SYS_ADMIN) are refused by name, nothing made; joining another process's namespaces is refused" {
	cp "$BUNDLE/config.json" "$TEST_DIR/config.saved"
	update_config '.process.capabilities |= with_entries(.value += ["CAP_SYS_PTRACE", "CAP_SYS_ADMIN"])'
	run agent_run true
	assert_failure
	assert_output_contains "process.capabilities: the agent profile does not grant CAP_SYS_PTRACE, CAP_SYS_ADMIN (privileged or capabilities.add): use the runtime agentrun, which applies no profile"
	[ ! -e "$ROOT/$CID" ] || fail "state dir left"
	no_mounts_under "$ROOT"
	# The busybox image has no strace: nsenter into a sibling's namespaces
	# stands in for ptrace.
	cp "$TEST_DIR/config.saved" "$BUNDLE/config.json"
	run agent_run sh -c 'sleep 100 & p=$!; sleep 0.2
		nsenter -t $p -m -p true 2>&1 && echo NSENTER-OK
		kill $p; echo done'
	assert_success
	refute_output_contains NSENTER-OK
	assert_output_contains done
}

@test "user namespace: a bundle's container is a range of agentrun's; one sharing the host's pid or ipc namespace (--pid host, --ipc host) keeps the spec's and mounts its /proc and /dev/mqueue" {
	run agent_run sh -c 'cat /proc/self/uid_map'
	assert_success
	[ "$(echo "$output" | awk '{ print $1 }')" = 0 ] && [ "$(echo "$output" | awk '{ print $2 }')" -ge 2147483648 ] \
		|| fail "not a range of agentrun's: $output"
	local t
	for t in pid ipc; do
		cp "$BUNDLE/config.json" "$TEST_DIR/config.saved"
		update_config '.linux.namespaces |= map(select(.type != $t))' --arg t "$t"
		run agent_run sh -c 'cat /proc/self/uid_map; test -d /proc/1 && echo proc-mounted; ls /dev/mqueue >/dev/null && echo mqueue-mounted'
		cp "$TEST_DIR/config.saved" "$BUNDLE/config.json"
		assert_success
		assert_output_contains proc-mounted
		assert_output_contains mqueue-mounted
		[ "$(echo "${lines[0]}" | awk '{ print $2 }')" = 0 ] || fail "host $t: a namespace it could not mount in: $output"
	done
}

@test "hardened: a per-container session keyring" {
	agent_start sh -c 'exec sleep 100'
	wait_for_state "$CID" running
	# Owned by the container's root (a uid of its own range): listed to a
	# reader in its user namespace.
	nsenter -U -t "$(ctr_pid)" cat /proc/keys | grep -q "_ses\.$CID: " \
		|| fail "no session keyring _ses.$CID in /proc/keys"
	# /proc/keys is masked inside.
	run agent exec "$CID" sh -c 'wc -c </proc/keys'
	assert_output 0
}

@test "limits: a fork bomb is bounded by pids, the container survives, the audit log says so" {
	annotate pids 20
	run agent_run sh -c 'sh -c "for i in \$(seq 1 50); do sleep 30 & done" 2>&1; echo alive'
	assert_success
	assert_output_contains "Resource temporarily unavailable"
	assert_output_contains alive
	audit_has '(.event == "limit" and .limit == "pids") and (.refusedForks > 0)' ||
		fail "no pids limit event: $(cat "$AUDIT")"
}

@test "limits: memory overuse is OOM-killed and audited" {
	annotate memory 32m
	run agent_run sh -c 'awk "BEGIN { while (1) s = s sprintf(\"%01000000d\", 0) }"; echo "awk=$?"'
	assert_output_contains "awk=137"
	audit_has '(.event == "limit" and .limit == "memory") and (.oomKills > 0)' ||
		fail "no memory limit event: $(cat "$AUDIT")"
}

@test "limits: the wall clock kills the container and is audited; the watchdog goes" {
	annotate timeout 2s
	local start=$SECONDS
	run agent_run sleep 30
	local took=$((SECONDS - start))
	[ "$took" -le 4 ] || fail "took ${took}s"
	assert_failure 124
	audit_has '(.event == "limit" and .limit == "wall-clock") and (.seconds == 2)' ||
		fail "no wall-clock event: $(cat "$AUDIT")"
	# No watchdog left behind, here or after a container that ends first.
	annotate timeout 1h
	set_args true
	run agent run --bundle "$BUNDLE" "$CID-2"
	assert_success
	sleep 0.2
	local left
	left=$(live_pids_of $(grep -lsF -- "$ROOT" /proc/[0-9]*/cmdline))
	[ -z "$left" ] || fail "left running: $left"
}

# ------------------------------------------------------------- audit

# A detached container's exit status is known to no agentrun process (as
# with runc): delete records an "exit" without a status, saying whether the
# process had ended before the delete; run and sandbox, which wait for the
# process, record the status (next test).
@test "audit: create, start, exec (argv, uid, status), limit, fs-changes, output, delete, chained with sha256" {
	with_output
	annotate pids 10
	agent_start sh -c 'touch /ready; exec sleep 100'
	wait_for_file "$ROOT/$CID/overlay/merged/ready"
	run agent exec --user 1000:1000 "$CID" sh -c 'echo hi >/output/x 2>/dev/null; exit 3'
	assert_failure 3
	run agent exec "$CID" sh -c 'sh -c "for i in \$(seq 1 20); do sleep 5 & done" 2>/dev/null; echo hi >/output/x; exit 0'
	assert_success
	agent kill "$CID" KILL
	wait_for_state "$CID" stopped
	run agent delete "$CID"
	assert_success
	cat "$AUDIT"
	[ "$(audit_events)" = "hook create start exec-start exec exec-start exec exit limit hook fs-changes output delete" ] || fail "events: $(audit_events)"
	audit_has '(.event == "exec") and (.argv[0] == "sh" and (.uid | type) == "number" and (.status | type) == "number")'
	audit_has '(.event == "exit") and (.killedByDelete == false) and (has("status") | not)'
	[ "$(jq -c 'select(.event == "exec") | [.uid, .status]' "$AUDIT" | paste -sd' ')" = "[1000,3] [0,0]" ]
	[ "$(jq -r '.id' "$AUDIT" | sort -u)" = "$CID" ]
	audit_has '(.event == "output") and (.files[0].path == "x")'
	check_chain_with_sha256sum
	run "$RUNTIME" audit "$AUDIT"
	assert_success
	assert_output "ok 13 lines"
}

@test "audit: an exit event from run, and timestamps in order" {
	run agent_run sh -c 'exit 5'
	assert_failure 5
	[ "$(audit_events)" = "hook create start exit hook fs-changes delete" ] || fail "events: $(audit_events)"
	audit_has '(.event == "exit") and (.status == 5)'
	[ "$(jq -r .time "$AUDIT")" = "$(jq -r .time "$AUDIT" | sort)" ] || fail "times out of order"
	check_chain_with_sha256sum
}

@test "audit: hook outcomes, and a create that failed" {
	update_config '.hooks = {"poststart": [{"path": "/bin/true"}], "poststop": [{"path": "/bin/true"}]}'
	run agent_run true
	assert_success
	[ "$(audit_events)" = "hook create start hook exit hook fs-changes delete" ] || fail "events: $(audit_events)"
	audit_has '(.event == "hook") and (.phase == "poststart") and (.hooks == 1) and (.ok == true)'
	audit_has '(.event == "hook") and (.phase == "poststop") and .ok'
	update_config '.hooks = {"createRuntime": [{"path": "/bin/false"}]}'
	run agent_run true
	assert_failure
	audit_has '(.event == "hook") and (.phase == "createRuntime") and (.ok == false) and (.error | test("exit status 1"))'
	audit_has '(.event == "create-failed") and (.error | test("error running hook #0 [(]createRuntime "))'
	check_chain_with_sha256sum
}

@test "audit: agentrun audit finds an edited, a removed and a cut line" {
	run agent_run true
	run agent_run true
	cp "$AUDIT" "$TEST_DIR/orig"
	local n
	n=$(wc -l <"$AUDIT")
	[ "$n" -ge 8 ]
	run "$RUNTIME" audit "$AUDIT"
	assert_output "ok $n lines"

	# Editing a line (say, the start event's) breaks the next one's link.
	local edited
	edited=$(grep -n '"event":"start"' "$AUDIT" | head -1 | cut -d: -f1)
	sed -i "${edited}s/\"start\"/\"START\"/" "$AUDIT"
	run "$RUNTIME" audit "$AUDIT"
	assert_failure 1
	assert_output "line $((edited + 1)): chain broken"

	# Removing a line in the middle.
	sed '4d' "$TEST_DIR/orig" >"$AUDIT"
	run "$RUNTIME" audit "$AUDIT"
	assert_failure 1
	assert_output "line 4: chain broken"

	# Cutting the file inside its last line.
	head -c -10 "$TEST_DIR/orig" >"$AUDIT"
	run "$RUNTIME" audit "$AUDIT"
	assert_failure 1
	assert_output "line $n: chain broken"

	# Re-chaining a forged line needs every later prev rewritten: a forged
	# first line with a fresh hash still breaks the next one.
	{ jq -c '.event = "forged"' <(head -1 "$TEST_DIR/orig"); tail -n +2 "$TEST_DIR/orig"; } >"$AUDIT"
	run "$RUNTIME" audit "$AUDIT"
	assert_output "line 2: chain broken"

	run "$RUNTIME" audit "$TEST_DIR/nonexistent"
	assert_failure 1
	assert_output_contains "No such file"
	run "$RUNTIME" audit
	assert_failure 1
}

@test "a create killed before its state record: delete --force removes the overlay, secrets and state dir; a create in progress is left alone" {
	command -v strace >/dev/null || skip "strace is not installed (contrib/install-deps.sh)"
	update_config '.annotations["run.agentrun.secret.tok"] = $f' --arg f "$SEC/tok"
	# SIGKILL the runtime as it is about to clone the init: the state dir,
	# the overlay and the secrets tmpfs are made, state.json is not.
	run strace -f -o /dev/null -e trace=clone3 -e inject=clone3:error=EPERM:signal=SIGKILL \
		"$RUNTIME" --root "$ROOT" --profile t create --bundle "$BUNDLE" "$CID"
	[ -d "$ROOT/$CID" ] || fail "no half-made state dir: $output"
	[ ! -e "$ROOT/$CID/state.json" ] || fail "state.json was written"
	grep -q " $ROOT/$CID/" /proc/self/mountinfo || fail "it made no mounts"
	# The cgroup exists before the init (clone3 puts the init in it).
	local cgroups
	cgroups=$(sed -n 's/^path //p' "$ROOT/$CID/cgroup")
	[ -n "$cgroups" ] || fail "no cgroup recorded: $(ls -A "$ROOT/$CID")"
	for d in $cgroups; do [ -d "$d" ] || fail "recorded cgroup $d does not exist"; done

	# A create still running holds the state dir's lock.
	flock "$ROOT/$CID" sleep 3 &
	local locker=$!
	track_pid "$locker"
	sleep 0.3
	run runtime delete --force "$CID"
	assert_failure
	assert_output_contains "is still being created"
	wait "$locker"

	run runtime delete "$CID"
	assert_failure
	run runtime delete --force "$CID"
	assert_success
	[ ! -e "$ROOT/$CID" ] || fail "state dir left: $(ls -A "$ROOT/$CID")"
	! grep -q " $ROOT/$CID" /proc/self/mountinfo
	for d in $cgroups; do [ ! -d "$d" ] || fail "cgroup $d left"; done
}
