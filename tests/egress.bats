#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Egress control (hooks/agentrun-egress): the test makes its own test host,
# a network namespace behind a veth, with two addresses (allowed and other)
# serving HTTP (busybox httpd), HTTPS (openssl s_server, a self-signed cert
# made here) and DNS (dnsmasq: allowed.test and other.test, an AAAA too).
# Sandboxes run on the host's root (curl, bash, openssl) with a test
# profile whose upstream resolver is the test host's dnsmasq. Traffic goes
# only to loopback and the test host's own addresses.

load helpers

EG_NET=10.251.77
EG_NET6=fd51:77
EG_BB=/usr/bin/busybox

# ---------------------------------------------------------------- test host

eg_in_host() {
	nsenter -t "$(cat "$EG_DIR/host.pid")" -n "$@"
}

setup_file() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	for tool in nft dnsmasq openssl curl ip nsenter; do
		command -v "$tool" >/dev/null || skip "$tool is not installed (contrib/install-deps.sh)"
	done
	export EG_DIR=$BATS_FILE_TMPDIR/egress
	mkdir -p "$EG_DIR/www" "$EG_DIR/www-other" "$EG_DIR/ws"
	chmod 0755 "$BATS_FILE_TMPDIR" "$EG_DIR" "$EG_DIR/ws"
	echo "hello from allowed" >"$EG_DIR/www/index.html"
	echo "hello from other" >"$EG_DIR/www-other/index.html"
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=allowed.test \
		-addext subjectAltName=DNS:allowed.test \
		-keyout "$EG_DIR/key.pem" -out "$EG_DIR/ws/cert.pem" 2>/dev/null

	unshare -n sh -c 'echo $$ >"$1"; exec sleep 3600' sh "$EG_DIR/host.pid" &
	wait_for_file_content "$EG_DIR/host.pid" "^[0-9]"
	sleep 0.05
	local pid link=egt$$
	pid=$(cat "$EG_DIR/host.pid")
	echo "$link" >"$EG_DIR/link"
	ip link add "$link" type veth peer name eth0 netns "$pid"
	ip addr add "$EG_NET.1/24" dev "$link"
	ip -6 addr add "$EG_NET6::1/64" dev "$link" nodad
	ip link set "$link" up
	eg_in_host ip link set lo up
	eg_in_host ip addr add "$EG_NET.2/24" dev eth0
	eg_in_host ip addr add "$EG_NET.3/24" dev eth0
	eg_in_host ip -6 addr add "$EG_NET6::2/64" dev eth0 nodad
	eg_in_host ip link set eth0 up

	eg_in_host "$EG_BB" httpd -p "$EG_NET.2:80" -h "$EG_DIR/www"
	eg_in_host "$EG_BB" httpd -p "$EG_NET.3:80" -h "$EG_DIR/www-other"
	eg_in_host "$EG_BB" httpd -p "[$EG_NET6::2]:80" -h "$EG_DIR/www"
	eg_in_host openssl s_server -quiet -www -accept "$EG_NET.2:443" \
		-cert "$EG_DIR/ws/cert.pem" -key "$EG_DIR/key.pem" </dev/null >/dev/null 2>&1 &
	# For namespaces wired the way engines wire them (eg_wire): port 8080
	# on every address the test host has or gets.
	eg_in_host "$EG_BB" httpd -p 8080 -h "$EG_DIR/www-other"
	eg_in_host dnsmasq -C /dev/null --no-resolv --no-hosts --bind-interfaces \
		--listen-address="$EG_NET.2" --port=53 --pid-file="$EG_DIR/dnsmasq.pid" \
		--log-queries --log-facility="$EG_DIR/dnsmasq.log" \
		--address=/allowed.test/"$EG_NET.2" --address=/allowed.test/"$EG_NET6::2" \
		--address=/other.test/"$EG_NET.3" --address=/evil.test/"$EG_NET.2" \
		--txt-record=tunnel.other.test,data
	# The suite's profiles: the agent profile with the test host as the
	# egress resolver's upstream.
	mkdir -p "$EG_DIR/config/profiles"
	cat >"$EG_DIR/config/profiles/egresstest.json" <<-EOF
	{"extends": "agent", "network": {"upstream": "$EG_NET.2"}}
	EOF
	cat >"$EG_DIR/config/profiles/egressopen.json" <<-EOF
	{"extends": "agent", "network": {"egress": "open", "upstream": "$EG_NET.2"}}
	EOF
	local i
	for i in $(seq 1 50); do
		eg_in_host sh -c "exec 3<>/dev/tcp/$EG_NET.2/443" 2>/dev/null && break
		sleep 0.1
	done
}

teardown_file() {
	[ -n "${EG_DIR:-}" ] || return 0
	[ -f "$EG_DIR/host.pid" ] && kill -KILL "$(cat "$EG_DIR/host.pid")" 2>/dev/null
	# dnsmasq, httpd and s_server live in the test host's netns: end them.
	local p
	for p in $(pgrep -f "$EG_DIR" || true); do kill -KILL "$p" 2>/dev/null || true; done
	[ -f "$EG_DIR/link" ] && ip link del "$(cat "$EG_DIR/link")" 2>/dev/null
	return 0
}

setup() {
	common_setup
	export AGENTRUN_CONFIG_DIR=$EG_DIR/config
	AUDIT=$TEST_DIR/audit.log
}

teardown() {
	common_teardown
	egress_leftovers_check
}

# What the hook made on the host, left after the test's containers are gone.
egress_leftovers() {
	# grep -E: Debian's awk (mawk) takes no {8} interval, and never matched.
	ip -o link show | grep -oE '^[0-9]+: ar[0-9a-f]{8}[@:]' | sed -E 's/^[0-9]+: (ar[0-9a-f]{8}).*/veth \1/'
	# The host table is shared and stays; a container's elements go.
	nft list tables | awk '$3 ~ /^agentrun-/ && $3 != "agentrun-egress" { print "table " $3 }'
	nft list set inet agentrun-egress links 2>/dev/null | grep -o '"ar[0-9a-f]*"' | sed 's/^/host element /'
	nft list set inet agentrun-egress pairs 2>/dev/null | grep -o '"ar[0-9a-f]*" [^,}]*' | sed 's/^/host element /'
	# The hook, and the resolver (forked by the hook or by agentrun, which
	# runs its own hook in-process) names itself agentrun-egress.
	pgrep -a -x agentrun-egress | sed 's/^/process /' || true
	ls /run/agentrun-egress/leases 2>/dev/null | sed 's/^/lease /'
}

