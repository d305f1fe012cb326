#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Global flags and the verbs that need no running container, as runc has them.

load helpers

@test "--version prints runc's lines: version, commit, spec, then libseccomp" {
	run "$RUNTIME" --version
	assert_success
	[[ "${lines[0]}" =~ ^agentrun\ version\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "line 1: ${lines[0]}"
	[[ "${lines[1]}" =~ ^commit:\ [0-9a-f]+(-dirty)?$|^commit:\ unknown$ ]] || fail "line 2: ${lines[1]}"
	[[ "${lines[2]}" =~ ^spec:\ 1\.[0-9]+\.[0-9]+$ ]] || fail "line 3: ${lines[2]}"
	[[ "${lines[3]}" =~ ^libseccomp:\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "line 4: ${lines[3]}"
	local long=$output
	run "$RUNTIME" -v
	assert_success
	assert_equal "$output" "$long"
}

@test "version prints --version's lines, and each library's version as the library reports it" {
	command -v pkg-config >/dev/null || skip "needs pkg-config"
	run "$RUNTIME" version
	assert_success
	local long=$output
	run "$RUNTIME" --version
	assert_equal "$output" "$long"
	[[ "${lines[0]}" == "agentrun version "* ]] || fail "line 1: ${lines[0]}"
	[[ "${lines[1]}" == "commit: "* ]] || fail "line 2: ${lines[1]}"
	[[ "${lines[2]}" == "spec: "* ]] || fail "line 3: ${lines[2]}"
	# The version the library reports at run time (the build links them
	# statically from the -dev packages pkg-config describes), else the one
	# pkg-config gave at build time.
	local lib
	for lib in libseccomp yajl zlib; do
		grep -qx "$lib: $(pkg-config --modversion "$lib")" <<<"$output" || fail "no $lib line matching pkg-config"
	done
	for lib in libcap libselinux; do
		grep -qx "$lib: $(pkg-config --modversion "$lib") (at build time)" <<<"$output" || fail "no $lib line matching pkg-config"
	done
	grep -q "^libsystemd: $(pkg-config --modversion libsystemd) (headers at build time; " <<<"$output" \
		|| fail "no libsystemd line matching pkg-config"
	run "$RUNTIME" version extra
	assert_failure
	assert_output "agentrun: version: expected no arguments, got 1 argument"
}

@test "--help lists the commands" {
	run "$RUNTIME" --help
	assert_success
	local verb
	for verb in create start run state kill delete list spec; do
		assert_output_contains "$verb"
	done
	assert_output_contains "--root"
}

@test "an unknown command fails and names it" {
	run "$RUNTIME" --root "$ROOT" no-such-verb
	assert_failure
	assert_output_contains "no-such-verb"
}

@test "an unknown flag fails, said once" {
	run "$RUNTIME" --root "$ROOT" --no-such-global-flag list
	assert_failure
	assert_output "agentrun: unknown flag \`--no-such-global-flag\`"
	run runtime create --no-such-flag --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_output "agentrun: create: unknown flag \`--no-such-flag\`"
	run runtime list
	assert_success
	refute_output_contains "$CID"
}

@test "an unknown flag, global or a command's, is one line with one agentrun: prefix" {
	run "$RUNTIME" --frobnicate
	assert_failure
	assert_output "agentrun: unknown flag \`--frobnicate\`"
	local verb
	# help and version are commands too, as --help lists them.
	for verb in help version $("$RUNTIME" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'); do
		run runtime "$verb" --frobnicate
		assert_failure
		assert_output "agentrun: $verb: unknown flag \`--frobnicate\`"
	done
}

@test "a global flag after the verb says where it goes; a flag where a value belongs is refused by name" {
	run runtime sandbox --profile agent -- true
	assert_failure
	assert_output "agentrun: sandbox: \`--profile\` is a global flag: give it before the verb (agentrun --profile VALUE sandbox …)"
	run runtime list --rootless-limits=ignore
	assert_failure
	assert_output "agentrun: list: \`--rootless-limits=ignore\` is a global flag: give it before the verb (agentrun --rootless-limits=ignore list …)"
	run runtime sandbox --allow-net -- true
	assert_failure
	assert_output "agentrun: sandbox: flag \`--allow-net\` needs a value, not the flag \`--\` (write --allow-net=VALUE for a value that starts with -)"
	run runtime sandbox --allow-net -foo -- true
	assert_failure
	assert_output_contains "not the flag \`-foo\`"
	# A negative number is a value (update --memory -1 is runc's "no limit").
	run runtime update --memory -1 no-such-container
	assert_failure
	assert_output "agentrun: container does not exist: \`no-such-container\`"
}

@test "help --man and --completion print a command's tables in those forms" {
	run "$RUNTIME" help --man kill
	assert_success
	[[ "${lines[0]}" == '.TH AGENTRUN\-KILL 8 '* ]] || fail "line 1: ${lines[0]}"
	assert_output_contains '\fB\-a\fR, \fB\-\-all\fR'
	run "$RUNTIME" help --completion kill
	assert_success
	assert_output "$(printf 'usage\t[OPTIONS] CONTAINER_ID [SIGNAL]\noption\t--all\t-a\t-\tsignal every process of the container\noption\t--help\t-h\t-\tprint this help')"
	run "$RUNTIME" help --completion
	assert_success
	assert_output_contains "$(printf 'command\tsandbox\t')"
	assert_output_contains "$(printf 'option\t--root\t-\tVALUE\t')"
	run "$RUNTIME" help --man --completion kill
	assert_failure
	assert_output "agentrun: help: --man and --completion exclude each other"
	run "$RUNTIME" kill --help=roff
	assert_failure
	assert_output "agentrun: kill: --help: unknown format \`roff\` (text, man or completion)"
}

@test "every command has -h and --help, and help COMMAND says the same" {
	local verbs verb
	verbs=$("$RUNTIME" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }')
	[ "$(wc -w <<<"$verbs")" -ge 19 ] || fail "commands listed: $verbs"
	for verb in $verbs; do
		run "$RUNTIME" "$verb" -h
		assert_success
		[[ "${lines[0]}" == "Usage: agentrun $verb "* ]] || fail "$verb -h: ${lines[0]}"
		local short=$output
		run "$RUNTIME" "$verb" --help
		assert_equal "$output" "$short"
		run "$RUNTIME" help "$verb"
		assert_success
		assert_equal "$output" "$short"
	done
	run "$RUNTIME" help
	assert_success
	assert_output_contains "Usage: agentrun [GLOBAL OPTIONS] COMMAND"
	run "$RUNTIME" help no-such-verb
	assert_failure
	assert_output_contains "no-such-verb"
}

@test "checkpoint and restore take runc's flags (CRIU's work: checkpoint.bats)" {
	run runtime checkpoint --image-path "$TEST_DIR/img" --leave-running "$CID"
	assert_failure
	assert_output "agentrun: container does not exist: \`$CID\`"
	[ ! -e "$TEST_DIR/img" ] || fail "an image dir was made"
	local flag
	run runtime checkpoint --help
	for flag in image-path work-path leave-running tcp-established ext-unix-sk shell-job file-locks \
		manage-cgroups-mode empty-ns auto-dedup parent-path pre-dump; do
		assert_output_contains "--$flag"
	done
	run runtime restore --help
	for flag in image-path work-path bundle detach pid-file tcp-established file-locks lsm-profile; do
		assert_output_contains "--$flag"
	done
	run runtime checkpoint --no-such-flag "$CID"
	assert_failure
	assert_output_contains "unknown flag"
}

@test "a verb missing its container id fails" {
	local verb
	for verb in create start state kill delete; do
		run runtime "$verb"
		assert_failure
	done
}

@test "--root chooses where state lives" {
	local other=$TEST_DIR/other-root
	set_args sleep 1000
	ctr_create
	# The state dir is named after the container, inside --root.
	[ -e "$ROOT/$CID" ] || fail "no $ROOT/$CID"
	run runtime list -q
	assert_output "$CID"
	run "$RUNTIME" --root "$other" list -q
	assert_success
	assert_output ""
	run "$RUNTIME" --root "$other" state "$CID"
	assert_failure
}

@test "spec writes a default config.json" {
	local dir=$TEST_DIR/spec
	mkdir -p "$dir"
	run bash -c 'cd "$1" && "$2" spec' _ "$dir" "$RUNTIME"
	assert_success
	jq -e '.ociVersion and .process.args and .root.path == "rootfs"
		and (.linux.namespaces | map(.type) | index("pid") and index("mount"))' \
		"$dir/config.json" >/dev/null || fail "unexpected default config"
}

@test "spec: runc's namespaces and capabilities, and a cgroup namespace of its own" {
	command -v runc >/dev/null || skip "runc is not installed"
	mkdir -p "$TEST_DIR/ours" "$TEST_DIR/runc's"
	"$RUNTIME" spec --bundle "$TEST_DIR/ours"
	runc spec --bundle "$TEST_DIR/runc's"
	jq -e '.linux.namespaces | map(.type) | index("cgroup")' "$TEST_DIR/ours/config.json" >/dev/null \
		|| fail "no cgroup namespace"
	local f='{namespaces: (.linux.namespaces | map(select(.type != "cgroup"))), capabilities: .process.capabilities}'
	assert_equal "$(jq -cS "$f" "$TEST_DIR/ours/config.json")" "$(jq -cS "$f" "$TEST_DIR/runc's/config.json")"
}

@test "spec refuses to overwrite an existing config.json" {
	local dir=$TEST_DIR/spec
	mkdir -p "$dir"
	echo '{"keep": true}' >"$dir/config.json"
	run bash -c 'cd "$1" && "$2" spec' _ "$dir" "$RUNTIME"
	assert_failure
	assert_equal "$(jq -c . "$dir/config.json")" '{"keep":true}'
}

@test "spec --bundle writes into the bundle" {
	local dir=$TEST_DIR/spec-bundle
	mkdir -p "$dir"
	run "$RUNTIME" spec --bundle "$dir"
	assert_success
	jq -e .process "$dir/config.json" >/dev/null || fail "no config in $dir"
}

@test "spec --rootless adds a user namespace mapping the caller" {
	local dir=$TEST_DIR/spec-rootless
	mkdir -p "$dir"
	run "$RUNTIME" spec --rootless --bundle "$dir"
	assert_success
	jq -e '(.linux.namespaces | map(.type) | index("user"))
		and (.linux.uidMappings[0].hostID == 0)
		and (.linux.gidMappings[0].hostID == 0)
		and (.linux.uidMappings[0].containerID == 0)' \
		"$dir/config.json" >/dev/null || fail "no user namespace or mapping"
	# runc drops network and resource limits it cannot set up without root.
	jq -e '(.linux.namespaces | map(.type) | index("network")) | not' \
		"$dir/config.json" >/dev/null || fail "rootless spec keeps a network namespace"
}

@test "the default spec runs as it is (with our rootfs)" {
	rm -f "$BUNDLE/config.json"
	(cd "$BUNDLE" && "$RUNTIME" spec)
	update_config '.process.terminal = false | .process.args = ["echo", "spec-ok"]'
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_success
	assert_output spec-ok
}

@test "list shows a table with a header and one row per container" {
	set_args sleep 1000
	ctr_create "$CID-a"
	ctr_run_bg "$CID-b"
	run runtime list
	assert_success
	local header=${lines[0]}
	[[ "$header" =~ ^ID\ +PID\ +STATUS\ +BUNDLE\ +CREATED\ +OWNER ]] || fail "header: $header"
	assert_equal "${#lines[@]}" 3
	[[ "$output" =~ $CID-a\ +[0-9]+\ +created\ +$BUNDLE ]] || fail "row for -a"
	[[ "$output" =~ $CID-b\ +[0-9]+\ +running\ +$BUNDLE ]] || fail "row for -b"
}

# Where each blank-separated field of each line starts (1-based), a line
# of offsets per line of input.
field_offsets() {
	awk '{
		rest = $0; at = 0; out = ""
		while (match(rest, /[^ ]+/)) {
			out = out " " (at + RSTART)
			at += RSTART + RLENGTH - 1
			rest = substr(rest, RSTART + RLENGTH)
		}
		print out
	}'
}

@test "list lines up its columns whatever the ids' lengths, as runc's table does" {
	set_args sleep 1000
	# containerd's and Docker's ids are 64 hex digits.
	local long
	long=$CID-$(printf '%064d' 0 | tr 0 f)
	ctr_create "$CID-a"
	ctr_create "$long"
	run runtime list
	assert_success
	assert_equal "${#lines[@]}" 3
	local offsets
	offsets=$(field_offsets <<<"$output")
	[ "$(sort -u <<<"$offsets" | wc -l)" = 1 ] || fail "columns do not line up: $output"
	# runc's widths: the widest cell plus 3, at least 12 (PID's column).
	local status_at
	status_at=$(awk '{ print $3 }' <<<"$offsets" | head -1)
	assert_equal "$status_at" $((${#long} + 3 + 12 + 1))
}

@test "list -q prints only the ids, sorted as runc sorts them" {
	set_args sleep 1000
	ctr_create "$CID-c"
	ctr_create "$CID-a"
	ctr_create "$CID-b"
	run runtime list -q
	assert_success
	assert_equal "$output" "$(printf '%s\n' "$CID-a" "$CID-b" "$CID-c")"
}

@test "list --format json has runc's keys: id, pid, status, bundle, rootfs, created and the owner's name" {
	set_args sleep 1000
	ctr_create
	local pid
	pid=$(ctr_pid)
	run runtime list --format json
	assert_success
	jq -e --arg id "$CID" --arg b "$BUNDLE" --argjson pid "$pid" \
		'length == 1 and .[0].id == $id and .[0].pid == $pid
		and .[0].status == "created" and .[0].bundle == $b
		and .[0].rootfs == $b + "/rootfs" and (.[0].created | test("^[0-9]{4}-"))
		and .[0].owner == "root"' <<<"$output" >/dev/null \
		|| fail "unexpected list json"
	run runtime list -f json
	assert_success
	jq -e 'length == 1' <<<"$output" >/dev/null || fail "-f json"
}

@test "list of an empty root is empty" {
	run runtime list -q
	assert_success
	assert_output ""
	run runtime list --format json
	assert_success
	# runc prints null, agentrun []: either way nothing is listed.
	jq -e '(. // []) | length == 0' <<<"$output" >/dev/null || fail "not empty json"
}

@test "list rejects an unknown format" {
	run runtime list --format yaml
	assert_failure
}

@test "--log with --log-format json writes JSON lines on error" {
	local log=$TEST_DIR/runtime.log
	run "$RUNTIME" --root "$ROOT" --log "$log" --log-format json state "$CID-missing"
	assert_failure
	[ -s "$log" ] || fail "nothing logged"
	# Every line is a JSON object; the error carries level and msg.
	jq -e . "$log" >/dev/null || fail "log is not JSON lines: $(cat "$log")"
	jq -se 'map(select(.level == "error" and (.msg | type == "string") and (.time | type == "string"))) | length >= 1' \
		"$log" >/dev/null || fail "no error entry: $(cat "$log")"
}

@test "--log with text format writes the error in logrus's text form" {
	local log=$TEST_DIR/runtime.log
	run "$RUNTIME" --root "$ROOT" --log "$log" --log-format text state "$CID-missing"
	assert_failure
	grep -qE '^time="[^"]+" level=error msg="container does not exist: `'"$CID"'-missing`"$' "$log" \
		|| fail "not logrus text: $(cat "$log")"
}

@test "--debug writes logrus debug lines: to stderr, or to --log as text or JSON" {
	run "$RUNTIME" --root "$ROOT" --debug list -q
	assert_success
	assert_output_contains 'level=debug msg="list"'
	local log=$TEST_DIR/debug.log
	run "$RUNTIME" --root "$ROOT" --debug --log "$log" list -q
	assert_success
	refute_output_contains "level=debug"
	grep -qE '^time="[^"]+" level=debug msg="list: exit status 0"$' "$log" || fail "log: $(cat "$log")"
	run "$RUNTIME" --root "$ROOT" --debug --log "$log.json" --log-format json list -q
	jq -se 'map(select(.level == "debug" and .msg == "list")) | length == 1' "$log.json" >/dev/null \
		|| fail "json log: $(cat "$log.json")"
}

@test "--log-format rejects unknown formats" {
	run "$RUNTIME" --root "$ROOT" --log-format xml list
	assert_failure
}

@test "--debug does not change the result" {
	run "$RUNTIME" --root "$ROOT" --debug --log "$TEST_DIR/debug.log" run --bundle "$BUNDLE" "$CID"
	assert_success
}

@test "--debug: one line says where the time went, the init's own phases inside its init phase" {
	set_args true
	run "$RUNTIME" --root "$ROOT" --debug --log "$TEST_DIR/debug.log" run --bundle "$BUNDLE" "$CID"
	assert_success
	local line n="[0-9]+\\.[0-9]{2}"
	line=$(grep -o 'msg="run: timings: [^"]*"' "$TEST_DIR/debug.log") || fail "no timings: $(cat "$TEST_DIR/debug.log")"
	# Every phase of a run, in order, each with its milliseconds.
	[[ $line =~ ^msg=\"run:\ timings:\ parse\ $n\ ms,\ profile\ $n\ ms,\ state\ $n\ ms,\ seccomp\ $n\ ms,\ spec\ $n\ ms,\ cgroup\ $n\ ms,\ clone\ $n\ ms,\ join\ $n\ ms,\ init\ $n\ ms\ \(go\ $n,\ mounts\ $n,\ hooks\ $n,\ pivot\ $n,\ privileges\ $n\),\ start\ $n\ ms,\ wait\ $n\ ms,\ delete\ $n\ ms,\ rest\ $n\ ms,\ total\ $n\ ms\"$ ]] \
		|| fail "timings line: $line"
	# exec's, and nothing without --debug.
	run "$RUNTIME" --root "$ROOT" --log "$TEST_DIR/quiet.log" run --bundle "$BUNDLE" "$CID"
	assert_success
	! grep -q timings "$TEST_DIR/quiet.log" 2>/dev/null || fail "timings without --debug"
	set_args sleep 30
	runtime_bg run --detach --bundle "$BUNDLE" "$CID"
	run "$RUNTIME" --root "$ROOT" --debug exec "$CID" true
	assert_success
	assert_output_contains 'msg="exec: timings: state '
	assert_output_contains ' ready '
}

@test "invoked as agentrun-NAME, the profile is NAME unless --profile says otherwise" {
	ln -s "$RUNTIME" "$TEST_DIR/agentrun-agent"
	set_args sh -c 'grep ^Seccomp: /proc/self/status'
	update_config 'del(.linux.seccomp)'
	run timeout -k 5 "$AR_TIMEOUT" "$TEST_DIR/agentrun-agent" --root "$ROOT" run --bundle "$BUNDLE" "$CID" </dev/null
	assert_success
	assert_output_contains "Seccomp:	2"
	run timeout -k 5 "$AR_TIMEOUT" "$TEST_DIR/agentrun-agent" --root "$ROOT" --profile oci run --bundle "$BUNDLE" "$CID" </dev/null
	assert_success
	assert_output_contains "Seccomp:	0"
	ln -s "$RUNTIME" "$TEST_DIR/agentrun-nosuch"
	run timeout -k 5 "$AR_TIMEOUT" "$TEST_DIR/agentrun-nosuch" --root "$ROOT" run --bundle "$BUNDLE" "$CID" </dev/null
	assert_failure
	assert_output_contains 'profile "nosuch": not found'
}
