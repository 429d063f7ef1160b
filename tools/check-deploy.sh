#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The fleet kit in deploy/ (docs/deploy.md), checked without a cluster or a
# running Prometheus: the rules (promtool check, and their unit tests), the
# plain scrape config, every PromQL expression of the Grafana dashboard
# (parsed by promtool as rules), its variables and data source, and the
# Kubernetes manifests against each other. No root needed.
# Ends with "deploy: N passed, N failed"; exits 1 if any failed, 2 when a
# tool it needs is missing.
#
#   tools/check-deploy.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

for tool in promtool jq; do
	if ! command -v "$tool" >/dev/null; then
		echo "deploy: $tool is missing: nothing checked (make deps installs it: Debian's prometheus, jq)" >&2
		echo "deploy: 0 passed, 1 failed"
		exit 2
	fi
done

passed=0 failed=0
tmp=$(mktemp -d /tmp/udpdrop-check-deploy.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

check() { # NAME COMMAND...: passes when COMMAND exits 0; its output when not
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "    ok: $name"
		passed=$((passed + 1))
	else
		echo "    FAIL: $name" >&2
		sed 's/^/      /' <<<"$out" >&2
		failed=$((failed + 1))
		return 1
	fi
}

DASH=deploy/grafana-dashboard.json

# every panel's targets, nested rows included
targets() {
	jq -c '[.panels[], (.panels[] | .panels? // [] | .[])] | .[] | select(.type != "row") as $p
		| ($p.targets // [])[] | {panel: $p.title, expr, datasource}' "$DASH"
}

# The dashboard's expressions as recording rules, so promtool parses each:
# Grafana's variables replaced as Grafana would ($__rate_interval and
# $__range: a duration; $instance, $netns, $cause: a regex).
dashboard_as_rules() {
	echo "groups:"
	echo "  - name: dashboard"
	echo "    rules:"
	local i=0 expr
	while IFS= read -r expr; do
		expr=$(sed -E 's/\$__(rate_interval|range|interval)/5m/g; s/\$\{?[A-Za-z_]+\}?/.*/g' <<<"$expr")
		printf '      - record: dashboard:expr_%d\n        expr: %s\n' "$i" "$(jq -Rn --arg e "$expr" '$e')"
		i=$((i + 1))
	done < <(targets | jq -r '.expr')
}

dashboard_exprs_nonempty() {
	local n bad
	n=$(targets | wc -l)
	((n > 0)) || { echo "no panel targets"; return 1; }
	bad=$(targets | jq -r 'select((.expr // "") | test("^\\s*$")) | .panel')
	[[ -z $bad ]] || { echo "panels with an empty expr: $bad"; return 1; }
	# every panel but rows has at least one target
	bad=$(jq -r '.panels[] | select(.type != "row" and ((.targets // []) | length) == 0) | .title' "$DASH")
	[[ -z $bad ]] || { echo "panels without a query: $bad"; return 1; }
}

dashboard_datasource() {
	local bad
	bad=$(targets | jq -r 'select(.datasource.uid != "${DS_PROMETHEUS}") | .panel')
	[[ -z $bad ]] || { echo "targets not on \${DS_PROMETHEUS}: $bad"; return 1; }
	bad=$(jq -r '.panels[] | select(.type != "row" and .datasource.uid != "${DS_PROMETHEUS}") | .title' "$DASH")
	[[ -z $bad ]] || { echo "panels not on \${DS_PROMETHEUS}: $bad"; return 1; }
	jq -e '.templating.list[] | select(.name == "DS_PROMETHEUS" and .type == "datasource" and .query == "prometheus")' \
		"$DASH" >/dev/null || { echo "no datasource variable DS_PROMETHEUS"; return 1; }
}

# every $variable an expression uses is defined (or Grafana's own $__...)
dashboard_variables() {
	local defined used v bad=""
	defined=$(jq -r '.templating.list[].name' "$DASH")
	for v in instance netns cause; do
		grep -qx "$v" <<<"$defined" || bad+=" $v (not defined)"
	done
	used=$( { targets | jq -r '.expr'; jq -r '.templating.list[] | select(.type == "query") | .query' "$DASH"; } |
		grep -oE '\$\{?[A-Za-z_]+' | tr -d '${' | sort -u)
	for v in $used; do
		[[ $v == __* ]] && continue
		grep -qx "$v" <<<"$defined" || bad+=" \$$v (used, not defined)"
	done
	[[ -z $bad ]] || { echo "variables:$bad"; return 1; }
	# ids unique: Grafana keys panel state by them
	[[ -z $(jq -r '[.panels[].id] | group_by(.) | map(select(length > 1)) | .[][0]' "$DASH") ]] ||
		{ echo "panel ids repeat"; return 1; }
}

# The manifests parsed as YAML (python3's yaml module: no other parser of
# Kubernetes YAML is on a Debian machine by default), and against each
# other: the PodMonitor selects the DaemonSet's pods by its port's name,
# the capabilities are docs/requirements.md's set, nothing privileged.
manifests() {
	python3 - <<-'EOF'
	import sys, yaml
	ds_docs = list(yaml.safe_load_all(open("deploy/udpdrop-daemonset.yaml")))
	pm = yaml.safe_load(open("deploy/podmonitor.yaml"))
	kinds = {d["kind"]: d for d in ds_docs}
	errs = []
	ds = kinds.get("DaemonSet")
	if not ds or "Namespace" not in kinds:
	    sys.exit("want a Namespace and a DaemonSet, got %s" % sorted(kinds))
	spec = ds["spec"]["template"]["spec"]
	labels = ds["spec"]["template"]["metadata"]["labels"]
	if ds["spec"]["selector"]["matchLabels"].items() - labels.items():
	    errs.append("the DaemonSet's selector does not select its own pods")
	for k in ("hostPID", "hostNetwork"):
	    if spec.get(k) is not True:
	        errs.append("%s is not true" % k)
	if not any(t.get("operator") == "Exists" and "key" not in t for t in spec.get("tolerations", [])):
	    errs.append("no toleration of every taint")
	(c,) = spec["containers"]
	sc = c["securityContext"]
	want = {"BPF", "PERFMON", "SYS_ADMIN", "SYS_PTRACE", "DAC_READ_SEARCH", "SYSLOG"}
	if sc["capabilities"].get("drop") != ["ALL"]:
	    errs.append("capabilities do not drop ALL")
	if set(sc["capabilities"].get("add", [])) != want:
	    errs.append("capabilities %s, want %s" % (sorted(sc["capabilities"].get("add", [])), sorted(want)))
	if sc.get("privileged") or sc.get("readOnlyRootFilesystem") is not True:
	    errs.append("privileged, or a writable root filesystem")
	if not all(m.get("readOnly") for m in c.get("volumeMounts", [])):
	    errs.append("a volume mounted read-write")
	if not c.get("resources", {}).get("limits"):
	    errs.append("no resource limits")
	if c["command"][0] != "/usr/local/bin/udpdrop" or c["args"][:2] != ["serve", "--listen"]:
	    errs.append("the container does not run udpdrop serve --listen")
	ports = {p["name"]: p["containerPort"] for p in c["ports"]}
	if ports.get("metrics") != int(c["args"][2].rsplit(":", 1)[1]):
	    errs.append("port metrics is not the port serve listens on")
	if pm["kind"] != "PodMonitor" or pm["metadata"]["namespace"] != ds["metadata"]["namespace"]:
	    errs.append("the PodMonitor is not in the DaemonSet's namespace")
	if pm["spec"]["selector"]["matchLabels"].items() - labels.items():
	    errs.append("the PodMonitor's selector does not select the DaemonSet's pods")
	(ep,) = pm["spec"]["podMetricsEndpoints"]
	if ep["port"] not in ports or ep.get("interval") != "15s":
	    errs.append("the PodMonitor scrapes port %s every %s" % (ep["port"], ep.get("interval")))
	if errs:
	    sys.exit("\n".join(errs))
	EOF
}

# docs/deploy.md's PrometheusRule for the Operator (the rule file indented
# under spec:) holds the same groups as the rule file
prometheusrule_wrap() {
	{ printf 'apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\n'
	  printf 'metadata:\n  name: udpdrop\n  namespace: udpdrop\nspec:\n'
	  sed 's/^/  /' deploy/udpdrop-rules.yml; } >"$tmp/prometheusrule.yaml"
	python3 - "$tmp/prometheusrule.yaml" <<-'EOF'
	import sys, yaml
	pr = yaml.safe_load(open(sys.argv[1]))
	rules = yaml.safe_load(open("deploy/udpdrop-rules.yml"))
	if pr["kind"] != "PrometheusRule" or pr["spec"]["groups"] != rules["groups"]:
	    sys.exit("the PrometheusRule's groups differ from the rule file's")
	EOF
}

echo "=== deploy: rules"
check "promtool check rules deploy/udpdrop-rules.yml" promtool check rules deploy/udpdrop-rules.yml
check "promtool test rules deploy/udpdrop-rules_test.yml" promtool test rules deploy/udpdrop-rules_test.yml
check "promtool check config deploy/prometheus-scrape.yml" promtool check config deploy/prometheus-scrape.yml

echo "=== deploy: dashboard"
if check "$DASH parses (jq)" jq -e '.panels | length > 0' "$DASH"; then
	check "every panel has a query, no expr empty" dashboard_exprs_nonempty
	check "every panel and query on \${DS_PROMETHEUS}" dashboard_datasource
	check "variables instance, netns, cause; none undefined" dashboard_variables
	dashboard_as_rules >"$tmp/dashboard-rules.yml"
	check "every dashboard expr parses (promtool, as $(grep -c 'record:' "$tmp/dashboard-rules.yml") rules)" \
		promtool check rules "$tmp/dashboard-rules.yml"
fi

echo "=== deploy: Kubernetes manifests"
if python3 -c 'import yaml' 2>/dev/null; then
	check "DaemonSet and PodMonitor parse and agree" manifests
	check "docs/deploy.md's PrometheusRule wrapping holds the rule file's groups" prometheusrule_wrap
else
	# never a quiet skip: make deps installs it
	echo "    FAIL: no python3 yaml module to parse the manifests with: make deps (python3-yaml)"
	failed=$((failed + 1))
fi

echo "deploy: $passed passed, $failed failed"
((failed == 0))
