// SPDX-License-Identifier: MIT
/*
 * pendset.c - the set of flows with work for one worker (pendset.h).
 *
 * Producers set a flow's level-0 bit unless it is set, then make sure every
 * level above has the bit leading down to it, testing with a load before
 * setting. The consumer reads flows without taking them out; it clears a
 * flow's bit when it is done with the flow (pcm_pendset_remove()), and a
 * bit above only when it finds the word below it empty, then reads that
 * word again (and sets the bit back if a flow arrived). Every one of these is a
 * sequentially consistent access, so for each producer either the consumer
 * reads its bit or the producer sees the cleared bit above and sets it
 * again: nothing added is ever left unreachable. Busy, the levels above are
 * only read, so their cache lines stay shared between the two sides.
 *
 * In a deterministic-interleaving test build (PCM_ASYNC_DST) each shared
 * access first yields to the test's scheduler.
 */
#include <errno.h>
#include <sys/mman.h>

#include "pendset.h"

#ifdef PCM_ASYNC_DST
#include "dst_hooks.h"
#define STEP() pcm_dst_point()
#else
#define STEP() ((void)0)
#endif

#define NONE UINT32_MAX
#define L0_WORDS_PER_CHUNK 8 /* a cache line; the chunk's 256 flows use 4 */

static uint64_t ld(_Atomic uint64_t *w)
{
	STEP();
	return atomic_load_explicit(w, memory_order_seq_cst);
}

static uint64_t or_word(_Atomic uint64_t *w, uint64_t m)
{
	STEP();
	return atomic_fetch_or_explicit(w, m, memory_order_seq_cst);
}

static uint64_t and_word(_Atomic uint64_t *w, uint64_t m)
{
	STEP();
	return atomic_fetch_and_explicit(w, m, memory_order_seq_cst);
}

static void *map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t words_of(uint32_t bits)
{
	return (bits + 63) / 64;
}

/* The level-0 word holding flow bits u * 64 .. u * 64 + 63. */
static _Atomic uint64_t *l0_word(struct pcm_pendset_l0 *l0, uint32_t u)
{
	return &l0->words[(size_t)(u >> 2) * L0_WORDS_PER_CHUNK + (u & 3)];
}

int pcm_pendset_l0_init(struct pcm_pendset_l0 *l0, uint32_t max_flows)
{
	size_t chunks = ((size_t)max_flows + 255) / 256;

	l0->bytes = chunks * L0_WORDS_PER_CHUNK * sizeof(uint64_t);
	l0->words = map_zeroed(l0->bytes);
	return l0->words ? 0 : -ENOMEM;
}

void pcm_pendset_l0_fini(struct pcm_pendset_l0 *l0)
{
	if (l0->words)
		munmap((void *)l0->words, l0->bytes);
	l0->words = NULL;
}

int pcm_pendset_init(struct pcm_pendset *ps, uint32_t max_flows)
{
	uint32_t bits = (max_flows + 63) / 64;

	ps->bytes = 0;
	for (int lv = 0; lv < PCM_PENDSET_LEVELS; lv++) {
		ps->bits[lv] = bits;
		ps->bytes += words_of(bits) * sizeof(uint64_t);
		bits = (uint32_t)words_of(bits);
	}
	ps->level[0] = map_zeroed(ps->bytes);
	if (!ps->level[0])
		return -ENOMEM;
	for (int lv = 1; lv < PCM_PENDSET_LEVELS; lv++)
		ps->level[lv] = ps->level[lv - 1] + words_of(ps->bits[lv - 1]);
	return 0;
}

void pcm_pendset_fini(struct pcm_pendset *ps)
{
	if (ps->level[0])
		munmap((void *)ps->level[0], ps->bytes);
	ps->level[0] = NULL;
}

static void ensure_bit(_Atomic uint64_t *level, uint32_t i)
{
	uint64_t m = (uint64_t)1 << (i % 64);

	if (!(ld(&level[i / 64]) & m))
		or_word(&level[i / 64], m);
}

bool pcm_pendset_add(struct pcm_pendset *ps, struct pcm_pendset_l0 *l0, uint32_t flow)
{
	uint32_t u = flow >> 6;
	uint64_t bit = (uint64_t)1 << (flow & 63);
	_Atomic uint64_t *word = l0_word(l0, u);
	bool added;

	/* a busy flow stays in the set: its line is only read, on both sides */
	if (ld(word) & bit)
		return false;
	added = !(or_word(word, bit) & bit);
	for (int lv = 0; lv < PCM_PENDSET_LEVELS; lv++, u /= 64)
		ensure_bit(ps->level[lv], u);
	return added;
}

void pcm_pendset_remove(struct pcm_pendset *ps, struct pcm_pendset_l0 *l0, uint32_t flow)
{
	/* the bits above may now lead nowhere; pcm_pendset_next() clears such bits */
	(void)ps;
	and_word(l0_word(l0, flow >> 6), ~((uint64_t)1 << (flow & 63)));
}

