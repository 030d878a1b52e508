/* SPDX-License-Identifier: MIT */
/*
 * drop.h - why the core dropped something that came from the wire.
 *
 * Everything a peer sends is untrusted: control packets and the immediates
 * of data chunks. Each check that can fail has its own reason, counted in
 * struct xp_core_stats.drops[], so a forged or stale input is visible by
 * kind and never touches state. Packet-level reasons (XP_DROP_CTRL_*) drop a
 * whole control packet before any of its records is applied; the others
 * drop one record or one chunk.
 */
#ifndef XP_DROP_H
#define XP_DROP_H

enum xp_drop {
	/* control packet structure (wire.c) */
	XP_DROP_CTRL_SHORT,       /* shorter than the packet header */
	XP_DROP_CTRL_OVERSIZE,    /* longer than the control MTU */
	XP_DROP_CTRL_MAGIC,       /* not a pcm transport control packet */
	XP_DROP_CTRL_VERSION,     /* a wire version this core does not speak */
	XP_DROP_CTRL_LENGTH,      /* header length differs from the bytes received */
	XP_DROP_CTRL_COUNT,       /* no records, or records that do not fill the packet */
	XP_DROP_CTRL_RECORD_TYPE, /* unknown record type */
	XP_DROP_CTRL_RECORD_SIZE, /* record size field wrong for its type */
	/* one record: static field checks (wire.c) */
	XP_DROP_REC_RESERVED,     /* reserved bits or fields not zero */
	XP_DROP_REC_FIELD,        /* a field outside its range */
	/* one record: checks against the connection (core) */
	XP_DROP_REC_UNKNOWN_CONN, /* no connection has that id */
	XP_DROP_REC_WRONG_NONCE,  /* the id is live but the nonce is not its own */
	XP_DROP_REC_WRONG_PEER,   /* arrived from another peer than the connection's */
	XP_DROP_REC_CLOSED_CONN,  /* connection closed; nothing to answer */
	XP_DROP_REC_UNEXPECTED,   /* a record type not valid in the connection's state */
	XP_DROP_ACK_UNKNOWN_MSG,  /* ACK for a message not in flight */
	XP_DROP_ACK_STALE,        /* ACK for a message already finished */
	XP_DROP_ACK_NEVER_SENT,   /* cum, SACK or echo names a chunk never sent */
	XP_DROP_ACK_BAD_COMPLETE, /* "complete" for a message not fully sent */
	XP_DROP_CTS_BAD_SEQ,      /* CTS outside the window or conflicting with a held one */
	XP_DROP_CTS_DUP,          /* CTS already seen (answered if that helps) */
	XP_DROP_SEQ_BAD,          /* CTS_ACK, ABORT or ACK_REQ naming no such message */
	XP_DROP_FIN_BAD,          /* FIN contradicting an earlier FIN or what was seen */
	/* data chunks: the immediate and length (recv.c) */
	XP_DROP_IMM_UNKNOWN_CONN, /* no connection has that id */
	XP_DROP_IMM_CLOSED_CONN,  /* connection closed or not receiving */
	XP_DROP_IMM_WRONG_PATH,   /* arrived on a path that is not the connection's */
	XP_DROP_IMM_NO_SLOT,      /* slot holds no receive that was advertised */
	XP_DROP_IMM_DUP,          /* chunk already received (re-ACKed) */
	XP_DROP_IMM_DONE,         /* chunk of a message already complete (re-ACKed) */
	XP_DROP_IMM_BEYOND_WINDOW,/* chunk index past the SACK window */
	XP_DROP_IMM_LAST_MISMATCH,/* last-chunk flag contradicts chunks seen */
	XP_DROP_IMM_LEN,          /* zero length, over the chunk limit or the capacity */
	XP_DROP_COUNT,
};

/**
 * xp_drop_name() - A short stable name ("ctrl_short", ...), or "?" for an unknown value.
 */
const char *xp_drop_name(unsigned reason);

#endif /* XP_DROP_H */
