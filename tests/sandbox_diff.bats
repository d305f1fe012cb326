#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# `agentrun sandbox --diff FILE` on a git repository of 10,000 files: the
# diff is applied with `git apply` to a fresh clone of the original, and
# the result is compared, file by file (content, exec bit, symlink
# target), with the workspace the command left, which the command tars
# to /output. Every test also checks the sandbox left nothing behind
# (common_teardown).

load helpers

setup_file() {
	[ "$(id -u)" -eq 0 ] || skip "the suites run real containers: run as root"
	export REPO=$BATS_FILE_TMPDIR/repo
	make_repo "$REPO"
}

setup() {
	common_setup
	OUT=$TEST_DIR/out
	mkdir -p "$OUT"
	# The clones and the final tree (10,000 files each) on a tmpfs: this
	# is where the suite's time goes on a disk that is slow to create files.
	SCRATCH=$(mktemp -d /dev/shm/agentrun-diff.XXXXXX 2>/dev/null) || SCRATCH=$(mktemp -d "$TEST_DIR/scratch.XXXXXX")
	[ -z "$AR_TEST_USER" ] || chown "$AR_TEST_USER:$AR_TEST_USER" "$OUT" "$SCRATCH"
	export AGENTRUN_CONFIG_DIR=$TEST_DIR/cfg
	mkdir -p "$AGENTRUN_CONFIG_DIR"
}

teardown() {
	[ -z "${SCRATCH:-}" ] || rm -rf "$SCRATCH"
	common_teardown
}

# The original workspace: 10,000 text files in 100 directories, a
# .gitignore, a text, a binary and a script, a tree with symlinks; one
# commit on branch main; an ignored build/ with a file. A user's sandbox
# gets a repository the user owns.
make_repo() {
	local d
	mkdir -p "$1" && cd "$1" || return 1
	git init -q -b main
	# 10,000 loose objects are past gc.auto: the commit would start a
	# background gc that packs them while a test clones the repository
	# ("failed to copy file": a loose object gone under the copy).
	git config gc.auto 0
	for d in $(seq 0 99); do
		mkdir "src/d$d" -p
		seq 0 99 | sed "s|.*|echo 'file $d &' >src/d$d/f&.txt|" | sh
	done
	printf 'build/\n*.o\n' >.gitignore
	seq 1 50 | sed 's/^/line /' >doc.txt
	printf 'head\0\1\2\3binary\n' >data.bin
	echo 'echo hi' >run.sh
	mkdir -p tree/sub
	echo a >tree/a.txt
	echo b >tree/sub/b.txt
	ln -s a.txt tree/link
	ln -s ../a.txt tree/sub/up
	ln -s /nowhere tree/dangling
	git add -A
	git -c user.name=t -c user.email=t@t commit -qm original
	# A build output of the original workspace: ignored, in no checkout.
	mkdir build && echo stale >build/stale.o
	cd - >/dev/null || return 1
	if [ -n "${AR_TEST_USER:-}" ]; then
		chown -R "$AR_TEST_USER:$AR_TEST_USER" "$1"
		# A user's sandbox must reach it: the dirs above it searchable.
		d=$1
		while [ "$d" != "$(dirname "$BATS_RUN_TMPDIR")" ] && [ "$d" != / ]; do
			d=$(dirname "$d")
			chmod o+x "$d"
		done
	fi
}

# git on the host, as the user whose repository it is.
host_git() {
	"${AR_AS_USER[@]}" git "$@"
}

# diff_sandbox ARGS... -- SCRIPT: SCRIPT in a sandbox on the repository
# (--diff $TEST_DIR/changes.diff and the ARGS), which then tars the
# workspace it leaves to /output, without .git and what the repository
# ignores (build/, *.o: what no checkout has).
diff_sandbox() {
	local args=()
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	(cd "$REPO" && runtime sandbox --no-tty --output "$OUT" --diff "$TEST_DIR/changes.diff" "${args[@]}" \
		-- sh -c "($2) && tar -czf /output/ws.tgz --exclude=./.git --exclude=./build --exclude=\"*.o\" ." )
}

