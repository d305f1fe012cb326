#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kubernetes' CRI validation suite (critest, from kubernetes-sigs/cri-tools)
# against a private containerd's CRI plugin, with runtime handler runc,
# then agentrun, then agentrun-agent (the agent profile), side by side.
#
#   tests/cri/critest.sh [CRITEST]      (or CRITEST=/path/to/critest)
#
# CRITEST is a critest binary built from a cri-tools release (v1.26.1 was
# used; see docs/engines.md); crictl from the same build must sit beside it
# or be named by $CRICTL (the teardown removes leftover pods through it).
# Without a critest this prints why it was skipped and exits 0: a fresh
# machine cannot fetch cri-tools. Needs root and a built ./agentrun (or
# AGENTRUN=/path), and Debian's containerd, containernetworking-plugins,
# iptables (hostPort), docker-registry, catatonit, curl, jq,
# busybox-static and a C compiler with a static libc (libc6-dev); the
# images also take Debian's busybox package, fetched with apt-get download.
#
# What it sets up, all under one temp dir (/tmp/agentrun-engines/critest.XXXXXX)
# and in a network namespace of its own, so that nothing reaches the
# host's network: containerd (the same config as tests/engines/cri.bats:
# CNI bridge, contrib/containerd/config.toml's handlers), a registry
# (Debian's docker-registry, on 127.0.0.1:5000 inside the namespace) that
# containerd's hosts.toml makes the only host behind registry.k8s.io and
# gcr.io, and critest's images built here from Debian binaries and pushed
# to it (see push_images). critest runs in the namespace too: it fetches
# pages from the pods and the stream server itself.
#
# critest's --registry-prefix is not used: it drops the image's tag or
# digest (it keeps reference.Path only) and then creates containers by the
# image's original name, which containerd would not have. With hosts.toml
# the images keep their own names and tags.
#
# Exit status: 0 when every test agentrun fails, runc fails too, and every
# one agentrun-agent fails beyond runc's is a refusal AGENT_REFUSED names;
# 1 otherwise (they are listed); 2 on a set-up error. CRITEST_KEEP=1 keeps the temp dir (logs, junit reports);
# CRITEST_FOCUS=REGEXP runs only the tests it matches (ginkgo's focus).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../engines/eng.bash
source "$HERE/../engines/eng.bash"

NET=10.88.0
REG=127.0.0.1:5000
PAUSE=registry.k8s.io/pause:3.6
HANDLERS=(runc agentrun agentrun-agent)
# How long one handler's run of the suite may take.
RUN_TIMEOUT=${CRITEST_TIMEOUT:-2400}

# Tests left out, each for a reason that is no runtime's (ginkgo regexps).
SKIPS=(
	# Its reference is a digest of the upstream image's manifest, which
	# cannot be rebuilt here: no local image can have that digest.
	'public image with digest should be pulled and removed'
)

# Under agentrun-agent (the agent profile), the tests that fail where
# runc passes, each for a refusal or a rule the profile documents
# (docs/engines.md, "What a pod asks for"): "ginkgo name regexp::why".
AGENT_REFUSED=(
	'HostNetwork is true|portforward in host network::the agent profile needs the pod'"'"'s own network namespace: hostNetwork is refused'
	'Privileged is true|adding ALL capabilities|adding capability|with SYS_ADMIN|and SYS_ADMIN|when privileged|Mount Propagation::privileged or added capabilities are refused by name (process.capabilities: the agent profile does not grant CAP_…)'
	'seccomp unconfined on the container|seccomp default which is unconfined::the profile'"'"'s seccomp filter applies: a pod'"'"'s Unconfined comes as a spec without linux.seccomp, as from a pod that says nothing (the kubelet'"'"'s default)'
	'NoNewPrivs should allow privilege escalation when false::the profile sets no_new_privileges: allowPrivilegeEscalation comes as no_new_privs false, as from a pod that says nothing (the kubelet'"'"'s default)'
	'port mapping with|multiple containers in a pod should support network|should support portforward \[Conformance\]::inbound connections reach only the ports run.agentrun.ingress names, and critest names none (a pod'"'"'s port mappings reach CNI, not the runtime)'
)

die() { echo "critest.sh: $*" >&2; exit 2; }
skip() { echo "critest.sh: skipped: $*"; exit 0; }

