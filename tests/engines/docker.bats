#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Docker (Debian's docker.io) driving agentrun: `docker run --runtime=agentrun`
# with the everyday flags, and the container verbs that reach the runtime
# through containerd's runc v2 shim.
#
# dockerd runs in a network namespace of its own (unshare --net): its default
# bridge, veth pairs and iptables rules are made there and vanish with it, so
# --network bridge is tested without touching the host's network. Its data
# root, exec root, containerd and socket live under the suite's temp dir.

load lib

I=$ENG_IMAGE_TAG

dk() {
	eng_run "$ENG_DOCKER" -H "unix://$ENG_T/docker.sock" "$@"
}

# The daemon config the tests run with: the three contrib/docker files merged
# (so their syntax and keys are what is tested), the runtime path pointed at
# the binary under test, plus what only the test needs.
write_daemon_json() {
	local c=$ENG_TOP/contrib/docker
	local systemd=false
	eng_systemd_host && systemd=true
	jq -s --arg bin "$ENG_AGENTRUN" --arg ns "$ENG_NS" --arg cg "$ENG_CG" \
		--argjson systemd "$systemd" '
		(.[0] * .[1] * .[2])
		| .runtimes |= map_values(.path = $bin)
		# The agent profile with an allowlist (egress tests).
		| .runtimes["agentrun-allow"] = {path: $bin, runtimeArgs: ["--profile=egressallow"]}
		# Docker names its containers in this containerd namespace.
		| .["containerd-namespace"] = $ns
		# Containers under a cgroup parent of this suite only; with
		# the systemd driver (a systemd host) the slice Docker picks.
		| if $systemd then . else .["cgroup-parent"] = ("/" + $cg) end
		' "$c/daemon.json" "$c/daemon-default-runtime.json" "$c/daemon-agent-profile.json" \
		>"$ENG_T/daemon.json"
}

# The agent profile that allows the default bridge's network: the
# gateway (the host) must stay refused all the same.
write_agentrun_config() {
	mkdir -p "$ENG_T/agentrun-config/profiles"
	echo '{"extends": "agent", "network": {"egress": "allowlist", "allow": ["172.17.0.0/16"]}}' \
		>"$ENG_T/agentrun-config/profiles/egressallow.json"
}

start_dockerd() {
	write_agentrun_config
	eng_start_daemon dockerd env AGENTRUN_CONFIG_DIR="$ENG_T/agentrun-config" unshare --net dockerd \
		--data-root "$ENG_T/data" --exec-root "$ENG_T/exec" \
		--pidfile "$ENG_T/docker.pid" -H "unix://$ENG_T/docker.sock" \
		--config-file "$ENG_T/daemon.json"
	export ENG_DOCKERD_PID=$ENG_DAEMON_PID
	eng_wait_ready dockerd "$ENG_DOCKERD_PID" \
		"$ENG_DOCKER" -H "unix://$ENG_T/docker.sock" version
}

setup_file() {
	eng_require dockerd unshare jq script || return 0
	export ENG_DOCKER=/usr/bin/docker
	[ -x "$ENG_DOCKER" ] || ENG_DOCKER=$(command -v docker) || eng_skip_file "no docker client" || return 0
	eng_setup_dir docker || return 0
	# dockerd makes /run/docker/plugins, its containerd's shims sockets
	# under /run/containerd/s, whatever the flags say.
	eng_note_host_paths /run/docker/plugins /run/docker /run/containerd/s /run/containerd
	write_daemon_json
	start_dockerd
	dk import -c 'CMD ["/bin/sh"]' "$ENG_T/rootfs.tar" "$I" >/dev/null
	eng_seccomp_profile "$ENG_T/seccomp.json"
	# The shim keeps runtime state at <exec-root>/runtime-runc/<namespace>
	# whatever the runtime is called.
	export ENG_STATE=$ENG_T/exec/runtime-runc/$ENG_NS
}