# The workspace the command left, from its tarball, at $SCRATCH/final.
final_tree() {
	local tarball
	tarball=$(find "$OUT" -name ws.tgz)
	[ -f "$tarball" ] || { echo "no ws.tgz in $OUT" >&2; return 1; }
	mkdir -p "$SCRATCH/final"
	tar -xzf "$tarball" -C "$SCRATCH/final"
}

# The diff applied by `git apply` to a fresh clone of the original, at
# $SCRATCH/clone.
applied_clone() {
	host_git clone -q "$REPO" "$SCRATCH/clone"
	host_git -C "$SCRATCH/clone" apply "$TEST_DIR/changes.diff"
}

# What git keeps of a tree: each file with its exec bit and its sha256,
# each symlink with its target; no .git, no directories.
tree_manifest() {
	(
		cd "$1" || exit 1
		find . -path ./.git -prune -o -type l -printf 'link %p -> %l\n' \
			-o -type f -perm -u+x -printf 'exec %p\n' -o -type f -printf 'file %p\n'
		find . -path ./.git -prune -o -type f -print0 | xargs -0 -r sha256sum
	) | sort
}

# The clone with the diff applied is the workspace the command left.
assert_trees_equal() {
	local want got
	want=$(tree_manifest "$SCRATCH/final")
	got=$(tree_manifest "$SCRATCH/clone")
	[ "$(grep -c . <<<"$want")" -gt 19000 ] || fail "the final tree is not the whole repository"
	[ "$want" = "$got" ] || fail "trees differ: $(diff <(echo "$want") <(echo "$got") | head -20)"
}

# The sandbox, the clone, the apply and the comparison in one.
check_case() {
	run diff_sandbox "$@"
	assert_success
	final_tree
	applied_clone
	assert_trees_equal
}

@test "diff: a text edit applies with git apply, nothing else is in it, and no .git" {
	check_case -- 'sed -i "s/^line 25$/line 25 edited/" doc.txt && echo more >>src/d42/f7.txt &&
		git status --short >/dev/null'
	local d=$TEST_DIR/changes.diff
	[ "$(grep -c '^diff --git' "$d")" = 2 ] || fail "$(cat "$d")"
	grep -qx '+line 25 edited' "$d" && grep -qx -- '-line 25' "$d"
	! grep -q '\.git/' "$d" || fail ".git in the diff: $(grep '\.git/' "$d")"
}

@test "diff: a new file in a new directory and a deleted file apply" {
	check_case -- 'mkdir -p lib/new && printf "a\nb\nno newline" >lib/new/x.c && rm src/d3/f3.txt && : >empty'
	grep -q '^new file mode 100644' "$TEST_DIR/changes.diff"
	grep -q '^deleted file mode 100644' "$TEST_DIR/changes.diff"
	[ -f "$SCRATCH/clone/empty" ] && [ ! -e "$SCRATCH/clone/src/d3/f3.txt" ]
}

@test "diff: a new and a changed binary file apply as GIT binary patch" {
	check_case -- 'head -c 100000 /dev/urandom >new.bin && printf "\0changed\377" >>data.bin'
	[ "$(grep -c '^GIT binary patch' "$TEST_DIR/changes.diff")" = 2 ] || fail "$(head -c 2000 "$TEST_DIR/changes.diff")"
	! grep -q '^Binary files' "$TEST_DIR/changes.diff"
}

@test "diff: chmod +x and -x apply as mode changes" {
	check_case -- 'chmod +x run.sh && chmod 0700 src/d0/f1.txt && chmod +x doc.txt && chmod -x doc.txt'
	grep -qx 'new mode 100755' "$TEST_DIR/changes.diff"
	[ -x "$SCRATCH/clone/run.sh" ] && [ -x "$SCRATCH/clone/src/d0/f1.txt" ] && [ ! -x "$SCRATCH/clone/doc.txt" ]
	[ "$(grep -c '^diff --git' "$TEST_DIR/changes.diff")" = 2 ] || fail "$(cat "$TEST_DIR/changes.diff")"
}

