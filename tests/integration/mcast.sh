# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Multicast and broadcast told right (issue 29): a socket bound to a port
# is never blamed for a group its interface never joined, and datagrams
# to a group or broadcast address that no socket on the port takes are
# mcast_unwanted (the kernel's UdpIgnoredMulti, no ICMP), not no_socket.
# Truth: what was sent, each socket's own sk_drops (ss -uam d), the
# kernel's counters. Sourced by run.sh (record.sh's and doctor.sh's
# helpers).

# mcast_hosts: setup_hosts, with A sending multicast out of its veth (a
# route for 224/4 and ff00::/8 there) and B's receivers in place:
# *:5000 joins nothing, *:6000 joins 239.1.1.1 and [::]:6001 joins ff15::1,
# both on veth0, so veth0 has joined those groups and no other.
mcast_hosts() {
	setup_hosts || return
	ip -n "$A" route add 224.0.0.0/4 dev veth0 || { fail "multicast route"; return 1; }
	start_recv "$B" 0.0.0.0:5000 || return
	start_recv "$B" 0.0.0.0:6000 --join 239.1.1.1@veth0 || return
	start_recv "$B" "[::]:6001" --join ff15::1@veth0 || return
	MC_BCAST=${V4B%.*}.255
}

# unattributed_drops CAUSE FLOW: a socketless row's drops in top's summary
# ("none" where there is no such row).
unattributed_drops() {
	final --arg c "$1" --arg f "$2" \
		'[.unattributed[] | select(.cause == $c and .flow == $f)] | if length == 0 then "none" else (map(.drops) | add) end'
}

# A group nobody joined, to a port a socket is bound to: the IP layer
# drops it (NOT_SPECIFIED in ip_rcv_finish_core / ip6_mc_input), the
# socket's own counter stays 0, and so does udpdrop's count for it.
# Likewise a netfilter drop of that group's datagrams before routing is
# no socket's; a joined group's is the socket's on that port.
test_mcast_unjoined_group() {
	mcast_hosts || return
	ip netns exec "$B" nft -f - <<-EOF || { fail "nft"; return; }
	table inet udt {
		chain pre {
			type filter hook prerouting priority 0;
			udp dport 5000 ip daddr 239.9.9.8 counter drop
			udp dport 6000 ip daddr 239.1.1.1 counter drop
		}
	}
	EOF
	start_top -N "$B" || return
	local s1=$(send "$A" 239.9.9.9:5000 -c 200)
	local s2=$(send "$A" "[ff15::9]:5000" -c 50)
	local s3=$(send "$A" 239.9.9.8:5000 -c 30)
	local s4=$(send "$A" 239.1.1.1:6000 -c 20)
	settle 1
	local d5000=$(ss_drops "$B" 5000) d6000=$(ss_drops "$B" 6000)
	stop_top || return
	expect_eq "sent" "$s1 $s2 $s3 $s4" "200 50 30 20"
	expect_eq "ss -uam d of *:5000" "$d5000" 0
	expect_eq "ss -uam d of *:6000" "$d6000" 0
	expect_eq "rows of *:5000" "$(final '[.sockets[] | select(.local == "*:5000")] | length')" 0
	expect_eq "IPv4 group not joined: mcast_unjoined" \
		"$(unattributed_drops mcast_unjoined "$V4A -> 239.9.9.9:5000")" 200
	expect_eq "IPv6 group not joined: mcast_unjoined" \
		"$(unattributed_drops mcast_unjoined "$V6A -> [ff15::9]:5000")" 50
	expect_eq "netfilter, group not joined: no socket's" \
		"$(unattributed_drops netfilter "$V4A -> 239.9.9.8:5000")" 30
	expect_eq "netfilter, joined group: the socket's on its port" \
		"$(socket_field "*:6000" .causes.netfilter)" 20
	expect_eq "no other cause" "$(final '[.unattributed[] | select(.cause == "other" or .cause == "no_socket")] | length')" 0
}

