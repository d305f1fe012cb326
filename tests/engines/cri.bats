#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Kubernetes' path at the CRI level. A private containerd (Debian's 1.6)
# with its CRI plugin and the handlers of contrib/containerd/config.toml
# (runc, agentrun, agentrun-agent) is driven through the CRI v1 gRPC API
# by tests/cri/cri.js, as the kubelet drives it: pod sandbox, containers,
# exec, logs, stop and remove, under each handler.
#
# containerd runs in a network namespace of the suite's own (nsenter
# --net: its mounts and cgroups stay the host's), where the CNI bridge of
# Debian's containernetworking-plugins gives pods 10.89.0.0/24 and a test
# server listens on the gateway, 10.89.0.1:8080. Nothing reaches the
# host's network. Needs tests/cri's node modules (npm ci --prefix tests/cri).
# The containerd config is eng_cri_config's (eng.bash), the one
# tests/cri/critest.sh runs Kubernetes' CRI validation suite against.

load lib

I=docker.io/library/$ENG_IMAGE_TAG
PAUSE=docker.io/library/agentrun-pause:test
NET=10.89.0

# cri METHOD JSON: one CRI call; its reply (JSON) on stdout.
cri() {
	eng_run node "$ENG_TOP/tests/cri/cri.js" "$ENG_T/containerd.sock" "$@"
}

setup_file() {
	eng_require containerd ctr containerd-shim-runc-v2 runc jq node nsenter ip busybox || return 0
	[ -d "$ENG_TOP/tests/cri/node_modules/@grpc/grpc-js" ] \
		|| eng_skip_file "no CRI client modules: npm ci --prefix tests/cri" || return 0
	[ -x "$(eng_cni_bin_dir)/bridge" ] || eng_skip_file "no CNI plugins (apt-get install containernetworking-plugins)" || return 0
	eng_setup_dir cri || return 0
	eng_note_host_paths /run/containerd/s /run/containerd/fifo /run/containerd
	export CRI_NETNS=agentrun-cri-${ENG_T##*.}
	echo "$CRI_NETNS" >"$ENG_T/netns"
	eng_netns_add "$CRI_NETNS"
	# A RuntimeClass of a platform's own: the profile "pods" (the agent
	# profile, whose names the gateway's resolver answers, and which lets
	# a pod's annotation open only web.test:8080).
	mkdir -p "$ENG_T/agentrun-config/profiles"
	echo "{\"extends\": \"agent\", \"network\": {\"upstream\": \"$NET.1\", \"annotationsMayAllow\": [\"web.test:8080\"]}}" \
		>"$ENG_T/agentrun-config/profiles/pods.json"
	ln -s agentrun "$ENG_T/bin/agentrun-pods"
	eng_cri_config "$PAUSE" "$NET" "$(pods_handler)"
	eng_start_daemon containerd env AGENTRUN_CONFIG_DIR="$ENG_T/agentrun-config" \
		nsenter --net="/run/netns/$CRI_NETNS" containerd --config "$ENG_T/config.toml"
	eng_wait_ready containerd "$ENG_DAEMON_PID" \
		ctr --address "$ENG_T/containerd.sock" version
	eng_containerd_image k8s.io "$I" \
		'{"Cmd": ["/bin/sh"], "Env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]}'
	# The pod's pause container: a shell that ends on TERM, as pause does.
	eng_containerd_image k8s.io "$PAUSE" \
		'{"Cmd": ["/bin/sh", "-c", "trap \"exit 0\" TERM INT; while :; do sleep 3600 & wait $!; done"], "Env": ["PATH=/bin"]}'
	# The test server the pods may or may not reach, in containerd's
	# netns: on the bridge's gateway address once the first pod made it.
	eng_listen "$ENG_DAEMON_PID" 0.0.0.0
}

# The handler agentrun-pods, as contrib/containerd/config.toml declares
# agentrun-agent: the profile by the binary's name.
pods_handler() {
	local t='plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentrun-pods'
	printf '%s\n' "[$t]" '  runtime_type = "io.containerd.runc.v2"' \
		'  pod_annotations = ["run.agentrun.*"]' '  container_annotations = ["run.agentrun.*"]' \
		"[$t.options]" "  BinaryName = \"$ENG_T/bin/agentrun-pods\"" \
		"  Root = \"$ENG_T/run/containerd/agentrun\"" \
		"  SystemdCgroup = $(eng_systemd_host && echo true || echo false)"
}

teardown_file() {
	if [ -n "${ENG_T:-}" ] && [ -S "$ENG_T/containerd.sock" ]; then
		local p
		# Every pod a test made, even one whose test failed half-way:
		# removing it is what takes its netns and cgroups with it.
		for p in $(cat "$ENG_T/pods" 2>/dev/null); do
			cri StopPodSandbox "{\"pod_sandbox_id\": \"$p\"}" >/dev/null 2>&1 || true
			cri RemovePodSandbox "{\"pod_sandbox_id\": \"$p\"}" >/dev/null 2>&1 || true
		done
	fi
	local ns=""
	[ -n "${ENG_T:-}" ] && [ -f "$ENG_T/netns" ] && ns=$(cat "$ENG_T/netns")
	eng_teardown_dir
	[ -z "$ns" ] || ip netns del "$ns" 2>/dev/null || true
}

# The pod's config: NAME HANDLER [ANNOTATIONS-JSON].
pod_config() {
	local cg
	if eng_systemd_host; then cg="agentrun_cri.slice"; else cg="/$ENG_CG/$1"; fi
	jq -cn --arg n "$1" --arg logs "$ENG_T/logs/$1" --arg cg "$cg" --argjson a "${3:-{\}}" '{
		metadata: {name: $n, uid: ($n + "-uid"), namespace: "agentrun-cri", attempt: 0},
		hostname: $n, log_directory: $logs, annotations: $a,
		labels: {"agentrun-test": "cri"},
		linux: {cgroup_parent: $cg}}'
}