@test "diff: new symlinks (relative, absolute, dangling) and a file turned into a symlink apply" {
	check_case -- 'ln -s doc.txt rel && ln -s /etc/hostname abs && ln -s missing/x dangling &&
		ln -sf tree/a.txt run.sh && ln -sfn ../d2 src/d1/link'
	grep -q '^new file mode 120000' "$TEST_DIR/changes.diff"
	[ "$(readlink "$SCRATCH/clone/run.sh")" = tree/a.txt ] && [ "$(readlink "$SCRATCH/clone/abs")" = /etc/hostname ]
}

@test "diff: deleting trees with symlinks gives one deletion per file, symlinks too; directories replaced by a file or a symlink apply" {
	check_case -- 'rm -rf tree src/d10 src/d11 && rm -rf src/d12 && echo now-a-file >src/d12 &&
		rm -rf src/d13 && ln -s d14 src/d13'
	local d=$TEST_DIR/changes.diff
	[ "$(grep -c '^deleted file mode 120000' "$d")" = 3 ] || fail "symlink deletions: $(grep -c '^deleted file mode 120000' "$d")"
	[ "$(grep -c '^deleted file mode 100644' "$d")" = 402 ] || fail "file deletions: $(grep -c '^deleted file mode 100644' "$d")"
	[ "$(cat "$SCRATCH/clone/src/d12")" = now-a-file ] && [ ! -e "$SCRATCH/clone/tree" ]
	[ "$(readlink "$SCRATCH/clone/src/d13")" = d14 ]
}

@test "diff: exact moves (a file, a binary, a symlink, a directory) are git renames; an edited move is a deletion and a creation" {
	check_case -- 'mv doc.txt doc-moved.txt && mv data.bin lib.bin && mv tree/link tree/sub/link2 &&
		mv src/d20 src/moved20 && mv src/d21/f1.txt src/d21/g1.txt && echo edit >>src/d21/g1.txt &&
		mkdir -p a/b && mv src/d22/f5.txt a/b/f5.txt'
	local d=$TEST_DIR/changes.diff
	# doc.txt, data.bin, the link, d20's 100 files and f5.txt: 104 renames,
	# each its four header lines and no content.
	[ "$(grep -c '^similarity index 100%$' "$d")" = 104 ] || fail "renames: $(grep -c '^similarity index 100%$' "$d")"
	grep -qx 'rename from doc.txt' "$d" && grep -qx 'rename to doc-moved.txt' "$d"
	grep -qx 'rename from src/d22/f5.txt' "$d" && grep -qx 'rename to a/b/f5.txt' "$d"
	grep -qx 'rename from tree/link' "$d" && grep -qx 'rename to tree/sub/link2' "$d"
	! grep -q '^GIT binary patch' "$d" || fail "the moved binary's bytes are in the diff"
	! grep -q '^+line 25$' "$d" || fail "the moved text's lines are in the diff"
	# Moved and edited: not a rename at 100%, so both whole.
	grep -qx 'deleted file mode 100644' "$d" && grep -q '^+edit$' "$d"
	! grep -qx 'rename to src/d21/g1.txt' "$d"
	[ "$(grep -c '^diff --git' "$d")" = 106 ] || fail "sections: $(grep -c '^diff --git' "$d")"
}

