#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Run the cmocka unit test binaries given as arguments, show their output,
# and sum their test cases into one last line:
#   unit: N passed, N failed
# Exit status: 0 only if at least one test ran and none failed.
# A binary that dies before its summary (crash, sanitizer abort, failed
# group setup) counts the tests it announced but did not report OK as
# failed; one that runs no cmocka test at all makes the run fail.

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

	# The summary lines only: "[  PASSED  ] 12 test(s)." and
	# "[  FAILED  ] 1 test(s), listed below:" (not the per-test lines).
	ran=$(sed -n 's/^\[==========\] Running \([0-9][0-9]*\) test(s)\.$/\1/p' "$out" | awk '{s += $1} END {print s + 0}')
	p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test(s)\..*$/\1/p' "$out" | awk '{s += $1} END {print s + 0}')
	f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test(s).*$/\1/p' "$out" | awk '{s += $1} END {print s + 0}')
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9][0-9]*\) test(s).*$/\1/p' "$out" | awk '{s += $1} END {print s + 0}')

	if [ "$ran" -eq 0 ]; then
		echo "run-unit: $name ran no cmocka tests (status $rc)" >&2
		broken=$((broken + 1))
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# Died before its summary (e.g. a sanitizer abort) or a group
		# setup failed: the tests that did not report OK failed.
		p=$(grep -c '^\[       OK \]' "$out")
		f=$((ran - p - s))
		[ "$f" -gt 0 ] || f=1
		echo "run-unit: $name exited with status $rc;" \
		     "$f test(s) not reported as passed, counted as failed" >&2
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
done

[ "$skipped" -eq 0 ] || echo "run-unit: $skipped test(s) skipped"
echo "unit: $passed passed, $failed failed"

[ "$failed" -eq 0 ] && [ "$broken" -eq 0 ] && [ "$passed" -gt 0 ]