# ---------------------------------------------------------------- checks

find_tools() {
	CRITEST=${1:-${CRITEST:-}}
	[ -n "$CRITEST" ] || skip "no critest given (argument or \$CRITEST): build one from a cri-tools release, see docs/engines.md"
	[ -x "$CRITEST" ] || skip "no critest at $CRITEST"
	CRITEST=$(cd "$(dirname "$CRITEST")" && pwd)/$(basename "$CRITEST")
	CRICTL=${CRICTL:-$(dirname "$CRITEST")/crictl}
	[ -x "$CRICTL" ] || skip "no crictl beside critest or in \$CRICTL (build it from the same tree)"
	[ "$(id -u)" -eq 0 ] || die "run as root: containerd and the pods need it"
	local c
	for c in containerd containerd-shim-runc-v2 ctr docker-registry catatonit curl jq nsenter ip busybox cc iptables; do
		command -v "$c" >/dev/null || skip "$c is not installed (see the list at the top of $0)"
	done
	[ -x "$(eng_cni_bin_dir)/bridge" ] || skip "no CNI plugins (apt-get install containernetworking-plugins)"
	AGENTRUN_SRC=${AGENTRUN:-$ENG_TOP/agentrun}
	[ -x "$AGENTRUN_SRC" ] || die "no agentrun binary at $AGENTRUN_SRC: build it first (make)"
}

# ---------------------------------------------------------------- set-up

