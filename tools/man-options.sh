#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The OPTIONS section of each man/udpdrop-CMD.8, from the command's option
# table (src/base/opts.h), through `udpdrop --man-options CMD`: the same data as
# `udpdrop CMD --help`, so the two cannot drift.
#   tools/man-options.sh [UDPDROP]          rewrite the pages (make man)
#   tools/man-options.sh --check [UDPDROP]  fail when a committed page's
#                                           OPTIONS differ (make check-man)
# Also fails when a command in `udpdrop --help` has no page.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

check=0
[[ ${1:-} == --check ]] && { check=1; shift; }
UDPDROP=${1:-./udpdrop}
BEGIN='.\" BEGIN GENERATED OPTIONS'
END='.\" END GENERATED OPTIONS'
status=0 pages=0
tmp=$(mktemp -d /tmp/udpdrop-man.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

for cmd in $("$UDPDROP" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'); do
	page=man/udpdrop-$cmd.8
	if [[ ! -f $page ]]; then
		echo "man-options: $page is missing (udpdrop $cmd has no page)" >&2
		status=1
		continue
	fi
	if ! grep -qF "$BEGIN" "$page" || ! grep -qF "$END" "$page"; then
		echo "man-options: $page has no GENERATED OPTIONS markers" >&2
		status=1
		continue
	fi
	"$UDPDROP" --man-options "$cmd" >"$tmp/options" || { status=1; continue; }
	# the markers by ENVIRON: -v would take their backslashes as escapes
	GEN=$tmp/options BEGIN=$BEGIN END=$END awk '
		index($0, ENVIRON["BEGIN"]) == 1 { print; while ((getline l < ENVIRON["GEN"]) > 0) print l; skip = 1; next }
		index($0, ENVIRON["END"]) == 1 { skip = 0 }
		!skip { print }' "$page" >"$tmp/page"
	pages=$((pages + 1))
	if ((check)); then
		if ! diff -u "$page" "$tmp/page" >"$tmp/diff"; then
			echo "man-options: $page: OPTIONS differ from the option table (run 'make man'):" >&2
			cat "$tmp/diff" >&2
			status=1
		fi
	elif ! cmp -s "$page" "$tmp/page"; then
		cat "$tmp/page" >"$page"
		echo "  MAN      $page"
	fi
done
((pages)) || { echo "man-options: no command found in '$UDPDROP --help'" >&2; status=1; }
((check && !status)) && echo "man-options: $pages pages agree with the option tables"
exit $status
