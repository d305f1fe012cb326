#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Build the Debian-based agent image: what a coding agent expects to find
# (bash, coreutils, git, python3, build-essential, ca-certificates, curl)
# on Debian 12, made with debootstrap from Debian's archive.
#
#   images/agent-image.sh [OUTDIR]     (default: images/out/agent)
#
# OUTDIR/rootfs               the root filesystem, for `agentrun sandbox
#                             --rootfs` and for bundles
# OUTDIR/oci/                 an OCI image layout (tag "latest"), made with
#                             umoci; OUTDIR/agent-oci.tar is the same as an
#                             archive for `podman load -i`
# OUTDIR/agent-rootfs.tar.gz  the rootfs as one tarball, for
#                             `docker import` / `podman import`
#
# Needs root, network access to the Debian mirror, a few minutes and about
# 1 GB of disk while it runs. debootstrap and umoci are installed with
# apt-get when missing. MIRROR and SUITE override the defaults.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE/out/agent}
SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
PACKAGES=bash,coreutils,git,python3,build-essential,ca-certificates,curl,less,procps,findutils,diffutils,patch,xz-utils

die() { echo "agent-image: $*" >&2; exit 1; }
step() { echo "== $*"; }

need_tools() {
	[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap makes device nodes and chroots)"
	local missing=()
	command -v debootstrap >/dev/null || missing+=(debootstrap)
	command -v umoci >/dev/null || missing+=(umoci)
	command -v jq >/dev/null || missing+=(jq)
	if [ "${#missing[@]}" -gt 0 ]; then
		step "installing ${missing[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
	fi
}

# debootstrap into a scratch dir, renamed into place only when complete.
bootstrap() {
	local tmp=$OUT/rootfs.tmp
	rm -rf --one-file-system "$tmp"
	mkdir -p "$OUT"
	step "debootstrap $SUITE (minbase + $PACKAGES) from $MIRROR"
	debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$tmp" "$MIRROR" \
		>"$OUT/debootstrap.log" 2>&1 || { tail -20 "$OUT/debootstrap.log" >&2; die "debootstrap failed (log: $OUT/debootstrap.log)"; }
	trim "$tmp"
	rm -rf --one-file-system "$OUT/rootfs"
	mv "$tmp" "$OUT/rootfs"
}

# What an image does not need: package caches, logs, the machine's
# identity. /output and /run/secrets exist as mount points.
trim() {
	local r=$1
	rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/cache/apt/*.bin \
		"$r"/var/lib/apt/lists/* "$r"/var/log/*.log "$r"/var/log/apt/* \
		"$r"/tmp/* "$r"/var/tmp/*
	: >"$r/etc/machine-id"
	echo agent >"$r/etc/hostname"
	mkdir -p "$r/output" "$r/run/secrets" "$r/workspace"
	# A user for agents that should not run as root.
	if ! grep -q '^agent:' "$r/etc/passwd"; then
		chroot "$r" useradd --create-home --uid 1000 --shell /bin/bash agent
	fi
}

rootfs_tarball() {
	step "rootfs tarball"
	tar --numeric-owner --xattrs --sort=name -C "$OUT/rootfs" -cf "$OUT/agent-rootfs.tar" .
	gzip -n -f "$OUT/agent-rootfs.tar"
}

# One layer holding the whole rootfs; the config says how to start it.
oci_layout() {
	step "OCI image layout (umoci)"
	local layout=$OUT/oci image
	image=$layout:latest
	rm -rf "$layout"
	umoci init --layout "$layout"
	umoci new --image "$image"
	zcat "$OUT/agent-rootfs.tar.gz" >"$OUT/layer.tar"
	umoci raw add-layer --image "$image" "$OUT/layer.tar"
	rm -f "$OUT/layer.tar"
	umoci config --image "$image" \
		--config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		--config.env LANG=C.UTF-8 \
		--config.cmd /bin/bash --config.workingdir /workspace \
		--author agentrun --os linux --architecture "$(dpkg --print-architecture)"
	umoci gc --layout "$layout"
	tar -C "$layout" -cf "$OUT/agent-oci.tar" .
}

check_layout() {
	local layout=$OUT/oci manifest digest
	jq -e '.imageLayoutVersion' "$layout/oci-layout" >/dev/null || die "no oci-layout"
	manifest=$(jq -r '.manifests[0].digest' "$layout/index.json")
	for digest in "$manifest" $(jq -r '.config.digest, .layers[].digest' "$layout/blobs/sha256/${manifest#sha256:}"); do
		[ "$(sha256sum <"$layout/blobs/sha256/${digest#sha256:}" | cut -d' ' -f1)" = "${digest#sha256:}" ] ||
			die "blob $digest does not match its digest"
	done
}

main() {
	need_tools
	local start=$SECONDS
	bootstrap
	rootfs_tarball
	oci_layout
	check_layout
	step "done in $((SECONDS - start))s: $(du -sh "$OUT/rootfs" | cut -f1) rootfs," \
		"$(du -sh "$OUT/agent-rootfs.tar.gz" | cut -f1) tarball, $(du -sh "$OUT/oci" | cut -f1) OCI layout in $OUT"
	chroot "$OUT/rootfs" sh -c 'python3 --version; git --version; gcc --version | head -1'
}

main "$@"
