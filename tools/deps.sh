#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Install the Debian packages udpdrop's build, tests and benchmarks need.
# Safe to run twice: installs only what is missing.
set -euo pipefail

pkgs=(
	clang llvm gcc libc6-dev make pkg-config # build: BPF with clang, user space with cc
	libbpf-dev bpftool libelf-dev liblz4-dev zlib1g-dev libncurses-dev # .so and .a: make static links the .a
	file binutils                        # the static test: file, readelf say no libraries
	libcmocka-dev                        # unit tests
	libclang-rt-14-dev                   # libFuzzer for make fuzz (the trace reader)
	iproute2 nftables jq tmux util-linux procps # integration: netns, veth, nft, tc, sysctl
	bpftrace                             # benchmark peer (optional at run time)
	iperf3                               # the generator benchmark's peer; apps.sh
	dnsmasq-base dnsperf memcached rsyslog # apps.sh: real applications, every view
	tshark tcpdump                       # unit tests: report --pcap must read in both
	prometheus prometheus-node-exporter curl # serve: a real Prometheus scrapes it, node_exporter reads --textfile
	python3-yaml                         # tools/check-deploy.sh: the Kubernetes manifests parse
	qemu-system-x86 busybox-static kmod cpio # the kernel matrix: tests/kernels/
	debian-archive-keyring xz-utils zstd  # its private apt fetch and module unpacking
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	echo "deps: all ${#pkgs[@]} packages present"
	exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "deps: missing ${missing[*]}; run as root (sudo make deps)" >&2
	exit 3
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# wireshark-common asks whether non-root users may capture; answer before
# apt does (no: udpdrop only reads files), whatever the debconf frontend
echo 'wireshark-common wireshark-common/install-setuid boolean false' |
	debconf-set-selections
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