# run_pod NAME HANDLER [ANNOTATIONS-JSON]: the pod's id in $POD, its
# config in $POD_CONFIG.
run_pod() {
	POD_CONFIG=$(pod_config "$1" "$2" "${3:-}")
	mkdir -p "$ENG_T/logs/$1"
	run cri RunPodSandbox "$(jq -cn --argjson c "$POD_CONFIG" --arg h "$2" '{config: $c, runtime_handler: $h}')"
	assert_success
	POD=$(jq -r .pod_sandbox_id <<<"$output")
	[ -n "$POD" ] && [ "$POD" != null ] || fail "no pod id: $output"
	echo "$POD" >>"$ENG_T/pods"
}

# create_container NAME CMD...: created in $POD; its id in $CTR. A pid
# namespace of its own (CONTAINER), as the kubelet asks by default;
# CTR_SECURITY (JSON) adds to the container's security_context,
# CTR_ANNOTATIONS (JSON) are the container's own annotations.
create_container() {
	local name=$1
	shift
	local cfg
	cfg=$(jq -cn --arg n "$name" --arg img "$I" --arg log "$name.log" --argjson sc "${CTR_SECURITY:-{\}}" \
		--argjson a "${CTR_ANNOTATIONS:-{\}}" '{
		metadata: {name: $n, attempt: 0}, image: {image: $img}, annotations: $a,
		command: $ARGS.positional, log_path: $log,
		envs: [{key: "PATH", value: "/usr/sbin:/usr/bin:/sbin:/bin"}],
		labels: {"agentrun-test": "cri"},
		linux: {security_context: ({namespace_options: {pid: 1}} + $sc)}}' --args -- "$@")
	run cri CreateContainer "$(jq -cn --arg p "$POD" --argjson c "$cfg" --argjson s "$POD_CONFIG" \
		'{pod_sandbox_id: $p, config: $c, sandbox_config: $s}')"
	assert_success
	CTR=$(jq -r .container_id <<<"$output")
}

# start_container NAME CMD...: created and started in $POD.
start_container() {
	create_container "$@"
	run cri StartContainer "{\"container_id\": \"$CTR\"}"
	assert_success
}

# exec_sync CMD...: ExecSync in $CTR; stdout, stderr, exit code as JSON.
exec_sync() {
	cri ExecSync "$(jq -cn --arg c "$CTR" '{container_id: $c, cmd: $ARGS.positional, timeout: 20}' --args -- "$@")"
}

# The handlers' state roots for pods (namespace k8s.io): the Root of
# contrib/containerd/config.toml's agentrun handlers, and the runc shim's
# default for runc, both moved below $ENG_T by eng_containerd_handlers.
agentrun_root() { echo "$ENG_T/run/containerd/agentrun/k8s.io"; }
runc_root() { echo "$ENG_T/run/containerd/runc/k8s.io"; }

