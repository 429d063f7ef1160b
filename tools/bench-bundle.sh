#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The benchmark (tools/bench.sh) as one folder, for a machine that has a
# kernel, bash, perl and coreutils but none of the rest: no build tools,
# no bpftool, no jq, no Debian libraries (a lent many-CPU machine).
#
#   tools/bench-bundle.sh [DIR]              (default .devbench, git-ignored)
#   BASELINE_REV=2cdf936 tools/bench-bundle.sh   (adds top@base, record@base)
#
# DIR then holds:
#   bin/   udpdrop (make static), bench-storm (static), and the dynamic
#          programs the benchmark calls: bench-floor, tracecat, bpftool, jq;
#          udpdrop-base (static, of BASELINE_REV) when asked for
#   lib/   every shared library those need, the dynamic loader and glibc
#          included, copied from this machine (ldd), so that nothing
#          depends on the other machine's libraries
#   wrap/  a script per dynamic program: this loader, these libraries
#   run.sh tools/bench.sh with the bundle's programs, from the repository
#          root the bundle sits in (on the other machine, a copy of this
#          working tree with DIR carried along):
#            .devbench/run.sh                     (bench.sh's defaults)
#            SENDERS="1 2 4 8 16" ROUNDS=2 SECS=2 .devbench/run.sh
#          Any of bench.sh's variables pass through.
#
# The bundle is rebuilt from scratch each time (DIR is emptied first).
set -euo pipefail
cd "$(dirname "$0")/.."

D=${1:-.devbench}
BASELINE_REV=${BASELINE_REV:-}

die() {
	echo "bench-bundle: $*" >&2
	exit 1
}

for t in bpftool jq ldd cc git; do
	command -v "$t" >/dev/null || die "$t not found (make deps)"
done
case $D in
/ | . | .. | "") die "refusing to empty '$D': name a folder of its own" ;;
esac
if [[ -e $D && ! -d $D ]]; then
	die "$D exists and is not a folder"
fi

# make's output only when it fails (the static link's glibc warnings are
# about NSS modules udpdrop never loads: the Makefile says why)
build() { # $1: what, then make's arguments
	local what=$1 log
	shift
	log=$(mktemp /tmp/bench-bundle-make.XXXXXX)
	if ! make -s "$@" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		rm -f "$log"
		die "cannot build $what"
	fi
	rm -f "$log"
}

build "udpdrop, the floor and tracecat" udpdrop static .output/bench-floor .output/tests/tracecat

rm -rf "$D"
mkdir -p "$D/bin" "$D/lib" "$D/wrap"
cp udpdrop-static "$D/bin/udpdrop"
cc -O2 -pthread -static -o "$D/bin/bench-storm" tools/bench/storm.c

if [[ -n $BASELINE_REV ]]; then
	wt=$(mktemp -d /tmp/bench-bundle.XXXXXX)
	trap 'git worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"' EXIT
	git worktree add --detach -q "$wt" "$BASELINE_REV" ||
		die "BASELINE_REV=$BASELINE_REV: no such commit"
	build "$BASELINE_REV's udpdrop-static" -C "$wt" static
	cp "$wt/udpdrop-static" "$D/bin/udpdrop-base"
fi

# A dynamic program: its binary in bin/, its libraries (and the loader) in
# lib/, and a wrapper in wrap/ that runs it with them alone.
bundle() { # $1: path, $2: name
	local lib loader=
	cp "$1" "$D/bin/$2"
	while read -r lib; do
		[[ -n $lib ]] || continue
		cp -L "$lib" "$D/lib/"
		[[ $lib == */ld-linux* ]] && loader=${lib##*/}
	done < <(ldd "$1" | awk '/=> \// { print $3 } /^[[:space:]]*\/.*ld-linux/ { print $1 }')
	[[ -n $loader ]] || die "$1: no dynamic loader in its ldd"
	cat >"$D/wrap/$2" <<EOF
#!/bin/sh
# $2 with the bundle's loader and libraries (tools/bench-bundle.sh)
d=\$(dirname "\$(readlink -f "\$0")")/..
exec "\$d/lib/$loader" --library-path "\$d/lib" "\$d/bin/$2" "\$@"
EOF
	chmod +x "$D/wrap/$2"
}

bundle "$(command -v bpftool)" bpftool
bundle "$(command -v jq)" jq
bundle .output/bench-floor bench-floor
bundle .output/tests/tracecat tracecat

cat >"$D/run.sh" <<'EOF'
#!/usr/bin/env bash
# tools/bench.sh with this bundle's programs (made by tools/bench-bundle.sh).
# Run it from anywhere; it works in the repository root the bundle sits in.
set -euo pipefail
B=$(cd "$(dirname "$0")" && pwd)
cd "$B/.."
[[ -x tools/bench.sh ]] || { echo "run.sh: $B/.. is not the udpdrop repository" >&2; exit 1; }
mkdir -p .output/tests
# bench.sh runs these by path; the storm is rebuilt by bench.sh only when
# older than its source: a fresh copy is newer
cp "$B/bin/bench-storm" .output/bench-storm
touch .output/bench-storm
ln -sf "$B/wrap/bench-floor" .output/bench-floor
ln -sf "$B/wrap/tracecat" .output/tests/tracecat
export PATH="$B/wrap:$PATH"
export UDPDROP=${UDPDROP:-$B/bin/udpdrop}
if [[ -x $B/bin/udpdrop-base ]]; then
	export BASELINE=${BASELINE-$B/bin/udpdrop-base}
fi
echo "bundle: $B ($(cat "$B/made"))"
exec tools/bench.sh
EOF
chmod +x "$D/run.sh"
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo +changes)${BASELINE_REV:+, baseline $BASELINE_REV}, made $(date -u +%FT%TZ) on $(uname -r)" >"$D/made"

# the wrappers must run here, with nothing but the bundle's libraries
"$D/wrap/bpftool" version >/dev/null || die "the bundled bpftool does not run"
echo '{"a":1}' | "$D/wrap/jq" -e .a >/dev/null || die "the bundled jq does not run"
echo "bench-bundle: $D, $(du -sh "$D" | cut -f1) ($(cat "$D/made")); carry it and run $D/run.sh"
