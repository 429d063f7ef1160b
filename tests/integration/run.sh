#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# BPF integration tests: real programs, real namespaces, real datagrams,
# exact counts against ground truth (sent - read, ss -uam `d`, the kernel's
# MIB counters, nft counters). Root only. Ends with "N passed, N failed".
#
#   tests/integration/run.sh [TEST...]     (default: all)
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

if [[ $(id -u) -ne 0 ]]; then
	echo "integration tests need root (they load BPF and build namespaces)" >&2
	exit 3
fi
[[ -x $UDPDROP && -x $UDPTEST ]] || { echo "build first: make udpdrop $UDPTEST" >&2; exit 2; }

# ---------------------------------------------------------------------------
# The tests, a file per command or concern (top.sh: top and the causes)

. tests/integration/top.sh
. tests/integration/gensink.sh
. tests/integration/record.sh
. tests/integration/report.sh
. tests/integration/doctor.sh
. tests/integration/lifetimes.sh
. tests/integration/netns.sh
. tests/integration/caps.sh
. tests/integration/hostile.sh
. tests/integration/faults.sh
. tests/integration/static.sh
. tests/integration/sites.sh
. tests/integration/views.sh
. tests/integration/apps.sh
. tests/integration/json.sh
. tests/integration/serve.sh
. tests/integration/deploy.sh
. tests/integration/compat.sh
. tests/integration/mcast.sh

# a helper defined twice, in two files, silently takes the other's place
# (it happened: apps.sh's views_stop replaced views.sh's): refuse to run
twice=$(grep -ho '^[A-Za-z_0-9]*()' tests/integration/*.sh | sort | uniq -d)
if [[ -n $twice ]]; then
	echo "integration: defined more than once in tests/integration: $(echo $twice)" >&2
	exit 1
fi

ALL=$(declare -F | awk '$3 ~ /^test_/ { print $3 }')
SELECTED=("$@")
((${#SELECTED[@]})) || read -r -a SELECTED <<<"$(echo $ALL)"

# A test whose drops come from reassembly timers (TIMER_DROPS) that failed
# runs again (up to twice: below). On the CI VM (6.18) a fragment queue's
# timer sometimes fires in softirq on a thread of PID 1 (the VM's agent),
# and there the kernel runs no BPF program on skb:kfree_skb and counts no
# recursion miss:
# ftrace saw 200 FRAG_REASM_TIMEOUT frees, each of two udpdrop programs
# 198, recursion_misses 0 (test_gen_sink_frag, about 1 run in 8). udpdrop
# says it (reconciliation: "differ by 1" against IpReasmTimeout; the
# ledger's unexplained 1); the test cannot know it was that. A real loss
# fails every run; each retry is printed and counted. Two retries, the
# second after a longer pause: the skips come in spells, and a CI run
# (eb3cbd0's) once failed test_gen_sink_frag twice 15 s apart.
run_one() {
	(FAILED=0; "$1"; ((FAILED == 0)) && exit 0; [[ -n $TIMER_DROPS ]] && exit 3; exit 1)
}

passed=0 failed=0 retried=()
for t in "${SELECTED[@]}"; do
	[[ $t == test_* ]] || t=test_$t
	echo "--- $t"
	if [[ $(type -t "$t") != function ]]; then
		# a name no file defines must not pass (bash says "command not found", exit 127)
		echo "    FAIL: no test $t in tests/integration/*.sh" >&2
		rc=1
	else
		run_one "$t"
		rc=$?
	fi
	# the skipped runs come in spells (two runs of test_demo_interrupt in
	# a row, then none in 14): let one pass before each retry
	for pause in 15 45; do
		((rc == 3)) || break
		echo "--- $t failed with drops from reassembly timers: once more in $pause s (see run.sh)"
		retried+=("$t")
		sleep "$pause"
		run_one "$t"
		rc=$?
	done
	if ((rc == 0)); then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "--- $t FAILED"
	fi
done
((${#retried[@]})) && echo "integration: run again (reassembly timers), once per retry: ${retried[*]}"
echo "integration: $passed passed, $failed failed"
((failed == 0 && passed > 0))
