# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# udpdrop serve: its /metrics against the kernel's counters, scraped by a
# real Prometheus (Debian's prometheus package, on loopback), and against
# hostile clients. Sourced by run.sh.

# start_serve ARGS...: udpdrop serve on 127.0.0.1 (a port the kernel picks);
# SERVE_PID, SERVE_PORT, SERVE_ERR.
start_serve() {
	SERVE_ERR=$T/serve.err
	: >"$SERVE_ERR"
	"$UDPDROP" serve --listen 127.0.0.1:0 "$@" 2>"$SERVE_ERR" &
	SERVE_PID=$!
	BG_PIDS+=("$SERVE_PID")
	local i
	for ((i = 0; i < 600; i++)); do
		SERVE_PORT=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$SERVE_ERR")
		[[ -n $SERVE_PORT ]] && return 0
		if ! kill -0 "$SERVE_PID" 2>/dev/null; then
			fail "udpdrop serve did not start: $(cat "$SERVE_ERR")"
			return 1
		fi
		sleep 0.1
	done
	fail "udpdrop serve not ready after 60 s: $(cat "$SERVE_ERR")"
	return 1
}

# stop_serve: SIGTERM; its exit code must be 0.
stop_serve() {
	local rc
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID"
	rc=$?
	expect_eq "serve exit code" "$rc" 0
}

# metric PAGE NAME LABELS: the value of the sample NAME{LABELS} in PAGE
# (LABELS as written, e.g. netns="1",cause="rcvbuf",reason="SOCKET_RCVBUFF";
# "" for none), 0 when absent (a counter that never moved).
metric() {
	local s=$2
	[[ -n $3 ]] && s="$2{$3}"
	awk -v s="$s" 'index($0, s " ") == 1 { print $2; found = 1 } END { if (!found) print 0 }' <<<"$1"
}

# serve_refreshed N: until serve has refreshed N more times (its own counter).
serve_refreshed() {
	local url=http://127.0.0.1:$SERVE_PORT/metrics i r0 r
	r0=$(curl -s "$url" | awk '/^udpdrop_refreshes_total /{print $2}')
	for ((i = 0; i < 200; i++)); do
		r=$(curl -s "$url" | awk '/^udpdrop_refreshes_total /{print $2}')
		[[ -n $r && -n $r0 ]] && ((r >= r0 + $1)) && return 0
		sleep 0.1
	done
	fail "serve did not refresh $1 times in 20 s"
	return 1
}

