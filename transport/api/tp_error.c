// SPDX-License-Identifier: MIT
/*
 * tp_error.c - libpcmtransport's error texts (tp_error.h): the thread's last
 * error and the text of each code, once for every backend.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pcm/transport.h"
#include "tp_error.h"

static _Thread_local char last_error[512];

int pcm_tp_set_error(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return rc;
}

const char *pcm_tp_last_error(void)
{
	return last_error;
}

void pcm_tp_clear_error(void)
{
	last_error[0] = '\0';
}

const char *pcm_tp_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case -EAGAIN:
		return "a limit of posted operations is reached (pcm_tp_endpoint_limits()): "
		       "nothing was posted; poll completions, then retry";
	case -ECONNABORTED:
		return "the connection was closed locally before this finished";
	case -ECONNRESET:
		return "the peer closed or reset the connection, or went away";
	case -ECONNREFUSED:
		return "nothing listens at that address";
	case -EADDRINUSE:
		return "that address is already listened on";
	case -EMSGSIZE:
		return "the message is longer than the receive buffer or the largest message "
		       "(4,096 chunks)";
	case -ENOTCONN:
		return "the connection is closed (or gone: its CLOSE was taken)";
	case -ETIMEDOUT:
		return "timed out (no progress on the connection, or the wait's timeout)";
	case -EINVAL:
		return "an invalid argument (NULL, not a connection or region, a buffer outside "
		       "its memory region, a bad option)";
	case -ENOENT:
		return "no such policy package, device or connection";
	case -ENODEV:
		return "no such datapath or RDMA device";
	case -EOPNOTSUPP: /* == -ENOTSUP on Linux */
		return "not supported by this backend or datapath (or the datapath lacks a signal "
		       "or control the policy needs)";
	case -EBUSY:
		return "a posted operation whose completion was not yet taken uses the region";
	case -ENOSPC:
		return "an engine table is full (connections, memory regions)";
	case -ENOMEM:
		return "out of memory (or, with verbs, the memlock limit is too low)";
	case -EPERM:
		return "permission denied (the RDMA device), or refused by pcmd: a connection "
		       "names a policy pcmd has, never a .so (an admin loads it with pcmctl)";
	case -EPROTO:
		return "the peer or pcmd spoke something this library does not understand";
	case -EBADMSG:
		return "a malformed connection blob from the peer";
	case -ESHUTDOWN:
		return "pcmd is gone (stopped or died): close the endpoint and open a new one";
	case -EIO:
		return "the datapath reported a failed write";
	case -EBADF:
		return "pcmd does not know this connection";
	case -EFAULT:
		return "the buffer is outside the shared region";
	case -EPROTONOSUPPORT:
		return "pcmd speaks another protocol version";
	case -EACCES:
		return "pcmd's config does not allow this user or group";
	case -EUSERS:
		return "pcmd serves as many clients as its limits allow (all users', or this "
		       "user's share)";
	case -EDQUOT:
		return "this user holds its share of pcmd already (regions, memory, hosts, flows "
		       "or listeners: pcmd.conf(5), limits.user)";
	case -ENAMETOOLONG:
		return "pcmd's socket path is too long";
	default:
		return err < 0 ? strerror(-err) : "not an error code";
	}
}
