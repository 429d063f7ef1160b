#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The kernel matrix: boot each Debian kernel under QEMU (tests/kernels/boot.sh),
# run the core integration tests in it, print one table kernel x check.
#
#   tests/kernels/matrix.sh [KERNEL...]    (default: bullseye bookworm trixie sid)
#
# A cell is `exact` (every count equal to ground truth), `refused, ok` (a
# mode the kernel cannot count exactly, refused as it must be: the test
# checked the one-line refusal and that nothing stayed loaded), `off by N` (the
# first failing comparison was numeric: got - want), `refused: WHY` (udpdrop
# exited 4 and said WHY), or `FAIL: LINE` (the first failing line). Exits 1
# unless every cell is exact. Build first (make check-kernels does).
# UDPDROP_MATRIX_RESULTS: where each kernel's logs go (default .output/kernels):
#   KERNEL/console.log, KERNEL/tests.log, KERNEL/probe, table.txt
# UDPDROP_MATRIX_JOBS: guests at once (default 2)
# UDPDROP_MATRIX_SMP: vCPUs per guest (default 1)
# UDPDROP_MATRIX_TIMEOUT: seconds per guest before it is killed (default 1800)
# UDPDROP_MATRIX_CHECKS: only these checks (names from the table)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

RES=${UDPDROP_MATRIX_RESULTS:-.output/kernels}
JOBS=${UDPDROP_MATRIX_JOBS:-2}
SMP=${UDPDROP_MATRIX_SMP:-1}
TIMEOUT=${UDPDROP_MATRIX_TIMEOUT:-1800}

