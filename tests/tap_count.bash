# SPDX-License-Identifier: Apache-2.0
# Sourced by tests/run.sh and tests/vm/guest-suites.sh.
#
# tap_count TAP: one `bats --tap` output's results in TAP_PASSED and
# TAP_FAILED. Skipped tests are not passed; tests the plan announced that
# never reported (bats crashed, or its timeout cut it) are failed. Says so
# on stdout when there are such tests.
tap_count() {
	local tap=$1 ok skip notok planned missing
	ok=$(grep -cE '^ok ' "$tap")
	skip=$(grep -cE '^ok .* # skip' "$tap")
	notok=$(grep -cE '^not ok ' "$tap")
	planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$tap" | head -1)
	missing=$((${planned:-0} - ok - notok))
	[ "$missing" -le 0 ] || { echo "$missing planned tests did not report"; notok=$((notok + missing)); }
	[ "$skip" -eq 0 ] || echo "($skip skipped, not counted as passed)"
	TAP_PASSED=$((ok - skip))
	TAP_FAILED=$notok
}