teardown_file() {
	if [ -n "${ENG_T:-}" ] && [ -S "$ENG_T/docker.sock" ]; then
		local ids
		ids=$(dk ps -aq 2>/dev/null) || true
		[ -z "$ids" ] || dk rm -f $ids >/dev/null 2>&1 || true
	fi
	eng_teardown_dir
}

run_d() {
	dk run --rm --runtime=agentrun "$@"
}

# A detached container that exits 3 on SIGTERM; prints its id.
start_sleeper() {
	dk run -d --runtime=agentrun --name "$1" "${@:2}" "$I" \
		sh -c "$ENG_SLEEPER"
}

logs_have() {
	dk logs "$1" 2>&1 | grep -q "$2"
}

state_of() {
	dk inspect -f '{{.State.Status}}' "$1"
}

no_agentrun_state() {
	[ -z "$("$ENG_AGENTRUN" --root "$ENG_STATE" list -q)" ]
}

state_is() {
	[ "$(state_of "$1")" = "$2" ]
}

runtime_known() {
	dk info -f '{{json .Runtimes}}' | jq -e --arg r "$1" 'has($r)' >/dev/null
}

# add_profile_runtime NAME PROFILE_JSON: the profile NAME in the suite's
# config dir, and a runtime agentrun-NAME using it, loaded with SIGHUP
# (docs/engines.md's way to a policy per container).
add_profile_runtime() {
	echo "$2" >"$ENG_T/agentrun-config/profiles/$1.json"
	jq --arg bin "$ENG_AGENTRUN" --arg n "$1" \
		'.runtimes["agentrun-" + $n] = {path: $bin, runtimeArgs: ["--profile=" + $n]}' \
		"$ENG_T/daemon.json" >"$ENG_T/daemon.json.new"
	mv "$ENG_T/daemon.json.new" "$ENG_T/daemon.json"
	kill -HUP "$(cat "$ENG_T/docker.pid")"
	eng_wait 100 runtime_known "agentrun-$1" || fail "SIGHUP did not load agentrun-$1"
}

# start_approver NAME RULE...: agentrun approve on $ENG_T/NAME.sock with
# these rules, logging to $ENG_T/NAME.log; its pid in $APPROVER.
start_approver() {
	local name=$1
	shift
	printf '%s\n' "$@" >"$ENG_T/$name.rules"
	"$ENG_AGENTRUN" approve --socket "$ENG_T/$name.sock" --rules "$ENG_T/$name.rules" \
		</dev/null >"$ENG_T/$name.log" 2>&1 &
	APPROVER=$!
	eng_wait 100 test -S "$ENG_T/$name.sock" || fail "no approver socket"
}

@test "docker: agentrun is registered and is the default runtime" {
	host_kind_neutral
	run dk info -f '{{json .Runtimes}} {{.DefaultRuntime}}'
	assert_success
	assert_contains '"agentrun"'
	assert_contains '"agentrun-agent"'
	[[ "$output" == *" agentrun" ]] || fail "default runtime is not agentrun"
	dk run -d --name default-rt "$I" sleep 30 >/dev/null
	run dk inspect -f '{{.HostConfig.Runtime}}' default-rt
	assert_contains agentrun
	# agentrun's own state dir knows the container: it really ran it.
	id=$(dk inspect -f '{{.Id}}' default-rt)
	run "$ENG_AGENTRUN" --root "$ENG_STATE" state "$id"
	assert_success
	assert_contains '"status": "running"'
	dk rm -f default-rt >/dev/null
}

@test "docker run --rm: output and exit codes pass through" {
	host_kind_neutral
	run run_d "$I" echo hello from agentrun
	assert_success
	[ "$output" = "hello from agentrun" ] || fail "wrong output"
	run run_d "$I" sh -c 'exit 7'
	assert_status 7
	# Docker maps a missing executable reported by the runtime to 127.
	run -127 run_d "$I" /no/such/binary
	assert_status 127
	assert_contains '/no/such/binary'
	[ -z "$(dk ps -aq)" ] || fail "--rm left a container"
}

