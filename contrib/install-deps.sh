#!/bin/bash
# Install everything agentrun needs to build and to run its test suite on
# Debian 12 (bookworm). Safe to run again: apt-get skips what is installed.
# Runs without a terminal (CI), so nothing may prompt.
set -euo pipefail

# Libraries configure looks for with pkg-config, plus the autotools chain.
BUILD_DEPS=(
	build-essential autoconf automake libtool pkg-config
	libseccomp-dev libyajl-dev libcap-dev libselinux1-dev
	libnftables-dev libmnl-dev
)

# What tests/run.sh, images/ and bench/ call: bats for the suites,
# busybox-static for the test rootfs, crun and runc as reference runtimes,
# clang and its runtime libraries for the sanitizer build; nft, dnsmasq,
# openssl and curl for the egress suite's test host.
TEST_DEPS=(
	bats busybox-static crun runc jq iproute2 util-linux procps
	coreutils findutils clang libclang-rt-14-dev hyperfine git ca-certificates bc
	nftables dnsmasq-base openssl curl
)

die() { echo "install-deps: $*" >&2; exit 1; }

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

main() {
	check_platform
	local missing
	mapfile -t missing < <(missing_packages "${BUILD_DEPS[@]}" "${TEST_DEPS[@]}")
	if [ "${#missing[@]}" -eq 0 ]; then
		echo "install-deps: all build and test dependencies already installed"
		return 0
	fi
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
}

main "$@"