# State files of the agentrun handlers' containers.
runtime_states() {
	find "$(agentrun_root)" -name state.json 2>/dev/null
}

container_state() {
	cri ContainerStatus "{\"container_id\": \"$1\"}" | jq -r .status.state
}

state_is() { [ "$(container_state "$1")" = "$2" ]; }

remove_pod() {
	run cri StopPodSandbox "{\"pod_sandbox_id\": \"$POD\"}"
	assert_success
	run cri RemovePodSandbox "{\"pod_sandbox_id\": \"$POD\"}"
	assert_success
}

# The whole life of a pod under HANDLER, as the kubelet leads it.
pod_lifecycle() {
	local h=$1 name=life-$1
	run_pod "$name" "$h"
	start_container app sh -c 'echo "hello from $(hostname)"; trap "echo term; exit 3" TERM; while :; do sleep 0.2; done'
	eng_wait 100 state_is "$CTR" CONTAINER_RUNNING || fail "not running: $(container_state "$CTR")"
	# agentrun's handlers keep the runtime's state under the suite's root.
	if [ "$h" != runc ]; then
		[ -n "$(runtime_states)" ] || fail "no state of the runtime under $(agentrun_root)"
	fi
	run exec_sync sh -c 'echo out; echo err >&2; exit 4'
	assert_success
	[ "$(jq -r .stdout <<<"$output")" = "out" ] || fail "exec stdout: $output"
	[ "$(jq -r .stderr <<<"$output")" = err ] || fail "exec stderr: $output"
	[ "$(jq -r .exit_code <<<"$output")" = 4 ] || fail "exec status: $output"
	# The log, in the CRI format: "TIME stdout F LINE".
	eng_wait 50 grep -q "stdout F hello from $name" "$ENG_T/logs/$name/app.log" \
		|| fail "log: $(cat "$ENG_T/logs/$name/app.log" 2>&1)"
	run cri StopContainer "{\"container_id\": \"$CTR\", \"timeout\": 10}"
	assert_success
	run cri ContainerStatus "{\"container_id\": \"$CTR\"}"
	assert_success
	[ "$(jq -r .status.state <<<"$output")" = CONTAINER_EXITED ] || fail "state: $output"
	[ "$(jq -r .status.exit_code <<<"$output")" = 3 ] || fail "exit code (TERM trapped): $output"
	grep -q "stdout F term" "$ENG_T/logs/$name/app.log" || fail "no term line in the log"
	run cri RemoveContainer "{\"container_id\": \"$CTR\"}"
	assert_success
	remove_pod
}

@test "cri: containerd's CRI plugin answers Version over the v1 API" {
	host_kind_neutral
	run cri Version '{"version": "v1"}'
	assert_success
	[ "$(jq -r .runtime_name <<<"$output")" = containerd ] || fail "$output"
	[ "$(jq -r .runtime_api_version <<<"$output")" = v1 ] || fail "$output"
}

@test "cri: a pod under the runc handler: sandbox, container, exec, log, stop, remove" {
	host_kind_neutral
	pod_lifecycle runc
}

@test "cri: a pod under the agentrun handler: the same, agentrun's state gone after" {
	pod_lifecycle agentrun
	[ -z "$(runtime_states)" ] || fail "runtime state left: $(runtime_states)"
}

# On a node runc's and agentrun's state roots differ (config.toml's Root):
# sharing runc's, `runc list` would report an error for each of agentrun's
# entries (its seccomp cache, its containers).
@test "cri: runc and agentrun-agent pods keep their state apart: runc list works, agentrun's containers are in its own root" {
	host_kind_neutral
	run_pod roots-runc runc
	start_container app sleep 600
	local runc_pod=$POD runc_ctr=$CTR
	eng_wait 100 state_is "$CTR" CONTAINER_RUNNING || fail "runc: $(container_state "$CTR")"
	# The agent profile: a seccomp filter, so agentrun's cache too.
	run_pod roots-agent agentrun-agent
	start_container app sleep 600
	eng_wait 100 state_is "$CTR" CONTAINER_RUNNING || fail "agentrun-agent: $(container_state "$CTR")"
	run --separate-stderr runc --root "$(runc_root)" list -q
	assert_success
	[ -z "$stderr" ] || fail "runc list: $stderr"
	assert_contains "$runc_pod"
	assert_contains "$runc_ctr"
	refute_contains "$POD"
	refute_contains "$CTR"
	run "$ENG_AGENTRUN" --root "$(agentrun_root)" list -q
	assert_success
	assert_contains "$POD"
	assert_contains "$CTR"
	refute_contains "$runc_ctr"
	remove_pod
	POD=$runc_pod
	remove_pod
}