@test "docker run -e -w -u" {
	host_kind_neutral
	run run_d -e FOO=bar -e EMPTY= -w /tmp -u 1000:1000 "$I" \
		sh -c 'echo "$FOO|$EMPTY|$(pwd)|$(id -u):$(id -g)"'
	assert_success
	[ "$output" = "bar||/tmp|1000:1000" ] || fail "wrong env/cwd/user"
	run run_d -u test "$I" id -un
	[ "$output" = test ] || fail "user by name"
	run run_d -w /new/dir "$I" pwd
	[ "$output" = /new/dir ] || fail "-w creates the directory"
}

@test "docker run -v binds, read-write and read-only" {
	host_kind_neutral
	mkdir -p "$ENG_T/bind"
	echo host-data >"$ENG_T/bind/in"
	run run_d -v "$ENG_T/bind:/data" "$I" sh -c 'cat /data/in; echo from-container >/data/out'
	assert_success
	assert_contains host-data
	[ "$(cat "$ENG_T/bind/out")" = from-container ] || fail "write did not reach the host"
	run run_d -v "$ENG_T/bind:/data:ro" "$I" sh -c 'echo x >/data/ro'
	assert_failure
	assert_contains 'Read-only file system'
	[ ! -e "$ENG_T/bind/ro" ]
}

@test "docker run --read-only --tmpfs" {
	host_kind_neutral
	run run_d --read-only --tmpfs /scratch:size=1m "$I" \
		sh -c 'touch /scratch/ok && echo tmpfs-ok; grep " /scratch " /proc/mounts; touch /nope'
	assert_failure
	assert_contains tmpfs-ok
	assert_contains 'tmpfs /scratch tmpfs'
	assert_contains 'size=1024k'
	assert_contains 'Read-only file system'
}

@test "docker run --memory --cpus --pids-limit reach the cgroup" {
	run run_d --memory 64m --cpus 0.5 --pids-limit 50 "$I" sh -c "$ENG_CG_LIMITS"
	assert_success
	[ "$output" = "$(printf '67108864\n50000\n100000\n50')" ] || fail "limits not applied"
}

@test "docker run --cap-drop/--cap-add and no-new-privileges" {
	run run_d --cap-drop ALL --cap-add NET_RAW "$I" grep CapEff /proc/self/status
	assert_success
	assert_contains 0000000000002000
	run run_d --cap-drop CHOWN "$I" chown 1000 /tmp
	assert_failure
	run run_d "$I" chown 1000 /tmp
	assert_success
	run run_d --security-opt no-new-privileges "$I" grep NoNewPrivs /proc/self/status
	assert_contains '1'
	run run_d "$I" grep NoNewPrivs /proc/self/status
	assert_contains '0'
}

@test "docker run --security-opt seccomp=profile.json" {
	run run_d --security-opt "seccomp=$ENG_T/seccomp.json" "$I" sh -c 'mkdir /tmp/x'
	assert_failure
	assert_contains 'Operation not permitted'
	# Docker's default profile is loaded too (a filter is on).
	run run_d "$I" sh -c 'mkdir /tmp/x && grep ^Seccomp: /proc/self/status'
	assert_success
	assert_contains 2
}

@test "docker run --network none, host and bridge" {
	run run_d --network none "$I" sh -c 'ls /sys/class/net'
	assert_success
	[ "$output" = lo ] || fail "none: only lo expected"
	# host: the daemon's namespace (its own, private one here).
	want=$(readlink "/proc/$ENG_DOCKERD_PID/ns/net")
	run run_d --network host "$I" readlink /proc/self/ns/net
	[ "$output" = "$want" ] || fail "host: not the daemon's netns ($want)"
	# bridge: a veth with an address and a default route; no traffic sent.
	run run_d --network bridge "$I" sh -c 'ip -4 -o addr show eth0; ip route'
	assert_success
	assert_contains 'inet 172.'
	assert_contains 'default via'
}

