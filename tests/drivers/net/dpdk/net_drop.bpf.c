/* net_drop.bpf.c — an XDP program dropping 3% of the packets a veth
 * receives, at random: the packet loss of net_veth.sh's "loss" mode on
 * kernels without sch_netem. It runs before any AF_PACKET tap sees the
 * packet, so the DPDK process behind the veth never receives it — a lost
 * packet, as on a lossy link. (A tc egress drop would not do: the kernel's
 * AF_PACKET TX-ring sender stops at the first refused packet and leaves the
 * rest of the ring until the next send, which delays packets rather than
 * losing them.) Built by net_veth.sh with clang -target bpf. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int drop_some(struct xdp_md *ctx)
{
	(void)ctx;
	return bpf_get_prandom_u32() % 1000 < 30 ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
