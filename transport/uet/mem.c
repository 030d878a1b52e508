// SPDX-License-Identifier: MIT
/*
 * mem.c - the memory of one run: size classes with free lists over 2 MiB
 * chunks, huge pages once the run is large (see mem.h).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mem.h"

#define PAGE_BYTES ((size_t)4096)

void uet_mem_init(struct uet_mem *m)
{
	memset(m, 0, sizeof(*m));
}

void uet_mem_fini(struct uet_mem *m)
{
	for (uint32_t i = 0; i < m->n_maps; i++)
		munmap(m->maps[i].addr, m->maps[i].bytes);
	free(m->maps);
	memset(m, 0, sizeof(*m));
}

/* The class of a block of @n bytes (1 <= n <= UET_MEM_CLASS_MAX), and its size. */
static unsigned size_class(size_t n, size_t *size)
{
	unsigned lg;
	size_t step, q;

	if (n <= 512) {
		q = (n + 15) / 16;
		*size = q * 16;
		return (unsigned)q - 1;
	}
	lg = 63u - (unsigned)__builtin_clzll((unsigned long long)(n - 1));
	step = (size_t)1 << (lg - 2);
	q = (n - 1 - ((size_t)1 << lg)) / step;
	*size = ((size_t)1 << lg) + (q + 1) * step;
	return 32 + (lg - 9) * 4 + (unsigned)q;
}

static bool remember_map(struct uet_mem *m, void *addr, size_t bytes)
{
	if (m->n_maps == m->cap_maps) {
		uint32_t cap = m->cap_maps ? m->cap_maps * 2 : 64;
		struct uet_mem_map *a = realloc(m->maps, cap * sizeof(*a));

		if (!a)
			return false;
		m->maps = a;
		m->cap_maps = cap;
	}
	m->maps[m->n_maps++] = (struct uet_mem_map){ addr, bytes };
	return true;
}

/*
 * @bytes (a multiple of the page) of zeroed memory, aligned to a chunk, huge
 * pages advised once the run's mappings pass UET_MEM_SMALL_BYTES.
 */
static void *map_aligned(struct uet_mem *m, size_t bytes)
{
	size_t span = bytes + UET_MEM_CHUNK_BYTES;
	char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;
	size_t head;

	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)raw + UET_MEM_CHUNK_BYTES - 1) & ~(uintptr_t)(UET_MEM_CHUNK_BYTES - 1));
	head = (size_t)(p - raw);
	if (head)
		munmap(raw, head);
	if (span - head > bytes)
		munmap(p + bytes, span - head - bytes);
	if (!remember_map(m, p, bytes)) {
		munmap(p, bytes);
		return NULL;
	}
	if (m->mapped + bytes > UET_MEM_SMALL_BYTES && bytes >= UET_MEM_CHUNK_BYTES &&
	    madvise(p, bytes, MADV_HUGEPAGE) == 0)
		m->huge += bytes;
	m->mapped += bytes;
	return p;
}

static void unmap_block(struct uet_mem *m, void *p)
{
	for (uint32_t i = 0; i < m->n_maps; i++)
		if (m->maps[i].addr == p) {
			munmap(p, m->maps[i].bytes);
			m->maps[i] = m->maps[--m->n_maps];
			return;
		}
}

/* @size bytes from the newest chunk, aligned as uet_mem_align() says. */
static void *cut(struct uet_mem *m, size_t size)
{
	size_t align = uet_mem_align(size);
	char *p = (char *)(((uintptr_t)m->bump + align - 1) & ~(uintptr_t)(align - 1));

	if (!m->bump || p + size > m->end) {
		char *chunk = map_aligned(m, UET_MEM_CHUNK_BYTES);

		if (!chunk)
			return NULL;
		m->bump = chunk;
		m->end = chunk + UET_MEM_CHUNK_BYTES;
		p = chunk;
	}
	m->bump = p + size;
	return p;
}

static void *alloc_block(struct uet_mem *m, size_t n, bool zero)
{
	size_t size;
	unsigned c;
	void *p;

	if (n == 0)
		n = 1;
	if (n > UET_MEM_CLASS_MAX) /* fresh mappings are zero */
		return map_aligned(m, (n + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1));
	c = size_class(n, &size);
	p = m->free[c];
	if (p) {
		m->free[c] = *(void **)p;
		if (zero)
			memset(p, 0, size);
		return p;
	}
	return cut(m, size); /* fresh chunk memory is zero */
}

/* Under a sanitizer: a block of its own, as aligned as the arena's would be. */
static void *sanitized_alloc(size_t n, bool zero)
{
	size_t align;
	void *p;

	if (n == 0)
		n = 1;
	align = uet_mem_align(n);
	p = align > 16 ? aligned_alloc(align, n) : malloc(n);
	if (p && zero)
		memset(p, 0, n);
	return p;
}

void *uet_mem_alloc(struct uet_mem *m, size_t n)
{
	if (UET_MEM_SANITIZED)
		return sanitized_alloc(n, false);
	return alloc_block(m, n, false);
}

void *uet_mem_zalloc(struct uet_mem *m, size_t n)
{
	if (UET_MEM_SANITIZED)
		return sanitized_alloc(n, true);
	return alloc_block(m, n, true);
}

void uet_mem_free(struct uet_mem *m, void *p, size_t n)
{
	size_t size;
	unsigned c;

	if (!p)
		return;
	if (UET_MEM_SANITIZED) {
		free(p);
		return;
	}
	if (n == 0)
		n = 1;
	if (n > UET_MEM_CLASS_MAX) {
		unmap_block(m, p);
		return;
	}
	c = size_class(n, &size);
	*(void **)p = m->free[c];
	m->free[c] = p;
}

void *uet_mem_realloc(struct uet_mem *m, void *p, size_t old, size_t n)
{
	size_t old_size, new_size;
	void *b;

	if (!UET_MEM_SANITIZED && p && old && n && old <= UET_MEM_CLASS_MAX &&
	    n <= UET_MEM_CLASS_MAX &&
	    size_class(old, &old_size) == size_class(n, &new_size))
		return p;
	b = uet_mem_alloc(m, n);
	if (!b)
		return NULL;
	if (p) {
		memcpy(b, p, old < n ? old : n);
		uet_mem_free(m, p, old);
	}
	return b;
}