# check name -> the integration tests behind it (all must be exact). Only
# checks whose truth holds at any CPU speed: gen_sink_clean (no drop at all
# at 10 Mbit/s) is the host's, an emulated CPU may not keep up; the ledger
# under drops (gen_sink_rcvbuf) must balance anywhere.
CHECKS=(
	"rcvbuf/tp_btf=rcvbuf"
	"rcvbuf/raw_tp=rcvbuf_raw_tp_no_rx_sk"
	"rcvbuf/tracepoint=rcvbuf_tracepoint"
	"no_socket=no_socket"
	"multicast=mcast_unjoined_group mcast_unwanted mcast_members mcast_member_closes"
	"gso/gro=gso_gro_rcvbuf gso_no_socket"
	"checksum=checksum"
	"frag_timeout=frag_timeout frag_timeout_no_head frag_timeout_first_dropped"
	"reassembly=rcvbuf_fragmented"
	"record+report=record_rcvbuf report_round_trip"
	"doctor=doctor_rcvbuf"
	"windows=advice_windows_one_run"
	"socket_close/shared=close_shared_port_top close_shared_port_record"
	"gen/sink=gen_sink_rcvbuf"
	"static=static_empty_root"
)
if [[ -n ${UDPDROP_MATRIX_CHECKS:-} ]]; then
	sel=()
	for c in "${CHECKS[@]}"; do
		[[ " $UDPDROP_MATRIX_CHECKS " == *" ${c%%=*} "* ]] && sel+=("$c")
	done
	((${#sel[@]})) || { echo "matrix: no check named in UDPDROP_MATRIX_CHECKS='$UDPDROP_MATRIX_CHECKS'" >&2; exit 2; }
	CHECKS=("${sel[@]}")
fi
KERNELS=("$@")
((${#KERNELS[@]})) || KERNELS=(bullseye bookworm trixie sid)

[[ $(id -u) == 0 ]] || { echo "matrix: needs root: run 'sudo make check-kernels'" >&2; exit 3; }
[[ -x ./udpdrop && -x .output/tests/udptest && -x .output/tests/tracecat ]] ||
	{ echo "matrix: build first: make check-kernels" >&2; exit 2; }

tests=()
for c in "${CHECKS[@]}"; do tests+=(${c#*=}); done

mkdir -p "$RES"
# fetch one at a time (one private apt state); a kernel that cannot be
# fetched is a failed row, said loudly, never skipped
declare -A fetch_failed=()
for k in "${KERNELS[@]}"; do
	rm -rf "${RES:?}/$k"
	mkdir -p "$RES/$k"
	if ! tests/kernels/fetch.sh "$k" >"$RES/$k/fetch.log" 2>&1; then
		fetch_failed[$k]=$(tail -n 1 "$RES/$k/fetch.log")
		echo "matrix: $k: CANNOT FETCH: ${fetch_failed[$k]}" >&2
	fi
done

run_one() { # KERNEL
	local k=$1 start=$SECONDS
	tests/kernels/boot.sh --results "$RES/$k" --timeout "$TIMEOUT" --smp "$SMP" \
		"$k" -- tests/kernels/guest-checks.sh "${tests[@]}" >/dev/null 2>"$RES/$k/boot.err"
	echo "matrix: $k: done in $((SECONDS - start)) s: $(tail -n 1 "$RES/$k/boot.err")" >&2
}

echo "matrix: ${#KERNELS[@]} kernels x ${#CHECKS[@]} checks (${#tests[@]} tests), $JOBS guests at once, $SMP vCPU each; logs in $RES" >&2
start=$SECONDS
running=0
for k in "${KERNELS[@]}"; do
	[[ -n ${fetch_failed[$k]:-} ]] && continue
	if ((running >= JOBS)); then
		wait -n
		running=$((running - 1))
	fi
	run_one "$k" &
	running=$((running + 1))
done
wait
echo "matrix: all guests done in $((SECONDS - start)) s" >&2

# --- the table --------------------------------------------------------------
# result KERNEL TEST: exact, off by N (...), refused: WHY, FAIL: LINE
result() {
	local k=$1 t=test_$2 line refusal=
	local log=$RES/$k/tests.log
	if [[ -n ${fetch_failed[$k]:-} ]]; then
		echo "FAIL: cannot fetch the kernel: ${fetch_failed[$k]}"
		return
	fi
	if ! grep -qx -- "--- $t" "$log" 2>/dev/null; then
		echo "FAIL: $t did not run ($(tail -n 1 "$RES/$k/boot.err" 2>/dev/null))"
		return
	fi
	if ! grep -qx -- "--- $t FAILED" "$log"; then
		# a mode this kernel cannot count exactly, refused as it must be
		# (the test checked the refusal: exit 4, one line, nothing left)
		line=$(awk -v t="--- $t" '$0 == t { on = 1; next } on && /^--- / { exit }
			on && /^ *refused as expected: / { sub(/^ *refused as expected: /, ""); print; exit }' "$log")
		if [[ -n $line ]]; then
			echo "refused as expected: $line"
		else
			echo exact
		fi
		return
	fi
	# udpdrop's one line when the probe exited 4 (the last: -v's come first)
	if [[ $(sed -n '1s/^rc=\([0-9]*\).*/\1/p' "$RES/$k/probe" 2>/dev/null) == 4 ]]; then
		refusal=$(sed -n '3,${/^udpdrop: /s/^udpdrop: //p}' "$RES/$k/probe" | tail -n 1)
	fi
	line=$(awk -v t="--- $t" '$0 == t { on = 1; next } on && /^--- / { exit }
		on && /^ *FAIL: / { sub(/^ *FAIL: /, ""); print; exit }' "$log")
	[[ -n $line ]] || line="failed without a FAIL line"
	if [[ $line == *"(exit 4)"* || (-n $refusal && $line == *"$refusal"*) ]]; then
		[[ -n $refusal ]] || refusal=${line#*(exit 4): }
		echo "refused: ${refusal#udpdrop: }"
	elif [[ $line =~ ^(.*):\ got\ \'(-?[0-9]+)\',\ want\ \'(-?[0-9]+)\'$ ]]; then
		local n=$((BASH_REMATCH[2] - BASH_REMATCH[3]))
		((n > 0)) && n=+$n
		echo "off by $n ($t: $line)"
	else
		echo "FAIL: $t: $line"
	fi
}

{
	declare -a notes=()
	# the first column as wide as the longest check name
	namew=5
	for c in "${CHECKS[@]}"; do
		n=${c%%=*}
		((${#n} > namew)) && namew=${#n}
	done
	printf '%-*s' "$namew" check
	for k in "${KERNELS[@]}"; do
		v=$(cat "${UDPDROP_KERNELS_CACHE:-/var/cache/udpdrop-kernels}/$k/version" 2>/dev/null || echo "?")
		printf ' %-22s' "$k ${v%%-*}"
	done
	echo
	bad=0 nnote=0
	for c in "${CHECKS[@]}"; do
		printf '%-*s' "$namew" "${c%%=*}"
		for k in "${KERNELS[@]}"; do
			# the cell: its tests' first result that is not exact; the
			# note below it: every such result
			short=exact
			for t in ${c#*=}; do
				full=$(result "$k" "$t")
				[[ $full == exact ]] && continue
				nnote=$((nnote + 1))
				if [[ $full == "refused as expected: "* ]]; then
					[[ $short == exact ]] && short="refused, ok [$nnote]"
				elif [[ $short == exact || $short == "refused, ok "* ]]; then
					bad=$((bad + 1))
					short=${full%% (*}
					short="${short%%:*} [$nnote]"
				fi
				notes+=("[$nnote] $k ${c%%=*}: $full")
			done
			printf ' %-22s' "$short"
		done
		echo
	done
	echo
	for k in "${KERNELS[@]}"; do
		[[ -s $RES/$k/probe ]] && echo "$k: load probe (top -n 1 -i 0.1): $(head -n 1 "$RES/$k/probe"); $(grep -m1 '^guest: .* up after' "$RES/$k/console.log" 2>/dev/null | sed 's/^guest: //')"
		# the verifier's walk per program (7.x: per subprogram, N+N+...),
		# and the time to the attach
		[[ -s $RES/$k/probe ]] && sed -n 's/^udpdrop: verified \([a-z_]*\): processed \([0-9+]*\).*/    \1: \2 instructions verified/p
			s/^udpdrop: \(attached after .*\)/    \1/p
			s/^udpdrop: attached to .*(\(packet headers [^)]*\)).*/    \1/p' "$RES/$k/probe"
	done
	# the notes last, where a CI log's tail shows them; for a failed
	# test, the end of its output in the guest
	if ((${#notes[@]})); then
		echo
		printf '%s\n' "${notes[@]}"
		for k in "${KERNELS[@]}"; do
			for t in "${tests[@]}"; do
				grep -qx -- "--- test_$t FAILED" "$RES/$k/tests.log" 2>/dev/null || continue
				echo "--- $k: the last lines of test_$t ($RES/$k/tests.log):"
				awk -v t="--- test_$t" '$0 == t { on = 1; next } $0 == t " FAILED" { exit } on' \
					"$RES/$k/tests.log" | tail -n 15 | sed 's/^/    /'
			done
		done
	fi
	echo "matrix: $bad of $((${#CHECKS[@]} * ${#KERNELS[@]})) cells not exact"
} | tee "$RES/table.txt"
bad=$(sed -n 's/^matrix: \([0-9]*\) of .*/\1/p' "$RES/table.txt")
((bad == 0))
