#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The layering DESIGN.md promises (tests/tools/layering.sh): includes only
# point down, and the core links without the agent policy.

load helpers

@test "layering: every include points where its directory may depend, and src/core needs no symbol of src/agent" {
	[ -f "$AR_TOP/src/core/create.o" ] || skip "no in-tree build objects"
	run "$AR_TOP/tests/tools/layering.sh" "$AR_TOP" "$AR_TOP"
	[ "$status" -eq 0 ] || fail "layering broken: $output"
	assert_output ""
}

@test "layering: the check finds a core file that includes an agent header" {
	local tree
	tree=$(mktemp -d "$BATS_TEST_TMPDIR/tree.XXXXXX")
	mkdir -p "$tree/src/core" "$tree/src/agent"
	printf '#include "../agent/agent.h"\n' >"$tree/src/core/stage.c"
	: >"$tree/src/agent/agent.h"
	run "$AR_TOP/tests/tools/layering.sh" "$tree"
	assert_failure
	assert_output "src/core/stage.c includes ../agent/agent.h: src/core may not depend on src/agent"
}