# The temp dir sits two levels below /tmp (eng_make_dir): TOP holds the
# suite's dir (ENG_T, the daemons' roots) and critest's own TMPDIR side by
# side, and everything mounted below TOP is ours to unmount.
make_dirs() {
	TOP=$(eng_make_dir critest)
	# Containers running as other users reach bind-mounted temp dirs.
	chmod 0755 "$TOP"
	ENG_T=$TOP/run
	mkdir -p "$ENG_T" "$TOP/tmp"
	export ENG_T
	eng_prepare_dir "$AGENTRUN_SRC" "agentrun-${TOP##*/}"
	NETNS=${TOP##*/}
	NETNS=agentrun-critest-${NETNS##*.}
	# A command in the suite's network namespace; nsenter execs it, so a
	# daemon's pid is nsenter's.
	IN_NS=(nsenter --net="/run/netns/$NETNS")
	: >"$ENG_T/ids"
}

# containerd resolves registry.k8s.io and gcr.io to the local registry
# only: with `server` set to it, no request goes to the real hosts.
write_hosts_toml() {
	local h
	for h in registry.k8s.io gcr.io; do
		mkdir -p "$ENG_T/certs.d/$h"
		printf 'server = "http://%s"\n\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' \
			"$REG" "$REG" >"$ENG_T/certs.d/$h/hosts.toml"
	done
}

start_registry() {
	cat >"$ENG_T/registry.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $ENG_T/registry
http:
  addr: $REG
EOF
	eng_start_daemon registry "${IN_NS[@]}" docker-registry serve "$ENG_T/registry.yml"
	eng_wait_ready registry "$ENG_DAEMON_PID" "${IN_NS[@]}" curl -sf "http://$REG/v2/"
}

start_containerd() {
	# The registry's hosts (every handler's state root is under $ENG_T
	# already: eng_containerd_handlers).
	eng_cri_config "$PAUSE" "$NET" "$(printf '%s\n' \
		'[plugins."io.containerd.grpc.v1.cri".registry]' \
		"  config_path = \"$ENG_T/certs.d\"")"
	write_hosts_toml
	eng_start_daemon containerd "${IN_NS[@]}" containerd --config "$ENG_T/config.toml"
	eng_wait_ready containerd "$ENG_DAEMON_PID" \
		ctr --address "$ENG_T/containerd.sock" version
}

# ---------------------------------------------------------------- images

# A tar of the files under DIR (owners kept numeric) as OUT: one layer.
layer_of() {
	tar -C "$1" --numeric-owner -cf "$2" .
}

# push_image REF CONFIG LAYER...: an image of those layers, pushed to the
# local registry under REF's path and tag through the registry API v2
# (each blob by POST then PUT, then the manifest).
push_image() {
	local ref=$1 config=$2 d
	shift 2
	local path=${ref#*/} tag
	tag=${path##*:}
	path=${path%:*}
	d=$(mktemp -d "$ENG_T/oci.XXXXXX")
	eng_oci_layout "$d" "$ref" "$config" "$@"
	local m b
	m=$(jq -r '.manifests[0].digest' "$d/index.json")
	for b in $(jq -r '.config.digest, .layers[].digest' "$d/blobs/sha256/${m#sha256:}"); do
		push_blob "$path" "$d/blobs/sha256/${b#sha256:}" "$b"
	done
	"${IN_NS[@]}" curl -sf -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
		--data-binary "@$d/blobs/sha256/${m#sha256:}" "http://$REG/v2/$path/manifests/$tag" >/dev/null \
		|| die "pushing the manifest of $ref failed"
	rm -rf "$d"
}

push_blob() {
	local path=$1 file=$2 digest=$3 loc
	"${IN_NS[@]}" curl -sf -I "http://$REG/v2/$path/blobs/$digest" >/dev/null && return 0
	loc=$("${IN_NS[@]}" curl -sf -X POST -D - -o /dev/null "http://$REG/v2/$path/blobs/uploads/" \
		| tr -d '\r' | awk 'tolower($1) == "location:" { print $2 }')
	[ -n "$loc" ] || die "no upload location for $path"
	case $loc in http*) ;; *) loc=http://$REG$loc ;; esac
	"${IN_NS[@]}" curl -sf -X PUT -H 'Content-Type: application/octet-stream' --data-binary "@$file" \
		"$loc&digest=$digest" >/dev/null || die "pushing blob $digest to $path failed"
}

# What busybox's own images have and the project's rootfs has not:
# a shell that runs applets by exec'ing them from /bin (critest masks
# /bin/ls and expects sh's "Permission denied"; busybox-static's shell
# runs applets in-process, so Debian's dynamically linked busybox is used
# when apt-get can download it, with the host's libc), applets as hard
# links (masking /bin/ls must not mask the busybox that /bin/sh is), its
# /etc/passwd and /etc/group (the tests look up www-data and nobody, and
# count a user's groups), and the two applets Debian's busybox lacks, as
# small scripts that read what the real ones read: pgrep (process names)
# and ipcs -m (this IPC namespace's shared memory segments).
busybox_layers() {
	local L=$1
	cp -a "$ENG_T/rootfs" "$L/bb"
	exec_busybox "$L" "$L/bb" \
		|| echo "critest.sh: no Debian busybox package to download: busybox-static's shell in the images (the MaskedPaths test fails)"
	local f
	for f in "$L"/bb/bin/*; do
		case $(readlink "$f") in busybox | /bin/busybox) ln -f "$L/bb/bin/busybox" "$f" ;; esac
	done
	layer_of "$L/bb" "$L/bb.tar"
	mkdir -p "$L/up/etc" "$L/up/usr/bin"
	printf '%s\n' root:x:0:0:root:/root:/bin/sh daemon:x:1:1:daemon:/usr/sbin:/bin/false \
		bin:x:2:2:bin:/bin:/bin/false sys:x:3:3:sys:/dev:/bin/false sync:x:4:100:sync:/bin:/bin/sync \
		mail:x:8:8:mail:/var/spool/mail:/bin/false www-data:x:33:33:www-data:/var/www:/bin/false \
		operator:x:37:37:Operator:/var:/bin/false nobody:x:65534:65534:nobody:/home:/bin/false \
		>"$L/up/etc/passwd"
	printf '%s\n' root:x:0: daemon:x:1: bin:x:2: sys:x:3: adm:x:4: tty:x:5: disk:x:6: lp:x:7: \
		mail:x:8: kmem:x:9: wheel:x:10:root cdrom:x:11: dialout:x:18: floppy:x:19: video:x:28: \
		audio:x:29: tape:x:32: www-data:x:33: operator:x:37: staff:x:50: users:x:100: nogroup:x:65534: \
		>"$L/up/etc/group"
	cat >"$L/up/usr/bin/pgrep" <<'EOF'
#!/bin/sh
# pgrep PATTERN: the pids whose process name matches (a stand-in).
st=1
for d in /proc/[0-9]*; do
	[ "${d#/proc/}" != $$ ] && grep -qE -- "$1" "$d/comm" 2>/dev/null && { echo "${d#/proc/}"; st=0; }
done
exit $st
EOF
	cat >"$L/up/usr/bin/ipcs" <<'EOF'
#!/bin/sh
# ipcs [-m]: the shared memory segments of this IPC namespace (a stand-in).
echo "------ Shared Memory Segments --------"
echo "key        shmid      owner      perms      bytes      nattch"
awk 'NR > 1 { printf "0x%08x %-10s %-10s %-10s %-10s %s\n", $1 < 0 ? $1 + 4294967296 : $1, $2, $8, $3, $4, $7 }' /proc/sysvipc/shm
EOF
	chmod 0755 "$L/up/usr/bin/pgrep" "$L/up/usr/bin/ipcs"
	layer_of "$L/up" "$L/up.tar"
}

# Debian's busybox package (apt-get download: it conflicts with
# busybox-static, so it is not installed) as ROOTFS's /bin/busybox, with
# the libraries it links from the host's libc6.
exec_busybox() {
	local d=$1/deb rootfs=$2 lib
	mkdir -p "$d"
	(cd "$d" && apt-get download -q busybox >/dev/null 2>&1) || return 1
	dpkg-deb -x "$d"/busybox_*.deb "$d/x" || return 1
	install -m 0755 "$d/x/bin/busybox" "$rootfs/bin/busybox"
	for lib in $(ldd "$d/x/bin/busybox" | grep -oE '/[^ ]+\.so[^ ]*'); do
		mkdir -p "$rootfs$(dirname "$lib")"
		cp -L "$lib" "$rootfs$lib"
	done
}

# A web server standing in for nginx: busybox httpd on PORT, run by a
# shell whose name is "nginx" (pidof finds it), whose command line says
# "master process" as nginx's does, and which writes /var/run/nginx.pid.
nginx_config() {
	jq -cn --arg port "$1" '{Env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], StopSignal: "SIGTERM",
		Cmd: ["/bin/sh", "-c", ("printf nginx >/proc/self/comm; mkdir -p /var/run; echo $$ >/var/run/nginx.pid; "
			+ "httpd -f -p " + $port + " -h /usr/share/nginx/html & trap \"kill $!; exit 0\" TERM INT QUIT; wait"),
			"nginx: master process nginx -g daemon off;"]}'
}

# Each image critest pulls, by the name it pulls it by. The base is the
# project's busybox rootfs (images/busybox.sh) made like busybox's own
# image (busybox_layers); small layers on top give each image what its
# upstream Dockerfile adds.
push_images() {
	local L=$ENG_T/layers env='"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]'
	local sh_cfg="{$env, \"Cmd\": [\"sh\"]}"
	mkdir -p "$L"/www/usr/share/nginx/html "$L"/www/usr/local/apache2/htdocs "$L"/nnp/usr/local/bin "$L"/group/etc
	busybox_layers "$L"
	local base=("$L/bb.tar" "$L/up.tar")
	echo '<html><body>It works!</body></html>' \
		| tee "$L/www/usr/share/nginx/html/index.html" >"$L/www/usr/local/apache2/htdocs/index.html"
	layer_of "$L/www" "$L/www.tar"

	push_image "$PAUSE" '{"Entrypoint": ["/catatonit", "-P"]}' "$(catatonit_layer "$L")"
	push_image registry.k8s.io/e2e-test-images/busybox:1.29-2 "$sh_cfg" "${base[@]}"
	push_image registry.k8s.io/e2e-test-images/nginx:1.14-2 "$(nginx_config 80)" "${base[@]}" "$L/www.tar"
	push_image gcr.io/k8s-staging-cri-tools/hostnet-nginx-amd64:latest "$(nginx_config 12003)" "${base[@]}" "$L/www.tar"
	# Apache's image: the test reads its start-up line from the log.
	push_image registry.k8s.io/e2e-test-images/httpd:2.4.39-4 "$(jq -cn '{Env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"],
		Cmd: ["/bin/sh", "-c", "echo \"[core:notice] [pid $$] AH00094: Command line: '"'"'httpd -D FOREGROUND'"'"'\" >&2; httpd -f -p 80 -h /usr/local/apache2/htdocs & trap \"kill $!; exit 0\" TERM INT; wait"]}')" \
		"${base[@]}" "$L/www.tar"
	# A setuid-root program that prints its effective uid.
	cc -static -Os -o "$L/nnp/usr/local/bin/nnp" "$HERE/nnp.c"
	chmod 4755 "$L/nnp/usr/local/bin/nnp"
	layer_of "$L/nnp" "$L/nnp.tar"
	push_image registry.k8s.io/e2e-test-images/nonewprivs:1.3 "{$env, \"Entrypoint\": [\"/usr/local/bin/nnp\"]}" "${base[@]}" "$L/nnp.tar"

	local r=gcr.io/k8s-staging-cri-tools u
	for u in test-image-user-uid=1002 test-image-user-username=www-data \
		test-image-user-uid-group=1003:1004 test-image-user-username-group=www-data:1004; do
		push_image "$r/${u%%=*}:latest" "{$env, \"Cmd\": [\"sh\"], \"User\": \"${u#*=}\"}" "${base[@]}"
	done
	# default-user (1000) in group-defined-in-image (50000), and in no other.
	cp "$L/up/etc/passwd" "$L/up/etc/group" "$L/group/etc/"
	echo 'default-user:x:1000:1000:Linux User,,,:/home/default-user:/bin/sh' >>"$L/group/etc/passwd"
	printf '%s\n' default-user:x:1000: group-defined-in-image:x:50000:default-user >>"$L/group/etc/group"
	layer_of "$L/group" "$L/group.tar"
	push_image "$r/test-image-predefined-group:latest" "{$env, \"Cmd\": [\"sh\"], \"User\": \"1000\"}" \
		"${base[@]}" "$L/group.tar"

	# Images that are only pulled, listed and removed: each adds a file
	# named after itself, so different names are different images; the
	# three tags of test-image-tags are one image.
	local n
	for n in test-image-1 test-image-2 test-image-3 test-image-latest same-image test-image-tag-test test-image-tag-all; do
		mkdir -p "$L/t-$n"
		: >"$L/t-$n/$n"
		layer_of "$L/t-$n" "$L/t-$n.tar"
	done
	for n in test-image-1 test-image-2 test-image-3 test-image-latest; do
		push_image "$r/$n:latest" "$sh_cfg" "${base[@]}" "$L/t-$n.tar"
	done
	for n in 1 2 3; do
		push_image "$r/test-image-tags:$n" "$sh_cfg" "${base[@]}" "$L/t-same-image.tar"
	done
	for n in test all; do
		push_image "$r/test-image-tag:$n" "$sh_cfg" "${base[@]}" "$L/t-test-image-tag-$n.tar"
	done
}

# Debian's catatonit (static) in pause mode, as the pod's pause image.
catatonit_layer() {
	mkdir -p "$1/pause"
	install -m 0755 "$(command -v catatonit)" "$1/pause/catatonit"
	layer_of "$1/pause" "$1/pause.tar"
	echo "$1/pause.tar"
}

# ---------------------------------------------------------------- running

# run_critest HANDLER: the suite with pods of that handler; ginkgo's
# output in $ENG_T/critest-HANDLER.log, junit in junit-HANDLER.xml.
run_critest() {
	local h=$1 args=() s
	for s in "${SKIPS[@]}"; do
		args+=("--ginkgo.skip=$s")
	done
	[ -z "${CRITEST_FOCUS:-}" ] || args+=("--ginkgo.focus=$CRITEST_FOCUS")
	echo "==== critest --runtime-handler=$h"
	# critest's own temp dirs (volumes, pod logs, seccomp profiles) under
	# TOP; it runs in the netns, where the pods and stream server are.
	sample_states "$h" &
	local sampler=$!
	eng_track_pid "$sampler"
	TMPDIR=$TOP/tmp timeout --kill-after=30 "$RUN_TIMEOUT" "${IN_NS[@]}" "$CRITEST" \
		--runtime-endpoint "unix://$ENG_T/containerd.sock" \
		--image-endpoint "unix://$ENG_T/containerd.sock" \
		--runtime-handler="$h" --ginkgo.no-color \
		--ginkgo.junit-report="$ENG_T/junit-$h.xml" "${args[@]}" \
		</dev/null >"$ENG_T/critest-$h.log" 2>&1 &
	# In the background, so that INT or TERM reach the trap at once.
	CRITEST_PID=$!
	wait "$CRITEST_PID" || true
	CRITEST_PID=
	kill "$sampler" 2>/dev/null || true
	wait "$sampler" 2>/dev/null || true
	echo "containers whose state was seen under runc's root: $(sort -u "$ENG_T/seen-runc-$h" | wc -l)," \
		"under agentrun's: $(sort -u "$ENG_T/seen-agentrun-$h" | wc -l)"
	summary "$h"
	remove_pods
}

# Each second of HANDLER's run, the containers whose state runc's root
# and agentrun's root hold: which binary the handler really reached.
sample_states() {
	: >"$ENG_T/seen-runc-$1"
	: >"$ENG_T/seen-agentrun-$1"
	while sleep 1; do
		ls "$ENG_T/run/containerd/runc/k8s.io" >>"$ENG_T/seen-runc-$1" 2>/dev/null || true
		ls "$ENG_T/run/containerd/agentrun/k8s.io" >>"$ENG_T/seen-agentrun-$1" 2>/dev/null || true
	done
}

# The run's failures and its counts line ("Ran N of M Specs" and the
# "Passed | Failed | Pending | Skipped" line), from ginkgo's output.
summary() {
	local log=$ENG_T/critest-$1.log
	sed -n '/^Summarizing [0-9]* Failure/,/^Ran [0-9]* of/p' "$log" | grep -E '^\s*\[(FAIL|PANICKED|TIMEDOUT)\]|^Ran ' \
		|| grep -E '^Ran [0-9]+ of' "$log" || echo "(no summary: see the end of $log)"
	grep -E '^(SUCCESS|FAIL)! .*Passed' "$log" || tail -n 5 "$log"
	failed_tests "$1" >"$ENG_T/failed-$1"
}

# The names of the tests that failed in HANDLER's run, one a line.
failed_tests() {
	sed -n '/^Summarizing [0-9]* Failure/,/^Ran [0-9]* of/p' "$ENG_T/critest-$1.log" \
		| sed -n -E 's/^\s*\[(FAIL|PANICKED|TIMEDOUT)\] (.*)$/\2/p' | sed -E 's/ \[(It|BeforeEach|AfterEach|JustBeforeEach)\]//' \
		| sort -u
}

# N from "N Passed" (and Failed, Skipped) on ginkgo's counts line.
count() {
	grep -E '^(SUCCESS|FAIL)! .*Passed' "$ENG_T/critest-$1.log" | grep -oE "[0-9]+ $2" | cut -d' ' -f1 || echo '?'
}

# ---------------------------------------------------------------- teardown

# What the host had before, so the teardown removes only what this run
# added: containerd 1.6's fixed paths under /run/containerd, SysV shared
# memory segments, the k8s.io cgroups.
note_host_state() {
	eng_note_host_paths /run/containerd/s /run/containerd/fifo /run/containerd
	shm_segments >"$ENG_T/shm-before"
	compgen -G '/sys/fs/cgroup/*/k8s.io' >/dev/null || [ -d /sys/fs/cgroup/k8s.io ] \
		|| : >"$ENG_T/k8s-cgroup-new"
}

# Every pod still in containerd (a test that failed half-way leaves its
# own): removing it through the CRI is what takes its netns (under
# /run/netns) and cgroups with it. Their ids are kept for the cgroup sweep.
remove_pods() {
	[ -S "$ENG_T/containerd.sock" ] || return 0
	local c=(eng_run "$CRICTL" --runtime-endpoint "unix://$ENG_T/containerd.sock" --timeout 30s) p
	"${c[@]}" ps -aq --no-trunc >>"$ENG_T/ids" 2>/dev/null || true
	for p in $("${c[@]}" pods -q --no-trunc 2>/dev/null); do
		echo "$p" >>"$ENG_T/ids"
		"${c[@]}" stopp "$p" >/dev/null 2>&1 || true
		"${c[@]}" rmp -f "$p" >/dev/null 2>&1 || true
	done
}

# critest's HostIpc tests make a SysV shared memory segment in the host's
# IPC namespace (ipcmk -M 1048576) and never remove it: the ones of that
# size, attached nowhere, that were not there before the run go at the end.
shm_segments() {
	awk 'NR > 1 && $4 == 1048576 && $7 == 0 { print $2 }' /proc/sysvipc/shm | sort
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	# Every step is tried, whatever the one before did.
	set +e
	[ -n "${ENG_T:-}" ] && [ -d "$ENG_T" ] || exit "$rc"
	# A run cut short: critest first, so that it makes no more pods.
	[ -z "${CRITEST_PID:-}" ] || eng_stop_pid "$CRITEST_PID"
	remove_pods
	eng_cleanup_dir
	eng_unmount_all "$TOP"
	# With no cgroup parent from the CRI (critest gives none) containerd
	# puts a container in /k8s.io/ID; the parent goes too when this run
	# made it (rmdir: only when empty).
	local ids
	mapfile -t ids < <(sort -u "$ENG_T/ids" | sed 's|^|k8s.io/|')
	[ ${#ids[@]} -eq 0 ] || eng_remove_cgroups "${ids[@]}"
	if [ -f "$ENG_T/k8s-cgroup-new" ]; then
		rmdir /sys/fs/cgroup/*/k8s.io /sys/fs/cgroup/k8s.io 2>/dev/null || true
	fi
	ip netns del "$NETNS" 2>/dev/null || true
	local id
	[ -f "$ENG_T/shm-before" ] || : >"$ENG_T/shm-before"
	for id in $(comm -13 "$ENG_T/shm-before" <(shm_segments)); do
		ipcrm -m "$id" || true
	done
	if [ "${CRITEST_KEEP:-0}" = 1 ]; then
		echo "critest.sh: kept $TOP"
	else
		rm -rf "$TOP" 2>/dev/null || { sleep 1; eng_unmount_all "$TOP"; rm -rf "$TOP"; }
		eng_remove_parent
	fi
	exit "$rc"
}

# ---------------------------------------------------------------- main

main() {
	find_tools "$@"
	make_dirs
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	note_host_state
	eng_netns_add "$NETNS"
	start_registry
	push_images
	start_containerd
	echo "critest $("$CRITEST" --version 2>/dev/null | sed -n 's/^critest version: //p')," \
		"containerd $(containerd --version | awk '{print $3}'), runc $(runc --version | awk 'NR == 1 {print $3}')," \
		"agentrun $("$ENG_AGENTRUN" --version | sed -n 's/^commit: //p') ($AGENTRUN_SRC)"
	local h
	for h in "${HANDLERS[@]}"; do
		run_critest "$h"
	done
	report
}

# The reason AGENT_REFUSED gives for test NAME; none: status 1.
agent_reason() {
	local r
	for r in "${AGENT_REFUSED[@]}"; do
		if grep -qE -- "${r%%::*}" <<<"$1"; then
			echo "${r#*::}"
			return 0
		fi
	done
	return 1
}

# Every run's counts on one line; agentrun's failures that runc has not
# (none expected), and agentrun-agent's, each with the reason the profile
# documents for it (one without is a failure).
report() {
	local only name why unexplained=0
	only=$(comm -13 "$ENG_T/failed-runc" "$ENG_T/failed-agentrun")
	echo "==== failed with agentrun, passed with runc:"
	echo "${only:-(none)}"
	echo "==== failed with agentrun-agent, passed with runc, and why:"
	while IFS= read -r name; do
		[ -n "$name" ] || continue
		if why=$(agent_reason "$name"); then
			echo "$name: $why"
		else
			echo "$name: NO DOCUMENTED REASON"
			unexplained=$((unexplained + 1))
		fi
	done < <(comm -13 "$ENG_T/failed-runc" "$ENG_T/failed-agentrun-agent")
	echo "==== agentrun-agent's refusals, as the test log shows them:"
	grep -ohE "(annotation run\.agentrun|process\.capabilities: the agent profile|the agent profile needs)[^\"]*" \
		"$ENG_T/critest-agentrun-agent.log" | sort | uniq -c || echo "(none)"
	local h line="critest:"
	for h in "${HANDLERS[@]}"; do
		line+=" $h $(count "$h" Passed) passed, $(count "$h" Failed) failed, $(count "$h" Skipped) skipped;"
	done
	echo "${line%;}"
	[ -z "$only" ] && [ "$unexplained" -eq 0 ]
}

main "$@"
