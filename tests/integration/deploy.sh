# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The fleet kit (deploy/, docs/deploy.md) against the real thing: udpdrop
# serve in a test namespace, scraped every second by a real Prometheus
# (Debian's) that loads deploy/udpdrop-rules.yml; each rule and each query
# of the Grafana dashboard evaluated through its HTTP API; node_exporter
# with the netstat fields docs/deploy.md gives. Sourced by run.sh.
# (serve.sh has helpers like these: a name defined twice is refused.)

# deploy_start_serve ARGS...: udpdrop serve on 127.0.0.1 (a port the kernel
# picks); DEPLOY_SERVE_PID, DEPLOY_SERVE_PORT.
deploy_start_serve() {
	local err=$T/deploy-serve.err i
	: >"$err"
	"$UDPDROP" serve --listen 127.0.0.1:0 "$@" 2>"$err" &
	DEPLOY_SERVE_PID=$!
	BG_PIDS+=("$DEPLOY_SERVE_PID")
	for ((i = 0; i < 600; i++)); do
		DEPLOY_SERVE_PORT=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$err")
		[[ -n $DEPLOY_SERVE_PORT ]] && return 0
		kill -0 "$DEPLOY_SERVE_PID" 2>/dev/null || break
		sleep 0.1
	done
	fail "udpdrop serve did not start: $(cat "$err")"
	return 1
}

# deploy_start_prometheus CONFIG: Prometheus on a free loopback port (a few
# tries: ports race), ready; DEPLOY_PROM (its URL).
deploy_start_prometheus() {
	local i j port pid
	for ((i = 0; i < 5; i++)); do
		port=$((20000 + RANDOM % 20000))
		[[ -n $(ss -Htln "sport = :$port") ]] && continue
		prometheus --config.file="$1" --storage.tsdb.path="$T/deploy-tsdb" \
			--web.listen-address="127.0.0.1:$port" >"$T/deploy-prom.log" 2>&1 &
		pid=$!
		BG_PIDS+=("$pid")
		for ((j = 0; j < 600; j++)); do
			if curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null; then
				DEPLOY_PROM=http://127.0.0.1:$port
				return 0
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	done
	fail "prometheus did not start: $(tail -n 3 "$T/deploy-prom.log")"
	return 1
}

# deploy_query EXPR: Prometheus's answer (JSON) to the instant query EXPR.
deploy_query() {
	curl -s --get --data-urlencode "query=$1" "$DEPLOY_PROM/api/v1/query"
}

# deploy_value EXPR JQ-SELECT: the value of the one series of EXPR's result
# that JQ-SELECT (a jq condition on .metric) picks; empty when none.
deploy_value() {
	deploy_query "$1" | jq -r "[.data.result[]? | select(.metric | $2) | .value[1]] | first // empty"
}

# deploy_wait_value EXPR JQ-SELECT WANT [TRIES]: until that value is WANT
# (every 0.2 s, 600 tries unless told: the machine is busy); the last one.
deploy_wait_value() {
	local i got=""
	for ((i = 0; i < ${4:-600}; i++)); do
		got=$(deploy_value "$1" "$2")
		[[ $got == "$3" ]] && break
		sleep 0.2
	done
	echo "$got"
}

# deploy_rule_query RULES NAME: the expression of rule NAME in RULES (the
# answer of /api/v1/rules), as Prometheus parsed it.
deploy_rule_query() {
	jq -r --arg n "$2" '.data.groups[].rules[] | select(.name == $n) | .query' <<<"$1"
}

