/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel differences udpdrop copes with, in one place. Each entry names the
 * kernel change that forced it. Everything is decided at load time by CO-RE
 * relocations, so one object runs on every kernel from 5.17 (drop reasons)
 * onwards.
 */
#ifndef CORE_FIXES_BPF_H
#define CORE_FIXES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

/*
 * skb:kfree_skb gained the receiving socket (rx_sk) in 6.11,
 * "net: add rx_sk to trace_kfree_skb" (6.11). Before that the
 * socket of a receive-queue failure comes from udp:udp_fail_queue_rcv_skb.
 */
static __always_inline bool kfree_skb_has_rx_sk(void)
{
	return bpf_core_field_exists(struct trace_event_raw_kfree_skb, rx_sk);
}

/*
 * The drop reason argument exists since 5.17, commit c504e5c2f964
 * ("net: skb: introduce kfree_skb_reason()", 5.17). Without it every drop is
 * NOT_SPECIFIED.
 */
static __always_inline bool kfree_skb_has_reason(void)
{
	return bpf_core_field_exists(struct trace_event_raw_kfree_skb, reason);
}

/*
 * sock::sk_protocol was a bitfield before 5.6: "sock: Make sk_protocol
 * a 16-bit value" (5.6). The BITFIELD reads handle both.
 */

/*
 * Reason numbers differ between kernels: never compare with a literal.
 * A reason this kernel lacks relocates to a value that never matches.
 */
#define UD_REASON(name)                                                        \
	(bpf_core_enum_value_exists(enum skb_drop_reason,                       \
				    SKB_DROP_REASON_##name)                     \
		 ? (__u32)bpf_core_enum_value(enum skb_drop_reason,             \
					      SKB_DROP_REASON_##name)           \
		 : 0xffffffffu)

#endif /* CORE_FIXES_BPF_H */
