#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Soak: `udpdrop top --batch --json` and `udpdrop record` side by side for a
# long while under socket and netns churn; every SOAK_SAMPLE seconds, each
# one's RSS and CPU, the fill of its in-kernel tables, top's JSON line size,
# the drops counted against ground truth and the share attributed to a
# socket. Not a test tier (`make soak`, not `make check`): it takes long.
#
#   sudo tools/soak.sh [SECONDS]        (default $SOAK_SECS or 600; 60 works)
#
# The churn, all to one local port (top and record filter on it, so other
# programs' drops on this host do not count): in a netns of its own,
# SOAK_RATE sockets a second are bound to the port with the smallest
# buffer, sent 1000-byte datagrams until the kernel has dropped
# SOAK_DROPS of them (rcvbuf), and closed with the rest queued
# (socket_close); every SOAK_NETNS_EVERY seconds a netns is made, churned
# the same way for 2 s and destroyed. Ground truth: the churners count what
# they sent (every datagram ends dropped: rcvbuf, socket_close, or no_socket
# when it lands after the close) and the sockets' own drop counters
# (SO_MEMINFO), which UdpRcvbufErrors of the base netns must match.
#
# SOAK_MODE=clients (`make soak` runs it first): the churn short-lived
# clients make, as a DNS client or a metrics library does, in a netns of
# its own that top and record watch (-N): SOAK_RATE (here 200) sockets a
# second, each bound to a port of its own (ADDR:0), sent 1 + SOAK_DROPS
# datagrams of which the smallest buffer takes one (SOAK_DROPS rcvbuf
# drops, its sk_drops), read to the end and closed with nothing queued:
# any socket_close drop is a phantom. Ground truth: the sockets' own drop
# counters, UdpRcvbufErrors of the netns.
#
# Fails (exit 1) when, after the first SOAK_WARMUP seconds, the last
# third's maximum RSS, CPU, table fill or JSON line size is above 1.5 x the
# first third's (+ 1 MiB, 2 %, 64 entries, 4 KiB: noise), when fewer than
# 99 % of the drops are attributed to a socket, when a count is not
# exact, or when top's RSS exceeds SOAK_MAX_RSS_MIB (64), its CPU over the
# run SOAK_MAX_CPU % of a core (3) or its final JSON line SOAK_MAX_JSON_MIB
# (4).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

SECS=${1:-${SOAK_SECS:-600}}
MODE=${SOAK_MODE:-port}
SAMPLE=${SOAK_SAMPLE:-10}
WARMUP=${SOAK_WARMUP:-20}
if [[ $MODE == clients ]]; then RATE=${SOAK_RATE:-200}; else RATE=${SOAK_RATE:-60}; fi
MAX_RSS_MIB=${SOAK_MAX_RSS_MIB:-64}
MAX_CPU=${SOAK_MAX_CPU:-3}
MAX_JSON_MIB=${SOAK_MAX_JSON_MIB:-4}
DROPS=${SOAK_DROPS:-4}
NETNS_EVERY=${SOAK_NETNS_EVERY:-5}
UDPDROP=${UDPDROP:-./udpdrop}

[[ $(id -u) -eq 0 ]] || { echo "soak: needs root (BPF, namespaces)" >&2; exit 3; }
[[ -x $UDPDROP ]] || { echo "soak: build first: make udpdrop" >&2; exit 2; }
command -v python3 >/dev/null || { echo "soak: needs python3 (the churner)" >&2; exit 2; }
[[ $MODE == port || $MODE == clients ]] || { echo "soak: SOAK_MODE is port or clients" >&2; exit 2; }
[[ $SECS =~ ^[0-9]+$ ]] && ((SECS >= 3 * SAMPLE)) ||
	{ echo "soak: SECONDS must be a whole number, at least 3 samples ($((3 * SAMPLE)) s)" >&2; exit 2; }

