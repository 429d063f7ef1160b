#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The sanitizer build's live run: `top --batch` and `--json` for a few
# intervals while loopback datagrams hit a port nobody listens on.
# Prints "asan-live: N passed, N failed".
set -uo pipefail
bin=${1:?usage: asan-live.sh UDPDROP_BINARY}
cd "$(dirname "$0")/.." || exit 1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=98
udptest=.output/tests/udptest
[[ -x $udptest ]] || make --no-print-directory "$udptest" >/dev/null || exit 1

pass=0 fail=0
run() { # NAME ARGS...
	local name=$1 out err rc
	shift
	out=$(mktemp) err=$(mktemp)
	"$bin" top "$@" >"$out" 2>"$err" &
	local pid=$!
	for _ in $(seq 50); do grep -q 'tracing UDP drops' "$err" && break; sleep 0.1; done
	# loopback only: a port nobody listens on
	"$udptest" send 127.0.0.1:9 -c 20 >/dev/null
	wait "$pid"
	rc=$?
	if ((rc == 0)) && ! grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$err" &&
		grep -q "$(if [[ $* == *--json* ]]; then echo '"final":true'; else echo summary; fi)" "$out"; then
		echo "    ok: $name"
		pass=$((pass + 1))
	else
		echo "    FAIL: $name (exit $rc)"
		sed 's/^/      /' "$err" | head -40
		fail=$((fail + 1))
	fi
	rm -f "$out" "$err"
}
run "top --batch under ASan/UBSan" -b -i 0.5 -n 3 -a
run "top --json under ASan/UBSan" --json -i 0.5 -n 3
echo "asan-live: $pass passed, $fail failed"
((fail == 0))