# Drops of two causes in B (a full receive buffer, a port nobody listens
# on): /metrics says the kernel's figures exactly, per netns, cause and
# reason; the reconciliation counters agree; promtool finds the page
# clean in both formats.
test_serve_metrics() {
	setup_hosts || return
	local ns=$(stat -L -c %i "/run/netns/$B") before=$(prog_ids)
	# the kernel times udpdrop's programs while this is 1 (put back after)
	RESTORE_SYSCTLS+=("kernel.bpf_stats_enabled=$(sysctl -n kernel.bpf_stats_enabled)")
	sysctl -qw kernel.bpf_stats_enabled=1
	start_serve -N "$B" -i 0.3 || return
	start_recv "$B" "$V4B:5501" --rcvbuf 4096 || return
	local k0=$(mib "$B" Udp RcvbufErrors) n0=$(mib "$B" Udp NoPorts)
	send "$A" "$V4B:5501" -c 500 -s 300 >/dev/null
	send "$A" "$V4B:5502" -c 40 -s 100 >/dev/null
	settle 1
	local k=$(($(mib "$B" Udp RcvbufErrors) - k0)) n=$(($(mib "$B" Udp NoPorts) - n0))
	serve_refreshed 2 || return
	local page
	page=$(curl -s "http://127.0.0.1:$SERVE_PORT/metrics")
	expect_gt "kernel rcvbuf drops" "$k" 0
	expect_eq "udpdrop_drops_total rcvbuf = the kernel's" \
		"$(metric "$page" udpdrop_drops_total "netns=\"$ns\",cause=\"rcvbuf\",reason=\"SOCKET_RCVBUFF\"")" "$k"
	expect_eq "udpdrop_drops_total no_socket = the kernel's" \
		"$(metric "$page" udpdrop_drops_total "netns=\"$ns\",cause=\"no_socket\",reason=\"NO_SOCKET\"")" "$n"
	expect_eq "kernel_counted rcvbuf" \
		"$(metric "$page" udpdrop_kernel_counted_drops_total "netns=\"$ns\",cause=\"rcvbuf\"")" "$k"
	expect_eq "traced rcvbuf" \
		"$(metric "$page" udpdrop_traced_drops_total "netns=\"$ns\",cause=\"rcvbuf\"")" "$k"
	expect_eq "udpdrop_socket_drops_total of the socket" \
		"$(metric "$page" udpdrop_socket_drops_total "netns=\"$ns\",family=\"inet\",port=\"5501\",cause=\"rcvbuf\",comm=\"udptest\",k8s_namespace=\"\",k8s_pod=\"\",k8s_container=\"\"")" "$k"
	expect_eq "bpf_stats_enabled" "$(metric "$page" udpdrop_bpf_stats_enabled "")" 1
	# the drop program ran at least once per drop (and for other frees)
	expect_gt "runs of the drop program" \
		"$(awk '/^udpdrop_bpf_runs_total\{program="udpdrop_kfree/ { s += $2 } END { print s + 0 }' <<<"$page")" \
		"$((k + n - 1))"
	expect_eq "netns_info names B" \
		"$(metric "$page" udpdrop_netns_info "netns=\"$ns\",name=\"$B\"")" 1
	# the sum of the drops is top's totals.drops: every sample is B's here
	expect_eq "sum of udpdrop_drops_total" \
		"$(awk '/^udpdrop_drops_total/ { s += $2 } END { print s + 0 }' <<<"$page")" "$((k + n))"
	# the formats, as promtool reads them
	local out
	out=$(promtool check metrics <<<"$page" 2>&1) ||
		fail "promtool check metrics (text): $out"
	curl -s -H 'Accept: application/openmetrics-text; version=1.0.0' \
		"http://127.0.0.1:$SERVE_PORT/metrics" >"$T/om.txt"
	expect_eq "OpenMetrics ends with # EOF" "$(tail -n 1 "$T/om.txt")" "# EOF"
	grep -q "^udpdrop_drops_created{netns=\"$ns\",cause=\"rcvbuf\"" "$T/om.txt" ||
		fail "no _created sample in the OpenMetrics page"
	# gzip when asked; HEAD; the landing page; 404; 405
	expect_eq "gzip page = the page" \
		"$(curl -s --compressed "http://127.0.0.1:$SERVE_PORT/metrics" | grep -c '^udpdrop_drops_total')" \
		"$(grep -c '^udpdrop_drops_total' <<<"$page")"
	expect_eq "HEAD /metrics" "$(curl -s -o /dev/null -w '%{http_code}' -I "http://127.0.0.1:$SERVE_PORT/metrics")" 200
	expect_eq "GET /" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SERVE_PORT/")" 200
	expect_eq "GET /nothing" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SERVE_PORT/nothing")" 404
	expect_eq "POST /metrics" "$(curl -s -o /dev/null -w '%{http_code}' -d x "http://127.0.0.1:$SERVE_PORT/metrics")" 405
	stop_serve
	# (progs_left, gensink.sh: polls for the kernel's deferred free)
	expect_eq "programs left" "$(progs_left "$before")" none
}

# serve_prometheus CONFIG: a real Prometheus on a free loopback port (a few
# tries: ports race), ready; SERVE_PROM (its URL).
serve_prometheus() {
	local i j port pid
	for ((i = 0; i < 5; i++)); do
		port=$((20000 + RANDOM % 20000))
		[[ -n $(ss -Htln "sport = :$port") ]] && continue
		prometheus --config.file="$1" --storage.tsdb.path="$T/tsdb" \
			--enable-feature=exemplar-storage \
			--web.listen-address="127.0.0.1:$port" >"$T/prom.log" 2>&1 &
		pid=$!
		BG_PIDS+=("$pid")
		for ((j = 0; j < 300; j++)); do
			if curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null; then
				SERVE_PROM=http://127.0.0.1:$port
				return 0
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	done
	fail "prometheus did not start: $(tail -n 3 "$T/prom.log")"
	return 1
}