# A joined group to a port nobody listens on, a subnet broadcast and an
# IPv6 group likewise: UdpIgnoredMulti (+ Udp6), no ICMP, UdpNoPorts
# still. top, record/report and doctor call them mcast_unwanted and
# reconcile them with those counters.
test_mcast_unwanted() {
	mcast_hosts || return
	local nop=$(mib "$B" Udp NoPorts) ign=$(mib "$B" Udp IgnoredMulti) ign6=$(mib "$B" Udp6 IgnoredMulti)
	start_record "$T/m.data" -N "$B" -i "$TOP_INTERVAL" || return
	start_top -N "$B" || return
	start_doctor -N "$B" -d 600 || return
	local s1=$(send "$A" 239.1.1.1:5999 -c 500)
	local s2=$(send "$A" "$MC_BCAST:5998" -c 200)
	local s3=$(send "$A" "[ff15::1]:5997" -c 40)
	settle 1
	kill -INT "$DOC_PID"
	wait_doctor
	stop_record
	stop_top || return
	expect_eq "sent" "$s1 $s2 $s3" "500 200 40"
	local k4=$(($(mib "$B" Udp IgnoredMulti) - ign)) k6=$(($(mib "$B" Udp6 IgnoredMulti) - ign6))
	expect_eq "UdpIgnoredMulti, Udp6IgnoredMulti deltas" "$k4 $k6" "700 40"
	expect_eq "UdpNoPorts delta" "$(($(mib "$B" Udp NoPorts) - nop))" 0
	expect_eq "top: group, no member on the port" \
		"$(unattributed_drops mcast_unwanted "$V4A -> 239.1.1.1:5999")" 500
	expect_eq "top: broadcast, nobody on the port" \
		"$(unattributed_drops mcast_unwanted "$V4A -> $MC_BCAST:5998")" 200
	expect_eq "top: IPv6 group, no member on the port" \
		"$(unattributed_drops mcast_unwanted "$V6A -> [ff15::1]:5997")" 40
	expect_eq "top: no no_socket drops" "$(final '[.unattributed[] | select(.cause == "no_socket")] | length')" 0
	expect_eq "top: reconcile mcast_unwanted" \
		"$(final '[.reconcile[] | select(.cause == "mcast_unwanted")][0] | "\(.kernel) \(.udpdrop) \(.match)"')" "740 740 true"
	expect_eq "top: no no_socket reconcile line" \
		"$(final '[.reconcile[] | select(.cause == "no_socket")] | length')" 0
	"$UDPDROP" report --json "$T/m.data" >"$T/m.json" 2>"$T/m.err" || fail "report: $(cat "$T/m.err")"
	expect_eq "report: mcast_unwanted drops" \
		"$(jq -r '[.unattributed[] | select(.cause == "mcast_unwanted") | .drops] | add' "$T/m.json")" 740
	expect_eq "report: reconcile mcast_unwanted" \
		"$(jq -r '[.reconcile[] | select(.cause == "mcast_unwanted")][0] | "\(.kernel) \(.udpdrop) \(.status)"' "$T/m.json")" "740 740 match"
	expect_eq "doctor: mcast_unwanted drops" \
		"$(dq '[.findings[] | select(.cause == "mcast_unwanted") | .drops] | add')" 740
	expect_eq "doctor: no ICMP claimed" \
		"$(dq '[.findings[] | select(.cause == "mcast_unwanted") | .evidence | test("ICMP port unreachable")] | any')" false
	expect_eq "doctor: no no_socket finding" "$(dq '[.findings[] | select(.cause == "no_socket")] | length')" 0
}

# member_drops PORT PID: the sk_drops (ss -uam d) and inode of the socket
# process PID holds on local PORT in netns B: "D INODE".
member_drops() {
	ip netns exec "$B" ss -uamnepH "sport = :$1" 2>/dev/null |
		awk -v pid="pid=$2," '
			/^UNCONN/ { mine = index($0, pid) > 0; ino = ""
				    for (f = 1; f <= NF; f++) if ($f ~ /^ino:/) ino = substr($f, 5) }
			mine && /skmem:/ { match($0, /,d[0-9]+\)/); print substr($0, RSTART + 2, RLENGTH - 3), ino; exit }'
}

