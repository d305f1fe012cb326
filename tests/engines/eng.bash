# SPDX-License-Identifier: Apache-2.0
# The engine suites' shell-only pieces, sourced by lib.bash (the bats
# suites) and by plain scripts (tests/cri/critest.sh, bench/engine.sh): a
# private temp dir with the runtime under test and the project's busybox
# rootfs, a user for rootless Podman, daemons started and stopped by pid,
# a containerd config with the CRI plugin and
# agentrun's handlers, OCI images made locally, and a teardown that leaves
# the host as it was. Nothing here uses bats; what does stays in lib.bash.
#
# Environment:
#   AGENTRUN      runtime under test (default: ./agentrun at the top of the
#                 tree). It is copied into the temp dir so a rebuild in the
#                 middle of a run does not swap the binary under a daemon.
#   ENG_TIMEOUT   seconds one engine command may take (default 60).

ENG_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../binaries.bash
source "$ENG_TOP/tests/binaries.bash"
ENG_TIMEOUT=${ENG_TIMEOUT:-60}
ENG_IMAGE_TAG=agentrun-busybox:test
# containerd namespace (Docker's and ctr's): names everything we make.
ENG_NS=agentrun-test

# Run a command with a time limit and no stdin (engines that attach stdin
# would otherwise eat the test's).
eng_run() {
	timeout --kill-after=5 "$ENG_TIMEOUT" "$@" </dev/null
}

# Retry a condition for up to N tenths of a second. The condition is run
# anew each time: pass a function, not an expanded `test "$(...)"`.
eng_wait() {
	local tries=$1
	shift
	while ! "$@" 2>/dev/null; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.1
	done
}

# The host kind: systemd as init and cgroup v2 only, where Docker, Podman
# and the kubelet use the systemd cgroup driver (the test VM, tests/vm/),
# or not (this development machine: cgroupfs).
eng_systemd_host() {
	[ -d /run/systemd/system ] && [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]
}

# ---------------------------------------------------------------- setup

# Every suite's temp dir goes under this parent, two levels below /tmp:
# the project keeps whatever holds containers, state roots or mounts that
# deep (a runtime given `..` as an id once removed the parent of its
# --root). Kept short: containerd's and Docker's sockets live in the temp
# dirs, and a unix socket's path has at most 107 bytes.
ENG_PARENT=${TMPDIR:-/tmp}/agentrun-engines

# A fresh dir NAME.XXXXXX under ENG_PARENT; its path on stdout. The
# parent must be root's and writable by root alone (/tmp is world-writable:
# another user could have made it first), and is searchable by all
# (rootless Podman's user reaches its dir through it).
eng_make_dir() {
	local name=$1 _
	for _ in 1 2; do
		mkdir -p -m 0755 "$ENG_PARENT" || return 1
		if [ -L "$ENG_PARENT" ] || [ -z "$(find "$ENG_PARENT" -maxdepth 0 -user 0 ! -perm /022)" ]; then
			echo "$ENG_PARENT is not a directory of root's that only root may write to" >&2
			return 1
		fi
		# Another suite's teardown may remove the parent in between.
		mktemp -d "$ENG_PARENT/$name.XXXXXX" 2>/dev/null && return 0
	done
	echo "cannot make a temp dir under $ENG_PARENT" >&2
	return 1
}

# The parent goes with the last suite's dir (rmdir: only when empty).
eng_remove_parent() {
	rmdir "$ENG_PARENT" 2>/dev/null || true
}

