#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# udpdrop report on hostile traces (tools/bench/hostile.c): CRC-valid files
# whose META, REASONS, SYMBOLS, IFACES, MIB or socket tables hold N entries,
# N doubling; and on long valid ones (N snapshots, N events). A reader linear in its input takes about twice as long for
# twice the entries; a quadratic one four times. Each row: the file's size,
# report's exit code and wall time (text output to /dev/null), and the
# ratio to the row before. Runs past LIMIT seconds are stopped (">LIMIT").
# Wall times on a busy machine are noisy: read the ratios, not the digits;
# INSTR=1 counts instructions instead (valgrind --tool=callgrind: exact and
# repeatable whatever the load, about 50 times slower; the column is then
# millions of instructions).
#
#   tools/bench-report.sh                    (./udpdrop)
#   UDPDROP=/tmp/old/udpdrop KINDS="meta reasons" LIMIT=60 tools/bench-report.sh
#   INSTR=1 KINDS=mib SIZES="20000 40000 80000" tools/bench-report.sh
set -euo pipefail

cd "$(dirname "$0")/.."

UDPDROP=${UDPDROP:-$PWD/udpdrop}
LIMIT=${LIMIT:-60}
KINDS=${KINDS:-"meta meta-rep reasons symbols ifaces mib sockets snapshots events"}
OUTPUT=${OUTPUT:-.output}
GEN=$OUTPUT/bench-hostile
TMP=$(mktemp -d /tmp/bench-report.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

mkdir -p "$OUTPUT"
${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude -Isrc/trace -Isrc/base tools/bench/hostile.c \
	src/trace/trace.c src/trace/trace_blocks.c src/base/util.c -llz4 -lz -pthread -o "$GEN"

# entries per kind: the issue's 20k/40k/80k/200k META keys, and as many
# of the rest as fit a record (a COUNTS entry is 96 bytes of a 16 MiB block)
sizes() {
	if [ -n "${SIZES:-}" ]; then
		echo "$SIZES"
		return
	fi
	case $1 in
	meta-rep) echo 25 50 100 200 ;;   # records of 4096 keys each
	snapshots) echo 2500 5000 10000 20000 ;;
	events)   echo 250000 500000 1000000 2000000 ;;
	*)        echo 20000 40000 80000 200000 ;;
	esac
}

INSTR=${INSTR:-}
col=SECONDS
[ -z "$INSTR" ] || col=MINSTR
printf '%-9s %8s %10s %4s %9s %6s\n' KIND N BYTES EXIT "$col" RATIO
for kind in $KINDS; do
	prev=
	for n in $(sizes "$kind"); do
		f=$TMP/$kind-$n.data
		"$GEN" "$kind" "$n" "$f"
		bytes=$(stat -c %s "$f")
		t0=$(date +%s.%N)
		rc=0
		if [ -n "$INSTR" ]; then
			timeout "$LIMIT" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
				--log-file="$TMP/vg" "$UDPDROP" report "$f" >/dev/null 2>"$TMP/err" || rc=$?
		else
			timeout "$LIMIT" "$UDPDROP" report "$f" >/dev/null 2>"$TMP/err" || rc=$?
		fi
		t1=$(date +%s.%N)
		if [ "$rc" = 124 ]; then
			secs=">$LIMIT"
			ratio=-
			prev=
		else
			if [ -n "$INSTR" ]; then
				secs=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$TMP/vg" |
					xargs -I{} echo "{} / 1000000" | bc -l | xargs printf '%.0f')
			else
				secs=$(echo "$t1 - $t0" | bc -l | xargs printf '%.2f')
			fi
			if [ -n "$prev" ] && [ "$(echo "$prev > 0.05" | bc -l)" = 1 ]; then
				ratio=$(echo "$secs / $prev" | bc -l | xargs printf '%.1f')
			else
				ratio=-
			fi
			prev=$secs
		fi
		printf '%-9s %8s %10s %4s %9s %6s\n' "$kind" "$n" "$bytes" "$rc" "$secs" "$ratio"
		if [ "$rc" != 0 ] && [ "$rc" != 124 ]; then
			sed 's/^/            /' "$TMP/err" | head -n 2
		fi
		rm -f "$f"
	done
done
