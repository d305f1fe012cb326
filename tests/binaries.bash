# SPDX-License-Identifier: Apache-2.0
# ar_copy_binaries AGENTRUN DIR: the runtime's programs into DIR side by
# side, as `make install` puts them: agentrun (the launcher, or the
# runtime itself when the build has no launcher), and from AGENTRUN's
# directory the runtime it starts (agentrun-runtime) and the egress hook
# (agentrun-egress), where each exists.
ar_copy_binaries() {
	local src=$1 dir=$2 from f
	from=$(dirname "$src")
	install -m 0755 "$src" "$dir/agentrun" || return 1
	for f in agentrun-runtime agentrun-egress; do
		[ ! -e "$from/$f" ] || install -m 0755 "$from/$f" "$dir/$f" || return 1
	done
}

# ar_runtime_program AGENTRUN: the file holding the runtime that AGENTRUN
# starts: agentrun-runtime beside a launcher, else AGENTRUN's own target.
ar_runtime_program() {
	local self
	self=$(readlink -f "$1")
	if [ -e "${self%/*}/agentrun-runtime" ]; then
		echo "${self%/*}/agentrun-runtime"
	else
		echo "$self"
	fi
}
