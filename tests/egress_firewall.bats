#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The host's own firewall (hooks/egress_firewall.c): where iptables'
# FORWARD chain drops what is not accepted (Docker sets that policy when
# it starts), a sandbox's traffic through its veth must still pass, and
# the rules agentrun adds for it go with the last sandbox. In the test VM
# (systemd, Docker installed) dockerd runs with its own rules in the
# chain; the test sets the policy as Docker does, and puts the old one
# back. The test host lives in a network namespace of the test's own.

load helpers

FW_NET=10.251.88

fw_in_host() {
	nsenter -t "$FW_HOST_PID" -n "$@"
}

setup() {
	common_setup
	for tool in iptables curl ip nsenter busybox; do
		command -v "$tool" >/dev/null || skip "$tool is not installed (contrib/install-deps.sh)"
	done
	iptables -S FORWARD >/dev/null 2>&1 || skip "iptables cannot read the FORWARD chain here"
	FW_POLICY=$(iptables -S FORWARD | awk '$1 == "-P" { print $3 }')
	FW_LINK=fwt$$
	# fd 3 closed: bats waits for whoever holds it.
	unshare -n sh -c 'echo $$ >"$1"; exec sleep 300' sh "$TEST_DIR/fwhost.pid" 3>&- &
	wait_for_file_content "$TEST_DIR/fwhost.pid" "^[0-9]"
	FW_HOST_PID=$(cat "$TEST_DIR/fwhost.pid")
	track_pid "$FW_HOST_PID"
	ip link add "$FW_LINK" type veth peer name eth0 netns "$FW_HOST_PID"
	ip addr add "$FW_NET.1/24" dev "$FW_LINK"
	ip link set "$FW_LINK" up
	fw_in_host ip link set lo up
	fw_in_host ip addr add "$FW_NET.2/24" dev eth0
	fw_in_host ip link set eth0 up
	mkdir -p "$TEST_DIR/www" "$TEST_DIR/ws"
	echo "through the firewall" >"$TEST_DIR/www/index.html"
	nsenter -t "$FW_HOST_PID" -n busybox httpd -f -p "$FW_NET.2:80" -h "$TEST_DIR/www" 3>&- &
	track_pid $!
	FW_DOCKER=""
}

teardown() {
	if [ -n "$FW_DOCKER" ]; then
		systemctl stop docker.service docker.socket >/dev/null 2>&1 || true
	fi
	# Docker leaves its policy behind when it stops: the host's again.
	[ -z "${FW_POLICY:-}" ] || iptables -P FORWARD "$FW_POLICY"
	[ -z "${FW_LINK:-}" ] || ip link del "$FW_LINK" 2>/dev/null || true
	common_teardown
}

# The policy Docker sets, with dockerd's own rules where systemd can
# start it. dockerd sets the policy when it turns forwarding on itself (a
# host where it starts first, at boot); an earlier suite here may have
# turned it on already, so the policy is set as dockerd would have.
drop_forwarding_as_docker_does() {
	if [ -d /run/systemd/system ] && systemctl cat docker.service >/dev/null 2>&1; then
		FW_DOCKER=1
		systemctl start docker.service
		local i
		for i in $(seq 1 100); do
			iptables -S FORWARD | grep -q DOCKER-USER && break
			sleep 0.1
		done
		[ "$i" -lt 100 ] || fail "dockerd made no FORWARD rules: $(iptables -S FORWARD)"
	fi
	iptables -P FORWARD DROP
}

@test "egress firewall: with FORWARD's policy DROP (Docker's), --allow-net ADDR:PORT connects, and agentrun's rules go with the sandbox" {
	drop_forwarding_as_docker_does
	run bash -c "cd '$TEST_DIR/ws' && timeout 30 '$RUNTIME' --root '$ROOT' sandbox --no-tty \
		--allow-net $FW_NET.2:80 -- curl -sS --max-time 5 http://$FW_NET.2/"
	assert_success
	assert_output "through the firewall"
	run iptables -S FORWARD
	assert_output_contains "-P FORWARD DROP"
	refute_output_contains agentrun-egress
}

@test "egress firewall: where FORWARD drops and iptables cannot be run, one line says so and nothing is left" {
	iptables -P FORWARD DROP
	# iptables is in /usr/sbin: a PATH without it.
	run bash -c "cd '$TEST_DIR/ws' && PATH=/usr/bin:/bin timeout 30 '$RUNTIME' --root '$ROOT' sandbox --no-tty \
		--allow-net $FW_NET.2:80 -- true"
	assert_failure
	assert_output_contains "iptables"
	[ "$(wc -l <<<"$output")" = 1 ] || fail "more than one line: $output"
	run nft list set inet agentrun-egress pairs
	refute_output_contains '"ar'
	run iptables -S FORWARD
	refute_output_contains agentrun-egress
	[ -z "$(ip -o link show | grep -oE ': ar[0-9a-f]{8}[@:]')" ] || fail "a veth left: $(ip -o link show)"
}
