/* SPDX-License-Identifier: MIT */
/*
 * policy_harness.h - what the policy-library tests share: opening a built-in
 * package on a one-flow synchronous shell checked against a target, building
 * events, reading controls and variables, and the unit conversions of
 * pcm_algo.h restated in plain double so the reference models can follow a
 * policy bit for bit.
 *
 * Each reference model in the tests is written from the policy's stated
 * update rules in plain double arithmetic, in the same order of operations,
 * so the double build of a policy must match it exactly.
 */
#ifndef PCM_TEST_POLICY_HARNESS_H
#define PCM_TEST_POLICY_HARNESS_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "builtin.h"
#include "shell.h"
#include "target.h"

#define BIT(t) ((pcm_uint)1 << (t))

/* The default fabric profile (policies/fabric/default.yaml). */
#define F_MSS 4096u
#define F_PKT 4184u /* FABRIC_NOMINAL_PKT_BYTES: what one packet counts in the window */
#define F_MTU 4150u
#define F_BDP 175284u
#define F_MIN_CWND 4184u /* one full packet's window */
#define F_MAX_CWND 262926u
#define F_BRTT 14022720u
#define F_TRTT 24539760u
#define F_RATE_GBPS 100u

#define US 1000000ull /* ps per microsecond */

/* A built-in policy on a shell of @flows flows, checked against @target. */
static inline struct pcm_shell *ph_open_flows(const char *name, const char *target, uint32_t flows)
{
	struct pcm_package_handle h;
	struct pcm_shell *sh = NULL;
	struct pcm_diag diag;
	char err[256];

	assert_int_equal(pcm_package_open(name, pcm_builtin_policies, &h, err, sizeof(err)), 0);
	if (pcm_shell_create(h.pkg, pcm_target_find(target), flows, 0, &sh, &diag) != 0)
		fail_msg("%s on %s: %s", name, target, diag.msg);
	return sh;
}

static inline struct pcm_shell *ph_open(const char *name)
{
	return ph_open_flows(name, "uet", 1);
}

static inline const pcm_uint *ph_var_slot(struct pcm_shell *sh, uint32_t flow, const char *name)
{
	const struct pcm_package *pkg = pcm_shell_flow_package(sh, flow);
	unsigned off = 2 + pkg->n_signals + pkg->n_controls;

	for (uint32_t i = 0; i < pkg->n_variables; i++)
		if (strcmp(pkg->variables[i].name, name) == 0)
			return &pcm_shell_record(sh, flow)[off + pkg->variables[i].slot];
	fail_msg("%s has no variable %s", pkg->name, name);
	return NULL;
}

static inline pcm_uint ph_var_u(struct pcm_shell *sh, const char *name)
{
	return *ph_var_slot(sh, 0, name);
}

static inline pcm_uint ph_arr_u(struct pcm_shell *sh, const char *name, unsigned idx)
{
	return ph_var_slot(sh, 0, name)[idx];
}

/* A pcm_fx variable of a double build. */
static inline double ph_var_d(struct pcm_shell *sh, const char *name)
{
	double d;

	memcpy(&d, ph_var_slot(sh, 0, name), sizeof(d));
	return d;
}

static inline pcm_uint ph_ctrl_flow(struct pcm_shell *sh, uint32_t flow, pcm_control_t type)
{
	pcm_uint v = 0;

	assert_int_equal(pcm_shell_control(sh, flow, type, &v), 0);
	return v;
}

static inline pcm_uint ph_ctrl(struct pcm_shell *sh, pcm_control_t type)
{
	return ph_ctrl_flow(sh, 0, type);
}

static inline void ph_set(struct pcm_event *ev, pcm_signal_t t, pcm_uint v)
{
	ev->valid |= BIT(t);
	ev->values[t] = v;
}

/* Feed @ev at @now and check whether the handler ran. */
static inline void ph_feed(struct pcm_shell *sh, const struct pcm_event *ev, uint64_t now,
			   bool expect_call)
{
	int rc = pcm_shell_feed(sh, 0, ev, now);

	assert_true(rc >= 0);
	assert_int_equal(rc, expect_call ? 1 : 0);
}

/* The test's own scripted randomness (not the policies'). */
static inline uint64_t ph_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* pcm_algo.h's conversions, restated in double. */
static inline double m_ps_to_us(uint64_t ps)
{
	return (double)(ps / 1000000) + (double)((ps % 1000000) / 1000) / 1000.0;
}

static inline double m_b2p(uint64_t bytes)
{
	return (double)(bytes / F_MSS) + (double)(bytes % F_MSS) / (double)F_MSS;
}

/* A packet count as bytes of @size each, truncated (pcm_algo_pkts_to_bytes()). */
static inline uint64_t m_pkts_bytes(double pkts, uint64_t size)
{
	uint64_t whole, part;
	double frac, scaled;

	if (!(pkts > 0.0))
		return 0;
	whole = (uint64_t)pkts;
	frac = pkts - (double)whole;
	scaled = frac * (double)size;
	part = scaled > 0.0 ? (uint64_t)scaled : 0;
	return whole * size + part;
}

/* Packets as payload bytes (what DATA_TX counts). */
static inline uint64_t m_p2b(double pkts)
{
	return m_pkts_bytes(pkts, F_MSS);
}

/* A window of packets as the bytes of its CWND control (nominal packets). */
static inline uint64_t m_p2w(double pkts)
{
	return m_pkts_bytes(pkts, F_PKT);
}

static inline double m_max(double a, double b)
{
	return a > b ? a : b;
}

static inline double m_min(double a, double b)
{
	return a < b ? a : b;
}

static inline double m_clamp(double x, double lo, double hi)
{
	return m_min(m_max(x, lo), hi);
}

static inline double m_ewma(double avg, double sample, double gain)
{
	return avg + gain * (sample - avg);
}

static inline uint64_t m_rate(double frac)
{
	return frac > 0.0 ? (uint64_t)(frac * (double)PCM_RATE_ONE) : 0;
}

/* The policies' generator (pcm_algo.h), restated: xorshift64 13/7/17 with NOW folded in. */
#define M_RNG_SEED 0x9e3779b97f4a7c15ull

static inline uint64_t m_rng_next(uint64_t *s, uint64_t now)
{
	uint64_t x = *s ^ (now * M_RNG_SEED);

	if (!x)
		x = M_RNG_SEED;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x >> 32;
}

/* Window constants every window policy derives from the fabric. */
#define M_INIT_PKTS ((double)F_BDP / F_PKT)
#define M_MIN_PKTS ((double)F_MIN_CWND / F_PKT)
#define M_MAX_PKTS ((double)F_MAX_CWND / F_PKT)

#endif /* PCM_TEST_POLICY_HARNESS_H */
