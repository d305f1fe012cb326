#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The C sources are in the project's style (.clang-format): `make format`
# makes them so, and this checks nothing drifted.

load helpers

@test "format: every C source is as clang-format (.clang-format) writes it" {
	command -v clang-format >/dev/null || fail "no clang-format (contrib/install-deps.sh installs it)"
	[ -d "$AR_TOP/.git" ] || skip "not a git checkout: no list of sources"
	run make -s -C "$AR_TOP" format-check
	[ "$status" -eq 0 ] || fail "not formatted (run make format): $(grep -o '^[^:]*\.[ch]' <<<"$output" | sort -u | tr '\n' ' ')"
}

@test "format: the check finds a badly formatted file" {
	local tree
	tree=$(mktemp -d "$BATS_TEST_TMPDIR/fmt.XXXXXX")
	cp "$AR_TOP/.clang-format" "$tree/"
	printf 'int\nmain (void)\n{\n      return 0;\n}\n' >"$tree/bad.c"
	run clang-format --dry-run --Werror "$tree/bad.c"
	assert_failure
	assert_output_contains "bad.c"
}