D=$(mktemp -d /tmp/udpdrop-soak.XXXXXX)
BASE=udt-soak-$$
PORT=$((RANDOM % 1000 + 45000))
declare -a PIDS=()
cleanup() {
	local p ns
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	wait 2>/dev/null
	for ns in "$BASE" $(ls /run/netns 2>/dev/null | grep "^udt-soak-$$-n"); do
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The churner, RATE sockets a second for SECS, its totals (JSON) to OUT
# every second and at the end. PORT > 0 (SOAK_MODE=port): each bound to
# 127.0.0.1:PORT, sent 1000 B datagrams until the kernel dropped DROPS of
# them, closed with the rest queued. PORT 0 (clients): each on a port of
# its own, sent 1 + DROPS datagrams of 3000 B (the smallest buffer takes
# one), read to the end, closed with nothing queued.
cat >"$D/churn.py" <<'EOF'
import json, os, signal, socket, struct, sys, time
port, rate, secs, drops_per, out = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
SO_MEMINFO, SK_MEMINFO_DROPS = 55, 8
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
payload = b"x" * (1000 if port else 3000)
t = {"sent": 0, "sk_drops": 0, "sockets": 0, "read": 0}
def save():
    with open(out + ".tmp", "w") as f:
        json.dump(t, f)
    os.replace(out + ".tmp", out)
def sk_drops(s):
    return struct.unpack("9I", s.getsockopt(socket.SOL_SOCKET, SO_MEMINFO, 36))[SK_MEMINFO_DROPS]
start = due = last = time.monotonic()
while not stop and time.monotonic() - start < secs:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)   # the kernel's minimum
    s.bind(("127.0.0.1", port))
    if port:
        d = 0
        for _ in range(200):
            tx.sendto(payload, ("127.0.0.1", port))
            t["sent"] += 1
            d = sk_drops(s)
            if d >= drops_per:
                break
    else:
        for _ in range(1 + drops_per):
            tx.sendto(payload, s.getsockname())
            t["sent"] += 1
        s.setblocking(False)
        try:
            while True:
                s.recv(4096)
                t["read"] += 1
        except BlockingIOError:
            pass
        d = sk_drops(s)
    t["sk_drops"] += d
    t["sockets"] += 1
    s.close()
    now = time.monotonic()
    if now - last >= 1:
        save()
        last = now
    due += 1 / rate
    if due > now:
        time.sleep(due - now)
    else:
        due = now   # behind: no catch-up burst
save()
EOF

udp_mib() { # NETNS NAME: a Udp: counter
	ip netns exec "$1" awk -v k="$2" '$1 == "Udp:" && !h { for (i = 2; i <= NF; i++) c[$i] = i; h = 1; next }
		$1 == "Udp:" && h { print $(c[k]); exit }' /proc/net/snmp
}

ip netns add "$BASE" && ip -n "$BASE" link set lo up || { echo "soak: cannot make netns $BASE" >&2; exit 1; }
MIB0=$(udp_mib "$BASE" RcvbufErrors)

if [[ $MODE == clients ]]; then
	WATCH=(-N "$BASE")
else
	WATCH=(--port "$PORT")
fi
"$UDPDROP" top --batch --json -i 1 "${WATCH[@]}" >"$D/top.jsonl" 2>"$D/top.err" &
TOP=$!
"$UDPDROP" record -i 1 "${WATCH[@]}" -o "$D/soak.data" 2>"$D/record.err" &
REC=$!
PIDS+=("$TOP" "$REC")
for ((i = 0; i < 100; i++)); do
	grep -q 'tracing UDP drops' "$D/top.err" && grep -q 'recording UDP drops' "$D/record.err" && break
	sleep 0.1
done
grep -q 'tracing UDP drops' "$D/top.err" && grep -q 'recording UDP drops' "$D/record.err" ||
	{ echo "soak: top or record did not start: $(cat "$D/top.err" "$D/record.err")" >&2; exit 1; }

if [[ $MODE == clients ]]; then
	ip netns exec "$BASE" python3 "$D/churn.py" 0 "$RATE" "$SECS" "$DROPS" "$D/base.json" &
	PIDS+=($!)
else
ip netns exec "$BASE" python3 "$D/churn.py" "$PORT" "$RATE" "$SECS" "$DROPS" "$D/base.json" &
PIDS+=($!)
# netns churn: one netns at a time, made, churned for 2 s, destroyed
(
	n=0
	end=$((SECONDS + SECS))
	while ((SECONDS + 2 < end)); do
		ns=udt-soak-$$-n$n
		ip netns add "$ns" && ip -n "$ns" link set lo up &&
			ip netns exec "$ns" python3 "$D/churn.py" "$PORT" 30 2 "$DROPS" "$D/ns-$n.json"
		ip netns del "$ns"
		n=$((n + 1))
		sleep "$NETNS_EVERY"
	done
) &
PIDS+=($!)
fi

# ---- sampling -------------------------------------------------------------------

HZ=$(getconf CLK_TCK)
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# entries in the process's drop table (the map named "drops" it holds)
table_fill() {
	local id
	for id in $(awk '/^map_id:/ { print $2 }' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u); do
		if [[ $(bpftool map show id "$id" -j 2>/dev/null | jq -r .name) == drops ]]; then
			bpftool map dump id "$id" -j 2>/dev/null | jq length
			return
		fi
	done
	echo 0
}
truth() { # sent sk_drops, over every churner so far
	cat "$D"/base.json "$D"/ns-*.json 2>/dev/null |
		jq -rs '"\(map(.sent) | add // 0) \(map(.sk_drops) | add // 0)"'
}

