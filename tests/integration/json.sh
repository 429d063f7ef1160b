# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# One JSON vocabulary (docs/json.md, src/cmd/json_vocab.h): top, report and
# doctor emit the same keys with the same types for the same object. Sourced
# by run.sh after apps.sh (apps_start, apps_stop).

# The keys each view keeps in its old shape, for scripts (json_vocab.h):
# compared nowhere, documented in docs/json.md.
JSON_LEGACY='["reasons", "locations", "causes"]'

# json_shape_diff WHAT A B ONLY_A ONLY_B: every problem, one per line, of
# two lists of the same object from two views: a key one has and the other
# lacks (but for ONLY_A/ONLY_B, JSON arrays of keys), or a key whose value
# has another type (null, "not known here", goes with any). Nested objects
# and arrays are compared by path, list items merged ("[]").
json_shape_diff() {
	jq -rn --arg what "$1" --argjson a "$2" --argjson b "$3" \
		--argjson oa "$4" --argjson ob "$5" --argjson legacy "$JSON_LEGACY" '
		def keyset(xs; only): [xs[] | keys[]] | unique - only - $legacy;
		def types(xs): [xs[] | del(.[$legacy[]]) | paths as $p | getpath($p) as $v |
			select($v != null) |
			{p: ($p | map(if type == "number" then "[]" else tostring end) | join(".")),
			 t: ($v | type)}] | unique;
		if ($a | length) == 0 or ($b | length) == 0 then
			"\($what): nothing to compare (\($a | length) and \($b | length) objects)"
		else
			(keyset($a; $oa) - keyset($b; $ob) | .[] | "\($what): key \(.) in the first view only"),
			(keyset($b; $ob) - keyset($a; $oa) | .[] | "\($what): key \(.) in the second view only"),
			(types($a) as $ta | types($b) as $tb |
				$ta[] as $x | $tb[] | select(.p == $x.p and .t != $x.t) |
				"\($what): \(.p) is \($x.t) in the first view, \(.t) in the second")
		end'
}

# json_views_compare: top's summary ($T/final.json), report's
# ($T/report.json) and doctor's ($T/doctor.json), object by object.
json_views_compare() {
	local top report doctor problems="" p
	top=$(cat "$T/final.json") report=$(cat "$T/report.json") doctor=$(cat "$T/doctor.json")
	q() { jq -c "$1" <<<"$2"; }
	local -a checks=(
		# what | top's | report's | top-only keys | report-only keys
		"socket row|.sockets|.sockets|[\"advice\"]|[]"
		"unattributed flow|.unattributed|.unattributed|[\"advice\"]|[]"
		"totals|[.totals]|[.totals]|[\"overflow\",\"overflow_skb_events\",\"kernel_events\",\"not_udp\",\"filtered\",\"rx_overflow\",\"netns_unknown\"]|[]"
		"reconciliation line|.reconcile|.reconcile|[]|[]"
		"advice|[.sockets[].advice[]?, .unattributed[].advice[]?]|.advice|[]|[]"
		"kernel reason|[.sockets[].reason_list[], .unattributed[].reason_list[]]|[.sockets[].reasons[], .sockets[].reason_list[], .unattributed[].reason_list[]]|[]|[]"
		"drop location|[.sockets[].location_list[], .unattributed[].location_list[]]|[.sockets[].locations[], .sockets[].location_list[], .unattributed[].location_list[]]|[]|[]"
		"cause|[.sockets[].cause_list[], .unattributed[].cause_list[], .totals.cause_list[]]|[.sockets[].cause_list[], .unattributed[].cause_list[], .totals.cause_list[]]|[]|[]"
	)
	local c what ft fr ot orp
	for c in "${checks[@]}"; do
		IFS='|' read -r what ft fr ot orp <<<"$c"
		p=$(json_shape_diff "$what (top, report)" "$(q "$ft" "$top")" "$(q "$fr" "$report")" "$ot" "$orp")
		problems+=${p:+$p$'\n'}
	done
	# doctor's findings: report's advice keys, and the socket's keys of
	# top's rows (local, netns, owner, ...) with the same types
	p=$(json_shape_diff "advice (report, doctor)" "$(q .advice "$report")" "$(q .findings "$doctor")" \
		'[]' '["local","port","netns","kernel_owner","drops","rcvbuf","pid","comm","nprocs","k8s_namespace","k8s_pod","k8s_container","k8s_pod_uid"]')
	problems+=${p:+$p$'\n'}
	p=$(json_shape_diff "a netns's counters (top, doctor)" "$(q '[.counters[]]' "$top")" \
		"$(q '[.counters[]]' "$doctor")" '[]' '[]')
	problems+=${p:+$p$'\n'}
	p=$(json_shape_diff "socket keys (top's rows, doctor's findings)" \
		"$(q '[.sockets[] | {local, netns, kernel_owner, drops, rcvbuf, pid, comm, nprocs, k8s_namespace, k8s_pod, k8s_container, k8s_pod_uid}]' "$top")" \
		"$(q '[.findings[] | select(.socket != null) | {local, netns, kernel_owner, drops, rcvbuf, pid, comm, nprocs, k8s_namespace, k8s_pod, k8s_container, k8s_pod_uid}]' "$doctor")" '[]' '[]')
	problems+=${p:+$p$'\n'}
	if [[ -n $problems ]]; then
		fail "the views' JSON differ in shape:"$'\n'"$(sed 's/^/      /' <<<"$problems")"
	else
		echo "    ok: top, report and doctor: the same keys and types for $((${#checks[@]} + 3)) objects"
	fi
}

