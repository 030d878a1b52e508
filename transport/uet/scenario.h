/* SPDX-License-Identifier: MIT */
/*
 * scenario.h - what the scenario reader (scenario_read.c) and writer
 * (scenario_write.c) share: the NIC attributes by the UET NIC document's
 * names, written once.
 */
#ifndef PCM_UET_SCENARIO_H
#define PCM_UET_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "uet.h"

enum uet_attr_type { UET_ATTR_BOOL, UET_ATTR_U32, UET_ATTR_SIZE, UET_ATTR_TIME, UET_ATTR_RATE };

struct uet_nic_attr {
	const char *name;
	enum uet_attr_type type;
	size_t off;           /* in struct uet_nic_cfg */
	uint64_t lo, hi;      /* U32 and SIZE: the accepted range */
};

extern const struct uet_nic_attr uet_nic_attrs[];
extern const size_t uet_n_nic_attrs;

#endif /* PCM_UET_SCENARIO_H */