printf '%6s %9s %6s %7s %9s %6s %7s %7s %9s %9s %8s\n' \
	time top.rss top.cpu top.tbl rec.rss rec.cpu rec.tbl json.B sent top.drops attr%
printf '%6s %9s %6s %7s %9s %6s %7s %7s %9s %9s %8s\n' \
	s KiB % entries KiB % entries max "" "" ""
declare -a T_RSS=() R_RSS=() T_CPU=() R_CPU=() T_TBL=() R_TBL=() JSZ=()
tc0=$(cpu_ticks "$TOP") rc0=$(cpu_ticks "$REC")
jsize_at=0
for ((t = SAMPLE; t <= SECS; t += SAMPLE)); do
	sleep "$SAMPLE"
	kill -0 "$TOP" 2>/dev/null && kill -0 "$REC" 2>/dev/null ||
		{ echo "soak: top or record died: $(tail -n 2 "$D/top.err" "$D/record.err")" >&2; exit 1; }
	tc=$(cpu_ticks "$TOP") rc=$(cpu_ticks "$REC")
	tcpu=$(awk -v a="$tc0" -v b="$tc" -v hz="$HZ" -v s="$SAMPLE" 'BEGIN { printf "%.1f", (b - a) * 100 / hz / s }')
	rcpu=$(awk -v a="$rc0" -v b="$rc" -v hz="$HZ" -v s="$SAMPLE" 'BEGIN { printf "%.1f", (b - a) * 100 / hz / s }')
	tc0=$tc rc0=$rc
	trss=$(rss_kib "$TOP") rrss=$(rss_kib "$REC")
	ttbl=$(table_fill "$TOP") rtbl=$(table_fill "$REC")
	# the longest JSON line of this sample's intervals
	jmax=$(tail -c +$((jsize_at + 1)) "$D/top.jsonl" | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }')
	jsize_at=$(stat -c %s "$D/top.jsonl")
	read -r sent _ <<<"$(truth)"
	last=$(tail -n 1 "$D/top.jsonl")
	tdrops=$(jq -r .totals.drops <<<"$last" 2>/dev/null)
	attr=$(jq -r 'if .totals.drops > 0 then (.totals.attributed * 100 / .totals.drops * 10 | floor) / 10 else 100 end' <<<"$last" 2>/dev/null)
	printf '%6s %9s %6s %7s %9s %6s %7s %7s %9s %9s %8s\n' \
		"$t" "$trss" "$tcpu" "$ttbl" "$rrss" "$rcpu" "$rtbl" "$jmax" "$sent" "$tdrops" "$attr"
	if ((t > WARMUP)); then
		T_RSS+=("$trss") R_RSS+=("$rrss") T_CPU+=("$tcpu") R_CPU+=("$rcpu")
		T_TBL+=("$ttbl") R_TBL+=("$rtbl") JSZ+=("$jmax")
	fi
done

# ---- the end: totals against ground truth ------------------------------------------

for p in "${PIDS[@]:2}"; do wait "$p" 2>/dev/null; done # the churners end by themselves
sleep 1
kill -INT "$TOP" "$REC"
wait "$TOP"
top_rc=$?
wait "$REC"
rec_rc=$?
read -r sent skd <<<"$(truth)"
mib=$(($(udp_mib "$BASE" RcvbufErrors) - MIB0))
base_skd=$(jq -r .sk_drops "$D/base.json")
final=$(tail -n 1 "$D/top.jsonl")
"$UDPDROP" report --json "$D/soak.data" >"$D/report.json" 2>"$D/report.err"
rep_rc=$?

status=0
verdict() { # OK? WHAT
	if [[ $1 == yes ]]; then echo "  ok    $2"; else echo "  FAIL  $2"; status=1; fi
}
eq() { [[ $1 == "$2" ]] && echo yes || echo no; }

echo
echo "totals ($SECS s, $MODE; churn: $(jq -r .sockets "$D/base.json") sockets in $BASE, $(ls "$D"/ns-*.json 2>/dev/null | wc -l) netns churned):"
if [[ $MODE == clients ]]; then
	echo "  sent                                $sent (read $(jq -r .read "$D/base.json"))"
else
	echo "  sent (every one dropped)            $sent"