# serve_scraped: a real Prometheus scraping the serve started (SERVE_PORT)
# each second, its configuration checked by promtool first.
serve_scraped() {
	cat >"$T/prom.yml" <<-EOF
	global: { scrape_interval: 1s, evaluation_interval: 1s }
	scrape_configs:
	  - job_name: udpdrop
	    static_configs: [ { targets: ['127.0.0.1:$SERVE_PORT'] } ]
	EOF
	promtool check config "$T/prom.yml" >/dev/null || { fail "promtool check config"; return 1; }
	serve_prometheus "$T/prom.yml"
}

# serve_prom_wait EXPR WANT [TRIES]: Prometheus's value of the instant query
# EXPR (its first series; "none" when it has none) once it is WANT, or the
# last one after TRIES (default 300) tries 0.1 s apart.
serve_prom_wait() {
	local i got
	for ((i = 0; i < ${3:-300}; i++)); do
		got=$(curl -s --get --data-urlencode "query=$1" "$SERVE_PROM/api/v1/query" |
			jq -r '.data.result[0].value[1] // "none"')
		[[ $got == "$2" ]] && break
		sleep 0.1
	done
	echo "$got"
}

# A real Prometheus scrapes serve (OpenMetrics, as it asks by default) and
# its query API gives the kernel's figure for the netns and cause.
test_serve_prometheus() {
	command -v prometheus >/dev/null || { fail "no prometheus (make deps installs it)"; return; }
	setup_hosts || return
	local ns=$(stat -L -c %i "/run/netns/$B") i
	start_serve -N "$B" -i 0.3 || return
	start_recv "$B" "$V4B:5511" --rcvbuf 4096 || return
	local k0=$(mib "$B" Udp RcvbufErrors)
	send "$A" "$V4B:5511" -c 500 -s 300 >/dev/null
	settle 1
	local k=$(($(mib "$B" Udp RcvbufErrors) - k0))
	serve_scraped || return
	local pport=${SERVE_PROM##*:}
	local q="udpdrop_drops_total{netns=\"$ns\",cause=\"rcvbuf\"}" got=""
	for ((i = 0; i < 300; i++)); do
		got=$(curl -s --get --data-urlencode "query=$q" "http://127.0.0.1:$pport/api/v1/query" |
			jq -r '.data.result[0].value[1] // empty')
		[[ $got == "$k" ]] && break
		sleep 0.1
	done
	expect_eq "Prometheus: $q = the kernel's" "$got" "$k"
	local target=$(curl -s "http://127.0.0.1:$pport/api/v1/targets" | jq -c '.data.activeTargets[0] | {health, lastError}')
	expect_eq "Prometheus: the target" "$target" '{"health":"up","lastError":""}'
	q="udpdrop_traced_drops_total{netns=\"$ns\"} / udpdrop_kernel_counted_drops_total{netns=\"$ns\"}"
	expect_eq "Prometheus: coverage (traced / kernel_counted)" \
		"$(curl -s --get --data-urlencode "query=$q" "http://127.0.0.1:$pport/api/v1/query" |
			jq -r '[.data.result[].value[1]] | unique | join(",")')" 1
	stop_serve
}