egress_leftovers_check() {
	local left i
	for i in $(seq 1 40); do
		left=$(egress_leftovers)
		[ -z "$left" ] && return 0
		sleep 0.05
	done
	echo "$left" >&2
	ar_leak "egress: $left"
}

# eg_wire PID N: what an engine does to a network namespace it did not
# make (Docker's prestart hook, netavark, CNI): a veth to the test host,
# 10.251.N.1 there and 10.251.N.2 as eth0 here, and a default route.
eg_wire() {
	local pid=$1 net=10.251.$2 link=egw$2x$$
	ip link add "$link" netns "$(cat "$EG_DIR/host.pid")" type veth peer name eth0 netns "$pid"
	eg_in_host ip addr add "$net.1/24" dev "$link"
	eg_in_host ip link set "$link" up
	nsenter -t "$pid" -n ip addr add "$net.2/24" dev eth0
	nsenter -t "$pid" -n ip link set eth0 up
	nsenter -t "$pid" -n ip route add default via "$net.1"
}

# A GET to the test host's port 8080 from busybox in the container (its
# static wget crashes after some successful fetches): "reached" or "refused".
EG_GET='get() { printf "GET / HTTP/1.0\\r\\n\\r\\n" | nc -w 3 "$1" 8080 && echo reached || echo refused; }; get'

# The same, as a prestart hook script (state on stdin) wiring subnet N.
eg_wire_hook() {
	cat >"$TEST_DIR/wire.sh" <<-EOF
	#!/bin/bash
	set -e
	pid=\$(jq .pid)
	$(declare -f eg_in_host eg_wire)
	EG_DIR=$EG_DIR
	eg_wire "\$pid" $1
	EOF
	chmod 755 "$TEST_DIR/wire.sh"
}

# A network namespace of the test's own (a pod sandbox's, say), wired to
# the test host on subnet N; its holder's pid goes to $NS_PID.
eg_pod_netns() {
	unshare -n sh -c 'echo $$ >"$1"; exec sleep 300' sh "$TEST_DIR/pod.pid" &
	wait_for_file_content "$TEST_DIR/pod.pid" "^[0-9]"
	NS_PID=$(cat "$TEST_DIR/pod.pid")
	track_pid "$NS_PID"
	eg_wire "$NS_PID" "$1"
}

# sandbox ARG... -- CMD: on the host's root, audit log in $AUDIT, the test
# workspace (with the test CA cert) as the working directory.
sandbox() {
	local -a opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	timeout -k 5 "$AR_TIMEOUT" "$RUNTIME" --root "$ROOT" --profile "${EG_PROFILE:-egresstest}" sandbox --no-tty \
		--workspace "$EG_DIR/ws" --audit "$AUDIT" "${opts[@]}" -- "$@" </dev/null
}

# hold_netns NAME: a process in a network namespace of its own, as a
# container's init would be; its pid in $HELD_PID.
hold_netns() {
	unshare -n sh -c 'echo $$ >"$1"; exec sleep 100' sh "$TEST_DIR/$1.pid" &
	wait_for_file_content "$TEST_DIR/$1.pid" "^[0-9]"
	HELD_PID=$(cat "$TEST_DIR/$1.pid")
	track_pid "$HELD_PID"
}

# ---------------------------------------------------------------- tests

@test "egress: an allowed name resolves and its host answers HTTP and HTTPS" {
	run sandbox --allow-net allowed.test -- sh -c '
		getent ahostsv4 allowed.test | head -1
		curl -sS --max-time 5 http://allowed.test/
		curl -sS --max-time 5 --cacert cert.pem https://allowed.test/ | grep -o "s_server -quiet -www"'
	assert_success
	assert_output_contains "$EG_NET.2"
	assert_output_contains "hello from allowed"
	assert_output_contains "s_server -quiet -www"
	run grep '"event":"egress-dns"' "$AUDIT"
	assert_output_contains '"name":"allowed.test"'
	assert_output_contains '"decision":"allowed"'
	assert_output_contains "\"$EG_NET.2\""
}

@test "egress: an allowed name's address answers only that name: another name in SNI or Host, or none, is reset at once and logged" {
	# evil.test is the allowed host's address too (one CDN edge, many
	# sites): the resolver does not answer it, but a client can say it.
	run sandbox --allow-net allowed.test -- bash -c '
		getent ahostsv4 allowed.test >/dev/null
		curl -sS --max-time 5 --cacert cert.pem https://allowed.test/ | grep -o "s_server -quiet -www"
		curl -sS --max-time 5 -k --resolve evil.test:443:'"$EG_NET.2"' https://evil.test/; echo "sni: $?"
		curl -sS --max-time 5 -H "Host: evil.test" http://allowed.test/; echo "host: $?"
		curl -sS --max-time 5 -k https://'"$EG_NET.2"'/; echo "no name: $?"
		curl -sS --max-time 5 http://allowed.test/
		# The server (one connection at a time) was told too: it serves.
		curl -sS --max-time 5 --cacert cert.pem https://allowed.test/ | grep -o "s_server -quiet -www" | sed "s/^/again: /"'
	assert_success
	assert_output_contains "s_server -quiet -www"
	assert_output_contains "again: s_server -quiet -www"
	assert_output_contains "hello from allowed"
	# A reset (35: in the TLS handshake, 56: receiving), never a timeout (28).
	assert_output_contains "sni: 35"
	assert_output_contains "host: 56"
	assert_output_contains "no name: 35"
	run grep '"event":"egress-refused"' "$AUDIT"
	assert_output_contains "\"destination\":\"$EG_NET.2\",\"protocol\":\"tcp\",\"port\":443,\"name\":\"evil.test\",\"reason\":\"not an allowed name\""
	assert_output_contains "\"port\":80,\"name\":\"evil.test\""
	assert_output_contains "no server name"
}