# In a pod of HANDLER, two containers: what each execs of MEASURE.
two_containers_measure() {
	run_pod "net-$1" "$1"
	# The root's overlay: the agent profile's own keeps its upper layer in
	# a 1 GiB tmpfs, which is what df sees of /; the image's, the host disk.
	local measure='grep -E "^(Seccomp|NoNewPrivs):" /proc/self/status | tr -s "\t " " "; '
	measure+='[ "$(df -k / | awk "NR == 2 { print \$2 }")" = 1048576 ] && echo agent-overlay-root; '
	measure+="$ENG_GET $NET.1"
	local first
	start_container one sleep 600
	first=$CTR
	start_container two sleep 600
	for CTR in "$first" "$CTR"; do
		eng_wait 100 state_is "$CTR" CONTAINER_RUNNING || fail "not running"
		run exec_sync sh -c "$measure"
		assert_success
		jq -r .stdout <<<"$output"
	done
	remove_pod
}

@test "cri: a pod under agentrun-agent gets the agent profile: its overlay root, seccomp, no_new_privs, and both its containers' egress refused" {
	# A pod under runc reaches the test server: the test can fail.
	run two_containers_measure runc
	assert_success
	[ "$(grep -c reached <<<"$output")" = 2 ] || fail "runc pod: $output"
	refute_contains agent-overlay-root
	run two_containers_measure agentrun-agent
	assert_success
	[ "$(grep -c 'Seccomp: 2' <<<"$output")" = 2 ] || fail "no seccomp filter: $output"
	[ "$(grep -c 'NoNewPrivs: 1' <<<"$output")" = 2 ] || fail "no no_new_privs: $output"
	[ "$(grep -c refused <<<"$output")" = 2 ] || fail "egress not refused: $output"
	[ "$(grep -c agent-overlay-root <<<"$output")" = 2 ] || fail "no agent overlay root: $output"
	refute_contains reached
}

@test "cri: ReadOnlyRootfs under agentrun-agent: the root stays read-only over the overlay" {
	run_pod readonly agentrun-agent
	CTR_SECURITY='{"readonly_rootfs": true}' start_container ro sleep 600
	run exec_sync sh -c 'touch /x 2>&1; echo "touch $?"'
	assert_success
	assert_contains "Read-only file system"
	assert_contains "touch 1"
	start_container rw sleep 600
	run exec_sync sh -c 'touch /x && echo "touch $?"'
	assert_contains "touch 0"
	remove_pod
}

# What a container of the pod is, seen from inside.
IDENTITY='cat /proc/self/uid_map | tr -s " " | sed "s/^ //"; readlink /proc/self/ns/user; stat -c %u /bin/busybox; tr "\0" " " </proc/1/cmdline; echo; id -u'

@test "cri: an agentrun-agent pod is one user namespace, not the host's: agentrun's range is its root, the image root's, each container a pid namespace of its own" {
	run_pod userns agentrun-agent
	start_container one sleep 600
	local first=$CTR
	start_container two sleep 601
	local pause_pid seen=()
	pause_pid=$("$ENG_AGENTRUN" --root "$(agentrun_root)" state "$POD" | jq -r .pid)
	for CTR in "$first" "$CTR"; do
		eng_wait 100 state_is "$CTR" CONTAINER_RUNNING || fail "not running: $(container_state "$CTR")"
		run exec_sync sh -c "$IDENTITY"
		assert_success
		local out
		out=$(jq -r .stdout <<<"$output")
		echo "$out"
		mapfile -t seen <<<"$out"
		[ "${seen[0]%% *}" = 0 ] && [ "$(echo "${seen[0]}" | cut -d' ' -f2)" -ge 2147483648 ] \
			|| fail "root is not mapped to agentrun's range: ${seen[0]}"
		[ "${seen[1]}" = "$(readlink "/proc/$pause_pid/ns/user")" ] || fail "not the pod's user namespace: ${seen[1]}"
		[ "${seen[1]}" != "$(readlink /proc/self/ns/user)" ] || fail "the host's user namespace"
		[ "${seen[2]}" = 0 ] || fail "the image is not root's inside: ${seen[2]}"
		[[ "${seen[3]}" == "sleep 60"* ]] || fail "pid 1 is not the container's: ${seen[3]}"
		[ "${seen[4]}" = 0 ] || fail "not root inside: ${seen[4]}"
	done
	# From the host: the pod's processes run as the range, not as root.
	local uid
	uid=$(stat -c %u "/proc/$pause_pid")
	[ "$uid" -ge 2147483648 ] || fail "the pod's sandbox runs as host uid $uid"
	remove_pod
}

