#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The directories' dependencies as DESIGN.md draws them, checked:
#
#   tests/tools/layering.sh TREE [BUILD]
#
# Every #include "..." of a source under TREE must point to a directory
# its own may use (the table below), and, when BUILD holds the objects,
# no object of src/core may need a symbol that only src/agent defines:
# the core compiles and links without the agent policy. Prints each
# arrow that breaks a rule and exits 1; silent and 0 when all hold.
set -uo pipefail

TREE=$(cd "${1:?usage: layering.sh TREE [BUILD]}" && pwd)
BUILD=${2:-}
cd "$TREE" || exit 2

# Directory -> the directories it may include from (its own always).
# core and agent are siblings: the core reaches the policy only through
# the callbacks src/cmd/agent_stage.c installs.
declare -A may=(
	[src/util]=""
	[oci]="src/util"
	[hooks]="oci src/util"
	[src/core]="src/core/cgroups oci src/util"
	[src/core/cgroups]="oci src/util"
	[src/agent]="hooks oci src/util"
	[src/cmd]="src/agent src/core src/core/cgroups oci src/util"
	[src]="src/cmd src/core src/util"
	# The launcher links nothing of the runtime: from src/core it may take
	# only launcher_wire.h, definitions alone (checked below).
	[launcher]="src/core"
)

bad=0
while IFS= read -r file; do
	dir=$(dirname "$file")
	[ -n "${may[$dir]+set}" ] || { echo "$file: its directory $dir has no rule"; bad=1; continue; }
	while IFS= read -r inc; do
		target=$(realpath -m --relative-to=. "$dir/$inc")
		[ -e "$target" ] || continue # config.h and generated headers
		to=$(dirname "$target")
		[ "$to" = "$dir" ] && continue
		if [ "$dir" = launcher ] && [ "$to" = src/core ] && [ "$(basename "$target")" != launcher_wire.h ]; then
			echo "$file includes $inc: the launcher may take only src/core/launcher_wire.h"
			bad=1
			continue
		fi
		case " ${may[$dir]} " in
		*" $to "*) ;;
		*) echo "$file includes $inc: $dir may not depend on $to"; bad=1 ;;
		esac
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done < <(git ls-files 'src/*.[ch]' 'oci/*.[ch]' 'hooks/*.[ch]' 'launcher/*.[ch]' 2>/dev/null || find src oci hooks launcher -name '*.[ch]' 2>/dev/null)

# Symbols: what the core's objects leave undefined against what only the
# agent's define.
if [ -n "$BUILD" ]; then
	shopt -s nullglob globstar
	core=("$BUILD"/src/core/**/*.o)
	agent=("$BUILD"/src/agent/*.o)
	if [ ${#core[@]} -eq 0 ] || [ ${#agent[@]} -eq 0 ]; then
		echo "no objects of src/core or src/agent under $BUILD"
		exit 1
	fi
	needed=$(nm -u "${core[@]}" | awk 'NF == 2 { print $2 }' | sort -u)
	defined=$(nm --defined-only "${agent[@]}" | awk '$2 ~ /^[TDBR]$/ { print $3 }' | sort -u)
	while IFS= read -r sym; do
		[ -n "$sym" ] || continue
		echo "src/core needs $sym, which only src/agent defines"
		bad=1
	done < <(comm -12 <(echo "$needed") <(echo "$defined"))
fi
exit "$bad"
