/* SPDX-License-Identifier: MIT */
/*
 * xp_net.h - a network of transport cores in virtual time, for tests.
 *
 * Hosts each run one sans-IO core (transport/core). Paths are QP pairs
 * between two hosts, one handle per end; every ordered pair of hosts has a
 * control link. Each direction of a path or control link has a delay,
 * jitter (uniform, so packets reorder), loss, duplication, ECN marking,
 * delay spikes and outage windows, all drawn from one seeded generator, so
 * a run is a function of its seed and inputs.
 *
 * A chunk (WRITE_IMM action) is placed at delivery as a NIC would: its rkey
 * must be registered and valid at the receiving host and the write must fit
 * the registered region, else it is dropped before the core sees it (a
 * per-receive rkey, invalidated when the receive completes, is what keeps a
 * late duplicate out of a later receive). Then its bytes are copied from the
 * sender's buffer (through its lkey's region when it has one, else laddr is
 * a real pointer) and the receiving core gets the chunk. A link may fail a
 * write outright (werr_ppm): the sender's core hears of it as the datapath
 * would tell it (xp_core_on_write_done(), -EIO). Control packets are copied
 * at send time. After every event the host's core is drained, in batches as
 * small as the config says (actions, writes and control bytes per drain), and
 * its next timer scheduled. A host can be killed: from then on nothing it
 * sent arrives, nothing reaches it and its timers stop, as when its process
 * dies. A trace hash folds every action in, for the same-seed-same-trace
 * check.
 */
#ifndef XP_NET_H
#define XP_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"

#define XP_NET_MAX_HOSTS 8
#define XP_NET_MAX_OUTAGES 4

struct xp_link {
	uint64_t delay_ns;
	uint64_t jitter_ns;   /* extra delay, uniform in [0, jitter] */
	uint32_t loss_ppm;    /* per packet, parts per million */
	uint32_t dup_ppm;
	uint32_t ecn_ppm;     /* chunks only: arrive CE-marked */
	uint32_t spike_ppm;   /* delay spike probability */
	uint64_t spike_ns;    /* extra delay of a spike */
	uint32_t werr_ppm;    /* chunks only: the write fails at the sender (-EIO) */
	bool reliable;        /* RC: never lost or duplicated, in order; held through outages */
	uint32_t n_outages;
	struct {
		uint64_t start_ns;
		uint64_t end_ns;
	} outage[XP_NET_MAX_OUTAGES]; /* everything sent inside is lost */
};

enum xp_net_verdict {
	XP_NET_PASS = 0,
	XP_NET_DROP = 1,
	XP_NET_DUP = 2,
};

/* What a filter sees of a packet about to be sent. */
struct xp_net_pkt {
	uint32_t src;
	uint32_t dst;
	bool is_ctrl;
	uint64_t now_ns;
	const struct xp_write *write; /* chunks */
	const uint8_t *bytes;         /* control packets */
	uint32_t len;
};

struct xp_net_stats {
	uint64_t writes;
	uint64_t ctrls;
	uint64_t lost;
	uint64_t duplicated;
	uint64_t rkey_drops;     /* placement refused: stale or unknown rkey */
	uint64_t write_errors;   /* writes failed at the sender (werr_ppm) */
	uint64_t delivered_chunks;
	uint64_t events;
};

struct xp_net;

typedef void (*xp_net_complete_fn)(void *arg, struct xp_net *net, uint32_t host,
				   const struct xp_completion *comp);
/* A test's say over one packet; it may also add *extra_delay_ns to its copies. */
typedef enum xp_net_verdict (*xp_net_filter_fn)(void *arg, const struct xp_net_pkt *pkt,
						uint64_t *extra_delay_ns);

struct xp_net_config {
	uint64_t seed;
	xp_net_complete_fn on_complete;
	xp_net_filter_fn filter; /* NULL: links decide alone */
	void *arg;
	uint32_t batch_actions;  /* per drain; 0: 256 */
	uint32_t max_writes;     /* writes per drain (the datapath's free send slots); 0: no limit */
	uint32_t ctrl_mtus;      /* control bytes per drain, in XP_WIRE_MAX_MTU (at most batch_actions); 0: one per action */
};

int xp_net_create(const struct xp_net_config *cfg, struct xp_net **out);
void xp_net_destroy(struct xp_net *net);

/* Add a host running a core made from @cfg (its now_ns is the net's time). Return: its index. */
int xp_net_add_host(struct xp_net *net, const struct xp_core_config *cfg);

struct xp_core *xp_net_core(struct xp_net *net, uint32_t host);

/**
 * xp_net_add_path() - a QP pair between @a and @b.
 * @net: the network.
 * @a: one host.
 * @b: the other.
 * @a_to_b: the link from @a to @b.
 * @b_to_a: the link back.
 * @handle_a: @a's handle of the path.
 * @handle_b: @b's.
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int xp_net_add_path(struct xp_net *net, uint32_t a, uint32_t b, const struct xp_link *a_to_b,
		    const struct xp_link *b_to_a, uint32_t *handle_a, uint32_t *handle_b);

/* The control link from @a to @b (default: 1 us, lossless). */
void xp_net_set_ctrl(struct xp_net *net, uint32_t a, uint32_t b, const struct xp_link *link);

/* Register [addr, addr+len) at @host, addressed by its real address. Return: its key. */
uint32_t xp_net_reg(struct xp_net *net, uint32_t host, void *addr, size_t len);

/**
 * xp_net_reg_virtual() - register [addr, addr+len) at @host under a virtual
 * address, as a NIC's IOVA: the core only ever sees *vaddr, so runs do not
 * depend on where malloc put the buffer.
 * @net: the network.
 * @host: the host.
 * @addr: the real buffer.
 * @len: its length, below 4 GiB.
 * @vaddr: the address to give the core.
 *
 * Return: its key (lkey for a send, rkey for a receive).
 */
uint32_t xp_net_reg_virtual(struct xp_net *net, uint32_t host, void *addr, size_t len,
			    uint64_t *vaddr);

/* Make @key refuse writes from now on. */
void xp_net_invalidate(struct xp_net *net, uint32_t host, uint32_t key);

/* Drain @host's core now (after posting operations from a test). */
void xp_net_kick(struct xp_net *net, uint32_t host);

/* @host dies now: it sends nothing more (what is on the wire still arrives), gets nothing, and its timers stop. */
void xp_net_kill(struct xp_net *net, uint32_t host);

/* Return: @host was killed. */
bool xp_net_dead(const struct xp_net *net, uint32_t host);

/* Return: when a packet from @src last reached @dst (0: never). */
uint64_t xp_net_last_arrival(const struct xp_net *net, uint32_t src, uint32_t dst);

/* Run the next event. Return: false when nothing is scheduled. */
bool xp_net_step(struct xp_net *net);

/* Run every event at or before @t_ns; time ends at @t_ns. */
void xp_net_run_until(struct xp_net *net, uint64_t t_ns);

/* Return: the time of the next event, or UINT64_MAX. */
uint64_t xp_net_next_event(const struct xp_net *net);

uint64_t xp_net_now(const struct xp_net *net);
uint64_t xp_net_trace_hash(const struct xp_net *net);
const struct xp_net_stats *xp_net_stats(const struct xp_net *net);

/* Uniform draws from the net's generator, for workloads that share its seed. */
uint64_t xp_net_rand(struct xp_net *net);

#endif /* XP_NET_H */