@test "docker run --init and --ulimit" {
	run run_d --init "$I" sh -c 'cat /proc/1/cmdline | tr "\0" " "'
	assert_success
	assert_contains docker-init
	run run_d --ulimit nofile=512:1000 --ulimit nproc=200:300 "$I" \
		sh -c 'ulimit -n; ulimit -Hn; ulimit -u; ulimit -Hu'
	assert_success
	[ "$output" = "$(printf '512\n1000\n200\n300')" ] || fail "ulimits not applied"
}

@test "docker run -it: a terminal, and the exit code" {
	host_kind_neutral
	run eng_tty "$ENG_DOCKER" -H "unix://$ENG_T/docker.sock" run --rm -it --runtime=agentrun "$I" \
		sh -c 'tty; stty size; exit 4'
	assert_status 4
	assert_contains /dev/pts/0
}

@test "docker run -d, logs, exec with and without -it, top" {
	start_sleeper c-exec >/dev/null
	eng_wait 50 logs_have c-exec started
	run dk logs c-exec
	assert_contains started
	run dk exec c-exec sh -c 'echo in-exec; exit 5'
	assert_status 5
	assert_contains in-exec
	run dk exec -u 1000 -e X=1 -w /tmp c-exec sh -c 'echo "$(id -u) $X $(pwd)"'
	[ "$output" = "1000 1 /tmp" ] || fail "exec -u -e -w"
	run eng_tty "$ENG_DOCKER" -H "unix://$ENG_T/docker.sock" exec -it c-exec sh -c 'tty; exit 6'
	assert_status 6
	assert_contains /dev/pts/
	run dk exec -d c-exec sleep 7
	assert_success
	run dk top c-exec
	assert_success
	assert_contains 'while :'
	assert_contains 'sleep 7'
	dk rm -f c-exec >/dev/null
}

@test "docker stop, kill, restart: signals and exit codes" {
	start_sleeper c-stop >/dev/null
	run dk stop -t 10 c-stop
	assert_success
	run dk inspect -f '{{.State.ExitCode}}' c-stop
	[ "$output" = 3 ] || fail "stop: the TERM handler's exit code"
	run dk logs c-stop
	assert_contains stopping
	run dk restart -t 10 c-stop
	assert_success
	[ "$(state_of c-stop)" = running ] || fail "restart"
	run dk kill -s KILL c-stop
	assert_success
	eng_wait 50 state_is c-stop exited
	run dk inspect -f '{{.State.ExitCode}}' c-stop
	[ "$output" = 137 ] || fail "kill: 137 expected"
	dk rm c-stop >/dev/null
}

@test "docker pause/unpause" {
	start_sleeper c-pause >/dev/null
	run dk pause c-pause
	assert_success
	[ "$(state_of c-pause)" = paused ] || fail "not paused"
	# The freezer really holds the tasks.
	pid=$(dk inspect -f '{{.State.Pid}}' c-pause)
	eng_frozen "$pid" || fail "freezer"
	run dk exec c-pause true
	assert_failure
	run dk unpause c-pause
	assert_success
	[ "$(state_of c-pause)" = running ] || fail "not resumed"
	run dk exec c-pause echo awake
	assert_contains awake
	dk rm -f c-pause >/dev/null
}

@test "docker stats --no-stream lists the container" {
	start_sleeper c-stats >/dev/null
	run dk stats --no-stream --format '{{.Name}} {{.PIDs}} {{.MemUsage}}' c-stats
	assert_success
	assert_contains c-stats
	# Removed before any skip below: a skipped test must not leave it.
	dk rm -f c-stats >/dev/null
	local bad
	bad=$(eng_unmounted_v1_controllers)
	if [ -n "$bad" ]; then
		skip "numbers: containerd's shim cannot load cgroups while v1 controller(s) $bad are mounted nowhere (runc alike)"
	fi
	[[ "$output" != *"c-stats 0 0B / 0B"* ]] || fail "stats has no numbers"
}

