#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Install everything agentrun needs to build and to run its test suite on
# Debian 12 (bookworm). Safe to run again: apt-get skips what is installed.
# Runs without a terminal (CI), so nothing may prompt.
set -euo pipefail

# Libraries configure looks for with pkg-config, plus the autotools chain.
BUILD_DEPS=(
	build-essential autoconf automake libtool pkg-config
	libseccomp-dev libyajl-dev libcap-dev libselinux1-dev libsystemd-dev zlib1g-dev
)

# What tests/run.sh, images/ and bench/ call: bats for the suites,
# busybox-static for the test rootfs, crun and runc as reference runtimes,
# clang and its runtime libraries for the sanitizer build; nft, dnsmasq,
# openssl and curl for the egress suite's test host, iptables for the
# host firewall's (egress_firewall.bats); strace to kill the
# runtime at an exact point (a create that dies half-way); for the suites
# run without root, newuidmap (uidmap) and pasta (passt), and bubblewrap
# for bench/rootless.sh; man_completion.bats renders the man pages (man-db)
# and completes in bash (bash-completion) and zsh.
TEST_DEPS=(
	bats busybox-static crun runc jq iproute2 util-linux procps
	coreutils findutils clang clang-format libclang-rt-14-dev hyperfine git ca-certificates bc
	nftables dnsmasq-base openssl curl iptables strace uidmap passt bubblewrap
	man-db bash-completion zsh
)

# The engines tests/engines/ starts itself, on private sockets and roots;
# rootless Podman (podman_rootless.bats) also needs newuidmap/newgidmap
# and its default network, slirp4netns (Recommends, not pulled in here);
# the CRI suite (cri.bats) gives its pods a network with the CNI plugins;
# umoci makes image archives as images/agent-image.sh does, for the
# suites that follow docs/engines.md's steps for images without a registry.
ENGINE_DEPS=(docker.io podman containerd tini uidmap slirp4netns containernetworking-plugins umoci)

# Optional, for images/agent-image.sh only (which installs it itself
# when missing): AGENT_IMAGE=1 installs it here too.
IMAGE_DEPS=()
[ "${AGENT_IMAGE:-0}" = 1 ] && IMAGE_DEPS=(debootstrap)

die() { echo "install-deps: $*" >&2; exit 1; }

# Installing docker.io or containerd must not start a daemon on the host:
# the tests start their own. Debian's policy-rc.d hook says "no" to every
# service start while it exists; ours is removed again afterwards.
POLICY_RC=/usr/sbin/policy-rc.d
block_service_starts() {
	[ -e "$POLICY_RC" ] && return 0
	printf '#!/bin/sh\nexit 101\n' >"$POLICY_RC"
	chmod 755 "$POLICY_RC"
	trap 'rm -f "$POLICY_RC"' EXIT
}

check_platform() {
	[ "$(id -u)" -eq 0 ] || die "run as root (apt-get needs it)"
	command -v apt-get >/dev/null || die "apt-get not found: this script is for Debian 12"
}

# Only refresh the package lists when something is actually missing, so a
# second run on a ready machine is quick and works offline.
missing_packages() {
	local pkg
	for pkg in "$@"; do
		dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q '^install ok installed$' \
			|| echo "$pkg"
	done
}

install_packages() {
	local missing
	mapfile -t missing < <(missing_packages "$@")
	if [ "${#missing[@]}" -eq 0 ]; then
		echo "install-deps: all build and test dependencies already installed"
		return 0
	fi
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	block_service_starts
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
}

# The CRI suite's client (tests/cri/cri.js) speaks gRPC through modules
# from the npm registry, pinned by tests/cri/package-lock.json. Node.js is
# Debian's when the machine has none.
install_cri_client() {
	local dir
	dir=$(cd "$(dirname "$0")/.." && pwd)/tests/cri
	command -v npm >/dev/null || install_packages nodejs npm
	[ -d "$dir/node_modules/@grpc/grpc-js" ] && return 0
	echo "install-deps: npm ci in tests/cri"
	npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error </dev/null
}

main() {
	check_platform
	install_packages "${BUILD_DEPS[@]}" "${TEST_DEPS[@]}" "${ENGINE_DEPS[@]}" "${IMAGE_DEPS[@]}"
	install_cri_client
}

main "$@"
