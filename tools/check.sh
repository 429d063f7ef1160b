#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Every test tier, in order: unit (cmocka, no root), BPF integration (root,
# namespaces, real traffic), sanitizer build (unit + a short live top),
# a 10 s fuzz run of the trace reader.
# Ends with one "check: N passed, N failed" line over all tiers; fails if
# any tier failed or did not run (no root means no BPF tests: that fails).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

total_pass=0 total_fail=0 status=0
log=$(mktemp /tmp/udpdrop-check.XXXXXX)
trap 'rm -f "$log"' EXIT

tier() { # NAME COMMAND...
	local name=$1 line p f
	shift
	echo "=== $name"
	"$@" 2>&1 | tee "$log"
	local rc=${PIPESTATUS[0]}
	# a tier may run several suites: add up every result line
	line=$(grep -E '^[a-z-]+: [0-9]+ passed, [0-9]+ failed' "$log")
	if [[ -z $line ]]; then
		echo "=== $name: no test result line (exit $rc): tier did not run" >&2
		total_fail=$((total_fail + 1))
		status=1
		return
	fi
	p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$line" | awk '{ s += $1 } END { print s }')
	f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line" | awk '{ s += $1 } END { print s }')
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	if ((rc != 0 || f != 0 || p == 0)); then
		echo "=== $name FAILED (exit $rc)" >&2
		status=1
	fi
}

if [[ $(id -u) -ne 0 ]]; then
	echo "check: the BPF integration tests need root: run 'sudo make check'" >&2
	exit 3
fi

tier unit make --no-print-directory unit
tier integration tests/integration/run.sh
tier asan make --no-print-directory asan
tier fuzz tools/fuzz-smoke.sh

echo "check: $total_pass passed, $total_fail failed"
exit $status
