#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# What `make install` adds beside the binary: a man page per command and
# the bash and zsh completion, all made from the tables --help prints.

load helpers

# The commands `agentrun --help` lists.
commands() {
	"$RUNTIME" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'
}

# The flags `agentrun [COMMAND] --help` lists (-x and --name).
flags_of() {
	"$RUNTIME" "$@" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z0-9-]+' | grep -oE -- '-[a-zA-Z]$|-[a-zA-Z],|--[a-z0-9-]+' | tr -d ,
}

# make install-strip (README's install) into $DEST, from the build tree the
# runtime under test is in.
install_into_dest() {
	[ -f "$AR_TOP/Makefile" ] || skip "needs a configured build tree at $AR_TOP"
	DEST=$TEST_DIR/dest
	make -s -C "$AR_TOP" install-strip DESTDIR="$DEST" >"$TEST_DIR/install.log" 2>&1 \
		|| { cat "$TEST_DIR/install.log"; fail "make install-strip failed"; }
	MAN8=$(find "$DEST" -type d -path '*/man/man8')
	BASH_COMPLETION=$(find "$DEST" -path '*/bash-completion/completions/agentrun')
	ZSH_COMPLETION=$(find "$DEST" -path '*/zsh/site-functions/_agentrun')
	[ -d "$MAN8" ] || fail "no man8 directory under $DEST"
}

# The candidates bash completion offers at the end of LINE, with `agentrun`
# the runtime under test.
bash_complete() {
	command -v bash >/dev/null && [ -f /usr/share/bash-completion/bash_completion ] \
		|| skip "needs bash-completion (contrib/install-deps.sh installs it)"
	PATH=$(dirname "$RUNTIME"):$PATH bash --norc "$AR_TOP/tests/tools/complete.bash" "$BASH_COMPLETION" "$1"
}

zsh_complete() {
	command -v zsh >/dev/null || skip "needs zsh (contrib/install-deps.sh installs it)"
	PATH=$(dirname "$RUNTIME"):$PATH timeout 30 zsh -f "$AR_TOP/tests/tools/complete.zsh" "$(dirname "$ZSH_COMPLETION")" "$1"
}

@test "make install-strip puts the stripped binaries and one man page per command, and make uninstall removes them" {
	install_into_dest
	local expected
	expected=$( { echo agentrun.8; commands | sed 's/.*/agentrun-&.8/'; } | sort)
	[ "$(wc -l <<<"$expected")" -ge 20 ] || fail "commands listed: $expected"
	assert_equal "$(ls "$MAN8" | sort)" "$expected"
	[ -f "$BASH_COMPLETION" ] || fail "no bash completion under $DEST"
	[ -f "$ZSH_COMPLETION" ] || fail "no zsh completion under $DEST"
	# Stripped: create, run and exec copy the runtime into a sealed memfd.
	# agentrun is the launcher, or a link to the runtime in a build without.
	local bin bins=(agentrun-runtime agentrun-egress)
	[ -L "$AR_TOP/agentrun" ] || bins+=(agentrun)
	for bin in "${bins[@]}"; do
		bin=$(find "$DEST" -type f -path "*/sbin/$bin")
		[ -x "$bin" ] || fail "no $bin under $DEST"
		! readelf -S "$bin" | grep -qE '\.(symtab|debug_info) ' || fail "$bin is not stripped"
		[ "$(stat -c %s "$bin")" -lt "$(stat -c %s "$AR_TOP/${bin##*/}")" ] || fail "$bin is no smaller than the build's"
	done
	# The installed agentrun finds the runtime installed beside it.
	run "$(find "$DEST" -path '*/sbin/agentrun')" --version
	assert_success
	assert_output_contains "agentrun version "
	make -s -C "$AR_TOP" uninstall DESTDIR="$DEST" >/dev/null 2>&1
	run find "$DEST" -type f -o -type l
	assert_output ""
}

@test "each man page renders without warnings and has every flag its command's --help lists" {
	install_into_dest
	local page verb flag text
	for page in "$MAN8"/*.8; do
		verb=$(basename "$page" .8)
		verb=${verb#agentrun}
		verb=${verb#-}
		if command -v man >/dev/null; then
			text=$(MANWIDTH=300 man --warnings -l "$page" 2>"$TEST_DIR/warnings")
		else
			text=$(groff -man -Tutf8 -ww "$page" 2>"$TEST_DIR/warnings")
		fi
		[ ! -s "$TEST_DIR/warnings" ] || fail "$page: $(cat "$TEST_DIR/warnings")"
		grep -q '^NAME' <<<"$text" || fail "$page: no NAME: $text"
		grep -q '^EXIT STATUS' <<<"$text" || fail "$page: no EXIT STATUS"
		grep -q '^SEE ALSO' <<<"$text" || fail "$page: no SEE ALSO"
		for flag in $(flags_of $verb); do
			grep -qE -- "(^|[ ,])$flag([ ,]|$)" <<<"$text" || fail "$page: $flag missing"
		done
	done
	# The main page lists every command.
	text=$(MANWIDTH=300 man -l "$MAN8/agentrun.8")
	for verb in $(commands); do
		grep -q "agentrun-$verb(8)" <<<"$text" || fail "agentrun.8: no agentrun-$verb(8)"
	done
}

@test "bash completion completes commands, a command's flags and container ids" {
	install_into_dest
	run bash_complete "agentrun sa"
	assert_output sandbox
	run bash_complete "agentrun sandbox --ti"
	assert_output --timeout
	run bash_complete "agentrun --ro"
	assert_equal "$output" "$(printf '%s\n' --root --rootless --rootless-limits)"
	set_args sleep 1000
	ctr_create "$CID-a"
	ctr_create "$CID-b"
	run bash_complete "agentrun --root $ROOT kill "
	assert_equal "$(sort <<<"$output")" "$(printf '%s\n' "$CID-a" "$CID-b")"
	run bash_complete "agentrun --root=$ROOT delete --force ${CID}-a"
	assert_output "$CID-a"
	run bash_complete "agentrun help upd"
	assert_output update
	run bash_complete "agentrun exec $CID-a ech"
	assert_output_contains echo
}

@test "zsh completion completes commands, a command's flags and container ids" {
	install_into_dest
	run zsh_complete "agentrun sa"
	assert_output sandbox
	run zsh_complete "agentrun sandbox --ti"
	assert_output --timeout
	set_args sleep 1000
	ctr_create "$CID-a"
	ctr_create "$CID-b"
	run zsh_complete "agentrun --root $ROOT kill "
	assert_equal "$output" "$(printf '%s\n' "$CID-a" "$CID-b" | sort)"
	run zsh_complete "agentrun sandbox -- ech"
	assert_output_contains echo
}
