#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Run the cmocka unit test binaries given as arguments, show their output,
# and sum their test cases into one last line:
#   unit: N passed, N failed
# Exit status: 0 only if at least one test ran and none failed.
# A binary that dies before its summary (crash, sanitizer abort) counts the
# tests it announced but did not report as passed as failed.

passed=0
failed=0
skipped=0
broken=0

if [ $# -eq 0 ]; then
	echo "run-unit: no test binaries given" >&2
fi

# cmocka's standard (human) format on stdout, whatever the environment says.
CMOCKA_MESSAGE_OUTPUT=STDOUT
export CMOCKA_MESSAGE_OUTPUT

out=$(mktemp "${TMPDIR:-/tmp}/run-unit.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT
trap 'exit 130' INT TERM

for bin in "$@"; do
	name=$(basename "$bin")
	echo "=== $name"
	if [ ! -x "$bin" ]; then
		echo "run-unit: $bin: not an executable" >&2
		broken=$((broken + 1))
		continue
	fi
	"$bin" >"$out" 2>&1
	rc=$?
	cat "$out"

	# Only the summary lines: "[  PASSED  ] 12 test(s)." and
	# "[  FAILED  ] 1 test(s), listed below:" (not the per-test lines).
	ran=$(sed -n 's/^\[==========\] Running \([0-9][0-9]*\) test(s)\.$/\1/p' "$out" | awk '{s += $1} END {print s + 0}')
	p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test(s)\..*$/\1/p' "$out" | awk '{s += $1} END {print s + 0}')
	f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test(s).*$/\1/p' "$out" | awk '{s += $1} END {print s + 0}')
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9][0-9]*\) test(s).*$/\1/p' "$out" | awk '{s += $1} END {print s + 0}')

	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# died without a failure summary: what did not pass failed
		lost=$((ran - p - s))
		[ "$lost" -gt 0 ] || lost=0
		echo "run-unit: $name exited with status $rc" \
		     "($lost test(s) unaccounted for, counted as failed)" >&2
		f=$lost
		broken=$((broken + 1))
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
done

[ "$skipped" -eq 0 ] || echo "unit: $skipped skipped"
echo "unit: $passed passed, $failed failed"

[ "$failed" -eq 0 ] && [ "$broken" -eq 0 ] && [ "$passed" -gt 0 ]
