/* SPDX-License-Identifier: MIT */
/*
 * tp_handle.h - the names an application holds for libpcmtransport's
 * connections and memory regions: opaque handles with a generation, never
 * pointers to memory, so that a name used after its object is gone (a
 * second pcm_tp_conn_close(), a second pcm_tp_mr_dereg(), a connection
 * closed and freed long ago) is looked up and refused instead of read.
 *
 * A handle is (generation << 32 | kind << 30 | index + 1) in a pointer's
 * bits: index names a slot of one process-wide table, and the slot's
 * generation moves on when its object goes, so the old handle never matches
 * again (until 2^31 more objects have used that slot). The kind keeps a
 * region's handle from being taken for a connection's. Lookups take no
 * lock; making and dropping a handle take the table's mutex.
 *
 * A leaf of libpcmtransport: api.c and the frontend's files (tp_front.c)
 * call it; it calls nothing of theirs.
 */
#ifndef PCM_TP_HANDLE_H
#define PCM_TP_HANDLE_H

#include <stdint.h>

enum tp_handle_kind {
	TP_HANDLE_CONN = 1,
	TP_HANDLE_REGION = 2,
};

/* What a lookup found. */
enum tp_handle_look {
	TP_HANDLE_LIVE = 0,  /* the handle names a live object of its kind */
	TP_HANDLE_GONE = 1,  /* it named one of that kind once; the object is gone */
	TP_HANDLE_NONE = 2,  /* NULL, or no handle of that kind at all */
};

/**
 * tp_handle_make() - a new handle for @obj.
 * @kind: enum tp_handle_kind.
 * @obj: the object (a struct tp_conn or struct tp_region).
 * @owner: the endpoint it belongs to (tp_handle_drop_owner()).
 *
 * Return: the handle, or 0 when the table is full or out of memory.
 */
uintptr_t tp_handle_make(enum tp_handle_kind kind, void *obj, const void *owner);

/**
 * tp_handle_look() - the object @h names.
 * @h: a handle (any value: an application's argument).
 * @kind: the kind expected.
 * @obj: the object, when the return is TP_HANDLE_LIVE.
 *
 * Return: enum tp_handle_look.
 */
enum tp_handle_look tp_handle_look(uintptr_t h, enum tp_handle_kind kind, void **obj);

/* Drop @h: from now on it looks up as TP_HANDLE_GONE. A stale @h is ignored. */
void tp_handle_drop(uintptr_t h);

/* Drop every handle of @owner (an endpoint being closed). */
void tp_handle_drop_owner(const void *owner);

#endif /* PCM_TP_HANDLE_H */
