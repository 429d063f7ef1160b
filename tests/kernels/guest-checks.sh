#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The kernel matrix's command in the guest (tests/kernels/matrix.sh runs it
# through boot.sh): a probe of udpdrop's load, then the integration tests
# named as arguments. Writes to $UDPDROP_RESULTS:
#   probe   rc=N secs=S (udpdrop top --json -n 1 -i 0.1 -v: the BPF load and
#           one 0.1 s interval) and its stderr after a blank line (-v: the
#           verifier's statistics per program, the time to the attach)
#   tests.log  tests/integration/run.sh's output
set -u
cd "$(dirname "$0")/../.." || exit 1
R=${UDPDROP_RESULTS:?run me through tests/kernels/boot.sh}
UDPDROP=${UDPDROP:-$PWD/udpdrop}

start=${EPOCHREALTIME/./}
"$UDPDROP" top --json -n 1 -i 0.1 -v >/dev/null 2>"$R/probe.err"
rc=$?
us=$((${EPOCHREALTIME/./} - start))
{
	printf 'rc=%d secs=%d.%02d\n\n' "$rc" $((us / 1000000)) $((us % 1000000 / 10000))
	cat "$R/probe.err"
} >"$R/probe"
rm -f "$R/probe.err"
echo "probe: udpdrop top -n 1 -i 0.1: exit $rc in $(sed -n 's/.*secs=//p;q' "$R/probe") s"

tests/integration/run.sh "$@" 2>&1 | tee "$R/tests.log"
exit "${PIPESTATUS[0]}"
