#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Regenerate vmlinux/<arch>/vmlinux.h from the running kernel's BTF, then
# rebuild the BPF objects to prove the header works. CO-RE relocates the
# programs at load time, so one checked-in header serves every kernel;
# regenerate only to use types a newer kernel added.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=$(uname -m)
btf=${1:-/sys/kernel/btf/vmlinux}
[[ -r $btf ]] || { echo "gen-vmlinux: no BTF at $btf" >&2; exit 4; }
mkdir -p "vmlinux/$arch"
tmp=$(mktemp "vmlinux/$arch/.vmlinux.h.XXXXXX")
trap 'rm -f "$tmp"' EXIT
bpftool btf dump file "$btf" format c >"$tmp"
mv "$tmp" "vmlinux/$arch/vmlinux.h"
trap - EXIT
echo "gen-vmlinux: vmlinux/$arch/vmlinux.h from $(uname -r) ($(wc -l <"vmlinux/$arch/vmlinux.h") lines)"
make --no-print-directory .output/udpdrop.skel.h
echo "gen-vmlinux: BPF objects build against it"
