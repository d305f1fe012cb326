#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Make an OCI bundle: DIR/rootfs (the busybox rootfs) and DIR/config.json.
#
#   images/bundle.sh DIR [ARG...]      (default process: sh)
#
# config.json comes from `agentrun spec` when agentrun is built in this
# tree, else from `crun spec` or `runc spec` (override with SPEC_RUNTIME).
# The process gets no terminal so the bundle runs from scripts and CI.
# ROOTFS=DIR reuses an already built rootfs (copied, so the bundle can be
# changed freely); otherwise the shared one in images/out is built on first
# use.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(dirname "$HERE")

die() { echo "bundle.sh: $*" >&2; exit 1; }

pick_spec_runtime() {
	if [ -n "${SPEC_RUNTIME:-}" ]; then
		echo "$SPEC_RUNTIME"
	elif [ -x "$TOP/agentrun" ]; then
		echo "$TOP/agentrun"
	elif command -v agentrun >/dev/null; then
		command -v agentrun
	elif command -v crun >/dev/null; then
		command -v crun
	elif command -v runc >/dev/null; then
		command -v runc
	else
		die "no runtime to run 'spec' with: build agentrun or install crun"
	fi
}

shared_rootfs() {
	local rootfs=${ROOTFS:-$HERE/out/busybox/rootfs}
	if [ ! -x "$rootfs/bin/busybox" ]; then
		"$HERE/busybox.sh" "$rootfs" >/dev/null
	fi
	echo "$rootfs"
}

main() {
	[ $# -ge 1 ] || die "usage: bundle.sh DIR [ARG...]"
	command -v jq >/dev/null || die "jq not found: apt-get install jq"
	local dir=$1; shift
	local args_json
	if [ $# -eq 0 ]; then set -- sh; fi
	# Named, not --args: Debian's jq 1.6 takes a later -c, -n or -e as its
	# own option even after --args.
	local named=() i=0 a
	for a in "$@"; do
		named+=(--arg "$i" "$a")
		i=$((i + 1))
	done
	args_json=$(jq -cn '$ARGS.named | to_entries | sort_by(.key | tonumber) | map(.value)' "${named[@]}")

	local rootfs spec_rt
	rootfs=$(shared_rootfs)
	spec_rt=$(pick_spec_runtime)

	mkdir -p "$dir"
	[ ! -e "$dir/rootfs" ] || die "$dir/rootfs already exists"
	# busybox is ~2 MB: a real copy is cheap and keeps bundles independent
	# (a hard link would let one container's writes reach every bundle).
	cp -a "$rootfs" "$dir/rootfs"

	rm -f "$dir/config.json"
	(cd "$dir" && "$spec_rt" spec) || die "$spec_rt spec failed"
	jq --argjson args "$args_json" \
		'.process.terminal = false | .process.args = $args' \
		"$dir/config.json" >"$dir/config.json.new"
	mv "$dir/config.json.new" "$dir/config.json"
	echo "$dir"
}

main "$@"