@test "diff: commits made in the sandbox come back as FILE.bundle; the diff is against the original HEAD" {
	# With a secret the commits do not hold, looked for and not found.
	printf 'not-in-any-commit-%s' "$RANDOM" >"$TEST_DIR/secret"
	check_case --secret "tok=$TEST_DIR/secret" -- 'git config user.name agent && git config user.email agent@sandbox &&
		echo committed >>doc.txt && git commit -qam "agent: edit doc" && echo uncommitted >>src/d5/f5.txt'
	local d=$TEST_DIR/changes.diff original
	! grep -q '\.git/' "$d" || fail ".git in the diff"
	grep -qx '+committed' "$d" && grep -qx '+uncommitted' "$d"
	# The bundle has the commit, on top of the original HEAD.
	original=$(host_git -C "$REPO" rev-parse HEAD)
	host_git clone -q "$REPO" "$SCRATCH/fetched"
	host_git -C "$SCRATCH/fetched" fetch -q "$d.bundle" main
	[ "$(host_git -C "$SCRATCH/fetched" log -1 --format=%s FETCH_HEAD)" = "agent: edit doc" ]
	[ "$(host_git -C "$SCRATCH/fetched" rev-parse FETCH_HEAD~1)" = "$original" ]
	host_git -C "$SCRATCH/fetched" show FETCH_HEAD:doc.txt | cmp - "$SCRATCH/final/doc.txt"
	host_git -C "$SCRATCH/fetched" show FETCH_HEAD:src/d5/f5.txt | cmp - "$REPO/src/d5/f5.txt"
	# The original repository is as it was.
	[ "$(host_git -C "$REPO" rev-parse HEAD)" = "$original" ] && [ -z "$(host_git -C "$REPO" status --porcelain)" ]
}

@test "diff: no FILE.bundle when HEAD did not move (an old one is removed)" {
	echo stale >"$TEST_DIR/changes.diff.bundle"
	check_case -- 'echo x >>doc.txt'
	[ ! -e "$TEST_DIR/changes.diff.bundle" ]
}

# A secret as --secret tok=FILE gives it: $secret, its value.
make_secret() {
	secret=bundle-secret-$RANDOM$RANDOM
	printf '%s' "$secret" >"$TEST_DIR/secret"
}