# The dashboard's queries as Grafana would send them: $__rate_interval 1m,
# $__range 5m, and the All of each variable (".*").
deploy_dashboard_exprs() {
	jq -r '[.panels[], (.panels[] | .panels? // [] | .[])] | .[] | select(.type != "row")
		| .title as $t | (.targets // [])[] | "\($t)\t\(.expr)"' "$ROOT/deploy/grafana-dashboard.json" |
		sed -E 's/\$__rate_interval/1m/g; s/\$__(range|interval)/5m/g; s/\$\{?[A-Za-z_]+\}?/.*/g'
}

# rcvbuf drops in B in two bursts (rate() sees the second: a series is born
# with its first drops) and no_socket drops in one, under serve scraped
# every second by Prometheus with the rules loaded: every rule loaded and
# evaluated without error; UdpDropsRising's rate positive and the coverage
# of the alert's own expression 1, for the netns; every dashboard query
# and variable answers, with data. No timing is asserted: the machine is
# shared.
test_deploy_rules_and_dashboard() {
	command -v prometheus >/dev/null || { fail "no prometheus (make deps installs it)"; return; }
	setup_hosts || return
	local ns=$(stat -L -c %i "/run/netns/$B") got q i
	deploy_start_serve -N "$B" -i 0.3 || return
	start_recv "$B" "$V4B:5541" --rcvbuf 4096 || return
	cat >"$T/deploy-prom.yml" <<-EOF
	global: { scrape_interval: 1s, evaluation_interval: 1s }
	rule_files: ['$ROOT/deploy/udpdrop-rules.yml']
	scrape_configs:
	  - job_name: udpdrop
	    static_configs: [ { targets: ['127.0.0.1:$DEPLOY_SERVE_PORT'] } ]
	EOF
	got=$(promtool check config "$T/deploy-prom.yml" 2>&1) || { fail "promtool check config: $got"; return; }
	deploy_start_prometheus "$T/deploy-prom.yml" || return
	local target="127.0.0.1:$DEPLOY_SERVE_PORT"
	local here=".instance == \"$target\" and .netns == \"$ns\""

	# the first rcvbuf burst and the no_socket drops: Prometheus has them
	local k0=$(mib "$B" Udp RcvbufErrors) n0=$(mib "$B" Udp NoPorts)
	send "$A" "$V4B:5541" -c 400 -s 300 >/dev/null
	send "$A" "$V4B:5542" -c 40 -s 100 >/dev/null
	settle 1
	local k1=$(($(mib "$B" Udp RcvbufErrors) - k0)) n=$(($(mib "$B" Udp NoPorts) - n0))
	expect_gt "kernel rcvbuf drops, first burst" "$k1" 0
	q="sum without (reason) (udpdrop_drops_total)"
	expect_eq "Prometheus: rcvbuf drops, first burst" \
		"$(deploy_wait_value "$q" "$here and .cause == \"rcvbuf\"" "$k1")" "$k1"
	expect_eq "Prometheus: no_socket drops" \
		"$(deploy_wait_value "$q" "$here and .cause == \"no_socket\"" "$n")" "$n"
	# the second: now rate() has a rise to see
	send "$A" "$V4B:5541" -c 400 -s 300 >/dev/null
	settle 1
	local k=$(($(mib "$B" Udp RcvbufErrors) - k0))
	expect_gt "kernel rcvbuf drops, second burst" "$((k - k1))" 0
	expect_eq "Prometheus: rcvbuf drops, both bursts" \
		"$(deploy_wait_value "$q" "$here and .cause == \"rcvbuf\"" "$k")" "$k"

	# every rule loaded, evaluated by now without error
	local rules want
	for ((i = 0; i < 300; i++)); do
		rules=$(curl -s "$DEPLOY_PROM/api/v1/rules")
		[[ $(jq '[.data.groups[].rules[] | select(.health != "ok")] | length' <<<"$rules") == 0 ]] && break
		sleep 0.2
	done
	for want in netns_cause:udpdrop_drops:rate5m netns_cause:udpdrop_coverage:ratio \
		UdpDropsRising UdpDropCoverageBelowOne UdpdropEventsMissed UdpdropDown UdpdropAdviceUnmet; do
		expect_eq "rule $want: health, error" \
			"$(jq -r --arg n "$want" '[.data.groups[].rules[] | select(.name == $n) | "\(.health) \(.lastError // "")"] | join(",")' <<<"$rules")" "ok "
	done
	# each rule's expression as Prometheus parsed it, evaluated now
	while IFS= read -r q; do
		expect_eq "evaluates: $q" "$(deploy_query "$q" | jq -r '.status')" success
	done < <(jq -r '.data.groups[].rules[].query' <<<"$rules")

	# UdpDropsRising: the rate it compares with its floor, for the netns
	q=$(deploy_rule_query "$rules" UdpDropsRising)
	[[ $q == *" > 1" ]] || fail "UdpDropsRising is no longer '... > 1': $q"
	got=$(deploy_value "${q% > 1}" "$here and .cause == \"rcvbuf\"")
	echo "    UdpDropsRising: rate ${got:-none}/s, state $(jq -r '.data.groups[].rules[] | select(.name == "UdpDropsRising") | .state' <<<"$rules")"
	awk -v r="$got" 'BEGIN { exit !(r > 0) }' || fail "UdpDropsRising's rate for the netns: got '$got', want > 0"

	# UdpDropCoverageBelowOne: its ratio is 1 for each cause the kernel
	# counted (rcvbuf's once its first burst is over a minute old: the
	# alert compares with the least the kernel counted in a minute), so
	# the alert's expression has nothing for the netns
	q=$(deploy_rule_query "$rules" UdpDropCoverageBelowOne)
	[[ $q == *" < 1" ]] || fail "UdpDropCoverageBelowOne is no longer '... < 1': $q"
	expect_eq "the alert's coverage, no_socket" \
		"$(deploy_wait_value "${q% < 1}" "$here and .cause == \"no_socket\"" 1)" 1
	expect_eq "the alert's coverage, rcvbuf (within 2 minutes)" \
		"$(deploy_wait_value "${q% < 1}" "$here and .cause == \"rcvbuf\"" 1 900)" 1
	expect_eq "the alert's expression: no series for the netns" \
		"$(deploy_query "$q" | jq --arg ns "$ns" '[.data.result[] | select(.metric.netns == $ns)] | length')" 0
	expect_eq "recorded coverage, rcvbuf" \
		"$(deploy_wait_value netns_cause:udpdrop_coverage:ratio "$here and .cause == \"rcvbuf\"" 1)" 1
	expect_eq "recorded drops/s, rcvbuf: a series" \
		"$(deploy_query netns_cause:udpdrop_drops:rate5m | jq --arg ns "$ns" '[.data.result[] | select(.metric.netns == $ns and .metric.cause == "rcvbuf")] | length')" 1
	# UdpdropEventsMissed and UdpdropDown: their sides of the comparison
	q=$(deploy_rule_query "$rules" UdpdropEventsMissed)
	expect_eq "UdpdropEventsMissed: the increase, for the target" \
		"$(deploy_value "${q% > 0}" ".instance == \"$target\"" | awk '{ print ($1 >= 0) ? "a number" : $1 }')" "a number"
	# UdpdropAdviceUnmet: 5541 (a 4 KiB buffer, still dropping) is in its
	# expression, its value SO_RCVBUF now: the request, half ss's rb
	q=$(deploy_rule_query "$rules" UdpdropAdviceUnmet)
	local rb=$(ss_skmem "$B" 5541 rb)
	expect_eq "UdpdropAdviceUnmet's expression: 5541's SO_RCVBUF now (rb / 2)" \
		"$(deploy_wait_value "$q" "$here and .port == \"5541\" and .setting == \"SO_RCVBUF\"" "$((rb / 2))")" "$((rb / 2))"
	q=$(deploy_rule_query "$rules" UdpdropDown)
	expect_eq "UdpdropDown: its selector finds the target, up" \
		"$(deploy_value "${q% == 0}" ".instance == \"$target\"")" 1

	# the dashboard: every query answers, with data (the page has every
	# family by now); the variables list the netns, the cause, the target
	local title expr res
	while IFS=$'\t' read -r title expr; do
		res=$(deploy_query "$expr")
		if [[ $(jq -r '.status' <<<"$res") != success ]]; then
			fail "dashboard '$title': $expr: $(jq -r '.error' <<<"$res")"
		elif [[ $(jq '.data.result | length' <<<"$res") == 0 ]]; then
			fail "dashboard '$title': $expr: no data"
		else
			echo "    ok: dashboard '$title': $(jq '.data.result | length' <<<"$res") series"
		fi
	done < <(deploy_dashboard_exprs)
	expect_eq "dashboard: the top ports have port 5541" \
		"$(deploy_dashboard_exprs | awk -F'\t' '$1 ~ /^Top ports/ { print $2 }' | while IFS= read -r expr; do
			deploy_query "$expr" | jq -r --arg ns "$ns" '.data.result[] | select(.metric.netns == $ns) | .metric.port'
		done | grep -c '^5541$')" 1
	local var label match
	while IFS=$'\t' read -r var label match want; do
		got=$(curl -s --get --data-urlencode "match[]=$match" "$DEPLOY_PROM/api/v1/label/$label/values" |
			jq -r --arg w "$want" '[.data[] | select(. == $w)] | length')
		expect_eq "dashboard variable $var lists $want" "$got" 1
	done < <(jq -r '.templating.list[] | select(.type == "query") | .query' "$ROOT/deploy/grafana-dashboard.json" |
		sed -E 's/^label_values\((.*), *([a-z_]+)\)$/\2\t\1/; s/\$\{?[A-Za-z_]+\}?/.*/g' |
		awk -F'\t' -v ns="$ns" -v t="$target" '{ w = $1 == "netns" ? ns : $1 == "cause" ? "rcvbuf" : t; print $1 "\t" $1 "\t" $2 "\t" w }')
	kill -TERM "$DEPLOY_SERVE_PID"
	wait "$DEPLOY_SERVE_PID"
	expect_eq "serve exit code" "$?" 0
}