# The per-socket figures against the truth, through a real Prometheus: a
# slow reader and a socket that holds what it gets, both with a 4 KiB
# buffer, and datagrams to a closed port. Each socket's drops and their
# bytes are ss's d (x the payload: skb->len at a socket's drop), its
# deliveries what was sent less d (what its reader read, and what the
# other holds), its buffer ss's rb, the held one's queue and peak ss's r;
# the closed port's drops the kernel's UdpNoPorts; the advice engine's
# SO_RCVBUF for both, now under what it advises.
test_serve_socket_truth() {
	command -v prometheus >/dev/null || { fail "no prometheus (make deps installs it)"; return; }
	setup_hosts || return
	local ns=$(stat -L -c %i "/run/netns/$B") sel
	start_serve -N "$B" -i 0.3 || return
	start_recv "$B" "$V4B:5521" --rcvbuf 4096 --read --read-gap-us 1000 || return
	local rpid=$RECV_PID rout=$RECV_OUT
	start_recv "$B" "$V4B:5522" --rcvbuf 4096 || return
	serve_scraped || return
	# top beside it: the same advice engine, fed the same way
	start_top -N "$B" || return
	local n0=$(mib "$B" Udp NoPorts)
	local s1=$(send "$A" "$V4B:5521" -c 500 -s 300)
	local s2=$(send "$A" "$V4B:5522" -c 300 -s 200)
	local s3=$(send "$A" "$V4B:5529" -c 40 -s 100)
	settle 1
	# the slow reader done: its queue empty
	local i
	for ((i = 0; i < 100; i++)); do
		[[ $(ss_skmem "$B" 5521 r) == 0 ]] && break
		sleep 0.1
	done
	local d1=$(ss_drops "$B" 5521) d2=$(ss_drops "$B" 5522) n=$(($(mib "$B" Udp NoPorts) - n0))
	local rb1=$(ss_skmem "$B" 5521 rb) rb2=$(ss_skmem "$B" 5522 rb) r2=$(ss_skmem "$B" 5522 r)
	echo "    truth: 5521 sent $s1 d $d1 rb $rb1; 5522 sent $s2 d $d2 rb $rb2 r $r2; 5529 sent $s3 UdpNoPorts $n"
	expect_gt "drops at 5521" "$d1" 0
	expect_gt "drops at 5522" "$d2" 0
	expect_eq "UdpNoPorts = sent to the closed port" "$n" "$s3"
	sel() { echo "{netns=\"$ns\",family=\"inet\",port=\"$1\"${2:+,cause=\"$2\"}}"; }
	expect_eq "Prometheus: socket_drops 5521 = ss d" \
		"$(serve_prom_wait "udpdrop_socket_drops_total$(sel 5521 rcvbuf)" "$d1")" "$d1"
	expect_eq "Prometheus: socket_dropped_bytes 5521 = d x 300" \
		"$(serve_prom_wait "udpdrop_socket_dropped_bytes_total$(sel 5521 rcvbuf)" "$((d1 * 300))")" "$((d1 * 300))"
	expect_eq "Prometheus: socket_dropped_bytes 5522 = d x 200" \
		"$(serve_prom_wait "udpdrop_socket_dropped_bytes_total$(sel 5522 rcvbuf)" "$((d2 * 200))")" "$((d2 * 200))"
	expect_eq "Prometheus: socket_rcvbuf_bytes 5521 = ss rb" \
		"$(serve_prom_wait "udpdrop_socket_rcvbuf_bytes$(sel 5521)" "$rb1")" "$rb1"
	expect_eq "Prometheus: socket_rcvbuf_bytes 5522 = ss rb" \
		"$(serve_prom_wait "udpdrop_socket_rcvbuf_bytes$(sel 5522)" "$rb2")" "$rb2"
	expect_eq "Prometheus: socket_queue_bytes 5522 = ss r" \
		"$(serve_prom_wait "udpdrop_socket_queue_bytes$(sel 5522)" "$r2")" "$r2"
	expect_eq "Prometheus: socket_queue_bytes 5521 = ss r" \
		"$(serve_prom_wait "udpdrop_socket_queue_bytes$(sel 5521)" 0)" 0
	if kernel_has_sk_data_ready; then
		expect_eq "Prometheus: socket_received 5521 = sent - d" \
			"$(serve_prom_wait "udpdrop_socket_received_total$(sel 5521)" "$((s1 - d1))")" "$((s1 - d1))"
		expect_eq "Prometheus: socket_received 5522 = sent - d (all held)" \
			"$(serve_prom_wait "udpdrop_socket_received_total$(sel 5522)" "$((s2 - d2))")" "$((s2 - d2))"
		# held, never read: its queue only grew, the last enqueue its peak
		expect_eq "Prometheus: socket_queue_peak_bytes 5522 = ss r" \
			"$(serve_prom_wait "udpdrop_socket_queue_peak_bytes$(sel 5522)" "$r2")" "$r2"
	else
		expect_eq "no socket_received without deliveries counted" \
			"$(curl -s "http://127.0.0.1:$SERVE_PORT/metrics" | grep -c '^udpdrop_socket_received_total')" 0
	fi
	expect_eq "Prometheus: noport_drops 5529 = UdpNoPorts" \
		"$(serve_prom_wait "udpdrop_noport_drops_total$(sel 5529)" "$n")" "$n"
	# the last flow to the closed port, as OpenMetrics's exemplar, kept by
	# Prometheus's exemplar storage: the sender's address, its datagrams
	local ex=""
	for ((i = 0; i < 100; i++)); do
		ex=$(curl -s --get --data-urlencode "query=udpdrop_noport_drops_total$(sel 5529)" \
			--data-urlencode "start=$(($(date +%s) - 600))" --data-urlencode "end=$(($(date +%s) + 60))" \
			"$SERVE_PROM/api/v1/query_exemplars" |
			jq -r '[.data[]?.exemplars[]? | "\(.labels.src) \(.value)"] | unique | join(",")')
		[[ -n $ex ]] && break
		sleep 0.1
	done
	expect_eq "Prometheus: the exemplar of noport_drops 5529 (the sender, its datagrams)" "$ex" "$V4A $n"
	# the advice as numbers: the engine's SO_RCVBUF for each 4 KiB buffer,
	# now the request that gave it (half ss's rb), under what it advises
	expect_eq "Prometheus: advice_current SO_RCVBUF 5522 = rb / 2" \
		"$(serve_prom_wait "udpdrop_advice_current{netns=\"$ns\",port=\"5522\",setting=\"SO_RCVBUF\"}" "$((rb2 / 2))")" "$((rb2 / 2))"
	local q="udpdrop_advice_current{netns=\"$ns\"} < udpdrop_advice_recommended"
	expect_eq "Prometheus: current < recommended, the ports and settings" \
		"$(curl -s --get --data-urlencode "query=$q" "$SERVE_PROM/api/v1/query" |
			jq -r '[.data.result[].metric | "\(.port):\(.setting)"] | sort | join(",")')" \
		"5521:SO_RCVBUF,5522:SO_RCVBUF"
	local serve_advice
	serve_advice=$(curl -s --get --data-urlencode "query=udpdrop_advice_recommended{netns=\"$ns\"}" "$SERVE_PROM/api/v1/query" |
		jq -r '[.data.result[] | "\(.metric.port) \(.metric.setting) \(.value[1])"] | sort | join("; ")')
	stop_top
	expect_eq "the advice's settings and values: serve's = top's" "$serve_advice" \
		"$(final '[.sockets[] | select(.local | test(":552[12]$")) | (.local | sub(".*:"; "")) as $p | .advice[]
			| select(.value != null) | "\($p) \(.setting) \(.value)"] | sort | join("; ")')"
	unset -f sel
	# the reader's own count: read = sent - d
	expect_eq "5521 read = sent - d" "$(stop_recv "$rpid" "$rout")" "$((s1 - d1))"
	stop_serve
}

