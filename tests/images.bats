#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The image recipes README's quick start uses (images/).

load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

@test "images: bundle.sh DIR sh -c '...' keeps every argument, flags included (#45, 5)" {
	AGENTRUN_TEST_ROOTFS= run "$AR_TOP/images/bundle.sh" "$TEST_DIR/b" sh -c 'echo from -c -n -e'
	assert_success
	assert_equal "$(jq -c .process.args "$TEST_DIR/b/config.json")" '["sh","-c","echo from -c -n -e"]'
	run runtime run -b "$TEST_DIR/b" "$CID"
	assert_success
	assert_output "from -c -n -e"
}