fi
echo "  their sockets' drop counters        $skd (base netns: $base_skd, UdpRcvbufErrors there: $mib)"
echo "  top:    drops $(jq -r .totals.drops <<<"$final"), attributed $(jq -r .totals.attributed <<<"$final"), rcvbuf $(jq -r '.totals.causes.rcvbuf // 0' <<<"$final"), causes $(jq -c .totals.causes <<<"$final")"
echo "  record: drops $(jq -r .totals.drops "$D/report.json" 2>/dev/null), causes $(jq -c .totals.causes "$D/report.json" 2>/dev/null)"
verdict "$(eq "$top_rc$rec_rc$rep_rc" 000)" "exit codes: top $top_rc, record $rec_rc, report $rep_rc"
verdict "$(eq "$mib" "$base_skd")" "UdpRcvbufErrors of $BASE = its sockets' drop counters ($mib, $base_skd)"
if [[ $MODE == clients ]]; then
	# nothing queued at close: every drop is rcvbuf, none socket_close
	verdict "$(eq "$(jq -r .totals.drops <<<"$final")" "$skd")" "top: drops = the sockets' drop counters"
	verdict "$(eq "$(jq -r '.totals.causes.socket_close // 0' <<<"$final")" 0)" "top: no socket_close drops (nothing was queued at a close)"
	verdict "$(eq "$(jq -r .totals.drops "$D/report.json" 2>/dev/null)" "$skd")" "record: drops = the sockets' drop counters"
	verdict "$(eq "$(jq -r '.totals.causes.socket_close.drops // 0' "$D/report.json" 2>/dev/null)" 0)" "record: no socket_close drops"
else
	verdict "$(eq "$(jq -r .totals.drops <<<"$final")" "$sent")" "top: drops = sent"
	verdict "$(eq "$(jq -r .totals.drops "$D/report.json" 2>/dev/null)" "$sent")" "record: drops = sent"
fi
verdict "$(eq "$(jq -r '.totals.causes.rcvbuf // 0' <<<"$final")" "$skd")" "top: rcvbuf = the sockets' drop counters"
attr=$(jq -r 'if .totals.drops > 0 then .totals.attributed * 100 / .totals.drops else 100 end' <<<"$final")
verdict "$(awk -v a="$attr" 'BEGIN { print (a >= 99) ? "yes" : "no" }')" "top: attributed to a socket $(printf '%.2f' "$attr") % (>= 99 %)"

# bounded growth: the last third's max against the first third's
bounded() { # NAME SLACK VALUES...
	local name=$1 slack=$2 line
	shift 2
	(($# >= 3)) || { echo "  skip  $name: $# samples after warm-up (fewer than 3)"; return; }
	line=$(printf '%s\n' "$@" | awk -v s="$slack" '{ v[NR] = $1 } END {
		k = int(NR / 3)
		for (i = 1; i <= NR; i++) {
			if (i <= k && v[i] > f) f = v[i]
			if (i > NR - k && v[i] > l) l = v[i]
		}
		print (l <= 1.5 * f + s ? "yes" : "no"), l + 0, f + 0 }')
	set -- $line
	verdict "$1" "$name: last third's max $2 <= 1.5 x first third's $3 + $slack"
}
bounded "top RSS (KiB)" 1024 "${T_RSS[@]}"
bounded "record RSS (KiB)" 1024 "${R_RSS[@]}"
bounded "top CPU (%)" 2 "${T_CPU[@]}"
bounded "record CPU (%)" 2 "${R_CPU[@]}"
bounded "top drop table (entries)" 64 "${T_TBL[@]}"
bounded "record drop table (entries)" 64 "${R_TBL[@]}"
bounded "top JSON line (bytes)" 4096 "${JSZ[@]}"

# the targets: top's footprint at this churn, whatever the trend
below() { # NAME VALUE LIMIT UNIT
	verdict "$(awk -v v="$2" -v l="$3" 'BEGIN { print (v <= l) ? "yes" : "no" }')" "$1: $2 $4 <= $3 $4"
}
max_rss=$(printf '%s\n' "${T_RSS[@]:-0}" | sort -n | tail -n 1)
mean_cpu=$(printf '%s\n' "${T_CPU[@]:-0}" | awk '{ s += $1; n++ } END { printf "%.1f", n ? s / n : 0 }')
below "top RSS, the most after warm-up" "$(awk -v k="$max_rss" 'BEGIN { printf "%.1f", k / 1024 }')" "$MAX_RSS_MIB" MiB
below "top CPU, the mean after warm-up" "$mean_cpu" "$MAX_CPU" "% of a core"
below "top's final JSON line" "$(awk -v b="${#final}" 'BEGIN { printf "%.2f", b / 1048576 }')" "$MAX_JSON_MIB" MiB
echo "soak: $([[ $status == 0 ]] && echo passed || echo FAILED)"
exit $status
