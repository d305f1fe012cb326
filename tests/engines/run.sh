#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Run the engine suites: Docker, Podman and containerd driving agentrun.
#
#   tests/engines/run.sh [SUITE...]      (default: docker podman podman_rootless containerd cri critest)
#
# Each suite starts its engine on private sockets and roots under a temp
# dir and stops exactly what it started; a suite whose engine is not
# installed is skipped with the reason. Needs root and a built ./agentrun
# (or AGENTRUN=/path). Install the engines and what the suites use with
# contrib/install-deps.sh.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)

die() { echo "engines/run.sh: $*" >&2; exit 1; }

main() {
	command -v bats >/dev/null || die "bats is not installed (apt-get install bats)"
	[ "$(id -u)" -eq 0 ] || die "run as root: the engines need it"
	local suites=("$@") files=() s
	[ ${#suites[@]} -gt 0 ] || suites=(docker podman podman_rootless containerd cri critest)
	for s in "${suites[@]}"; do
		[ -f "$HERE/$s.bats" ] || die "no suite $s"
		files+=("$HERE/$s.bats")
	done
	# One suite at a time: each starts daemons of its own.
	bats --timing "${files[@]}"
}

main "$@"
