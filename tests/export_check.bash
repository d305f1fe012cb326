# SPDX-License-Identifier: Apache-2.0
# An /output export (src/agent/output.c) checked the same way by the
# agent suites (agent.bats, agent_host.bats); they provide fail().
# check_export DIR: only regular files and directories, no special bits,
# and the manifest's sizes and hashes are the files'.
check_export() {
	local dest=$1 path size sha n=0
	[ -z "$(find "$dest" ! -type f ! -type d)" ] || fail "not plain: $(find "$dest" ! -type f ! -type d)"
	[ -z "$(find "$dest" -perm /7000)" ] || fail "special bits: $(find "$dest" -perm /7000)"
	jq -e . "$dest/manifest.json" >/dev/null || fail "no manifest"
	while IFS=$'\t' read -r path size sha; do
		n=$((n + 1))
		[ -f "$dest/$path" ] || fail "listed but missing: $path"
		[ "$(stat -c %s "$dest/$path")" = "$size" ] || fail "size of $path"
		[ "$(sha256sum <"$dest/$path" | cut -d' ' -f1)" = "$sha" ] || fail "sha256 of $path"
	done < <(jq -r '.files[] | [.path, .size, .sha256] | @tsv' "$dest/manifest.json")
	[ "$n" -eq "$(find "$dest" -type f ! -name manifest.json | wc -l)" ] || fail "unlisted files"
}