@test "docker update: memory and pids of a running container" {
	start_sleeper c-update --memory 64m >/dev/null
	run dk update --memory 128m --memory-swap 256m --pids-limit 40 c-update
	assert_success
	run dk exec c-update sh -c "$ENG_CG_LIMITS"
	[ "${lines[0]}" = 134217728 ] && [ "${lines[3]}" = 40 ] || fail "update did not reach the cgroup"
	dk rm -f c-update >/dev/null
}

@test "docker --runtime=agentrun-agent passes runtimeArgs (--profile=agent)" {
	host_kind_neutral
	run dk run --rm --runtime=agentrun-agent "$I" sh -c 'echo ok'
	assert_success
	assert_contains ok
}

# logged ID PATTERN: the container's output has a line matching PATTERN.
logged() {
	dk logs "$1" 2>&1 | grep -q "$2"
}

@test "docker agent runtime: root inside is a host range of its own; the image and volumes are its root's, a bound file of host root's is not" {
	mkdir -p "$ENG_T/vol"
	echo TOKEN-vol >"$ENG_T/vol/secret"
	chmod 0600 "$ENG_T/vol/secret"
	echo TOKEN-file >"$ENG_T/file-secret"
	chmod 0600 "$ENG_T/file-secret"
	dk volume rm -f agent-data >/dev/null 2>&1 || true
	local id
	id=$(dk run -d --runtime=agentrun-agent -v "$ENG_T/vol:/vol" -v agent-data:/data \
		-v "$ENG_T/file-secret:/file-secret" "$I" sh -c '
		cat /proc/self/uid_map; stat -c "image %u:%g" /etc/passwd /bin
		echo x >/etc/written && echo wrote-image
		cat /vol/secret; echo made >/vol/made && echo wrote-vol
		echo made >/data/made && echo wrote-data
		cat /file-secret 2>&1; stat -c "file %u" /file-secret; exec sleep 600')
	eng_wait 100 logged "$id" '^file '
	local pid
	pid=$(dk inspect -f '{{.State.Pid}}' "$id")
	run dk logs "$id"
	# The process on the host: the range's uid, never host root.
	local host_uid
	host_uid=$(stat -c %u "/proc/$pid")
	dk rm -f "$id" >/dev/null
	dk volume rm -f agent-data >/dev/null 2>&1 || true
	[ "$host_uid" -ne 0 ] || fail "runs as host root"
	[ "$(awk '$1 == 0 { print $2 }' <<<"$output")" = "$host_uid" ] || fail "uid_map: $output"
	[ "$(grep -c '^image 0:0$' <<<"$output")" = 2 ] || fail "image not its root's: $output"
	assert_contains wrote-image
	# A volume (a bound directory, a named volume): its root's, as under
	# runc; what it writes there is host root's on the host.
	assert_contains TOKEN-vol
	assert_contains wrote-vol
	assert_contains wrote-data
	[ "$(stat -c %u "$ENG_T/vol/made")" = 0 ] || fail "a volume's new file is host uid $(stat -c %u "$ENG_T/vol/made")"
	# A bound file (a host service's socket would be one): nobody's.
	assert_contains "Permission denied"
	assert_contains "file 65534"
	[[ "$output" != *TOKEN-file* ]] || fail "read host root's 0600 bound file: $output"
}

# The default bridge's gateway is the daemon's own netns (private here):
# a web server there stands for every service on the host.
gateway_listens() {
	nsenter -t "$ENG_DOCKERD_PID" -n ss -Hltn src 172.17.0.1 sport = 8080 | grep -q LISTEN
}

listen_on_gateway() {
	[ -f "$ENG_T/gateway-listening" ] && return 0
	eng_listen "$ENG_DOCKERD_PID" 172.17.0.1
	touch "$ENG_T/gateway-listening"
	# (lo is down in the daemon's netns: no connect from there to wait on.)
	eng_wait 50 gateway_listens
}

@test "docker agent runtime, default bridge: egress none holds (the gateway is refused)" {
	listen_on_gateway
	# Without the agent profile the gateway answers: the test can fail.
	run run_d "$I" sh -c "$ENG_GET 172.17.0.1"
	assert_contains reached
	run dk run --rm --runtime=agentrun-agent "$I" sh -c "ip -4 -o addr show eth0; $ENG_GET 172.17.0.1"
	assert_success
	assert_contains 'inet 172.17.'
	assert_contains refused
	refute_contains reached
}

@test "docker agent runtime: --network container: (joined by path) and none are filtered" {
	listen_on_gateway
	start_sleeper c-pod >/dev/null
	local i outcomes=""
	for i in 1 2 3 4 5; do
		outcomes+="$(dk run --rm --runtime=agentrun-agent --network container:c-pod "$I" sh -c "$ENG_GET 172.17.0.1" 2>&1) "
	done
	dk rm -f c-pod >/dev/null
	[ "$outcomes" = "refused refused refused refused refused " ] || fail "through container:c-pod: $outcomes"
	run dk run --rm --runtime=agentrun-agent --network none "$I" sh -c "ls /sys/class/net; $ENG_GET 172.17.0.1"
	assert_success
	[ "$output" = "$(printf 'lo\nrefused')" ] || fail "none: lo only, nothing reached"
}

@test "docker agent allowlist: an allowed container is reached, the gateway never" {
	listen_on_gateway
	dk run -d --runtime=agentrun --name c-web "$I" httpd -f -p 8080 -h /etc >/dev/null
	local web
	web=$(dk inspect -f '{{.NetworkSettings.IPAddress}}' c-web)
	[ -n "$web" ] || fail "c-web has no address"
	run dk run --rm --runtime=agentrun-allow "$I" sh -c "$ENG_GET $web; $ENG_GET 172.17.0.1"
	dk rm -f c-web >/dev/null
	assert_success
	[ "$output" = "$(printf 'reached\nrefused')" ] || fail "allowed container reached, gateway refused expected"
}

@test "docker agent allowlist by name: the name reaches its container; its address by another name is reset" {
	command -v dnsmasq >/dev/null || skip "dnsmasq is not installed (contrib/install-deps.sh)"
	dk run -d --runtime=agentrun --name c-named "$I" httpd -f -p 8080 -h /etc >/dev/null
	local web
	web=$(dk inspect -f '{{.NetworkSettings.IPAddress}}' c-named)
	[ -n "$web" ] || fail "c-named has no address"
	# The resolver's upstream, in the daemon's netns: web.test and
	# evil.test are that one address, as sites behind one CDN edge are.
	# The resolver asks it from there, through lo (down in a new netns,
	# up on any host).
	nsenter -t "$ENG_DOCKERD_PID" -n ip link set lo up
	nsenter -t "$ENG_DOCKERD_PID" -n dnsmasq -C /dev/null --no-resolv --no-hosts \
		--bind-interfaces --listen-address=172.17.0.1 --port=53 --pid-file="$ENG_T/dnsmasq.pid" \
		--address=/web.test/"$web" --address=/evil.test/"$web"
	eng_track_pid "$(cat "$ENG_T/dnsmasq.pid")"
	add_profile_runtime named '{"extends": "agent", "network": {"egress": "allowlist", "upstream": "172.17.0.1", "allow": ["web.test:8080"]}}'
	local get='get() { printf "GET / HTTP/1.0\r\nHost: $2\r\n\r\n" | nc -w 3 "$1" 8080 2>/dev/null | grep -q "^HTTP/1" && echo reached || echo refused; }'
	run dk run --rm --runtime=agentrun-named "$I" sh -c "$get; get web.test web.test; get web.test evil.test"
	dk rm -f c-named >/dev/null
	kill "$(cat "$ENG_T/dnsmasq.pid")"
	assert_success
	[ "$output" = "$(printf 'reached\nrefused')" ] || fail "by its name reached, by another refused expected: $output"
}

# Docker 20.10 (Debian 12's) cannot give a container OCI annotations, so
# run.agentrun.* is out of reach; docs/engines.md's way to a policy per
# container is a runtime name per profile, added to daemon.json and loaded
# with SIGHUP (no restart).
@test "docker: no --annotation before API 1.43; a runtime per profile, added by SIGHUP, sets one container's policy" {
	host_kind_neutral
	local api
	api=$(dk version -f '{{.Server.APIVersion}}')
	if [ "$(printf '%s\n' "$api" 1.43 | sort -V | head -1)" != 1.43 ]; then
		run dk run --rm --runtime=agentrun --annotation run.agentrun.timeout=1s "$I" true
		assert_failure
		[[ "$output" == *"unknown flag: --annotation"* || "$output" == *'"--annotation" requires API version 1.43'* ]] ||
			fail "docker $api took --annotation"
	fi
	add_profile_runtime doc2s '{"extends": "agent", "limits": {"wallClock": "2s"}}'
	# The profile's wall clock ends the container (SIGKILL: 137) long
	# before the command would, and before eng_run's own limit.
	run dk run --rm --runtime=agentrun-doc2s "$I" sh -c 'sleep 600; echo not killed'
	assert_status 137
	refute_contains 'not killed'
	# Other containers keep their policy: the plain runtime has no limit.
	run run_d "$I" sh -c 'sleep 3; echo not killed'
	assert_success
	assert_contains 'not killed'
}

@test "docker agent runtime with an audit log: the container's life is in it, checked by the head kept under Docker's runtime root; a cut stays caught" {
	local log=$ENG_T/audit.log n head
	add_profile_runtime auditdoc "{\"extends\": \"agent\", \"audit\": {\"path\": \"$log\"}}"
	dk run -d --runtime=agentrun-auditdoc --name c-audited "$I" sleep 600 >/dev/null
	run dk exec c-audited sh -c 'exit 3'
	assert_status 3
	dk rm -f c-audited >/dev/null
	[ "$(jq -r .event "$log" | grep -E '^(create|start|exec-start|exec|delete)$' | sort -u | paste -sd' ')" = "create delete exec exec-start start" ] ||
		fail "$(cat "$log")"
	# The shim execs detached and waits itself: the log has the pid.
	jq -se 'any(.[]; .event == "exec" and .argv == ["sh", "-c", "exit 3"] and .pid > 0)' "$log" >/dev/null ||
		fail "$(grep '"exec"' "$log")"
	n=$(wc -l <"$log")
	run "$ENG_AGENTRUN" --root "$ENG_STATE" audit "$log"
	assert_success
	[ "$output" = "ok $n lines" ] || fail "audit said: $output"
	head=$("$ENG_AGENTRUN" --root "$ENG_STATE" audit --show-head "$log")
	[ "${head%%:*}" = "$n" ] || fail "head $head, $n lines"

	# The last container's delete cut off, then another container runs.
	head -n -1 "$log" >"$ENG_T/audit.cut" && cat "$ENG_T/audit.cut" >"$log"
	run dk run --rm --runtime=agentrun-auditdoc "$I" true
	assert_success
	run "$ENG_AGENTRUN" --root "$ENG_STATE" audit --show-head "$log"
	[ "$output" = "$head" ] || fail "the head moved: $output, was $head"
	run "$ENG_AGENTRUN" --root "$ENG_STATE" audit "$log"
	assert_status 1
	[ "$output" = "line $n: does not match the head" ] || fail "audit said: $output"
}

@test "docker agent runtime, egress ask: a held connection to another container goes through once approved; the gateway is refused without a question" {
	listen_on_gateway
	# The resolver's upstream must be routable from the daemon's own netns
	# (the suite's: nothing but Docker's bridge).
	start_approver approve "allow-once connect 172.17.*:8080" "deny * *"
	add_profile_runtime askdoc "{\"extends\": \"agent\", \"network\": {\"egress\": \"ask\", \"upstream\": \"172.17.0.1\"}, \"approver\": {\"socket\": \"$ENG_T/approve.sock\", \"timeout\": \"5s\"}}"
	dk run -d --runtime=agentrun --name c-asked "$I" httpd -f -p 8080 -h /etc >/dev/null
	local web
	web=$(dk inspect -f '{{.NetworkSettings.IPAddress}}' c-asked)
	run dk run --rm --runtime=agentrun-askdoc "$I" sh -c "$ENG_GET $web; $ENG_GET 172.17.0.1"
	dk rm -f c-asked >/dev/null
	kill -TERM "$APPROVER"
	wait "$APPROVER" || true
	assert_success
	[ "$output" = "$(printf 'reached\nrefused')" ] || fail "approved container reached, gateway refused expected: $output"
	grep -q "connect $web:8080: allow-once (rule" "$ENG_T/approve.log" || fail "approver: $(cat "$ENG_T/approve.log")"
	! grep -q "172.17.0.1" "$ENG_T/approve.log" || fail "asked about the gateway: $(cat "$ENG_T/approve.log")"
}

@test "docker agent runtime, programs.ask: docker exec of a program the profile names waits for the approver; a deny fails it and the program never runs" {
	start_approver approve-exec "deny exec rm *" "allow-once exec *"
	add_profile_runtime execdoc "{\"extends\": \"agent\", \"programs\": {\"ask\": [\"rm\", \"id -u\"]}, \"approver\": {\"socket\": \"$ENG_T/approve-exec.sock\", \"timeout\": \"5s\"}}"
	local id rm_status rm_out id_out
	id=$(dk run -d --runtime=agentrun-execdoc "$I" sh -c 'touch /tmp/kept; exec sleep 600')
	eng_wait 100 dk exec "$id" ls /tmp/kept
	run dk exec "$id" rm /tmp/kept
	rm_status=$status rm_out=$output
	run dk exec "$id" id -u
	id_out=$output
	run dk exec "$id" ls /tmp/kept
	dk rm -f "$id" >/dev/null
	kill -TERM "$APPROVER"
	wait "$APPROVER" || true
	assert_success
	[ "$rm_status" -ne 0 ] || fail "rm ran: $rm_out"
	[ "$id_out" = 0 ] || fail "id -u: $id_out"
	grep -q "exec rm /tmp/kept: deny (rule rm \*)" "$ENG_T/approve-exec.log" || fail "approver: $(cat "$ENG_T/approve-exec.log")"
	grep -q "exec id -u: allow-once (rule" "$ENG_T/approve-exec.log" || fail "approver: $(cat "$ENG_T/approve-exec.log")"
	# sleep, ls and sh are named by no rule: never asked.
	[ "$(wc -l <"$ENG_T/approve-exec.log")" -eq 2 ] || fail "approver: $(cat "$ENG_T/approve-exec.log")"
}

@test "docker agent runtime: a running container is snapshotted and forked; rollback is refused and leaves it running" {
	local id
	id=$(dk run -d --runtime=agentrun-agent "$I" sh -c 'echo made >/made; exec sleep 600')
	eng_wait 100 dk exec "$id" cat /made
	run "$ENG_AGENTRUN" --root "$ENG_STATE" snapshot "$id" s1
	assert_success
	run "$ENG_AGENTRUN" --root "$ENG_STATE" sandbox --from "$id:s1" -- cat /made
	assert_success
	[ "$output" = made ] || fail "the fork read: $output"
	run "$ENG_AGENTRUN" --root "$ENG_STATE" rollback "$id" s1
	assert_failure
	assert_contains "rollback: container \`$id\` is run by an engine (its init's parent is containerd-shim)"
	run dk inspect -f '{{.State.Running}}' "$id"
	assert_success
	[ "$output" = true ] || fail "running: $output"
	dk rm -f "$id" >/dev/null
}

@test "docker: removed containers leave no agentrun state" {
	host_kind_neutral
	dk run --rm --runtime=agentrun "$I" true
	start_sleeper c-gone >/dev/null
	dk rm -f c-gone >/dev/null
	# The shim deletes asynchronously after the API call returns.
	eng_wait 200 no_agentrun_state || true
	run "$ENG_AGENTRUN" --root "$ENG_STATE" list
	assert_success
	[ "$(wc -l <<<"$output")" -eq 1 ] || fail "agentrun still lists containers"
}