@test "cri: the RuntimeClass objects of contrib/kubernetes name handlers containerd has: a pod runs under each, by agentrun" {
	host_kind_neutral
	local h handlers
	handlers=$(awk '/^kind: RuntimeClass/ { rc = 1 } rc && /^handler:/ { print $2; rc = 0 }' \
		"$ENG_TOP/contrib/kubernetes/runtimeclass.yaml")
	[ "$(echo $handlers)" = "agentrun agentrun-agent" ] || fail "handlers in runtimeclass.yaml: $handlers"
	for h in $handlers; do
		run_pod "rc-$h" "$h"
		start_container app sleep 600
		eng_wait 100 state_is "$CTR" CONTAINER_RUNNING || fail "$h: $(container_state "$CTR")"
		[ -n "$(runtime_states)" ] || fail "$h: no agentrun state under $(agentrun_root)"
		remove_pod
	done
}

@test "cri: the pod annotation run.agentrun.timeout ends an agent pod's container in time, and not the pod" {
	host_kind_neutral
	run_pod timed agentrun-agent '{"run.agentrun.timeout": "4s"}'
	start_container app sleep 600
	eng_wait 250 state_is "$CTR" CONTAINER_EXITED || fail "still $(container_state "$CTR") after 25 s"
	run cri ContainerStatus "{\"container_id\": \"$CTR\"}"
	[ "$(jq -r .status.exit_code <<<"$output")" != 0 ] || fail "$output"
	# The limit is the work's, not the pod's: its pause container runs on.
	run cri PodSandboxStatus "{\"pod_sandbox_id\": \"$POD\"}"
	assert_success
	[ "$(jq -r .status.state <<<"$output")" = SANDBOX_READY ] || fail "pod: $output"
	run cri RemoveContainer "{\"container_id\": \"$CTR\"}"
	assert_success
	remove_pod
}

@test "cri: an agent pod lets in what run.agentrun.ingress names (probes, Services), from the node and other pods, and nothing else" {
	run_pod ingress agentrun-agent '{"run.agentrun.ingress": "8080"}'
	start_container web sh -c 'httpd -f -p 8080 -h /etc & httpd -f -p 8081 -h /etc & wait'
	eng_wait 100 state_is "$CTR" CONTAINER_RUNNING || fail "not running: $(container_state "$CTR")"
	local ip
	ip=$(cri PodSandboxStatus "{\"pod_sandbox_id\": \"$POD\"}" | jq -r .status.network.ip)
	[ -n "$ip" ] && [ "$ip" != null ] || fail "no pod ip"
	# The node (containerd's netns, where the kubelet's probes come from).
	local node=(nsenter --net="/run/netns/$CRI_NETNS")
	eng_wait 50 "${node[@]}" curl -sf -m 2 -o /dev/null "http://$ip:8080/hostname" \
		|| fail "port 8080 not reached from the node"
	run "${node[@]}" curl -sS -m 2 -o /dev/null "http://$ip:8081/hostname"
	assert_failure
	assert_contains "timed out"
	# Another pod (under runc, on the same bridge).
	local web_pod=$POD
	run_pod client runc
	start_container c sleep 600
	run exec_sync sh -c "printf 'GET /hostname HTTP/1.0\r\n\r\n' | nc -w 2 $ip 8080 | head -1"
	assert_success
	[[ "$(jq -r .stdout <<<"$output")" == HTTP/1* ]] || fail "port 8080 from another pod: $output"
	remove_pod
	POD=$web_pod
	remove_pod
}