# No FILE.bundle (a stale one is gone), one line on stderr naming it, the
# audit log's diff event listing it as withheld, and the value nowhere.
assert_bundle_withheld() {
	local d=$TEST_DIR/changes.diff
	[ ! -e "$d.bundle" ] || fail "a bundle was written"
	[ "$(grep -cF "withheld \`$d.bundle\` (a new commit contains secret tok)" <<<"$output")" = 1 ] || fail "not one line"
	[ "$(jq -r 'select(.event == "diff") | .withheld[] | select(.path == "'"$d.bundle"'") | .reason' "$TEST_DIR/audit.log")" \
		= "a new commit contains secret tok" ] || fail "not in the audit log: $(cat "$TEST_DIR/audit.log")"
	[ "$(jq -r 'select(.event == "diff") | .bundle' "$TEST_DIR/audit.log")" = null ]
	! grep -qF -- "$secret" "$TEST_DIR/audit.log" "$d" || fail "the secret is in the audit log or the diff"
	refute_output_contains "$secret"
}

@test "diff: no FILE.bundle when a new commit holds a file with a secret's value, even one removed by a later commit" {
	local secret
	make_secret
	echo stale >"$TEST_DIR/changes.diff.bundle"
	run diff_sandbox --secret "tok=$TEST_DIR/secret" --audit "$TEST_DIR/audit.log" -- \
		'git config user.name agent && git config user.email agent@sandbox &&
		cp /run/secrets/tok leaked.txt && echo clean >>doc.txt && git add -A && git commit -qm "agent: add"'
	assert_success
	assert_output_contains "exit status 0 is kept"
	assert_bundle_withheld
	grep -qx 'agentrun: withheld b/leaked.txt (contains secret tok)' "$TEST_DIR/changes.diff"
	grep -qx '+clean' "$TEST_DIR/changes.diff"

	# Gone from the workspace, the file is still in the commits.
	rm "$TEST_DIR/audit.log"
	run diff_sandbox --secret "tok=$TEST_DIR/secret" --audit "$TEST_DIR/audit.log" -- \
		'git config user.name agent && git config user.email agent@sandbox &&
		cp /run/secrets/tok leaked.txt && git add leaked.txt && git commit -qm "agent: add" &&
		git rm -q leaked.txt && echo clean >>doc.txt && git commit -qam "agent: clean"'
	assert_success
	assert_bundle_withheld
	[ "$(grep -c '^diff --git' "$TEST_DIR/changes.diff")" = 1 ] || fail "$(cat "$TEST_DIR/changes.diff")"
}

@test "diff: no FILE.bundle when a new commit's message or the branch's name holds a secret's value; --diff-strict exits 125" {
	local secret
	make_secret
	run diff_sandbox --secret "tok=$TEST_DIR/secret" --audit "$TEST_DIR/audit.log" --diff-strict -- \
		'echo clean >>doc.txt && git -c user.name=agent -c user.email=agent@sandbox commit -qam "agent: $(cat /run/secrets/tok)"'
	assert_failure 125
	assert_output_contains "the command exited 0"
	assert_bundle_withheld
	grep -qx '+clean' "$TEST_DIR/changes.diff"

	# A branch named after it: the bundle would carry the name.
	rm "$TEST_DIR/audit.log"
	run diff_sandbox --secret "tok=$TEST_DIR/secret" --audit "$TEST_DIR/audit.log" -- \
		'git checkout -qb "x-$(cat /run/secrets/tok)" && echo clean >>doc.txt &&
		git -c user.name=agent -c user.email=agent@sandbox commit -qam "agent: clean"'
	assert_success
	assert_bundle_withheld
}

@test "diff: gitignored files are left out, made or deleted; --diff-ignored keeps them" {
	local build='rm build/stale.o && echo out >build/app && echo obj >src/d1/x.o'
	check_case -- "$build && echo src >src/d1/x.c"
	[ "$(grep -c '^diff --git' "$TEST_DIR/changes.diff")" = 1 ] || fail "$(cat "$TEST_DIR/changes.diff")"
	[ -f "$SCRATCH/clone/src/d1/x.c" ] && [ ! -e "$SCRATCH/clone/src/d1/x.o" ] && [ ! -e "$SCRATCH/clone/build" ]

	# Kept, they apply to the workspace itself (a copy), not to a checkout.
	run diff_sandbox --diff-ignored -- "$build"
	assert_success
	[ "$(grep -c '^diff --git' "$TEST_DIR/changes.diff")" = 3 ] || fail "$(cat "$TEST_DIR/changes.diff")"
	cp -a "$REPO" "$SCRATCH/copy"
	host_git -C "$SCRATCH/copy" apply "$TEST_DIR/changes.diff"
	[ "$(cat "$SCRATCH/copy/build/app")" = out ] && [ "$(cat "$SCRATCH/copy/src/d1/x.o")" = obj ]
	[ ! -e "$SCRATCH/copy/build/stale.o" ]
}

@test "diff: without git on the host, one line says so; the diff still applies, nothing ignored, no bundle" {
	# The host tools the runtime calls, git not among them.
	local bin=$TEST_DIR/bin tool
	mkdir "$bin"
	for tool in diff timeout setpriv env newuidmap newgidmap pasta; do
		! command -v "$tool" >/dev/null || ln -s "$(command -v "$tool")" "$bin/$tool"
	done
	! PATH=$bin command -v git || fail "git still on the PATH"
	PATH=$bin run diff_sandbox -- 'echo x >>doc.txt && echo obj >src/d1/y.o && git -c user.name=a -c user.email=a@a commit -qam agent'
	assert_success
	[ "$(grep -c 'git not found' <<<"$output")" = 1 ] || fail "no one line about git"
	grep -q '^diff --git a/src/d1/y.o' "$TEST_DIR/changes.diff" && grep -qx '+x' "$TEST_DIR/changes.diff"
	[ ! -e "$TEST_DIR/changes.diff.bundle" ]
	applied_clone
	[ "$(cat "$SCRATCH/clone/src/d1/y.o")" = obj ] && [ "$(tail -1 "$SCRATCH/clone/doc.txt")" = x ]
}

@test "diff: --diff into a missing directory is refused before the command runs" {
	run diff_sandbox --diff "$TEST_DIR/missing/x.diff" -- 'touch /output/ran'
	assert_failure
	[ "$(grep -c -- '--diff' <<<"$output")" = 1 ] || fail "not one line naming --diff"
	assert_output_contains "$TEST_DIR/missing/x.diff"
	assert_output_contains "No such file or directory"
	[ -z "$(find "$OUT" -mindepth 1)" ] || fail "the command ran: $(find "$OUT")"
	[ ! -e "$TEST_DIR/missing" ]
	# The same command with a good --diff does leave its mark.
	run diff_sandbox -- 'touch /output/ran'
	assert_success
	[ -n "$(find "$OUT" -name ran)" ] || fail "no mark of the command"
}

@test "diff: a failing diff keeps the command's status, says so in one line and in the audit log; --diff-strict exits 125" {
	# A HEAD that leads out of .git: the diff is still written, without
	# the ignored files dropped; the failure is reported.
	local break_head='echo x >>doc.txt && echo "ref: refs/heads/../../../etc/passwd" >.git/HEAD; exit 3'
	run diff_sandbox --audit "$TEST_DIR/audit.log" -- "$break_head"
	assert_failure 3
	[ "$(grep -c -- '--diff' <<<"$output")" = 1 ] || fail "not one line"
	assert_output_contains "HEAD names"
	assert_output_contains "exit status 3 is kept"
	grep -qx '+x' "$TEST_DIR/changes.diff"
	[ "$(jq -r 'select(.event == "diff") | .error' "$TEST_DIR/audit.log")" != null ] || fail "no error in the audit log"

	run diff_sandbox --diff-strict -- "$break_head"
	assert_failure 125
	assert_output_contains "the command exited 3"
}

# README's "An agent's run end to end" block, run as written on a small C
# project of the test's own (its ~/src/project and /tmp/agent.diff moved
# into the test's dir; `agentrun` on the PATH is this tree's, with the
# test's --root).
@test "diff: README's agent run works as written: edit, build, test and commit in the sandbox; the diff and the bundle apply to the real checkout" {
	command -v cc >/dev/null && command -v make >/dev/null || skip "no cc or make"
	local proj=$TEST_DIR/project block
	mkdir -p "$proj/src" "$TEST_DIR/bin"
	printf 'int main (void) { return 0; } /* TODO */\n' >"$proj/src/main.c"
	printf 'main: src/main.c\n\tcc -o main src/main.c\ntest: main\n\t./main && grep -q done src/main.c\n' >"$proj/Makefile"
	echo main >"$proj/.gitignore"
	git -C "$proj" init -q -b main && git -C "$proj" add -A &&
		git -C "$proj" -c user.name=t -c user.email=t@t commit -qm original
	printf '#!/bin/sh\nexec %q --root %q "$@"\n' "$RUNTIME" "$ROOT" >"$TEST_DIR/bin/agentrun"
	chmod 0755 "$TEST_DIR/bin/agentrun"
	[ -z "$AR_TEST_USER" ] || chown -R "$AR_TEST_USER:$AR_TEST_USER" "$proj"
	block=$(awk '/^An agent.s run end to end/ {q=1} q && /^```sh/ {f=1; next} f && /^```/ {exit} f' "$AR_TOP/README.md")
	[ -n "$block" ] || fail "no such block in README.md"
	block=${block//\~\/src\/project/$proj}
	block=${block//\/tmp\/agent.diff/$TEST_DIR/agent.diff}
	run timeout 120 "${AR_AS_USER[@]}" env PATH="$TEST_DIR/bin:$PATH" bash -ec "$block" </dev/null
	assert_success
	assert_output_contains "agent: fix"
	# The real checkout: the edit applied, built and tested there too.
	grep -q '/\* done \*/' "$proj/src/main.c" || fail "the diff was not applied: $(cat "$proj/src/main.c")"
	[ "$(host_git -C "$proj" log -1 --format=%s FETCH_HEAD)" = "agent: fix" ]
	! grep -q '^diff --git a/main ' "$TEST_DIR/agent.diff" || fail "the ignored build output is in the diff"
	"${AR_AS_USER[@]}" make -s -C "$proj" test
}