# Three receivers of one group on one port (SO_REUSEPORT: each gets every
# datagram): a slow one with a small buffer, one stalled once, a fast
# one. Each member's drops are its own, exact against its sk_drops in top
# and in record + report; the slow member's advice never paces the
# sender (every receiver shares it), and the fast one has no drops.
test_mcast_members() {
	mcast_hosts || return
	local g=239.7.7.7 port=7000 before=$(mib "$B" Udp RcvbufErrors)
	start_recv "$B" "0.0.0.0:$port" --reuseport 1 --join "$g@veth0" --rcvbuf 4096 --read-gap-us 2000 || return
	local slow=$RECV_PID
	start_recv "$B" "0.0.0.0:$port" --reuseport 1 --join "$g@veth0" --rcvbuf 8192 --read || return
	local stalled=$RECV_PID
	start_recv "$B" "0.0.0.0:$port" --reuseport 1 --join "$g@veth0" --rcvbuf 4000000 --read || return
	local fast=$RECV_PID
	start_record "$T/mm.data" -N "$B" -i "$TOP_INTERVAL" || return
	start_top -N "$B" || return
	# the stalled member stops reading for a stretch in the middle
	(sleep 0.8; kill -STOP "$stalled"; sleep 0.6; kill -CONT "$stalled") &
	BG_PIDS+=($!)
	local sent=$(send "$A" "$g:$port" -c 3000 -s 500 --gap-us 600)
	settle 1
	local ds ds_i dt dt_i df df_i
	read -r ds ds_i <<<"$(member_drops $port "$slow")"
	read -r dt dt_i <<<"$(member_drops $port "$stalled")"
	read -r df df_i <<<"$(member_drops $port "$fast")"
	stop_record
	stop_top || return
	expect_eq "sent" "$sent" 3000
	expect_gt "slow member's sk_drops" "$ds" 0
	expect_gt "stalled member's sk_drops" "$dt" 0
	expect_eq "fast member's sk_drops" "$df" 0
	expect_eq "UdpRcvbufErrors delta = the members' sk_drops" \
		"$(($(mib "$B" Udp RcvbufErrors) - before))" "$((ds + dt + df))"
	local m
	for m in "slow $ds $ds_i" "stalled $dt $dt_i"; do
		set -- $m
		expect_eq "top: the $1 member's drops (inode $3)" \
			"$(final --argjson i "$3" '[.sockets[] | select(.inode == $i) | .drops] | add // 0')" "$2"
	done
	expect_eq "top: the fast member has no row" \
		"$(final --argjson i "$df_i" '[.sockets[] | select(.inode == $i)] | length')" 0
	local adv verdict
	adv=$(final --argjson i "$ds_i" '[.sockets[] | select(.inode == $i) | .advice[]] | map(.change) | join(" ")')
	verdict=$(final -r --argjson i "$ds_i" \
		'[.sockets[] | select(.inode == $i) | .advice[] | select(.cause == "rcvbuf") | .verdict][0]')
	# steady (the host): it is told to keep up itself, as one receiver of
	# the group; in bursts (an emulated CPU's reader catches up between
	# them: Debian's 6.12 under QEMU): a buffer of its own. Never to pace
	# the sender every member shares.
	case $verdict in
	steady_overload)
		grep -q "one receiver of a multicast group" <<<"$adv" ||
			fail "top: the slow member's advice does not say it is one receiver of a group: $adv" ;;
	bursts)
		grep -qE "SO_RCVBUF|rmem_default" <<<"$adv" ||
			fail "top: the slow member's bursts get no buffer of its own: $adv" ;;
	*) fail "top: the slow member's rcvbuf verdict: $verdict ($adv)" ;;
	esac
	grep -q "Pace the sender" <<<"$adv" && fail "top: the slow member's advice paces the group's sender: $adv"
	expect_eq "top: no member's advice paces the sender" \
		"$(final '[.sockets[] | .advice[]? | select(.setting == "sender_pps")] | length')" 0
	"$UDPDROP" report --json "$T/mm.data" >"$T/mm.json" 2>"$T/mm.err" || fail "report: $(cat "$T/mm.err")"
	for m in "slow $ds $ds_i" "stalled $dt $dt_i"; do
		set -- $m
		expect_eq "report: the $1 member's drops" \
			"$(jq -r --argjson i "$3" '[.sockets[] | select(.inode == $i) | .drops] | add // 0' "$T/mm.json")" "$2"
	done
	expect_eq "report: no advice paces the sender" \
		"$(jq -r '[.advice[] | select(.setting == "sender_pps")] | length' "$T/mm.json")" 0
}

