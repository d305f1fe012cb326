#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# An agent's everyday work in a sandbox started by root, which runs in a
# user namespace of its own (tests/sandbox_userns.bats): this repository
# builds and passes its unit tests there, a commit comes back as a bundle
# and the edit as a diff, and the real checkout is never written. On the
# host only: under the test VM's emulator a build takes too long.

load helpers
load sandbox_helpers

@test "selfhost: this repository builds and passes make check in a sandbox; its commit and edit come back" {
	git clone -q "$AR_TOP" "$WS/repo" || skip "not a git checkout"
	local head
	head=$(git -C "$WS/repo" rev-parse HEAD)
	AR_TIMEOUT=900 run sh -c "cd '$WS/repo' && timeout 900 '$RUNTIME' --root '$ROOT' sandbox --timeout 14m --diff '$TEST_DIR/repo.diff' -- sh -c '
		./autogen.sh >/dev/null 2>&1 && ./configure >/dev/null && make -j\$(nproc) >/dev/null 2>&1 || exit 90
		make -j\$(nproc) check >/dev/null 2>&1; echo \"check \$?\"
		echo edited >>README.md
		git -c user.email=a@a -c user.name=agent commit -qam \"agent edit\" && echo committed' </dev/null"
	assert_success
	assert_output_contains "check 0"
	assert_output_contains committed
	grep -q '^+edited$' "$TEST_DIR/repo.diff" || fail "the edit is not in the diff"
	[ -s "$TEST_DIR/repo.diff.bundle" ] || fail "no bundle of the commit"
	[ "$(git -C "$WS/repo" rev-parse HEAD)" = "$head" ] || fail "the real checkout moved"
	[ -z "$(git -C "$WS/repo" status --porcelain)" ] || fail "the real checkout changed"
}