# raw_request BYTES: send them to serve on a connection of its own; the
# status line's first two words (protocol, code) of what comes back.
raw_request() {
	local fd
	exec {fd}<>"/dev/tcp/127.0.0.1/$SERVE_PORT" || return
	printf '%s' "$1" >&"$fd"
	timeout 10 head -n 1 <&"$fd" | tr -d '\r' | awk '{ print $1, $2 }'
	exec {fd}>&-
}

# Bounded series: four listening ports with drops under --max-ports 2 (two
# of them named, the others port="other", counted as folded), and a
# connected socket on a port of B's ip_local_port_range (port="ephemeral",
# as a DNS client's would be); the series sum to the kernel's drops.
test_serve_bounded_series() {
	setup_hosts || return
	local ns=$(stat -L -c %i "/run/netns/$B")
	ip netns exec "$B" sysctl -qw net.ipv4.ip_local_port_range="40000 40010" || return
	start_serve -N "$B" -i 0.3 --max-ports 2 || return
	start_recv "$B" "$V4B:5600" --rcvbuf 4096 --sockets 4 || return
	start_recv "$B" "$V4B:40005" --rcvbuf 4096 --connect "$V4A:7000" || return
	local k0=$(mib "$B" Udp RcvbufErrors)
	send "$A" "$V4B:5600" --ports 4 -c 800 -s 300 >/dev/null
	send "$A" "$V4B:40005" --sport 7000 -c 300 -s 300 >/dev/null
	settle 1
	local k=$(($(mib "$B" Udp RcvbufErrors) - k0))
	serve_refreshed 2 || return
	local page=$(curl -s "http://127.0.0.1:$SERVE_PORT/metrics")
	local ports=$(awk -F'port="' '/^udpdrop_socket_drops_total/ { split($2, a, "\""); print a[1] }' <<<"$page" | sort -u | tr '\n' ' ')
	echo "    port labels: $ports"
	expect_eq "numeric port series" "$(tr ' ' '\n' <<<"$ports" | grep -c '^[0-9]')" 2
	[[ " $ports " == *" other "* ]] || fail "no port=\"other\" series"
	[[ " $ports " == *" ephemeral "* ]] || fail "no port=\"ephemeral\" series"
	expect_eq "folded sockets" "$(metric "$page" udpdrop_socket_series_folded_total "")" 2
	expect_eq "socket series sum = the kernel's rcvbuf drops" \
		"$(awk '/^udpdrop_socket_drops_total/ { s += $2 } END { print s + 0 }' <<<"$page")" "$k"
	stop_serve
}