# Fill the temp dir $ENG_T: the runtime binary (SRC) and its agent-profile
# link, the pid list, the cgroup parent's name (CG, default: agentrun-
# and the temp dir's) and the rootfs tarball.
eng_prepare_dir() {
	local src=$1
	case $(realpath -m "$ENG_T") in
	/*/*/*) ;;
	*) echo "$ENG_T: a suite's temp dir must be at least two levels below /tmp (ENG_PARENT)" >&2; return 1 ;;
	esac
	mkdir -p "$ENG_T/bin"
	ar_copy_binaries "$src" "$ENG_T/bin" || return 1
	# The agent profile by the binary's name, as `make install` links it.
	ln -s agentrun "$ENG_T/bin/agentrun-agent"
	export ENG_AGENTRUN=$ENG_T/bin/agentrun
	: >"$ENG_T/pids"
	# Every container's cgroup goes under this parent, named after the
	# temp dir, so teardown removes exactly the cgroups this suite made.
	export ENG_CG=${2:-agentrun-${ENG_T##*/}}
	eng_rootfs_tar "$ENG_T/rootfs.tar"
}

# The project's busybox rootfs, as a tarball for the importers. Built
# afresh in the temp dir (it takes a moment): the shared copy under images/out
# may be rebuilt by another suite while this one reads it.
eng_rootfs_tar() {
	local rootfs=$ENG_T/rootfs
	"$ENG_TOP/images/busybox.sh" "$rootfs" >/dev/null
	tar -C "$rootfs" --numeric-owner -cf "$1" .
}

# Some engines create these host paths whatever their flags say (containerd
# 1.6 puts shim sockets under /run/containerd/s; Podman keeps a blob cache
# under /var/lib/containers/cache and netavark/CNI state under
# /run/containers). Remember which did not exist, to remove them at teardown
# if they are still empty and so provably ours.
eng_note_host_paths() {
	local p
	for p in "$@"; do
		[ -e "$p" ] || echo "$p" >>"$ENG_T/host-paths"
	done
}

# The same for a directory tree an engine fills (CNI's IPAM and cache
# under /var/lib/cni): when it did not exist before, it is all ours.
eng_note_host_trees() {
	local p
	for p in "$@"; do
		[ -e "$p" ] || echo "$p" >>"$ENG_T/host-trees"
	done
}

# Remember a pid we started; teardown stops exactly these.
eng_track_pid() {
	echo "$1" >>"$ENG_T/pids"
}

# Start a daemon in the background, logging to $ENG_T/NAME.log; its pid
# goes to ENG_DAEMON_PID. fd 3 is closed: bats waits for whoever holds it.
eng_start_daemon() {
	local name=$1
	shift
	"$@" >"$ENG_T/$name.log" 2>&1 3>&- </dev/null &
	ENG_DAEMON_PID=$!
	eng_track_pid "$ENG_DAEMON_PID"
}

# Wait for a unix socket to answer: CHECK is a command that succeeds once
# the daemon serves requests.
eng_wait_ready() {
	local what=$1 pid=$2
	shift 2
	local i
	for i in $(seq 300); do
		"$@" >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "$what did not come up; its log:" >&2
	tail -n 30 "$ENG_T/$what.log" >&2 || true
	return 1
}

# A network namespace of the suite's own, with its loopback up: the
# engine's bridge, veths and iptables rules exist only there.
eng_netns_add() {
	ip netns add "$1"
	ip -n "$1" link set lo up
}

# ---------------------------------------------------------------- rootless

# A user fit for rootless Podman: an ordinary uid with subordinate uids
# and gids.
eng_rootless_user_fits() {
	local uid
	uid=$(id -u "$1" 2>/dev/null) || return 1
	[ "$uid" -ge 1000 ] && [ "$uid" -lt 65534 ] \
		&& grep -q "^$1:" /etc/subuid 2>/dev/null && grep -q "^$1:" /etc/subgid 2>/dev/null
}

# `tester` where it exists (the test VM's), else the first user of
# /etc/subuid that fits, else `agentrun-rl`, made here (the temp dir
# remembers it) and removed by eng_rootless_remove_user.
eng_rootless_pick_user() {
	local u
	for u in tester $(cut -d: -f1 /etc/subuid 2>/dev/null); do
		eng_rootless_user_fits "$u" && { echo "$u"; return 0; }
	done
	# Debian's useradd gives a new ordinary user subordinate ranges.
	useradd -m -s /bin/bash agentrun-rl >&2 || return 1
	touch "$ENG_T/created-user"
	eng_rootless_user_fits agentrun-rl || { echo "useradd gave agentrun-rl no /etc/subuid and /etc/subgid range" >&2; return 1; }
	echo agentrun-rl
}

eng_rootless_remove_user() {
	[ -n "${ENG_T:-}" ] && [ -f "$ENG_T/created-user" ] || return 0
	userdel -r agentrun-rl 2>/dev/null || true
}

# ---------------------------------------------------------------- teardown

# Container processes outlive their daemon when the shim is reparented to
# init; they are found by the private paths in their command line, which no
# process outside this suite can have.
eng_find_our_pids() {
	local p cmd
	for p in /proc/[0-9]*; do
		cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
		[[ "$cmd" == *"$ENG_T/"* ]] && echo "${p#/proc/}"
	done
	return 0
}

eng_stop_pid() {
	local pid=$1 i
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for i in $(seq 150); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}

# Everything mounted under DIR (default: the temp dir), deepest first.
eng_unmount_all() {
	local m
	awk -v t="${1:-$ENG_T}/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo \
		| sort -r | while read -r m; do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
		done
}

eng_remove_host_paths() {
	local p
	if [ -f "$ENG_T/host-trees" ]; then
		while read -r p; do rm -rf "$p"; done <"$ENG_T/host-trees"
	fi
	[ -f "$ENG_T/host-paths" ] || return 0
	# Deepest first so parents empty out.
	sort -r "$ENG_T/host-paths" | while read -r p; do
		if [ -d "$p" ]; then
			rmdir "$p" 2>/dev/null || true
		else
			rm -f "$p"
		fi
	done
}

# The cgroups named NAME (default: the suite's cgroup parent) at the top of
# every hierarchy, children first; rmdir only removes empty cgroups, so a
# live one is never torn down under a process. What still runs in them is
# the suite's own (a container whose engine was stopped before it): killed
# first, by pid.
eng_remove_cgroups() {
	local names=("$@")
	[ ${#names[@]} -gt 0 ] || names=(${ENG_CG:+"$ENG_CG"})
	local name top pid
	for name in "${names[@]}"; do
		for top in /sys/fs/cgroup/*/"$name" /sys/fs/cgroup/"$name"; do
			[ -d "$top" ] || continue
			for pid in $(find "$top" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u); do
				kill -KILL "$pid" 2>/dev/null || true
			done
		done
		for top in /sys/fs/cgroup/*/"$name" /sys/fs/cgroup/"$name"; do
			[ -d "$top" ] || continue
			eng_wait 50 eng_rmdir_tree "$top" || true
		done
	done
}

# rmdir every cgroup of a tree, children first; fails while any is left.
eng_rmdir_tree() {
	find "$1" -depth -type d -exec rmdir {} \; 2>/dev/null
	[ ! -d "$1" ]
}

# Stop what the suite started (by pid, then whatever names its temp dir),
# unmount what they left under it, remove its cgroups and the host paths
# it made. The temp dir itself stays: the caller removes or keeps it.
eng_cleanup_dir() {
	local pid
	while read -r pid; do
		[ -n "$pid" ] && eng_stop_pid "$pid"
	done <"$ENG_T/pids"
	for pid in $(eng_find_our_pids); do
		eng_stop_pid "$pid"
	done
	eng_unmount_all
	eng_remove_cgroups
	eng_remove_host_paths
}

# ---------------------------------------------------------------- containerd

# A containerd config's own paths: root, state and sockets under DIR.
eng_containerd_paths() {
	local t=$1
	echo 'version = 2'
	echo "root = \"$t/root\""
	echo "state = \"$t/state\""
	echo '[grpc]'
	echo "  address = \"$t/containerd.sock\""
	echo '[ttrpc]'
	echo "  address = \"$t/containerd.sock.ttrpc\""
	echo '[debug]'
	echo "  address = \"$t/debug.sock\""
	echo '[metrics]'
	echo '  address = ""'
}

# contrib/containerd/config.toml as shipped, so the file users copy is what
# is tested: only paths change. The binaries are the ones under test
# ($ENG_T/bin); every handler's state root moves below $ENG_T (Root =
# "/run/X" becomes "$ENG_T/run/X"), a handler without one getting the runc
# shim's default (/run/containerd/runc) moved the same way, so handlers
# that share a root on a host share it here too. The shim adds the
# namespace: runc's pods of k8s.io are in $ENG_T/run/containerd/runc/k8s.io.
# The cgroup driver follows the host.
eng_containerd_handlers() {
	grep -v '^version' "$ENG_TOP/contrib/containerd/config.toml" \
		| sed -e "s|BinaryName = \"/usr/local/sbin/\(agentrun[^\"]*\)\"|BinaryName = \"$ENG_T/bin/\1\"|" \
			-e "s|SystemdCgroup = .*|SystemdCgroup = $(eng_systemd_host && echo true || echo false)|" \
			-e "s|^\([ \t]*Root[ \t]*=[ \t]*\"\)/|\1$ENG_T/|" \
		| eng_default_roots "$ENG_T/run/containerd/runc"
}

# The CRI handlers' TOML on stdin, with Root = DEFAULT added to every
# handler that sets none (and an options table to those without one).
eng_default_roots() {
	awk -v root="$1" -v prefix='plugins."io.containerd.grpc.v1.cri".containerd.runtimes.' '
		function end_handler() {
			if (handler != "" && !has_root) {
				if (!has_options)
					print "  [" prefix handler ".options]"
				print "    Root = \"" root "\""
			}
			handler = ""
		}
		/^[ \t]*\[/ {
			table = $0
			gsub(/^[ \t]*\[|\][ \t]*$/, "", table)
			name = ""
			options = 0
			if (index(table, prefix) == 1) {
				name = substr(table, length(prefix) + 1)
				options = sub(/\.options$/, "", name)
			}
			if (name != handler) {
				end_handler()
				handler = name
				has_options = has_root = 0
			}
			if (options)
				has_options = 1
		}
		handler != "" && /^[ \t]*Root[ \t]*=/ { has_root = 1 }
		{ print }
		END { end_handler() }'
}

# A containerd config with the CRI plugin as the kubelet meets it, written
# to $ENG_T/config.toml: sandbox image PAUSE, CNI's bridge plugin giving
# pods NET.0/24 (gateway NET.1; the portmap plugin for hostPort), the
# handlers of contrib/containerd/config.toml with their state under $ENG_T
# (eng_containerd_handlers), and EXTRA (more TOML, at the end).
eng_cri_config() {
	local pause=$1 net=$2 extra=${3:-} t=$ENG_T
	{
		eng_containerd_paths "$t"
		echo '[plugins."io.containerd.grpc.v1.cri"]'
		echo "  sandbox_image = \"$pause\""
		# No CAP_SYS_RESOURCE here: the kubelet's oom_score_adj for a
		# container could not be set below the shim's.
		echo '  restrict_oom_score_adj = true'
		echo '[plugins."io.containerd.grpc.v1.cri".cni]'
		echo "  conf_dir = \"$t/cni/conf\""
		echo "  bin_dir = \"$(eng_cni_bin_dir)\""
		eng_containerd_handlers
		[ -z "$extra" ] || echo "$extra"
	} >"$t/config.toml"
	mkdir -p "$t/cni/conf" "$t/cni/ipam"
	jq -n --arg net "$net" --arg ipam "$t/cni/ipam" '{
		cniVersion: "0.4.0", name: "agentrun-cri-test",
		plugins: [{type: "bridge", bridge: "cni-ar0", isGateway: true, ipMasq: false,
			ipam: {type: "host-local", dataDir: $ipam,
				ranges: [[{subnet: ($net + ".0/24"), gateway: ($net + ".1")}]]}},
			{type: "portmap", capabilities: {portMappings: true}}]}' \
		>"$t/cni/conf/10-agentrun-test.conflist"
}

eng_cni_bin_dir() {
	local d
	for d in /usr/lib/cni /opt/cni/bin; do
		[ -x "$d/bridge" ] && { echo "$d"; return; }
	done
	echo /usr/lib/cni
}

# ---------------------------------------------------------------- images

# The project's rootfs as image REF (image config CONFIG, JSON) in
# namespace NS of the suite's containerd ($ENG_T/containerd.sock).
eng_containerd_image() {
	local ns=$1 ref=$2 config=$3 archive
	archive=$(mktemp "$ENG_T/image.XXXXXX")
	eng_oci_archive "$ENG_T/rootfs.tar" "$archive" "$ref" "$config"
	eng_run ctr --address "$ENG_T/containerd.sock" -n "$ns" image import "$archive" >/dev/null
	rm -f "$archive"
}

# An OCI image layout archive of the rootfs tarball as its single layer,
# for `ctr image import` (which takes no plain rootfs tarball). CONFIG is
# the image config's "config" object as JSON.
eng_oci_archive() {
	local layer=$1 out=$2 name=$3 config=$4 d
	d=$(mktemp -d "$ENG_T/oci.XXXXXX")
	eng_oci_layout "$d" "$name" "$config" "$layer"
	tar -C "$d" -cf "$out" oci-layout index.json blobs
	rm -rf "$d"
}

# An OCI image layout in the empty dir D: image NAME with image config
# CONFIG (the "config" object, JSON) and the tarballs LAYER... as its
# uncompressed layers, bottom first.
eng_oci_layout() {
	local d=$1 name=$2 config=$3 layer dig
	shift 3
	mkdir -p "$d/blobs/sha256"
	local diffs=() layers=()
	for layer in "$@"; do
		dig=$(eng_blob "$d" "$layer")
		diffs+=("sha256:$dig")
		layers+=("$(jq -cn --arg ld "sha256:$dig" --argjson ls "$(stat -c %s "$layer")" \
			'{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $ld, size: $ls}')")
	done
	jq -cn --argjson c "$config" '{architecture: "amd64", os: "linux", config: $c,
		  rootfs: {type: "layers", diff_ids: $ARGS.positional}}' --args -- "${diffs[@]}" >"$d/config"
	local cdig
	cdig=$(eng_blob "$d" "$d/config")
	printf '%s\n' "${layers[@]}" | jq -cs --arg cd "sha256:$cdig" --argjson cs "$(stat -c %s "$d/config")" \
		'{schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
		  config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $cd, size: $cs},
		  layers: .}' >"$d/manifest"
	local mdig
	mdig=$(eng_blob "$d" "$d/manifest")
	jq -cn --arg md "sha256:$mdig" --argjson ms "$(stat -c %s "$d/manifest")" --arg n "$name" \
		'{schemaVersion: 2, manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json",
		  digest: $md, size: $ms, platform: {architecture: "amd64", os: "linux"},
		  annotations: {"io.containerd.image.name": $n, "org.opencontainers.image.ref.name": $n}}]}' \
		>"$d/index.json"
	echo '{"imageLayoutVersion": "1.0.0"}' >"$d/oci-layout"
}

# Store FILE as a blob of layout D; print its digest.
eng_blob() {
	local dig
	dig=$(sha256sum "$2" | cut -d' ' -f1)
	cp "$2" "$1/blobs/sha256/$dig"
	echo "$dig"
}

# The rootfs tarball LAYER as an image archive OUT made the way
# images/agent-image.sh makes agent-oci.tar (umoci; the archive's only
# name is the tag "latest"), with image config flags ARGS...: what
# docs/engines.md tells users to load or import without a registry.
eng_umoci_archive() {
	local layer=$1 out=$2 layout
	shift 2
	layout=$(mktemp -d "$ENG_T/umoci.XXXXXX")/oci
	umoci init --layout "$layout"
	umoci new --image "$layout:latest"
	umoci raw add-layer --image "$layout:latest" "$layer"
	umoci config --image "$layout:latest" --os linux \
		--architecture "$(dpkg --print-architecture)" "$@"
	umoci gc --layout "$layout"
	tar -C "$layout" -cf "$out" .
	rm -rf "${layout%/oci}"
}
