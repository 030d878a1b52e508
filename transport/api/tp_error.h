/* SPDX-License-Identifier: MIT */
/*
 * tp_error.h - libpcmtransport's error texts, one place for every backend:
 * the thread's last error (pcm_tp_last_error()), which a failing call sets
 * with what went wrong and the object it names, and the text of each code
 * (pcm_tp_strerror()). A leaf: api.c and both backends (inproc.c,
 * daemon_client.c) call it, and it calls none of them.
 */
#ifndef PCM_TP_ERROR_H
#define PCM_TP_ERROR_H

/**
 * pcm_tp_set_error() - set this thread's last error text (pcm_tp_last_error()).
 * @rc: the code, returned.
 * @fmt: printf format.
 *
 * Return: @rc.
 */
int pcm_tp_set_error(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * pcm_tp_clear_error() - empty this thread's last error text (a call starting afresh).
 */
void pcm_tp_clear_error(void);

#endif /* PCM_TP_ERROR_H */
