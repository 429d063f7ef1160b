# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The two builds of the BPF object (docs/kernels.md): udpdrop.bpf.o reads
# packet headers in place (bpf_rdonly_cast, 6.2+), udpdrop_compat.bpf.o
# copies them (bpf_probe_read_kernel). A kernel loads one; these tests run
# the header-reading tests again with UDPDROP_COMPAT_OBJECT=1, so that the
# host tests both. Sourced by run.sh.

# Does this kernel's BTF have the kfunc udpdrop.bpf.o calls (6.2+)?
kernel_has_rdonly_cast() {
	bpftool btf dump file /sys/kernel/btf/vmlinux >"$T/btf.txt" ||
		{ fail "bpftool btf dump failed (make deps installs bpftool)"; return 1; }
	grep -q "^\[[0-9]*\] FUNC 'bpf_rdonly_cast'" "$T/btf.txt"
}

# Which object -v names: the kernel's choice, and the testing aid's.
test_compat_object_named() {
	local want="packet headers copied: bpf_probe_read_kernel"
	kernel_has_rdonly_cast && want="packet headers read in place: bpf_rdonly_cast"
	"$UDPDROP" top -b -n 1 -i 0.1 -v >/dev/null 2>"$T/default.err"
	expect_eq "top exit" "$?" 0
	expect_eq "default object" "$(grep -o 'packet headers [a-z ]*: bpf_[a-z_]*' "$T/default.err")" "$want"
	UDPDROP_COMPAT_OBJECT=1 "$UDPDROP" top -b -n 1 -i 0.1 -v >/dev/null 2>"$T/compat.err"
	expect_eq "top exit (compat)" "$?" 0
	expect_eq "compat object" "$(grep -o 'packet headers [a-z ]*: bpf_[a-z_]*' "$T/compat.err")" \
		"packet headers copied: bpf_probe_read_kernel"
	# 6.11+: in tp_btf the compat object leaves rx_sk (a trusted pointer,
	# which some verifiers take for never NULL) unread; raw_tp reads it as
	# a number
	if grep -q 'kfree_skb rx_sk (6.11+) yes' "$T/compat.err"; then
		expect_eq "compat tp_btf: rx_sk left unread" "$(grep -c 'rx_sk left unread' "$T/compat.err")" 1
		expect_eq "compat tp_btf: the socket from" \
			"$(grep -o 'receiving socket from [a-z_]*' "$T/compat.err")" \
			"receiving socket from udp_fail_queue_rcv_skb"
		UDPDROP_COMPAT_OBJECT=1 "$UDPDROP" top -b -n 1 -i 0.1 -v --attach raw_tp >/dev/null 2>"$T/craw.err"
		expect_eq "top exit (compat, raw_tp)" "$?" 0
		expect_eq "compat raw_tp: the socket from" \
			"$(grep -o 'receiving socket from [a-z_]*' "$T/craw.err")" "receiving socket from rx_sk"
	fi
}

# the flows of socketless drops, and every record event's, from the copy
test_compat_record_rcvbuf() { UDPDROP_COMPAT_OBJECT=1 test_record_rcvbuf; }
test_compat_record_ipv6() { UDPDROP_COMPAT_OBJECT=1 test_record_ipv6; }
test_compat_record_ipv4_options() { UDPDROP_COMPAT_OBJECT=1 test_record_ipv4_options; }
test_compat_record_ipv6_fragments() { UDPDROP_COMPAT_OBJECT=1 test_record_ipv6_fragments; }
test_compat_no_socket() { UDPDROP_COMPAT_OBJECT=1 test_no_socket; }
test_compat_ipv6_no_socket() { UDPDROP_COMPAT_OBJECT=1 test_ipv6_no_socket; }
test_compat_frag_timeout() { UDPDROP_COMPAT_OBJECT=1 test_frag_timeout; }
test_compat_frag_timeout_no_head() { UDPDROP_COMPAT_OBJECT=1 test_frag_timeout_no_head; }
test_compat_frag_timeout_first_dropped() { UDPDROP_COMPAT_OBJECT=1 test_frag_timeout_first_dropped; }
test_compat_rcvbuf_fragmented() { UDPDROP_COMPAT_OBJECT=1 test_rcvbuf_fragmented; }

# A kernel that names the kfunc in its BTF but refuses the object that
# calls it (no JIT, a JIT without kfunc calls): udpdrop loads the other.
# UDPDROP_REFUSE_KFUNC_OBJECT=1 acts as one; the counts must still be exact.
test_compat_fallback() {
	# before 6.2 the compat object is the first choice: no refusal
	local refused=0
	kernel_has_rdonly_cast && refused=1
	UDPDROP_REFUSE_KFUNC_OBJECT=1 "$UDPDROP" top -b -n 1 -i 0.1 -v >/dev/null 2>"$T/fb.err"
	expect_eq "top exit" "$?" 0
	expect_eq "refusal said" "$(grep -c 'the BPF object that reads packet headers in place was refused' "$T/fb.err")" "$refused"
	expect_eq "object loaded" "$(grep -o 'packet headers [a-z ]*: bpf_[a-z_]*' "$T/fb.err")" \
		"packet headers copied: bpf_probe_read_kernel"
	UDPDROP_REFUSE_KFUNC_OBJECT=1 test_no_socket
}