# A socket owned by a process in a Kubernetes pod's cgroup (the systemd
# driver's layout, containerd's scope, under a test cgroup of its own) with
# the kubelet's log directories (a fake /var/log: pods/, containers/):
# its series carry the pod's namespace, name and container, and
# udpdrop_pod_info its UID; no Kubernetes API.
test_serve_pod_labels() {
	setup_hosts || return
	local ns=$(stat -L -c %i "/run/netns/$B") uid=6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d
	fake_pod "$uid" dns coredns-7f9c-x2v4q coredns || return
	local scope=$POD_SCOPE logs=$POD_LOGS
	start_serve -N "$B" -i 0.3 --k8s-logs "$logs" || return
	# the receiver in the pod's container cgroup before its socket is seen
	start_recv "$B" "$V4B:5541" --rcvbuf 4096 || return
	echo "$RECV_PID" >"$scope/cgroup.procs" || { fail "cannot move the receiver into $scope"; return; }
	local k0=$(mib "$B" Udp RcvbufErrors)
	send "$A" "$V4B:5541" -c 500 -s 300 >/dev/null
	settle 1
	local k=$(($(mib "$B" Udp RcvbufErrors) - k0))
	serve_refreshed 2 || return
	local page=$(curl -s "http://127.0.0.1:$SERVE_PORT/metrics")
	expect_eq "the socket's series, with its pod" \
		"$(metric "$page" udpdrop_socket_drops_total "netns=\"$ns\",family=\"inet\",port=\"5541\",cause=\"rcvbuf\",comm=\"udptest\",k8s_namespace=\"dns\",k8s_pod=\"coredns-7f9c-x2v4q\",k8s_container=\"coredns\"")" "$k"
	expect_eq "udpdrop_pod_info" \
		"$(metric "$page" udpdrop_pod_info "k8s_namespace=\"dns\",k8s_pod=\"coredns-7f9c-x2v4q\",uid=\"$uid\"")" 1
	stop_serve
}