@test "cri: a pod's run.agentrun.egress.allow holds for each of its containers; one asking for other egress is refused with the reason" {
	host_kind_neutral
	# The test host: a pod under runc serving 8080 on the bridge.
	run_pod egress-server runc
	start_container srv httpd -f -p 8080 -h /etc
	local server_pod=$POD srv
	srv=$(cri PodSandboxStatus "{\"pod_sandbox_id\": \"$POD\"}" | jq -r .status.network.ip)
	[ -n "$srv" ] && [ "$srv" != null ] || fail "no server pod ip"
	# A name too, so that the pod's resolver runs (one for the pod).
	run_pod egress agentrun-agent "{\"run.agentrun.egress.allow\": \"$srv:8080,registry.example\"}"
	local first
	start_container one sleep 600
	first=$CTR
	start_container two sleep 600
	for CTR in "$first" "$CTR"; do
		eng_wait 100 state_is "$CTR" CONTAINER_RUNNING || fail "not running: $(container_state "$CTR")"
		run exec_sync sh -c "$ENG_GET $srv; $ENG_GET $NET.1"
		assert_success
		[ "$(jq -r .stdout <<<"$output")" = "$(printf 'reached\nrefused')" ] || fail "$output"
	done
	# Narrower or wider, the pod's one filter could not hold it.
	CTR_ANNOTATIONS="{\"run.agentrun.egress.allow\": \"$srv:8080\"}" create_container narrow sleep 600
	run cri StartContainer "{\"container_id\": \"$CTR\"}"
	assert_failure
	assert_contains "annotation run.agentrun.egress.allow: the container asks for \`$srv:8080\`, its pod has \`$srv:8080,registry.example\`: a pod's containers share its network namespace and the pod's egress filter"
	run cri RemoveContainer "{\"container_id\": \"$CTR\"}"
	# The pod's containers still reach the server.
	CTR=$first
	run exec_sync sh -c "$ENG_GET $srv"
	[ "$(jq -r .stdout <<<"$output")" = reached ] || fail "after the refusal: $output"
	remove_pod
	POD=$server_pod
	remove_pod
}

@test "cri: an agent pod as a platform runs one: probed, behind a Service, its registry by name and nothing else; a pod asking for more than its RuntimeClass allows is refused" {
	command -v dnsmasq >/dev/null || skip "dnsmasq is not installed (contrib/install-deps.sh)"
	# The registry stand-in, a runc pod; web.test and evil.test both name
	# it, as sites behind one CDN edge do, in the gateway's resolver.
	run_pod registry runc
	start_container srv httpd -f -p 8080 -h /etc
	local registry_pod=$POD reg ip
	reg=$(cri PodSandboxStatus "{\"pod_sandbox_id\": \"$POD\"}" | jq -r .status.network.ip)
	local node=(nsenter --net="/run/netns/$CRI_NETNS")
	"${node[@]}" dnsmasq -C /dev/null --no-resolv --no-hosts --bind-interfaces \
		--listen-address="$NET.1" --port=53 --pid-file="$ENG_T/dnsmasq.pid" \
		--address=/web.test/"$reg" --address=/evil.test/"$reg"
	eng_track_pid "$(cat "$ENG_T/dnsmasq.pid")"

	# More than the RuntimeClass's profile lets a pod open: refused.
	mkdir -p "$ENG_T/logs/wide"
	run cri RunPodSandbox "$(jq -cn --argjson c "$(pod_config wide agentrun-pods '{"run.agentrun.egress.allow": "evil.test:8080"}')" \
		'{config: $c, runtime_handler: "agentrun-pods"}')"
	assert_failure
	assert_contains 'annotation run.agentrun.egress.allow: entry `evil.test:8080` is beyond what profile "pods" lets an annotation allow (network.allow and network.annotationsMayAllow)'

	# Port 80, as a web server's image has it: below 1024, which the
	# pod's user namespace could not bind in a netns the node made.
	run_pod agent agentrun-pods '{"run.agentrun.egress.allow": "web.test:8080", "run.agentrun.ingress": "80"}'
	start_container agent sh -c 'httpd -f -p 80 -h /etc & wait'
	eng_wait 100 state_is "$CTR" CONTAINER_RUNNING || fail "not running: $(container_state "$CTR")"
	ip=$(cri PodSandboxStatus "{\"pod_sandbox_id\": \"$POD\"}" | jq -r .status.network.ip)
	# The kubelet's liveness probe, from the node, once a second.
	eng_wait 50 "${node[@]}" curl -sf -m 2 -o /dev/null "http://$ip/hostname" || fail "never ready"
	local i
	for i in 1 2 3 4 5; do
		"${node[@]}" curl -sf -m 2 -o /dev/null "http://$ip/hostname" || fail "probe $i failed"
		sleep 1
	done
	# A Service: kube-proxy's DNAT from a cluster address, in the node's
	# netns (which goes, with the table, at the suite's teardown); the
	# node routes the service range as a cluster's default route would.
	"${node[@]}" ip route add 10.96.0.0/12 dev cni-ar0
	"${node[@]}" nft -f - <<-EOF
		table ip agentrun-svc {
			chain out { type nat hook output priority -100; ip daddr 10.96.0.10 tcp dport 80 dnat to $ip:80; }
		}
	EOF
	run "${node[@]}" curl -sf -m 2 "http://10.96.0.10/hostname"
	"${node[@]}" nft delete table ip agentrun-svc
	"${node[@]}" ip route del 10.96.0.0/12 dev cni-ar0
	assert_success
	assert_contains agent
	# The agent reaches its registry by name, and not that address by
	# another name.
	local get='get() { printf "GET /hostname HTTP/1.0\r\nHost: $2\r\n\r\n" | nc -w 3 "$1" 8080 2>/dev/null | grep -q "^HTTP/1" && echo reached || echo refused; }'
	run exec_sync sh -c "$get; get web.test web.test; get web.test evil.test; get $NET.1 x"
	assert_success
	[ "$(jq -r .stdout <<<"$output")" = "$(printf 'reached\nrefused\nrefused')" ] || fail "$output"
	run cri ContainerStatus "{\"container_id\": \"$CTR\"}"
	[ "$(jq -r .status.state <<<"$output")" = CONTAINER_RUNNING ] || fail "the agent did not stay up: $output"
	kill "$(cat "$ENG_T/dnsmasq.pid")"
	remove_pod
	POD=$registry_pod
	remove_pod
}

