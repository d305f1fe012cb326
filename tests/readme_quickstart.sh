#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Run README's quick-start block exactly as written (the first ```sh block
# under "## Quick start") and check it ran the container. Prints a summary
# line "1 passed, 0 failed" or "0 passed, 1 failed".
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1

block=$(awk '/^## Quick start/ {q=1} q && /^```sh/ {f=1; next} f && /^```/ {exit} f' README.md)
if [ -z "$block" ]; then
	echo "readme: no quick-start block found"
	echo "0 passed, 1 failed"
	exit 1
fi
rm -rf /tmp/hello
out=$(bash -c "$block" 2>&1)
status=$?
echo "$out" | tail -5
if [ $status -eq 0 ] && grep -qx 'hello from agentrun' <<<"$out"; then
	echo "1 passed, 0 failed"
else
	echo "readme quick start failed (status $status)"
	echo "0 passed, 1 failed"
	exit 1
fi
