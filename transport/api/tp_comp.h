/* SPDX-License-Identifier: MIT */
/*
 * tp_comp.h - completions as the application sees them, made by
 * libpcmtransport's frontend from its backend's (struct tp_comp), the same
 * way for both backends:
 *
 *   - a send's or receive's completion carries the application's cookie and
 *     the connection's handle; its slot and the region's use end with it;
 *     one whose status says the connection died (-ECONNRESET, -ETIMEDOUT,
 *     -EIO, -ESHUTDOWN) marks the connection failed, so that later posts on
 *     it return that error at once;
 *   - a CONNECT or ACCEPT that succeeded hands out a new connection handle;
 *     a failed CONNECT's connection is freed;
 *   - a closed connection's PCM_TP_OP_CLOSE comes once the backend released
 *     it and every operation of it completed; the poll after the one that
 *     returned it frees the connection and drops its handle;
 *   - a backend that is gone (pcmd died: its poll says -ESHUTDOWN once it
 *     has handed over every completion pcmd wrote) has every operation still
 *     posted completed with -ESHUTDOWN, in post order; then pcm_tp_poll()
 *     and pcm_tp_wait() return -ESHUTDOWN.
 */
#ifndef PCM_TP_COMP_H
#define PCM_TP_COMP_H

#include "backend.h"

/* pcm_tp_poll() once its arguments are checked. */
int tp_comp_poll(struct pcm_tp_endpoint *ep, struct pcm_tp_completion *out, int max);

/* pcm_tp_wait() once its arguments are checked. */
int tp_comp_wait(struct pcm_tp_endpoint *ep, int timeout_ms);

/**
 * tp_conn_close() - pcm_tp_conn_close() of a live connection: it joins the
 * closing ones, and the backend aborts it.
 * @c: the connection.
 *
 * Return: 0, -ENOTCONN (closed already), or the backend's refusal (nothing changed).
 */
int tp_conn_close(struct tp_conn *c);

/* Before the backend frees @ep: drop every handle of it, free the connections it released. */
void tp_comp_endpoint_close(struct pcm_tp_endpoint *ep);

#endif /* PCM_TP_COMP_H */