# node_exporter run in B with docs/deploy.md's --collector.netstat.fields
# line: every node_netstat_ metric the doc's table names is there, and its
# Udp_RcvbufErrors is B's own (node_exporter reads the netns it runs in).
test_deploy_node_exporter_fields() {
	command -v prometheus-node-exporter >/dev/null ||
		{ fail "no prometheus-node-exporter (make deps installs it)"; return; }
	setup_hosts || return
	local flag names i port page ok=0 name
	flag=$(grep -m1 '^--collector.netstat.fields=' "$ROOT/docs/deploy.md")
	[[ -n $flag ]] || { fail "docs/deploy.md has no --collector.netstat.fields= line"; return; }
	names=$(grep -o 'node_netstat_[A-Za-z0-9]*_[A-Za-z0-9]*' "$ROOT/docs/deploy.md" | sort -u)
	expect_gt "node_netstat_ metrics the doc names" "$(wc -l <<<"$names")" 10
	start_recv "$B" "$V4B:5551" --rcvbuf 4096 || return
	send "$A" "$V4B:5551" -c 300 -s 300 >/dev/null
	settle 1
	for ((i = 0; i < 5 && !ok; i++)); do
		port=$((20000 + RANDOM % 20000))
		ip netns exec "$B" prometheus-node-exporter --collector.disable-defaults --collector.netstat \
			"$flag" --web.listen-address="127.0.0.1:$port" >"$T/deploy-ne.log" 2>&1 &
		BG_PIDS+=($!)
		local j
		for ((j = 0; j < 100; j++)); do
			page=$(ip netns exec "$B" curl -sf "http://127.0.0.1:$port/metrics") && { ok=1; break; }
			sleep 0.1
		done
	done
	((ok)) || { fail "node_exporter did not start in B: $(tail -n 3 "$T/deploy-ne.log")"; return; }
	local missing=0
	for name in $names; do
		grep -q "^$name " <<<"$page" || { fail "node_exporter with the doc's flag has no $name"; missing=1; }
	done
	((missing)) || echo "    ok: node_exporter has all $(wc -l <<<"$names") of the doc's node_netstat_ metrics"
	expect_eq "node_netstat_Udp_RcvbufErrors = B's UdpRcvbufErrors" \
		"$(awk '$1 == "node_netstat_Udp_RcvbufErrors" { print $2 }' <<<"$page")" "$(mib "$B" Udp RcvbufErrors)"
}