@test "cri: a hostNetwork pod under agentrun-agent is refused with the reason; under agentrun it runs" {
	local cfg
	cfg=$(pod_config hostnet agentrun-agent | jq -c '.linux.security_context.namespace_options.network = 2')
	mkdir -p "$ENG_T/logs/hostnet"
	run cri RunPodSandbox "$(jq -cn --argjson c "$cfg" '{config: $c, runtime_handler: "agentrun-agent"}')"
	assert_failure
	assert_contains "the agent profile needs the pod's own network namespace (hostNetwork: true): use RuntimeClass agentrun for host-network pods"
	# As the kubelet makes it: the node's hostname, not one of its own.
	cfg=$(pod_config hostnet2 agentrun | jq -c '.linux.security_context.namespace_options.network = 2 | del(.hostname)')
	mkdir -p "$ENG_T/logs/hostnet2"
	run cri RunPodSandbox "$(jq -cn --argjson c "$cfg" '{config: $c, runtime_handler: "agentrun"}')"
	assert_success
	POD=$(jq -r .pod_sandbox_id <<<"$output")
	echo "$POD" >>"$ENG_T/pods"
	remove_pod
}

@test "cri: under agentrun-agent, capabilities a container adds are refused with the reason; the defaults run" {
	run_pod caps agentrun-agent
	CTR_SECURITY='{"capabilities": {"add_capabilities": ["NET_ADMIN"]}}' create_container admin sleep 600
	run cri StartContainer "{\"container_id\": \"$CTR\"}"
	assert_failure
	assert_contains "process.capabilities: the agent profile does not grant CAP_NET_ADMIN (privileged or capabilities.add): use the runtime agentrun, which applies no profile"
	run cri RemoveContainer "{\"container_id\": \"$CTR\"}"
	start_container plain sleep 600
	eng_wait 100 state_is "$CTR" CONTAINER_RUNNING || fail "defaults: $(container_state "$CTR")"
	remove_pod
}

@test "cri: an unknown runtime handler is refused by name" {
	host_kind_neutral
	run cri RunPodSandbox "$(jq -cn --argjson c "$(pod_config nohandler x)" '{config: $c, runtime_handler: "no-such-handler"}')"
	assert_failure
	assert_contains no-such-handler
}
