/* SPDX-License-Identifier: MIT */
/*
 * mem.h - the memory of one run (mem.c): every block of per-host state the
 * emulation keeps (NICs, PDCs and their rings, groups, ports, packets,
 * events, the timing wheel's slot arrays) comes from here.
 *
 * A run's state is thousands of small blocks touched at random: at 8,192
 * hosts, 97 MB of them, about 12 KB per host, and each event reaches a few.
 * With 4 KiB pages every such touch may also miss the TLB. So blocks are cut
 * from 2 MiB chunks, and once a run's mappings pass UET_MEM_SMALL_BYTES
 * the further ones are advised as transparent huge pages (MADV_HUGEPAGE;
 * where THP is off, the advice does nothing). Small runs, which fit the caches
 * anyway, keep 4 KiB pages and their peak memory.
 *
 * A block is given back with its size, to a free list of its size class
 * (sizes up to 512 B in steps of 16, then four classes per power of two, up
 * to UET_MEM_CLASS_MAX); larger blocks are mappings of their own. The whole
 * is unmapped when the run ends. Blocks are 16-byte aligned, 64-byte
 * aligned when their size is a multiple of 64, and 32-byte aligned when it
 * is a multiple of 32 (uet_mem_align()).
 *
 * Built with AddressSanitizer (UET_MEM_SANITIZED), every block is a malloc()
 * of its own, with the same alignment, so that the sanitizer sees each one.
 */
#ifndef PCM_UET_MEM_H
#define PCM_UET_MEM_H

#include <stddef.h>
#include <stdint.h>

#if defined(__SANITIZE_ADDRESS__)
#define UET_MEM_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UET_MEM_SANITIZED 1
#endif
#endif
#ifndef UET_MEM_SANITIZED
#define UET_MEM_SANITIZED 0
#endif

#define UET_MEM_CHUNK_BYTES ((size_t)2 << 20)
#define UET_MEM_SMALL_BYTES ((size_t)8 << 20)
#define UET_MEM_CLASS_MAX ((size_t)256 << 10)
/* 32 classes to 512 B, then 4 for each power of two from 1 KiB to UET_MEM_CLASS_MAX */
#define UET_MEM_CLASSES (32 + 4 * 9)

struct uet_mem_map {
	void *addr;
	size_t bytes;
};

struct uet_mem {
	void *free[UET_MEM_CLASSES]; /* blocks given back, each holding the next */
	char *bump, *end;            /* what is left of the newest chunk */
	struct uet_mem_map *maps;    /* chunks and large blocks, to unmap */
	uint32_t n_maps, cap_maps;
	size_t mapped;               /* bytes mapped so far */
	size_t huge;                 /* of which advised as huge pages */
};

/* The alignment of a block of @n bytes. */
static inline size_t uet_mem_align(size_t n)
{
	return n % 64 == 0 ? 64 : n % 32 == 0 ? 32 : 16;
}

/* An empty memory; nothing is mapped until the first block. */
void uet_mem_init(struct uet_mem *m);

/* Unmap everything: every block from @m is gone. */
void uet_mem_fini(struct uet_mem *m);

/* A block of @n bytes (its contents undefined), or NULL. */
void *uet_mem_alloc(struct uet_mem *m, size_t n);

/* A block of @n zero bytes, or NULL. */
void *uet_mem_zalloc(struct uet_mem *m, size_t n);

/* Give back @p, a block of @n bytes from @m (NULL is ignored). */
void uet_mem_free(struct uet_mem *m, void *p, size_t n);

/*
 * A block of @n bytes holding the first min(@old, @n) bytes of @p (a block of
 * @old bytes, or NULL), or NULL with @p untouched.
 */
void *uet_mem_realloc(struct uet_mem *m, void *p, size_t old, size_t n);

#endif /* PCM_UET_MEM_H */