# A socket whose buffer overflows and a port nobody listens on, watched by
# top, record and doctor at once: every object of the vocabulary appears
# (socket row, flow, totals, reconciliation, advice, reason, location,
# cause) and has one shape in every view.
test_json_one_vocabulary() {
	setup_hosts || return
	apps_start "$B" || return
	start_recv "$B" "$V4B:5301" --rcvbuf 4096 || return
	send "$A" "$V4B:5301" -c 400 -s 200 >/dev/null
	send "$A" "$V4B:5302" -c 30 -s 100 >/dev/null
	settle 1
	apps_stop || return
	json_views_compare
	# and the old shapes are still there, for scripts (never renamed)
	expect_eq "top: reasons is an object" "$(final -r '.sockets[0].reasons | type')" object
	expect_eq "report: reasons is a list" "$(jq -r '.sockets[0].reasons | type' "$T/report.json")" array
	expect_eq "report: totals.causes.rcvbuf.drops" \
		"$(jq -r '.totals.causes.rcvbuf.drops' "$T/report.json")" "$(final -r '.totals.causes.rcvbuf')"
	# the same facts in the lists every view has
	local v
	for v in "$T/final.json" "$T/report.json"; do
		expect_eq "$(basename "$v"): reason_list of the socket" \
			"$(jq -c '.sockets[] | select(.local | endswith(":5301")) | [.reason_list[] | {name, cause, drops}]' "$v")" \
			'[{"name":"SOCKET_RCVBUFF","cause":"rcvbuf","drops":'"$(final '.sockets[] | select(.local | endswith(":5301")) | .drops')"'}]'
	done
}

# The comparison itself can fail: a key one view lacks, a type that
# differs, an empty view (pure jq, no BPF).
test_json_shape_diff_fails() {
	local out
	out=$(json_shape_diff t '[{"a":1,"b":"x"}]' '[{"a":"1"}]' '[]' '[]')
	expect_eq "a key in one view, a type differing" "$out" \
		$'t: key b in the first view only\nt: a is number in the first view, string in the second'
	expect_eq "null goes with any type; view-only keys pass" \
		"$(json_shape_diff t '[{"a":1,"b":2}]' '[{"a":null}]' '["b"]' '[]')" ""
	expect_eq "legacy keys are not compared" \
		"$(json_shape_diff t '[{"reasons":{}}]' '[{"reasons":[]}]' '[]' '[]')" ""
	expect_eq "nothing to compare fails" "$(json_shape_diff t '[]' '[{"a":1}]' '[]' '[]')" \
		"t: nothing to compare (0 and 1 objects)"
}
