#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The layers of src/ (docs/HACKING.md, "Layout"), checked on every
# #include "...": a file may include its own layer's headers and those of
# the layers below it, never one above.
#
#   base     no kernel, no udpdrop concepts
#   trace    the trace format and pcapng              (base)
#   kernel   the live system                          (base, trace)
#   model    aggregation of what the kernel counted   (base, trace, kernel)
#   advice   the rules                                (... model)
#   loadgen  what gen and sink share                  (... model)
#   cmd      what the subcommands share, main         (all of the above)
#   cmd/X    one subcommand                           (all of the above, cmd)
#
# Also: every header name is unique in src/ (the build finds them by name),
# nothing sits in src/ outside a layer, and no .c file is over 1,500 lines. Exits 1 naming each crossing.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

declare -A rank=([base]=0 [trace]=1 [kernel]=2 [model]=3 [advice]=4 [loadgen]=4 [cmd]=5)
declare -A where=()  # header name -> layer ("cmd/top" for a subcommand's)
bad=0

layer_of() { # PATH -> base | ... | cmd | cmd/X
	local p=${1#src/}
	case $p in
	cmd/*/*) echo "cmd/$(cut -d/ -f2 <<<"$p")" ;;
	*/*) echo "${p%%/*}" ;;
	*) echo "" ;;
	esac
}

while IFS= read -r f; do
	l=$(layer_of "$f")
	if [[ -z $l || -z ${rank[${l%%/*}]+x} ]]; then
		echo "layers: $f is in no layer (src/{base,trace,kernel,model,advice,loadgen,cmd})" >&2
		bad=1
		continue
	fi
	[[ $f == *.h ]] || continue
	n=${f##*/}
	if [[ -n ${where[$n]+x} ]]; then
		echo "layers: two headers named $n (${where[$n]}, $l): the build finds them by name" >&2
		bad=1
	fi
	where[$n]=$l
done < <(find src -type f -name '*.[ch]' | sort)

# may a file of layer $1 include a header of layer $2?
allowed() {
	local from=$1 to=$2
	[[ $from == "$to" ]] && return 0
	case $to in
	cmd/*) return 1 ;; # one subcommand's header: its own folder only
	cmd) [[ $from == cmd/* ]]; return ;;
	esac
	case $from in
	trace) [[ $to == base ]] ;;
	advice | loadgen) ((rank[$to] < 4)) ;;
	*) ((rank[$to] < rank[${from%%/*}])) ;;
	esac
}

while IFS= read -r f; do
	from=$(layer_of "$f")
	[[ -n $from ]] || continue
	while IFS=: read -r line inc; do
		to=${where[$inc]:-}
		[[ -n $to ]] || continue # include/ (the BPF ABI), .output/ (skeletons)
		if ! allowed "$from" "$to"; then
			echo "layers: $f:$line includes $inc ($to), a layer $from may not use" >&2
			bad=1
		fi
	done < <(grep -n '^#[[:space:]]*include[[:space:]]*"' "$f" | sed -E 's/^([0-9]+):.*"([^"]+)".*/\1:\2/')
done < <(find src -type f -name '*.[ch]' | sort)

# and no file so long that its seams are hard to see (issue 14)
while IFS= read -r f; do
	n=$(wc -l <"$f")
	if ((n > 1500)); then
		echo "layers: $f has $n lines: split it along its seams (at most 1,500)" >&2
		bad=1
	fi
done < <(find src -type f -name '*.c' | sort)

if ((bad)); then
	echo "layers: see tools/check-layers.sh: move a declaration down or the code up; split a long file" >&2
	exit 1
fi
echo "layers: $(find src -type f -name '*.[ch]' | wc -l) files in $(find src -mindepth 1 -type d | wc -l) folders, no include upward, none over 1,500 lines"