# Hostile clients while drops come in: 40 connections that send half a
# request and stall (five times --max-connections), then a 10 KiB header
# and garbage, and a scraper: each newcomer takes the slot of the oldest
# stalled one, so the header gets its 431, the garbage its 400 and the
# scraper its page at once, with the kernel's count; serve says what it
# refused.
test_serve_hostile_clients() {
	setup_hosts || return
	local ns=$(stat -L -c %i "/run/netns/$B") i fds=()
	start_serve -N "$B" -i 0.3 --max-connections 8 || return
	start_recv "$B" "$V4B:5521" --rcvbuf 4096 || return
	local k0=$(mib "$B" Udp RcvbufErrors)
	# writes to connections serve closed must not end this shell
	trap '' PIPE
	for ((i = 0; i < 40; i++)); do
		exec {fd}<>"/dev/tcp/127.0.0.1/$SERVE_PORT" || break
		printf 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n' >&"$fd" 2>/dev/null
		fds+=("$fd")
	done
	expect_eq "stalled connections opened" "${#fds[@]}" 40
	# those still in a slot have waited long enough to give it up
	sleep 1.5
	send "$A" "$V4B:5521" -c 500 -s 300 >/dev/null
	settle 1
	local k=$(($(mib "$B" Udp RcvbufErrors) - k0))
	expect_eq "a 10 KiB header" "$(raw_request "GET / HTTP/1.1"$'\r\n'"X: $(head -c 10240 /dev/zero | tr '\0' a)")" \
		"HTTP/1.1 431"
	expect_eq "garbage" "$(raw_request $'\x01\x02garbage\r\n\r\n')" "HTTP/1.1 400"
	# a web page's request through a name rebound to 127.0.0.1
	expect_eq "a Host that names no address (DNS rebinding)" \
		"$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: rebind.example:9436' "http://127.0.0.1:$SERVE_PORT/metrics")" 403
	expect_eq "Host: localhost" \
		"$(curl -s -o /dev/null -w '%{http_code}' -H "Host: localhost:$SERVE_PORT" "http://127.0.0.1:$SERVE_PORT/")" 200
	serve_refreshed 1 || return
	# while 8 stalled clients hold every slot and a flood of new, empty
	# connections goes on (each can only take a stalled one's slot once it
	# has waited a second; the scraper's request is read at once)
	(
		for ((i = 0; i < 4000; i++)); do
			exec {f}<>"/dev/tcp/127.0.0.1/$SERVE_PORT" 2>/dev/null && exec {f}>&-
		done
	) &
	local flood=$!
	BG_PIDS+=("$flood")
	local page code ok=0
	for ((i = 0; i < 5 && !ok; i++)); do
		code=$(curl -s --max-time 4 -o "$T/page" -w '%{http_code}' "http://127.0.0.1:$SERVE_PORT/metrics")
		[[ $code == 200 ]] && ok=1
	done
	kill "$flood" 2>/dev/null
	wait "$flood" 2>/dev/null
	expect_eq "a scrape among stalled clients and a flood (of 5 tries, one answered)" "$ok" 1
	page=$(cat "$T/page")
	expect_eq "its count, the kernel's" \
		"$(metric "$page" udpdrop_drops_total "netns=\"$ns\",cause=\"rcvbuf\",reason=\"SOCKET_RCVBUFF\"")" "$k"
	for fd in "${fds[@]}"; do
		exec {fd}>&-
	done
	serve_refreshed 1 || return
	page=$(curl -s "http://127.0.0.1:$SERVE_PORT/metrics")
	expect_gt "refused: too many connections (stalled ones replaced)" \
		"$(metric "$page" udpdrop_http_refused_total 'why="too_many_connections"')" 30
	expect_eq "refused: request too large" \
		"$(metric "$page" udpdrop_http_refused_total 'why="request_too_large"')" 1
	expect_eq "refused: bad request" "$(metric "$page" udpdrop_http_refused_total 'why="bad_request"')" 1
	expect_eq "refused: a Host that names no address" \
		"$(metric "$page" udpdrop_http_refused_total 'why="host"')" 1
	expect_eq "udpdrop_drops_total still the kernel's" \
		"$(metric "$page" udpdrop_drops_total "netns=\"$ns\",cause=\"rcvbuf\",reason=\"SOCKET_RCVBUFF\"")" "$k"
	stop_serve
	trap - PIPE
}

# Bad input: one line, exit 2 (a malformed --listen) or 1 (the address
# in use), and nothing left attached.
test_serve_bad_input() {
	local before=$(prog_ids) rc
	T=$(mktemp -d /tmp/udpdrop-test.XXXXXX)
	trap cleanup EXIT
	"$UDPDROP" serve --listen nonsense >"$T/out" 2>"$T/err"
	rc=$?
	expect_eq "--listen nonsense: exit" "$rc" 2
	expect_eq "--listen nonsense: one line and the hint" "$(wc -l <"$T/err")" 2
	grep -q -- "--listen" "$T/err" || fail "the line does not name --listen: $(cat "$T/err")"
	"$UDPDROP" serve --listen fd:999 >"$T/out" 2>"$T/err"
	expect_eq "--listen fd:999 (no such fd): exit" "$?" 2
	# a port in use (serve's own, from a first one)
	start_serve -i 1 || return
	"$UDPDROP" serve --listen "127.0.0.1:$SERVE_PORT" >"$T/out" 2>"$T/err"
	rc=$?
	expect_eq "address in use: exit" "$rc" 1
	expect_eq "address in use: one line" "$(wc -l <"$T/err")" 1
	stop_serve
	expect_eq "nothing printed on stdout" "$(wc -c <"$T/out")" 0
	expect_eq "no program left" "$(progs_left "$before")" none
}

