// SPDX-License-Identifier: MIT
/*
 * drop.c - names of the drop reasons, for stats output and test messages.
 */
#include "drop.h"

static const char *const drop_names[XP_DROP_COUNT] = {
	[XP_DROP_CTRL_SHORT] = "ctrl_short",
	[XP_DROP_CTRL_OVERSIZE] = "ctrl_oversize",
	[XP_DROP_CTRL_MAGIC] = "ctrl_magic",
	[XP_DROP_CTRL_VERSION] = "ctrl_version",
	[XP_DROP_CTRL_LENGTH] = "ctrl_length",
	[XP_DROP_CTRL_COUNT] = "ctrl_count",
	[XP_DROP_CTRL_RECORD_TYPE] = "ctrl_record_type",
	[XP_DROP_CTRL_RECORD_SIZE] = "ctrl_record_size",
	[XP_DROP_REC_RESERVED] = "rec_reserved",
	[XP_DROP_REC_FIELD] = "rec_field",
	[XP_DROP_REC_UNKNOWN_CONN] = "rec_unknown_conn",
	[XP_DROP_REC_WRONG_NONCE] = "rec_wrong_nonce",
	[XP_DROP_REC_WRONG_PEER] = "rec_wrong_peer",
	[XP_DROP_REC_CLOSED_CONN] = "rec_closed_conn",
	[XP_DROP_REC_UNEXPECTED] = "rec_unexpected",
	[XP_DROP_ACK_UNKNOWN_MSG] = "ack_unknown_msg",
	[XP_DROP_ACK_STALE] = "ack_stale",
	[XP_DROP_ACK_NEVER_SENT] = "ack_never_sent",
	[XP_DROP_ACK_BAD_COMPLETE] = "ack_bad_complete",
	[XP_DROP_CTS_BAD_SEQ] = "cts_bad_seq",
	[XP_DROP_CTS_DUP] = "cts_dup",
	[XP_DROP_SEQ_BAD] = "seq_bad",
	[XP_DROP_FIN_BAD] = "fin_bad",
	[XP_DROP_IMM_UNKNOWN_CONN] = "imm_unknown_conn",
	[XP_DROP_IMM_CLOSED_CONN] = "imm_closed_conn",
	[XP_DROP_IMM_WRONG_PATH] = "imm_wrong_path",
	[XP_DROP_IMM_NO_SLOT] = "imm_no_slot",
	[XP_DROP_IMM_DUP] = "imm_dup",
	[XP_DROP_IMM_DONE] = "imm_done",
	[XP_DROP_IMM_BEYOND_WINDOW] = "imm_beyond_window",
	[XP_DROP_IMM_LAST_MISMATCH] = "imm_last_mismatch",
	[XP_DROP_IMM_LEN] = "imm_len",
};

const char *xp_drop_name(unsigned reason)
{
	return reason < XP_DROP_COUNT && drop_names[reason] ? drop_names[reason] : "?";
}
