# SPDX-License-Identifier: Apache-2.0
# A test whose outcome does not depend on the host's kind, where the VM
# stage asks for only those that do (AR_HOST_KIND_TESTS_ONLY=1, set by
# tests/vm/run.sh): CI's plain stage runs it on the host. For tests that
# are slow in the VM's emulation and would only repeat the host's result.
host_kind_neutral() {
	[ "${AR_HOST_KIND_TESTS_ONLY:-0}" != 1 ] || skip "does not depend on the host's kind: run on the host"
}