/*
 * The lowest index >= @from whose bit is set in level @lv, or NONE. A word
 * of level @lv found empty has its bit in the level above cleared on the way
 * (it was stale), then is read again in case a bit arrived meanwhile.
 */
static uint32_t next_set(struct pcm_pendset *ps, int lv, uint32_t from)
{
	_Atomic uint64_t *level = ps->level[lv];
	const bool top = lv + 1 == PCM_PENDSET_LEVELS;
	uint32_t w;

	if (from >= ps->bits[lv])
		return NONE;
	w = from / 64;
	for (;;) {
		uint64_t mask = w == from / 64 ? ~(uint64_t)0 << (from % 64) : ~(uint64_t)0;
		uint64_t v = ld(&level[w]);

		if (!v && !top) {
			uint64_t bit = (uint64_t)1 << (w % 64);

			and_word(&ps->level[lv + 1][w / 64], ~bit);
			v = ld(&level[w]);
			if (v)
				or_word(&ps->level[lv + 1][w / 64], bit);
		}
		if (v & mask)
			return w * 64 + (uint32_t)__builtin_ctzll(v & mask);
		if (top) {
			if (++w >= words_of(ps->bits[lv]))
				return NONE;
			continue;
		}
		w = next_set(ps, lv + 1, w + 1);
		if (w == NONE)
			return NONE;
	}
}

/*
 * A walk down from level 0, not a look at the top word: a bit above is
 * cleared only when a walk finds the word below it empty and then reaches
 * that bit's own level, and a walk that runs off the end of a level stops
 * without doing so, so the top word of a set that has emptied can stay set
 * for good (with every flow below 256 * 64, it always did, and the worker
 * never blocked). next_set() clears what it finds stale and reads the word
 * below again, so a producer either is seen or sees the cleared bit and
 * sets it again, then sees the consumer's `sleeping` (pcm_pendset_add()).
 * A stale level-0 bit reads as nonempty; pcm_pendset_next() clears it.
 */
bool pcm_pendset_nonempty(struct pcm_pendset *ps)
{
	return next_set(ps, 0, 0) != NONE;
}

/* The lowest @n set bits of @v. */
static uint64_t lowest_bits(uint64_t v, uint32_t n)
{
	uint64_t take = 0;

	while (v && n--) {
		take |= v & -v;
		v &= v - 1;
	}
	return take;
}

/*
 * Up to @max flows of level-0 word @u from flow @from on and below flow
 * @limit, into @flows; *@pos: the flow after the last one returned, or the
 * next word's first if none is left in this one. A word found empty has its
 * bit in level 0 cleared (it was stale), then is read again in case a flow
 * arrived meanwhile.
 */
static uint32_t read_word(struct pcm_pendset *ps, struct pcm_pendset_l0 *l0, uint32_t u,
			  uint32_t from, uint64_t limit, uint32_t *flows, uint32_t max, uint32_t *pos)
{
	_Atomic uint64_t *word = l0_word(l0, u);
	uint64_t base = (uint64_t)u << 6, mask = ~(uint64_t)0, v, got;
	uint32_t n = 0;

	if (from > base)
		mask &= ~(uint64_t)0 << (from - base);
	if (limit < base + 64)
		mask &= limit > base ? ((uint64_t)1 << (limit - base)) - 1 : 0;
	v = ld(word);
	if (!v) {
		and_word(&ps->level[0][u / 64], ~((uint64_t)1 << (u % 64)));
		v = ld(word);
		if (v)
			or_word(&ps->level[0][u / 64], (uint64_t)1 << (u % 64));
	}
	got = lowest_bits(v & mask, max);
	*pos = (uint32_t)base + 64;
	for (; got; got &= got - 1) {
		flows[n] = (uint32_t)base + (uint32_t)__builtin_ctzll(got);
		*pos = flows[n++] + 1;
	}
	return n;
}

uint32_t pcm_pendset_next(struct pcm_pendset *ps, struct pcm_pendset_l0 *l0, uint32_t *cursor,
			  uint32_t *flows, uint32_t max)
{
	const uint32_t end = ps->bits[0] * 64, start = *cursor < end ? *cursor : 0;
	uint32_t n = 0, pos = start;
	bool wrapped = false;

	while (n < max) {
		uint32_t u = pos < end ? next_set(ps, 0, pos >> 6) : NONE;

		if (u == NONE || (wrapped && (u << 6) >= start)) {
			if (wrapped || start == 0)
				break;
			wrapped = true;
			pos = 0;
			continue;
		}
		n += read_word(ps, l0, u, pos, wrapped ? start : UINT64_MAX, flows + n, max - n,
			       &pos);
	}
	*cursor = pos >= end ? 0 : pos;
	return n;
}