# --textfile DIR alone: no listener; DIR/udpdrop.prom renamed into place
# each interval, read by a real node_exporter's textfile collector without
# a scrape error, with the kernel's count; removed when serve stops. An
# udpdrop.prom that is a symlink is refused (exit 2), its target untouched.
test_serve_textfile_node_exporter() {
	command -v prometheus-node-exporter >/dev/null ||
		{ fail "no prometheus-node-exporter (make deps installs it)"; return; }
	setup_hosts || return
	local ns=$(stat -L -c %i "/run/netns/$B") dir=$T/textfile i nport ok=0
	mkdir -p "$dir"
	# refused: udpdrop.prom a symlink (to a file that must stay as it is)
	echo keep >"$T/target"
	ln -s "$T/target" "$dir/udpdrop.prom"
	"$UDPDROP" serve --textfile "$dir" -N "$B" >"$T/out" 2>"$T/err"
	expect_eq "a symlinked udpdrop.prom: exit" "$?" 2
	grep -q "is a symlink" "$T/err" || fail "no word of the symlink: $(cat "$T/err")"
	expect_eq "its target untouched" "$(cat "$T/target")" keep
	rm "$dir/udpdrop.prom"
	"$UDPDROP" serve --textfile "$dir" -N "$B" -i 0.3 2>"$T/serve.err" &
	SERVE_PID=$!
	BG_PIDS+=("$SERVE_PID")
	for ((i = 0; i < 600; i++)); do
		[[ -f $dir/udpdrop.prom ]] && grep -q "tracing UDP drops" "$T/serve.err" && break
		sleep 0.1
	done
	[[ -f $dir/udpdrop.prom ]] || { fail "no udpdrop.prom: $(cat "$T/serve.err")"; return; }
	grep -q "serving http" "$T/serve.err" && fail "--textfile alone opened a listener"
	expect_eq "its mode" "$(stat -c %a "$dir/udpdrop.prom")" 644
	start_recv "$B" "$V4B:5531" --rcvbuf 4096 || return
	local k0=$(mib "$B" Udp RcvbufErrors)
	send "$A" "$V4B:5531" -c 500 -s 300 >/dev/null
	settle 1
	local k=$(($(mib "$B" Udp RcvbufErrors) - k0))
	for ((i = 0; i < 5 && !ok; i++)); do
		nport=$((20000 + RANDOM % 20000))
		[[ -n $(ss -Htln "sport = :$nport") ]] && continue
		prometheus-node-exporter --collector.disable-defaults --collector.textfile \
			--collector.textfile.directory="$dir" \
			--web.listen-address="127.0.0.1:$nport" >"$T/ne.log" 2>&1 &
		BG_PIDS+=($!)
		local j
		for ((j = 0; j < 100; j++)); do
			curl -sf "http://127.0.0.1:$nport/metrics" >/dev/null && { ok=1; break; }
			sleep 0.1
		done
	done
	((ok)) || { fail "node_exporter did not start: $(tail -n 3 "$T/ne.log")"; return; }
	local page series="udpdrop_drops_total{cause=\"rcvbuf\",netns=\"$ns\",reason=\"SOCKET_RCVBUFF\"}"
	for ((i = 0; i < 100; i++)); do
		page=$(curl -s "http://127.0.0.1:$nport/metrics")
		[[ $(awk -v s="$series" 'index($0, s " ") == 1 { print $2 }' <<<"$page") == "$k" ]] && break
		sleep 0.2
	done
	expect_eq "node_exporter: textfile scrape error" \
		"$(awk '/^node_textfile_scrape_error / { print $2 }' <<<"$page")" 0
	expect_eq "node_exporter: $series = the kernel's" \
		"$(awk -v s="$series" 'index($0, s " ") == 1 { print $2 }' <<<"$page")" "$k"
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID"
	expect_eq "serve exit code" "$?" 0
	expect_eq "files left in the directory" "$(ls -A "$dir" | wc -l)" 0
}