# serve under multicast and broadcast, scraped by a real Prometheus: the
# unwanted group and broadcast datagrams are mcast_unwanted, the kernel
# counted them in UdpIgnoredMulti (+ Udp6), and coverage (traced /
# kernel_counted) is 1 for every cause, never 600 % of UdpNoPorts; the
# unjoined group is mcast_unjoined, in no socket's series.
test_mcast_serve() {
	command -v prometheus >/dev/null || { fail "no prometheus (make deps installs it)"; return; }
	mcast_hosts || return
	local ns=$(ns_inode "$B")
	start_serve -N "$B" -i 0.3 || return
	local s1=$(send "$A" 239.1.1.1:5999 -c 500)
	local s2=$(send "$A" "$MC_BCAST:5998" -c 200)
	local s3=$(send "$A" 239.9.9.9:5000 -c 100)
	expect_eq "sent" "$s1 $s2 $s3" "500 200 100"
	settle 1
	serve_scraped || return
	expect_eq "Prometheus: mcast_unwanted drops" \
		"$(serve_prom_wait "sum(udpdrop_drops_total{netns=\"$ns\",cause=\"mcast_unwanted\"})" 700)" 700
	expect_eq "Prometheus: mcast_unjoined drops" \
		"$(serve_prom_wait "sum(udpdrop_drops_total{netns=\"$ns\",cause=\"mcast_unjoined\"})" 100)" 100
	expect_eq "Prometheus: kernel_counted mcast_unwanted (UdpIgnoredMulti)" \
		"$(serve_prom_wait "udpdrop_kernel_counted_drops_total{netns=\"$ns\",cause=\"mcast_unwanted\"}" 700)" 700
	local q="udpdrop_traced_drops_total{netns=\"$ns\"} / udpdrop_kernel_counted_drops_total{netns=\"$ns\"}"
	expect_eq "Prometheus: coverage (traced / kernel_counted), every cause" \
		"$(curl -s --get --data-urlencode "query=$q" "$SERVE_PROM/api/v1/query" |
			jq -r '[.data.result[].value[1]] | unique | join(",")')" 1
	expect_eq "Prometheus: no no_socket drops" \
		"$(serve_prom_wait "sum(udpdrop_drops_total{netns=\"$ns\",cause=\"no_socket\"})" none 10)" none
	expect_eq "Prometheus: no socket's series" \
		"$(serve_prom_wait "count(udpdrop_socket_drops_total{netns=\"$ns\"})" none 10)" none
	stop_serve
}

# The group's only receiver closes with datagrams queued: the kernel
# purges them naming no socket, and the group is no longer joined then;
# they are still its socket_close drops (ss showed them queued).
test_mcast_member_closes() {
	mcast_hosts || return
	local g=239.8.8.8 port=7100
	start_recv "$B" "0.0.0.0:$port" --join "$g@veth0" --rcvbuf 1000000 || return
	local rpid=$RECV_PID
	start_top -N "$B" || return
	local sent=$(send "$A" "$g:$port" -c 40 -s 200)
	settle
	local q=$(ip netns exec "$B" ss -uanH "sport = :$port" | awk '{ print $2 }')
	local ino=$(ip netns exec "$B" ss -uaneH "sport = :$port" | grep -o 'ino:[0-9]*' | cut -d: -f2)
	expect_eq sent "$sent" 40
	expect_gt "queued at the receiver (bytes)" "$q" 0
	{ kill -KILL "$rpid"; wait "$rpid"; } 2>/dev/null
	settle 1.5
	stop_top || return
	expect_eq "socket_close of the group's receiver (inode $ino)" \
		"$(final --argjson i "$ino" '[.sockets[] | select(.inode == $i) | .causes.socket_close // 0] | add // "none"')" 40
	expect_eq "no socketless socket_close" \
		"$(final '[.unattributed[] | select(.cause == "socket_close") | .drops] | add // 0')" 0
}
