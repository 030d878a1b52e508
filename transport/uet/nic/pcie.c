// SPDX-License-Identifier: MIT
/*
 * pcie.c - the PCIe link between a NIC and its host ("Fetching the payload
 * over PCIe").
 *
 * Each direction serializes at LaneBps x LaneCount. A fetch is a 64 B read
 * request NIC to host (98 B with TLP and DLLP framing: 1.55 ns at the
 * defaults) followed by the completion host to NIC, its payload in TLPs of
 * 256 B with 17 B of overhead each (69.29 ns for 4,096 B); completions come
 * back in request order and host memory latency is not modelled. A received
 * packet's payload goes the other way as a write, sharing the NIC-to-host
 * direction with the read requests.
 */
#include "nic.h"

#define PCIE_READ_REQ_BYTES 98 /* 64 B request + TLP/DLLP framing: 1.55 ns at 16 x 31.52 Gbit/s */
#define PCIE_TLP_PAYLOAD 256
#define PCIE_TLP_OVERHEAD 17   /* per TLP: a 4,096 B completion takes 69.29 ns */

/* Bytes on the link for @payload bytes of data (at least one TLP). */
static inline uint64_t tlp_bytes(uint64_t payload)
{
	uint64_t tlps = payload ? (payload + PCIE_TLP_PAYLOAD - 1) / PCIE_TLP_PAYLOAD : 1;

	return payload + tlps * PCIE_TLP_OVERHEAD;
}

uint64_t uet_pcie_fetch(struct uet_nics *ns, struct uet_nic *nic, uint32_t payload)
{
	uint64_t now = uet_now(ns), q = ns->pcie_ps_per_byte_q16;
	uint64_t rs = nic->n2h_free > now ? nic->n2h_free : now;
	uint64_t re = rs + uet_ser_ps(q, PCIE_READ_REQ_BYTES);
	uint64_t cs = nic->h2n_free > re ? nic->h2n_free : re;

	nic->n2h_free = re;
	nic->h2n_free = cs + uet_ser_ps(q, tlp_bytes(payload));
	return nic->h2n_free;
}

uint64_t uet_pcie_write(struct uet_nics *ns, struct uet_nic *nic, uint32_t payload)
{
	uint64_t now = uet_now(ns);
	uint64_t ws = nic->n2h_free > now ? nic->n2h_free : now;

	nic->n2h_free = ws + uet_ser_ps(ns->pcie_ps_per_byte_q16, tlp_bytes(payload));
	return nic->n2h_free;
}