@test "egress: UDP to an address a name opened is refused (QUIC falls back to TCP)" {
	run sandbox --allow-net allowed.test -- bash -c '
		getent ahostsv4 allowed.test >/dev/null
		echo x >/dev/udp/allowed.test/443; sleep 0.2; echo x >/dev/udp/allowed.test/443 && echo sent'
	refute_output_contains sent
	run grep '"event":"egress-refused"' "$AUDIT"
	assert_output_contains "\"destination\":\"$EG_NET.2\",\"protocol\":\"udp\",\"port\":443"
}

@test "egress: other names do not resolve, and the refusal is in the audit log" {
	run sandbox --allow-net allowed.test -- sh -c 'getent hosts other.test; echo "status $?"'
	assert_output_contains "status 2"
	refute_output_contains "$EG_NET.3"
	run grep '"name":"other.test"' "$AUDIT"
	assert_output_contains '"decision":"refused"'
}

@test "egress: a direct connection to another test address is refused fast" {
	run sandbox --allow-net allowed.test -- bash -c '
		getent hosts allowed.test >/dev/null
		s=$(date +%s%N)
		curl -sS --max-time 5 http://'"$EG_NET.3"'/ 2>&1
		e=$(date +%s%N)
		echo "ms $(( (e - s) / 1000000 ))"'
	refute_output_contains "hello from other"
	assert_output_contains "Failed to connect"
	local ms=${output##*ms }
	[ "$ms" -lt 1000 ] || fail "refusal took $ms ms"
	run grep '"event":"egress-refused"' "$AUDIT"
	assert_output_contains "\"destination\":\"$EG_NET.3\",\"protocol\":\"tcp\",\"port\":80"
}

@test "egress: a name allowed on one port is refused on another, and logged with its name" {
	run sandbox --allow-net allowed.test:443 -- bash -c '
		curl -sS --max-time 5 --cacert cert.pem https://allowed.test/ | grep -o "s_server -quiet -www"
		curl -sS --max-time 5 http://allowed.test/ 2>&1; echo "http $?"'
	assert_output_contains "s_server -quiet -www"
	assert_output_contains "http 7"
	run grep '"event":"egress-refused"' "$AUDIT"
	assert_output_contains "\"destination\":\"$EG_NET.2\",\"protocol\":\"tcp\",\"port\":80,\"name\":\"allowed.test\""
}

@test "egress: IPv6 is refused, even to the allowed host's AAAA" {
	run sandbox --allow-net allowed.test -- bash -c '
		curl -sS -6 --max-time 3 "http://['"$EG_NET6"'::2]/" 2>&1; echo "status $?"'
	# Refused at once (curl: 7, could not connect), not a timeout (28).
	assert_output_contains "status 7"
	refute_output_contains "hello from allowed"
}

@test "egress: DNS to another server is dropped; tunnelling names are refused" {
	run sandbox --allow-net allowed.test --allow-net "$EG_NET.0/24" -- bash -c '
		timeout 5 '"$EG_BB"' nslookup allowed.test '"$EG_NET.2"' 2>&1; echo "direct $?"
		echo x 2>&1 >/dev/udp/'"$EG_NET.2"'/53; echo "udp53 $?"
		label=$(printf "a%.0s" $(seq 1 60))
		timeout 5 '"$EG_BB"' nslookup -type=txt "$label.$label.tunnel.other.test" 2>&1; echo "txt $?"'
	refute_output_contains "direct 0"
	refute_output_contains "udp53 0"
	refute_output_contains "txt 0"
	refute_output_contains '"data"'
	# (the audit log shortens the 120-letter name)
	run grep '"decision":"refused"' "$AUDIT"
	assert_output_contains '"qtype":"TXT"'
}

@test "egress: a name that is not plain labels, or not allowed, gets NXDOMAIN at once and goes nowhere" {
	run sandbox --allow-net allowed.test -- bash -c '
		# ask QUESTION-NAME: the reply'"'"'s id and flags, as hex
		ask() {
			exec 3<>/dev/udp/127.0.0.53/53
			printf "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00$1\x00\x01\x00\x01" >&3
			echo "reply $(timeout 3 dd bs=512 count=1 <&3 2>/dev/null | od -An -tx1 -N4 | tr -d " \n")"
			exec 3>&-
		}
		ask "\x07allowed\x09test\x00evil\x00" # a NUL in a label: was read as allowed.test
		ask "\x0callowed.test\x00"            # a dot in a label
		ask "\x05other\x04test\x00"           # not allowed
		s=$(date +%s%N)
		getent hosts other.test; echo "status $?"
		e=$(date +%s%N)
		echo "ms $(( (e - s) / 1000000 ))"'
	assert_success
	# id 1234, QR and RD, NXDOMAIN; three times
	[ "$(grep -c '^reply 12348103$' <<<"$output")" -eq 3 ] || fail "not three NXDOMAIN replies"
	assert_output_contains "status 2"
	local ms=${output##*ms }
	[ "$ms" -lt 1000 ] || fail "the refused lookup took $ms ms"
	run grep '"event":"egress-dns"' "$AUDIT"
	refute_output_contains '"decision":"allowed"'
	assert_output_contains '"name":"allowed.test?evil","qtype":"A","decision":"refused"'
	assert_output_contains '"name":"allowed?test","qtype":"A","decision":"refused"'
}

@test "egress: ICMP, UDP, metadata, host loopback and the veth's host side are refused" {
	"$EG_BB" httpd -p 127.0.0.1:18479 -h "$EG_DIR/www"
	track_pid "$(pgrep -f 'httpd -p 127.0.0.1:18479')"
	run sandbox --allow-net "$EG_NET.2" -- bash -c '
		'"$EG_BB"' ping -c 1 -W 1 '"$EG_NET.2"' >/dev/null 2>&1; echo "ping $?"
		echo x 2>/dev/null >/dev/udp/'"$EG_NET.3"'/9999; echo "udp-other $?"
		curl -sS --max-time 3 http://169.254.169.254/ 2>&1; echo "metadata $?"
		curl -sS --max-time 3 http://127.0.0.1:18479/ 2>&1; echo "loopback $?"
		gw=$(ip route | awk "/default/ { print \$3 }")
		curl -sS --max-time 3 "http://$gw/" 2>&1; echo "veth-host $?"
		curl -sS --max-time 3 http://'"$EG_NET.2"'/; echo "allowed $?"'
	assert_output_contains "ping 1"
	refute_output_contains "udp-other 0"
	assert_output_contains "metadata 7"
	assert_output_contains "loopback 7"
	assert_output_contains "veth-host 7"
	assert_output_contains "hello from allowed"
	assert_output_contains "allowed 0"
}

@test "egress: the host's own other addresses are refused at once, even inside an allowed network" {
	# 10.251.77.1 is the host's end of the test host's link: an address of
	# the host itself, inside the allowed /24. Refused by the host (a
	# reset), not dropped: curl says refused (7), not timed out (28).
	run sandbox --allow-net "$EG_NET.0/24" -- bash -c '
		curl -sS --max-time 3 http://'"$EG_NET.1"':9/ 2>&1; echo "host-address $?"
		curl -sS --max-time 3 http://'"$EG_NET.2"'/; echo "allowed $?"'
	assert_output_contains "host-address 7"
	assert_output_contains "hello from allowed"
	assert_output_contains "allowed 0"
}

@test "egress: mode none has nothing but lo and makes nothing on the host" {
	run sandbox -- bash -c 'ip -o link show | cut -d: -f2; curl -sS --max-time 3 http://'"$EG_NET.2"'/ 2>&1; echo "curl $?"'
	assert_output_contains " lo"
	refute_output_contains "eth0"
	assert_output_contains "curl 7"
	[ -z "$(egress_leftovers)" ] || fail "left: $(egress_leftovers)"
}

@test "egress: mode none: a lookup fails at once as no such name, which clients do not retry" {
	# EAI_NONAME (-2), as a refused name gets in allowlist mode; not
	# EAI_AGAIN (-3), which npm retries for 72 s. /etc/hosts still answers.
	run sandbox -- python3 -c '
import socket, time
start = time.monotonic()
try:
    socket.getaddrinfo("allowed.test", 443)
except socket.gaierror as e:
    print("errno", e.errno, "fast" if time.monotonic() - start < 0.1 else "slow")
print(socket.getaddrinfo("localhost", 80)[0][4][0])'
	assert_success
	assert_output_contains "errno $(python3 -c 'import socket; print(socket.EAI_NONAME)') fast"
	assert_output_contains "127.0.0.1"
	# Only the hosts line differs from the host's own file.
	run sandbox -- cat /etc/nsswitch.conf
	assert_equal "$(grep -v '^hosts:' <<<"$output")" "$(grep -v '^hosts:' /etc/nsswitch.conf)"
	assert_equal "$(grep '^hosts:' <<<"$output")" "hosts: files$(grep -q '^hosts:.*myhostname' /etc/nsswitch.conf && echo ' myhostname')"
}

@test "egress: mode none: npm and pip are told not to retry, unless the command sets it" {
	run sandbox -- sh -c 'echo "npm=$npm_config_fetch_retries pip=$PIP_RETRIES"'
	assert_output_contains "npm=0 pip=0"
	run sandbox --env NPM_CONFIG_FETCH_RETRIES=3 -- sh -c 'env | grep -i "fetch_retries" | sort'
	assert_output "NPM_CONFIG_FETCH_RETRIES=3"
	run sandbox --allow-net allowed.test -- sh -c 'echo "npm=${npm_config_fetch_retries:-unset}"'
	assert_output_contains "npm=unset"
	command -v npm >/dev/null || skip "npm is not installed"
	# It gives up at once (ENOTFOUND), not after 70 s of retries.
	local start=$SECONDS
	run sandbox --env HOME=/tmp -- npm view is-number version
	assert_failure
	assert_output_contains "ENOTFOUND"
	[ $((SECONDS - start)) -lt 20 ] || fail "npm took $((SECONDS - start)) s"
}

@test "egress: open (a profile's choice) reaches any name and address, but not host services" {
	EG_PROFILE=egressopen run sandbox -- bash -c '
		curl -sS --max-time 5 http://other.test/
		curl -sS --max-time 5 http://'"$EG_NET.2"'/
		curl -sS --max-time 3 http://169.254.169.254/ 2>&1; echo "metadata $?"
		gw=$(ip route | awk "/default/ { print \$3 }")
		curl -sS --max-time 3 "http://$gw/" 2>&1; echo "veth-host $?"'
	assert_output_contains "hello from other"
	assert_output_contains "hello from allowed"
	assert_output_contains "metadata 7"
	assert_output_contains "veth-host 7"
}

@test "egress: an annotation cannot open egress under the agent profile" {
	update_config '.annotations["run.agentrun.egress"] = "open"'
	run runtime --profile agent run --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_output_contains '"open" is not allowed by profile "agent"'
}

@test "egress: nothing is left after delete, nor after kill -9 of the container" {
	update_config '.annotations["run.agentrun.egress.allow"] = "allowed.test"
		| .process.args = ["sleep", "100"]'
	runtime_bg --profile egresstest run --detach --bundle "$BUNDLE" "$CID"
	[ -n "$(egress_leftovers)" ] || fail "the hook made nothing"
	local resolver
	resolver=$(cut -d' ' -f1 "/run/agentrun-egress/$CID/resolver.pid")
	[ "$(cat "/proc/$resolver/comm")" = agentrun-egress ] || fail "no resolver"
	kill -KILL "$(ctr_pid)"
	wait_for_state "$CID" stopped
	run runtime delete "$CID"
	assert_success
	egress_leftovers_check
	[ -z "$(egress_leftovers)" ]
}

@test "egress: the hook on its own (any runtime); a dead container's lease and host entries are reclaimed" {
	local hook=$AR_TOP/agentrun-egress EGRESS_POOL_FIRST=10.213.
	local pid1 hash
	hold_netns ns1
	pid1=$HELD_PID
	echo "{\"id\":\"$CID-a\",\"pid\":$pid1}" | "$hook" create --mode allowlist --allow "$EG_NET.2"
	hash=$(printf %s "$CID-a" | sha256sum | cut -c1-8)
	nft list set inet agentrun-egress links | grep -q "\"ar$hash\""
	nft list set inet agentrun-egress pairs | grep -q "\"ar$hash\" . $EGRESS_POOL_FIRST"
	nsenter -t "$pid1" -n nft list table inet agentrun >/dev/null
	run nsenter -t "$pid1" -n ip -o link show up
	assert_output_contains "lo"
	assert_output_contains "eth0"
	# The container dies without a delete (a SIGKILLed runtime): the next
	# create takes its place.
	kill -KILL "$pid1"
	wait "$pid1" 2>/dev/null || true
	local pid2
	hold_netns ns2
	pid2=$HELD_PID
	echo "{\"id\":\"$CID-b\",\"pid\":$pid2}" | "$hook" create --mode allowlist --allow "$EG_NET.2"
	run nft list set inet agentrun-egress links
	refute_output_contains "ar$hash"
	# The netns is still held (the sleep lives on): the veth goes a moment
	# after delete, by a detached child of the hook.
	echo "{\"id\":\"$CID-b\",\"pid\":$pid2}" | "$hook" delete
	local i
	for i in $(seq 1 60); do
		[ -z "$(egress_leftovers)" ] && break
		sleep 0.05
	done
	[ -z "$(egress_leftovers)" ] || fail "left: $(egress_leftovers)"
}

@test "egress: --ingress lets new connections in to the ports it names, audited; every other port stays closed" {
	local hook=$AR_TOP/agentrun-egress pid
	hold_netns ns
	pid=$HELD_PID
	run "$hook" create --mode allowlist --allow "$EG_NET.2" --ingress 8080/tcp --ingress 0 <<<"{\"id\":\"$CID\",\"pid\":$pid}"
	assert_failure
	assert_output_contains "--ingress \`0\`: port \`0\` is not a number from 1 to 65535"
	echo "{\"id\":\"$CID\",\"pid\":$pid}" | "$hook" create --mode allowlist --allow "$EG_NET.2" \
		--ingress 8080 --audit "$AUDIT"
	local addr
	addr=$(nsenter -t "$pid" -n ip -4 -o addr show eth0 | awk '{ sub("/.*", "", $4); print $4 }')
	[ -n "$addr" ] || fail "no container address"
	echo in >"$TEST_DIR/index.html"
	local port
	for port in 8080 8081; do
		nsenter -t "$pid" -n busybox httpd -f -p "$port" -h "$TEST_DIR" &
		track_pid "$!"
	done
	local i
	for i in $(seq 1 50); do
		[ "$(nsenter -t "$pid" -n ss -Hltn | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	run curl -sS -m 3 "http://$addr:8080/index.html"
	assert_output "in"
	run curl -sS -m 2 "http://$addr:8081/index.html"
	assert_failure
	assert_output_contains "timed out"
	for i in $(seq 1 50); do
		grep -q '"event":"ingress"' "$AUDIT" 2>/dev/null && break
		sleep 0.1
	done
	run grep '"event":"ingress"' "$AUDIT"
	assert_output_contains "\"destination\":\"$addr\",\"protocol\":\"tcp\",\"port\":8080"
	refute_output_contains '"port":8081'
	echo "{\"id\":\"$CID\",\"pid\":$pid}" | "$hook" delete
}

@test "egress: in a netns an engine wired, no veth: the filter works inside and refuses the engine's gateway" {
	local hook=$AR_TOP/agentrun-egress pid
	hold_netns ns
	pid=$HELD_PID
	# What Docker's bridge network leaves: an interface, an address, a
	# default route via the bridge's gateway.
	nsenter -t "$pid" -n ip link add eth0 type veth peer name eth1
	nsenter -t "$pid" -n ip addr add 172.31.250.2/24 dev eth0
	nsenter -t "$pid" -n ip link set eth0 up
	nsenter -t "$pid" -n ip route add default via 172.31.250.1
	echo "{\"id\":\"$CID\",\"pid\":$pid}" | "$hook" create --mode allowlist --allow "$EG_NET.2"
	run nsenter -t "$pid" -n nft list chain inet agentrun output
	assert_output_contains "ip daddr 172.31.250.1 goto refuse"
	refute_output_contains "10.213."
	# nothing on the host: no veth, no lease, no host elements
	[ -z "$(egress_leftovers)" ] || fail "host side made: $(egress_leftovers)"
	echo "{\"id\":\"$CID\",\"pid\":$pid}" | "$hook" delete
}

@test "egress: a prestart hook still runs before the egress filter exists; the first connect is filtered" {
	# agentrun runs its own egress hook early, while the init mounts its
	# root, only when nothing must run before it: a prestart hook (Docker's
	# network set-up is one) keeps the hook at its createRuntime place.
	local hook="pid=\$(jq .pid); nsenter -t \$pid -n nft list table inet agentrun >/dev/null 2>&1 && echo filter >$TEST_DIR/prestart || echo nofilter >$TEST_DIR/prestart"
	update_config '.annotations["run.agentrun.egress.allow"] = $allowed
		| .process.args = ["sh", "-c", "printf \"GET / HTTP/1.0\\r\\n\\r\\n\" | nc -w 3 " + $other + " 80 | grep -q HTTP && echo reached || echo refused"]
		| .hooks.prestart = [{"path": "/bin/sh", "args": ["sh", "-c", $hook], "env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]}]' \
		--arg allowed "$EG_NET.2" --arg other "$EG_NET.3" --arg hook "$hook"
	run runtime --profile egresstest run --bundle "$BUNDLE" "$CID"
	assert_success
	assert_output_contains "refused"
	[ "$(cat "$TEST_DIR/prestart")" = nofilter ]
}

@test "egress: a foreground sandbox's resolver is a thread of agentrun, not a process of its own" {
	# The sandbox writes into its overlay: what it found comes on stdout.
	sandbox --allow-net allowed.test -- sh -c '
		getent ahostsv4 allowed.test | head -1; sleep 3' >"$TEST_DIR/resolved" &
	local pid=$! i
	track_pid "$pid"
	for i in $(seq 1 100); do
		[ -s "$TEST_DIR/resolved" ] && break
		sleep 0.1
	done
	grep -q "$EG_NET.2" "$TEST_DIR/resolved"
	# No resolver process, no pid file: nothing for delete to find and kill.
	run pgrep -x agentrun-egress
	assert_failure
	! ls /run/agentrun-egress/*/resolver.pid 2>/dev/null
	wait "$pid"
}

@test "egress: mode none holds when an engine's prestart hook wires the fresh netns (Docker's bridge)" {
	eg_wire_hook 81
	update_config '.process.args = ["sh", "-c", "ip -o -4 addr show eth0 | grep -o 10.251.81.2; " + $get + " 10.251.81.1"]
		| .hooks.prestart = [{"path": $hook, "args": ["wire.sh"], "env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]}]' \
		--arg hook "$TEST_DIR/wire.sh" --arg get "$EG_GET"
	# Without a filter the test host answers: the wiring itself works.
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_success
	assert_output_contains "hello from other"
	runtime delete --force "$CID" >/dev/null 2>&1 || true
	run runtime --profile egresstest run --bundle "$BUNDLE" "$CID"
	assert_success
	assert_output_contains "10.251.81.2"
	assert_output_contains "refused"
	refute_output_contains "hello from other"
}

@test "egress: mode none holds for an interface wired after start (docker network connect, ctr --cni)" {
	update_config '.process.args = ["sleep", "60"]'
	runtime_bg --profile egresstest run --detach --bundle "$BUNDLE" "$CID"
	eg_wire "$(ctr_pid)" 82
	run runtime exec "$CID" sh -c "$EG_GET 10.251.82.1"
	assert_success
	assert_output_contains "refused"
	# lo still works.
	run runtime exec "$CID" sh -c 'nc -l -p 9000 -e echo on-lo & sleep 0.3; nc 127.0.0.1 9000 </dev/null'
	assert_output_contains "on-lo"
}

@test "egress: a netns joined by path (a pod's) is filtered every time, never mistaken for the host's" {
	eg_pod_netns 83
	update_config '.linux.namespaces |= (map(select(.type != "network")) + [{"type": "network", "path": $ns}])
		| .process.args = ["sh", "-c", $get + " 10.251.83.1"]' \
		--arg ns "/proc/$NS_PID/ns/net" --arg get "$EG_GET"
	local i
	for i in $(seq 1 50); do
		run runtime --profile egresstest run --bundle "$BUNDLE" "$CID-$i"
		[ "$status" -eq 0 ] || fail "run $i of 50 failed"
		[[ "$output" == *refused* ]] || fail "run $i of 50 was not filtered"
		[[ "$output" != *"hello from other"* ]] || fail "run $i of 50 reached the test host"
	done
	# The filter lives in the shared netns: the pod's other members see it.
	run nsenter -t "$NS_PID" -n nft list table inet agentrun
	assert_success
}

@test "egress: a rolled-back container gets its egress afresh: the old resolver and lease go, the new one filters, nothing is left after delete" {
	update_config '.annotations["run.agentrun.egress.allow"] = "allowed.test"
		| .process.args = ["sleep", "100"]'
	runtime_bg --profile egresstest run --detach --bundle "$BUNDLE" "$CID"
	runtime --profile egresstest snapshot "$CID" s
	local old new get='printf "GET / HTTP/1.0\r\nHost: $1\r\n\r\n" | nc -w 3 "$1" 80'
	old=$(cut -d' ' -f1 "/run/agentrun-egress/$CID/resolver.pid")
	runtime_bg --profile egresstest rollback "$CID" s
	new=$(cut -d' ' -f1 "/run/agentrun-egress/$CID/resolver.pid")
	[ "$new" != "$old" ] && [ "$(cat "/proc/$new/comm")" = agentrun-egress ] || fail "resolver $old -> $new"
	local i
	for i in $(seq 1 40); do
		[ -d "/proc/$old" ] && ! grep -q '^State:.*Z' "/proc/$old/status" 2>/dev/null || break
		sleep 0.05
	done
	[ "$i" -lt 40 ] || fail "the old resolver $old is still there"
	[ "$(egress_leftovers | grep -c "^veth")" = 1 ] || fail "veths: $(egress_leftovers)"
	run runtime exec "$CID" sh -c "get() { $get; }; get allowed.test; get other.test 2>&1 || echo refused"
	assert_output_contains "hello from allowed"
	refute_output_contains "hello from other"
	run runtime delete --force "$CID"
	assert_success
	egress_leftovers_check
	[ -z "$(egress_leftovers)" ]
}

# ---------------------------------------------------------------- mode ask

# An approver that allows everything but is stopped (kill -CONT it), and
# the profile asktest: mode ask with it, a timeout of 2 s.
silent_approver() {
	approver "allow * *"
	kill -STOP "$APPROVER_PID"
	cat >"$EG_DIR/config/profiles/asktest.json" <<-EOF
	{"extends": "egresstest", "network": {"egress": "ask"}, "approver": {"socket": "$APPROVER", "timeout": "2s"}}
	EOF
}

# Names the test host's dnsmasq was asked for (its query log).
upstream_saw() {
	grep -c "query\[A\] $1 from" "$EG_DIR/dnsmasq.log" || true
}

@test "egress ask: allow-once lets the lookup through and asks again next time; the upstream sees only what was allowed" {
	approver "allow-once dns once.other.test" "deny dns *"
	run sandbox --allow-net allowed.test --approver "$APPROVER" -- sh -c '
		getent ahostsv4 once.other.test | head -1
		curl -4 -sS --max-time 5 http://once.other.test/
		getent ahostsv4 once.other.test >/dev/null && echo again
		getent ahostsv4 never.other.test; echo "never: $?"
		getent ahostsv4 allowed.test >/dev/null && echo allowed'
	assert_success
	assert_output_contains "$EG_NET.3"
	assert_output_contains "hello from other"
	assert_output_contains again
	assert_output_contains "never: 2"
	assert_output_contains allowed
	# Asked at each lookup of once.other.test (getent, curl's, getent), once
	# for never.other.test, never for the allow-list's name.
	[ "$(grep -c 'dns once.other.test: allow-once (rule' "$TEST_DIR/approve.log")" -eq 3 ] \
		|| fail "approver: $(cat "$TEST_DIR/approve.log")"
	grep -q 'dns never.other.test: deny (rule \*)' "$TEST_DIR/approve.log" || fail "approver: $(cat "$TEST_DIR/approve.log")"
	run grep -c allowed.test "$TEST_DIR/approve.log"
	assert_output "0"
	[ "$(upstream_saw once.other.test)" -ge 2 ] || fail "upstream: $(upstream_saw once.other.test)"
	[ "$(upstream_saw never.other.test)" -eq 0 ] || fail "a denied name went upstream"
	# Every question and decision is in the audit log, chained.
	run grep '"event":"approval-request"' "$AUDIT"
	assert_output_contains '"what":"dns","where":"once.other.test","detail":"A"'
	run grep '"event":"approval"' "$AUDIT"
	assert_output_contains '"where":"once.other.test","detail":"A","decision":"allow-once","why":"approver"'
	assert_output_contains '"where":"never.other.test","detail":"A","decision":"deny","why":"approver"'
	run "$RUNTIME" audit "$AUDIT"
	assert_success
}

@test "egress ask: one question for a lookup's AAAA and A, sent one after the other; the next lookup asks again" {
	approver "allow-once dns pair.other.test" "deny dns *"
	# One query of each type, in turn, as a resolver that asks them one
	# after the other does; then a lookup of its own.
	local query='import socket, struct, sys
name, qtype = sys.argv[1], int(sys.argv[2])
q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
q += struct.pack(">HH", qtype, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(10)
s.sendto(q, ("127.0.0.53", 53))
a = s.recv(4096)
print("type", qtype, "rcode", a[3] & 15)'
	run sandbox --approver "$APPROVER" -- sh -c "
		python3 -c '$query' pair.other.test 28
		python3 -c '$query' pair.other.test 1
		python3 -c '$query' pair.other.test 1"
	assert_success
	[ "$(grep -c 'type 1 rcode 0' <<<"$output")" = 2 ] || fail "A lookups: $output"
	# AAAA and the A after it: one question (about the AAAA, the first);
	# the second A: another.
	run grep '"event":"approval-request"' "$AUDIT"
	[ "$(grep -c '"where":"pair.other.test"' <<<"$output")" = 2 ] || fail "questions: $output"
	[ "$(grep -c '"detail":"AAAA"' <<<"$output")" = 1 ] || fail "questions: $output"
	[ "$(grep -c 'dns pair.other.test: allow-once' "$TEST_DIR/approve.log")" -eq 2 ] \
		|| fail "approver: $(cat "$TEST_DIR/approve.log")"
}

@test "egress ask: allow is for the rest of the container's life: asked once; a deny answers NXDOMAIN at once" {
	approver "allow dns always.other.test" "deny dns denied.other.test"
	run sandbox --approver "$APPROVER" -- sh -c '
		for i in 1 2 3; do getent ahostsv4 always.other.test >/dev/null && echo "lookup $i"; done
		start=$(date +%s%N)
		getent ahostsv4 denied.other.test; echo "denied: $? in $((($(date +%s%N) - start) / 1000000)) ms"'
	assert_success
	assert_output_contains "lookup 3"
	[ "$(grep -c 'always.other.test: allow' "$TEST_DIR/approve.log")" -eq 1 ] \
		|| fail "asked more than once: $(cat "$TEST_DIR/approve.log")"
	assert_output_contains "denied: 2 in"
	local ms
	ms=$(echo "$output" | sed -n 's/^denied: 2 in \([0-9]*\) ms$/\1/p')
	[ "$ms" -lt 3000 ] || fail "a denied lookup took $ms ms"
	[ "$(upstream_saw denied.other.test)" -eq 0 ] || fail "a denied name went upstream"
}

@test "egress ask: a silent approver is a deny when its timeout ends; an approver that is gone is a deny at once" {
	silent_approver
	EG_PROFILE=asktest run sandbox -- sh -c '
		start=$(date +%s)
		getent ahostsv4 slow.other.test; echo "slow: $? after $(($(date +%s) - start)) s"'
	kill -CONT "$APPROVER_PID"
	assert_success
	local s
	s=$(echo "$output" | sed -n 's/^slow: 2 after \([0-9]*\) s$/\1/p')
	[ -n "$s" ] && [ "$s" -ge 1 ] && [ "$s" -le 5 ] || fail "output: $output"
	run grep '"event":"approval"' "$AUDIT"
	assert_output_contains '"where":"slow.other.test","detail":"A","decision":"deny","why":"timeout"'
	[ "$(upstream_saw slow.other.test)" -eq 0 ] || fail "a timed-out name went upstream"

	kill -TERM "$APPROVER_PID"
	wait "$APPROVER_PID" || true
	[ ! -e "$APPROVER" ] || fail "approve left its socket"
	run sandbox --approver "$APPROVER" -- sh -c 'getent ahostsv4 gone.other.test; echo "gone: $?"'
	assert_output_contains "gone: 2"
	run grep '"event":"approval"' "$AUDIT"
	assert_output_contains '"where":"gone.other.test","detail":"A","decision":"deny","why":"approver gone"'
}

@test "egress ask: twelve lookups at once each get their own decision" {
	approver "allow-once dns yes*.other.test" "deny dns no*.other.test"
	run sandbox --approver "$APPROVER" -- sh -c '
		for i in 1 2 3 4 5 6; do
			(getent ahostsv4 yes$i.other.test >/dev/null && echo "yes$i resolved" || echo "yes$i refused") &
			(getent ahostsv4 no$i.other.test >/dev/null && echo "no$i resolved" || echo "no$i refused") &
		done
		wait'
	assert_success
	local i
	for i in 1 2 3 4 5 6; do
		assert_output_contains "yes$i resolved"
		assert_output_contains "no$i refused"
	done
	[ "$(grep -c ': allow-once (rule' "$TEST_DIR/approve.log")" -eq 6 ] || fail "$(cat "$TEST_DIR/approve.log")"
	[ "$(grep -c ': deny (rule' "$TEST_DIR/approve.log")" -eq 6 ] || fail "$(cat "$TEST_DIR/approve.log")"
	[ "$(grep -c '"event":"approval"' "$AUDIT")" -eq 12 ] || fail "$(grep approval "$AUDIT")"
}

@test "egress ask: bad input is one line naming it, and leaves nothing" {
	run sandbox --approver /nonexistent/dir/sock -- true
	assert_failure
	assert_output_contains "--approver \`/nonexistent/dir/sock\`"
	cat >"$EG_DIR/config/profiles/asknone.json" <<-EOF
	{"extends": "egresstest", "network": {"egress": "ask"}}
	EOF
	EG_PROFILE=asknone run sandbox -- true
	assert_failure
	assert_output_contains 'egress mode ask needs an approver (profile "asknone": approver.socket, or sandbox --approver SOCKET)'
	cat >"$EG_DIR/config/profiles/askbad.json" <<-EOF
	{"extends": "egresstest", "network": {"egress": "ask"}, "approver": {"socket": "/run/x.sock", "timeout": "1h"}}
	EOF
	EG_PROFILE=askbad run sandbox -- true
	assert_failure
	assert_output_contains ".approver.timeout: expected 1 s to 300 s, got 3600 s"
	[ -z "$(state_entries)" ] || fail "left: $(state_entries)"

	printf 'allow dns a.test\nmaybe dns b.test\n' >"$TEST_DIR/rules"
	run "$RUNTIME" approve --socket "$TEST_DIR/a.sock" --rules "$TEST_DIR/rules"
	assert_failure
	assert_output_contains "$TEST_DIR/rules:2: \`maybe\`: want allow-once, allow or deny"
	printf 'allow program a.test\n' >"$TEST_DIR/rules"
	run "$RUNTIME" approve --socket "$TEST_DIR/a.sock" --rules "$TEST_DIR/rules"
	assert_output_contains "$TEST_DIR/rules:1: \`program\`: want dns, connect, secret, exec or *"
	run "$RUNTIME" approve --rules "$TEST_DIR/rules"
	assert_output_contains "approve: --socket SOCKET is needed"
	run "$RUNTIME" approve --socket "$TEST_DIR/a.sock" --default maybe
	assert_output_contains "approve: --default \`maybe\`: want allow-once, allow or deny"
	touch "$TEST_DIR/file"
	run "$RUNTIME" approve --socket "$TEST_DIR/file"
	assert_output_contains "in use, or not a socket"
	[ ! -e "$TEST_DIR/a.sock" ] || fail "a socket was left"
}

@test "egress ask: a connection outside the allow-list is held until the approver decides: allowed ones go through, refused ones fail at once" {
	approver "allow-once connect $EG_NET.3:80" "deny connect $EG_NET.3:8080" "allow connect $EG_NET.2:8080"
	run sandbox --approver "$APPROVER" -- sh -c "
		curl -sS --max-time 10 http://$EG_NET.3/
		curl -sS --max-time 10 http://$EG_NET.2:8080/ && curl -sS --max-time 10 http://$EG_NET.2:8080/ && echo twice
		start=\$(date +%s)
		curl -sS --max-time 20 http://$EG_NET.3:8080/; echo \"8080: \$? after \$((\$(date +%s) - start)) s\""
	assert_output_contains "hello from other"
	# Refused with a reset once decided (the retried SYN), not left to
	# time out: curl's 7 (could not connect) within a few seconds.
	local s
	s=$(echo "$output" | sed -n 's/^8080: 7 after \([0-9]*\) s$/\1/p')
	[ -n "$s" ] && [ "$s" -le 5 ] || fail "output: $output"
	grep -q "connect $EG_NET.3:80: allow-once (rule" "$TEST_DIR/approve.log" || fail "$(cat "$TEST_DIR/approve.log")"
	grep -q "connect $EG_NET.3:8080: deny (rule" "$TEST_DIR/approve.log" || fail "$(cat "$TEST_DIR/approve.log")"
	# One question per destination, however many retries came; an allow
	# holds for the next connection too.
	[ "$(grep -c "connect $EG_NET.2:8080: allow (rule" "$TEST_DIR/approve.log")" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	assert_output_contains twice
	[ "$(grep -c "connect $EG_NET.3:8080:" "$TEST_DIR/approve.log")" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	run grep '"event":"approval"' "$AUDIT"
	assert_output_contains "\"what\":\"connect\",\"where\":\"$EG_NET.3:80\",\"detail\":\"tcp\",\"decision\":\"allow-once\""
	assert_output_contains "\"what\":\"connect\",\"where\":\"$EG_NET.3:8080\",\"detail\":\"tcp\",\"decision\":\"deny\""
}

@test "egress ask: host services stay refused without a question; a silent approver's connection fails when its timeout ends" {
	silent_approver
	EG_PROFILE=asktest run sandbox -- sh -c "
		curl -sS --max-time 3 http://169.254.169.254/; echo \"metadata: \$?\"
		start=\$(date +%s)
		curl -sS --max-time 20 http://$EG_NET.3/; echo \"held: \$? after \$((\$(date +%s) - start)) s\""
	kill -CONT "$APPROVER_PID"
	assert_output_contains "metadata: 7"
	refute_output_contains "hello from other"
	local s
	s=$(echo "$output" | sed -n 's/^held: 7 after \([0-9]*\) s$/\1/p')
	[ -n "$s" ] && [ "$s" -ge 1 ] && [ "$s" -le 10 ] || fail "output: $output"
	run grep '"event":"approval' "$AUDIT"
	refute_output_contains 169.254
	assert_output_contains "\"where\":\"$EG_NET.3:80\",\"detail\":\"tcp\",\"decision\":\"deny\",\"why\":\"timeout\""
}

@test "egress ask: agentrun approve asks at its terminal when no rule matches" {
	APPROVER=$TEST_DIR/approve.sock
	# A terminal for it (script's pty); "o" answers the one question.
	(printf 'o\n'; sleep 30) | script -qfec "'$RUNTIME' approve --socket '$APPROVER'" /dev/null \
		>"$TEST_DIR/approve.log" 2>&1 &
	track_pid "$!"
	wait_for_file "$APPROVER"
	run sandbox --approver "$APPROVER" -- sh -c 'getent ahostsv4 asked.other.test | head -1'
	assert_success
	assert_output_contains "$EG_NET.3"
	wait_for_file_content "$TEST_DIR/approve.log" "dns asked.other.test: allow-once (terminal)"
	grep -q "container .* asks: dns asked.other.test (A) -- \[o\]nce, \[a\]lways, \[d\]eny?" "$TEST_DIR/approve.log" \
		|| fail "no prompt: $(cat "$TEST_DIR/approve.log")"
}

@test "egress: a create that fails after the egress hook ran (a failing createContainer hook) leaves no veth, lease, host element or resolver" {
	update_config '.annotations["run.agentrun.egress.allow"] = "allowed.test"
		| .hooks.createContainer = [{"path": "/bin/false", "args": ["false"]}]'
	run runtime --profile egresstest run --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_output_contains "error running hook #0 (createContainer /bin/false)"
	[ -z "$(state_entries)" ] || fail "left: $(state_entries)"
	# teardown's egress_leftovers_check: the veth, the lease, the host
	# table's elements, the resolver.
}
