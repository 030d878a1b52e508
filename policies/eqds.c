// SPDX-License-Identifier: MIT
/*
 * eqds.c - EQDS's receiver-driven credit, paced at the link rate.
 *
 * Olteanu et al., "An Edge-Queued Datagram Service for All Datacenter
 * Traffic", NSDI 2022.
 *
 * Senders send their first window speculatively and then ask the receiver
 * for credit (pull requests); the receiver's pacer grants it at its own link
 * rate, so the last hop never queues more than the speculative window. Per
 * call, in bytes and ps:
 *   requested += REQUEST_BYTES
 *   bank = min(bank + (now - last_call), BURST * PS_PER_BYTE)   (link time owed)
 *   demand = requested - granted
 *   grant = demand                                   if demand <= bank / PS_PER_BYTE
 *           whole QUANTUMs of bank / PS_PER_BYTE     otherwise
 *   bank -= grant * PS_PER_BYTE;  CREDIT = granted += grant
 * So over any interval T the credit grows by at most (T + BURST * PS_PER_BYTE)
 * / PS_PER_BYTE bytes, and never past what was requested. The bank starts
 * full so the first request is answered at once. PULL_TIMER wakes the handler
 * once a quantum's worth of link time has passed; the datapath calls
 * pcm_shell_tick() while requests are outstanding.
 *
 * The instance is per receiver (flow location = destination): REQUEST_BYTES
 * sums all senders' new requests, and the datapath divides the cumulative
 * credit among them round-robin, one QUANTUM per pull. A per-sender instance
 * works too, paced at the full link rate each.
 *
 * In the emulation: an 8:1 incast of 16 MiB flows has at most 1% trimmed
 * packets and Jain's index >= 0.99 (one instance per receiver). The trims
 * are the first, speculative window's, so shorter flows trim a larger share.
 *
 * Deviation, in the datapath (transport/uet/nic/credit.c): after a trim the
 * sender asks again for the lost packet's bytes with a new credit request,
 * where EQDS's receiver pulls for it as soon as the trimmed header arrives.
 * A lost packet thus waits about one RTT more for its credit (the request's
 * way there); at 8:1 this touches the 0.8% of packets trimmed.
 *
 * Tunables: PS_PER_BYTE (ps per byte), QUANTUM_BYTES, BURST_BYTES (bytes),
 * PULL_INTERVAL_PS (ps).
 */
#include "eqds.h"
#include "pcm_algo.h"
#include "pcmh.h"

int algorithm_main()
{
	pcm_uint now = get_signal(NOW);
	pcm_uint requested, granted, bank, demand, affordable, grant;

	if (!get_var_uint(INITIALIZED)) {
		set_var_uint(BANK_PS, BURST_BYTES * PS_PER_BYTE);
		set_var_uint(LAST_NOW, now);
		set_var_uint(INITIALIZED, 1);
	}
	requested = get_var_uint(REQUESTED) + get_signal(REQUEST_BYTES);
	granted = get_control(CREDIT);
	bank =
	    MIN(get_var_uint(BANK_PS) + (now - get_var_uint(LAST_NOW)), BURST_BYTES * PS_PER_BYTE);

	demand = requested > granted ? requested - granted : 0;
	affordable = bank / PS_PER_BYTE;
	grant = demand <= affordable ? demand : affordable / QUANTUM_BYTES * QUANTUM_BYTES;

	set_var_uint(REQUESTED, requested);
	set_var_uint(BANK_PS, bank - grant * PS_PER_BYTE);
	set_var_uint(LAST_NOW, now);
	set_control(CREDIT, granted + grant);
	return PCM_SUCCESS;
}
