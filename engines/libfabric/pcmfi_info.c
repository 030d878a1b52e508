// SPDX-License-Identifier: MIT
/*
 * pcmfi_info.c - fi_getinfo() of the pcm provider: what it offers, checked
 * against a caller's hints, and the addresses it resolves.
 *
 * One fi_info: FI_EP_MSG with FI_MSG and FI_RMA (sends and receives with
 * remote CQ data; reads and writes into registered regions), addressed by
 * struct sockaddr_in (FI_SOCKADDR_IN), in the fabric "pcm" and the domain
 * "pcmd" (through pcmd) or "inproc-<datapath>". A hint asking for more than
 * that (another endpoint type, tagged messages, atomics, automatic
 * progress, shared contexts, a stricter order, larger queues or iovecs)
 * gets -FI_ENODATA, with the reason in libfabric's log (FI_LOG_LEVEL=info).
 * Through pcmd, the provider is listed only while pcmd's socket exists.
 */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "pcmfi.h"

#define TX_CAPS (FI_MSG | FI_RMA | FI_SEND | FI_READ | FI_WRITE)
#define RX_CAPS (FI_MSG | FI_RMA | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define DOMAIN_CAPS (FI_LOCAL_COMM | FI_REMOTE_COMM)
#define ALL_CAPS (TX_CAPS | RX_CAPS | DOMAIN_CAPS)
/*
 * Operations are cut and sent in order and applied at the target in order
 * of arrival; a message may wait there for its receive while later RMA
 * passes it, and a read's data is copied when its response is sent (so a
 * write after it may be seen): no WAR, WAS, RAS or SAR.
 */
#define MSG_ORDER (FI_ORDER_SAS | FI_ORDER_RAW | FI_ORDER_WAW | FI_ORDER_SAW | FI_ORDER_RAR)
#define TX_OP_FLAGS (FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
		     FI_REMOTE_CQ_DATA | FI_MORE)
#define RX_OP_FLAGS (FI_COMPLETION)
#define MR_MODE_USED (FI_MR_VIRT_ADDR | FI_MR_PROV_KEY)

#define NO(...)                                                                   \
	do {                                                                      \
		FI_INFO(&pcmfi_prov, FI_LOG_CORE, "hints: " __VA_ARGS__);         \
		return false;                                                     \
	} while (0)

/**
 * pcmfi_domain_name() - "pcmd" through pcmd, "inproc-<datapath>" in process.
 */
const char *pcmfi_domain_name(void)
{
	static char name[48];

	if (pcmfi_cfg.backend == PCM_TP_BACKEND_DAEMON)
		return "pcmd";
	snprintf(name, sizeof(name), "inproc-%s", pcmfi_cfg.datapath);
	return name;
}

/* Connections one endpoint's shared region holds (their segments). */
static size_t conns_per_region(void)
{
	return pcmfi_cfg.region_bytes / ((pcmfi_cfg.ring + pcmfi_cfg.slots) *
					 pcmfi_cfg.segment_bytes);
}

static bool tx_ok(const struct fi_tx_attr *t)
{
	if (t->caps & ~TX_CAPS)
		NO("tx caps %#llx not provided\n", (unsigned long long)(t->caps & ~TX_CAPS));
	if (t->op_flags & ~TX_OP_FLAGS)
		NO("tx op_flags %#llx not provided\n",
		   (unsigned long long)(t->op_flags & ~TX_OP_FLAGS));
	if (t->msg_order & ~MSG_ORDER)
		NO("tx msg_order %#llx not provided\n",
		   (unsigned long long)(t->msg_order & ~MSG_ORDER));
	if (t->comp_order & ~FI_ORDER_NONE)
		NO("tx comp_order not provided\n");
	if (t->inject_size > PCMFI_INJECT_MAX || t->size > PCMFI_QUEUE_MAX ||
	    t->iov_limit > PCMFI_IOV_MAX || t->rma_iov_limit > 1)
		NO("tx sizes above %d inject, %d queue, %d iov, 1 rma_iov\n", PCMFI_INJECT_MAX,
		   PCMFI_QUEUE_MAX, PCMFI_IOV_MAX);
	return true;
}

static bool rx_ok(const struct fi_rx_attr *r)
{
	if (r->caps & ~RX_CAPS)
		NO("rx caps %#llx not provided\n", (unsigned long long)(r->caps & ~RX_CAPS));
	if (r->op_flags & ~RX_OP_FLAGS)
		NO("rx op_flags %#llx not provided\n",
		   (unsigned long long)(r->op_flags & ~RX_OP_FLAGS));
	if (r->msg_order & ~MSG_ORDER)
		NO("rx msg_order %#llx not provided\n",
		   (unsigned long long)(r->msg_order & ~MSG_ORDER));
	if (r->comp_order & ~FI_ORDER_NONE)
		NO("rx comp_order not provided\n");
	if (r->size > PCMFI_QUEUE_MAX || r->iov_limit > PCMFI_IOV_MAX || r->total_buffered_recv)
		NO("rx sizes above %d queue, %d iov, or buffered receives\n", PCMFI_QUEUE_MAX,
		   PCMFI_IOV_MAX);
	return true;
}

static bool ep_ok(const struct fi_ep_attr *e)
{
	if (e->type != FI_EP_UNSPEC && e->type != FI_EP_MSG)
		NO("endpoint type %d: only FI_EP_MSG (ofi_rxm layers FI_EP_RDM on it)\n", e->type);
	if (e->protocol != FI_PROTO_UNSPEC)
		NO("protocol %u not provided\n", e->protocol);
	if (e->tx_ctx_cnt > 1 || e->rx_ctx_cnt > 1)
		NO("shared or several contexts per endpoint not provided\n");
	if (e->auth_key_size || e->auth_key)
		NO("authorization keys not provided\n");
	return true;
}

static bool domain_ok(const struct fi_domain_attr *d)
{
	if (d->name && strcmp(d->name, pcmfi_domain_name()))
		NO("domain %s is not %s\n", d->name, pcmfi_domain_name());
	if (d->control_progress == FI_PROGRESS_AUTO || d->data_progress == FI_PROGRESS_AUTO)
		NO("FI_PROGRESS_AUTO not provided (progress is manual)\n");
	if (d->caps & ~DOMAIN_CAPS)
		NO("domain caps %#llx not provided\n", (unsigned long long)(d->caps & ~DOMAIN_CAPS));
	if (d->mr_key_size > PCMFI_KEY_BYTES || d->cq_data_size > PCMFI_CQ_DATA_BYTES)
		NO("keys above %d or CQ data above %d bytes\n", PCMFI_KEY_BYTES,
		   PCMFI_CQ_DATA_BYTES);
	if (d->mr_iov_limit > 1 || d->max_ep_stx_ctx || d->max_ep_srx_ctx || d->cntr_cnt)
		NO("multi-iov regions, shared contexts or counters not provided\n");
	if (d->auth_key_size || d->auth_key)
		NO("authorization keys not provided\n");
	return true;
}

static bool hints_ok(const struct fi_info *h)
{
	if (h->caps & ~ALL_CAPS)
		NO("caps %#llx not provided\n", (unsigned long long)(h->caps & ~ALL_CAPS));
	if (h->addr_format != FI_FORMAT_UNSPEC && h->addr_format != FI_SOCKADDR &&
	    h->addr_format != FI_SOCKADDR_IN)
		NO("address format %u: only FI_SOCKADDR_IN\n", h->addr_format);
	if (h->fabric_attr && h->fabric_attr->name &&
	    strcmp(h->fabric_attr->name, PCMFI_FABRIC_NAME))
		NO("fabric %s is not %s\n", h->fabric_attr->name, PCMFI_FABRIC_NAME);
	if (h->fabric_attr && h->fabric_attr->prov_version > pcmfi_prov.version)
		NO("provider version above ours\n");
	return (!h->ep_attr || ep_ok(h->ep_attr)) && (!h->domain_attr || domain_ok(h->domain_attr)) &&
	       (!h->tx_attr || tx_ok(h->tx_attr)) && (!h->rx_attr || rx_ok(h->rx_attr));
}

/* The registration mode, from what the caller supports (fi_mr(3)). */
static uint64_t mr_mode_for(uint32_t version, const struct fi_info *h)
{
	uint64_t want = h && h->domain_attr ? (uint64_t)h->domain_attr->mr_mode : 0;

	if (want & FI_MR_BASIC)
		return FI_MR_BASIC;
	if (want == FI_MR_SCALABLE || (!h && FI_VERSION_LT(version, FI_VERSION(1, 5))))
		return FI_MR_SCALABLE;
	if (!h || !h->domain_attr)
		return MR_MODE_USED;
	if (FI_VERSION_LT(version, FI_VERSION(1, 5)) && want == FI_MR_UNSPEC)
		return FI_MR_SCALABLE;
	return want & MR_MODE_USED;
}

/* @node:@service as an IPv4 address. Return: 0 or -FI_ENODATA. */
static int resolve(const char *node, const char *service, uint64_t flags, struct sockaddr_in *out)
{
	struct addrinfo want = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int rc;

	if (flags & FI_NUMERICHOST)
		want.ai_flags |= AI_NUMERICHOST;
	if (!node)
		want.ai_flags |= AI_PASSIVE;
	rc = getaddrinfo(node, service, &want, &res);
	if (rc || !res) {
		FI_INFO(&pcmfi_prov, FI_LOG_CORE, "%s:%s: %s\n", node ? node : "",
			service ? service : "", gai_strerror(rc));
		return -FI_ENODATA;
	}
	memcpy(out, res->ai_addr, sizeof(*out));
	freeaddrinfo(res);
	if (out->sin_addr.s_addr == htonl(INADDR_ANY))
		out->sin_addr = pcmfi_cfg.addr;
	return 0;
}

static bool sockaddr_in_of(const void *a, size_t len, struct sockaddr_in *out)
{
	if (!a || len != sizeof(*out) || ((const struct sockaddr *)a)->sa_family != AF_INET)
		return false;
	memcpy(out, a, sizeof(*out));
	memset(out->sin_zero, 0, sizeof(out->sin_zero));
	return true;
}

/* The source and destination: from node/service, else the hints'. */
static int addresses(const char *node, const char *service, uint64_t flags,
		     const struct fi_info *h, struct sockaddr_in *src, struct sockaddr_in *dest,
		     bool *has_dest)
{
	struct sockaddr_in r;
	int rc;

	*src = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr = pcmfi_cfg.addr};
	*has_dest = false;
	if (h && h->src_addr && !sockaddr_in_of(h->src_addr, h->src_addrlen, src))
		return -FI_ENODATA;
	if (h && h->dest_addr) {
		if (!sockaddr_in_of(h->dest_addr, h->dest_addrlen, dest))
			return -FI_ENODATA;
		*has_dest = true;
	}
	if (src->sin_addr.s_addr == htonl(INADDR_ANY))
		src->sin_addr = pcmfi_cfg.addr;
	if (!node && !service)
		return 0;
	rc = resolve(node, service, flags, &r);
	if (rc)
		return rc;
	if (flags & FI_SOURCE) {
		*src = r;
	} else {
		*dest = r;
		*has_dest = true;
	}
	return 0;
}

static void fill_tx_rx(struct fi_info *fi, const struct fi_info *h)
{
	const struct fi_tx_attr *ht = h ? h->tx_attr : NULL;
	const struct fi_rx_attr *hr = h ? h->rx_attr : NULL;

	*fi->tx_attr = (struct fi_tx_attr){
		.caps = fi->caps & TX_CAPS,
		.op_flags = ht ? ht->op_flags : 0,
		.msg_order = MSG_ORDER,
		.comp_order = FI_ORDER_NONE,
		.inject_size = PCMFI_INJECT_MAX,
		.size = ht && ht->size ? ht->size : PCMFI_QUEUE_DEFAULT,
		.iov_limit = PCMFI_IOV_MAX,
		.rma_iov_limit = 1,
	};
	*fi->rx_attr = (struct fi_rx_attr){
		.caps = fi->caps & RX_CAPS,
		.op_flags = hr ? hr->op_flags : 0,
		.msg_order = MSG_ORDER,
		.comp_order = FI_ORDER_NONE,
		.size = hr && hr->size ? hr->size : PCMFI_QUEUE_DEFAULT,
		.iov_limit = PCMFI_IOV_MAX,
	};
}

static void fill_ep_domain(struct fi_info *fi, uint64_t mr_mode)
{
	size_t conns = conns_per_region();

	*fi->ep_attr = (struct fi_ep_attr){
		.type = FI_EP_MSG,
		.protocol = FI_PROTO_UNSPEC,
		.protocol_version = 1,
		.max_msg_size = SIZE_MAX,
		.max_order_raw_size = SIZE_MAX,
		.max_order_waw_size = SIZE_MAX,
		.tx_ctx_cnt = 1,
		.rx_ctx_cnt = 1,
	};
	*fi->domain_attr = (struct fi_domain_attr){
		.threading = FI_THREAD_SAFE,
		.control_progress = FI_PROGRESS_MANUAL,
		.data_progress = FI_PROGRESS_MANUAL,
		.resource_mgmt = FI_RM_ENABLED,
		.av_type = FI_AV_UNSPEC,
		.mr_mode = (int)mr_mode,
		.mr_key_size = PCMFI_KEY_BYTES,
		.cq_data_size = PCMFI_CQ_DATA_BYTES,
		.cq_cnt = 1024,
		.ep_cnt = conns,
		.tx_ctx_cnt = conns,
		.rx_ctx_cnt = conns,
		.max_ep_tx_ctx = 1,
		.max_ep_rx_ctx = 1,
		.mr_iov_limit = 1,
		.caps = DOMAIN_CAPS,
		.max_err_data = PCMFI_CM_DATA_MAX,
		.mr_cnt = 1u << 20,
	};
}

static int build(uint32_t version, const struct fi_info *h, const struct sockaddr_in *src,
		 const struct sockaddr_in *dest, struct fi_info **out)
{
	struct fi_info *fi = fi_allocinfo();

	if (!fi)
		return -FI_ENOMEM;
	fi->caps = h && h->caps ? h->caps | DOMAIN_CAPS : ALL_CAPS;
	fi->mode = 0;
	fi->addr_format = FI_SOCKADDR_IN;
	fill_tx_rx(fi, h);
	fill_ep_domain(fi, mr_mode_for(version, h));
	fi->domain_attr->name = strdup(pcmfi_domain_name());
	fi->fabric_attr->name = strdup(PCMFI_FABRIC_NAME);
	fi->fabric_attr->prov_version = pcmfi_prov.version;
	fi->src_addr = malloc(sizeof(*src));
	fi->dest_addr = dest ? malloc(sizeof(*dest)) : NULL;
	if (!fi->domain_attr->name || !fi->fabric_attr->name || !fi->src_addr ||
	    (dest && !fi->dest_addr)) {
		fi_freeinfo(fi);
		return -FI_ENOMEM;
	}
	memcpy(fi->src_addr, src, sizeof(*src));
	fi->src_addrlen = sizeof(*src);
	if (dest) {
		memcpy(fi->dest_addr, dest, sizeof(*dest));
		fi->dest_addrlen = sizeof(*dest);
	}
	*out = fi;
	return 0;
}

static bool daemon_reachable(void)
{
	const char *path = getenv("PCMD_SOCKET");
	struct stat st;

	if (!path || !path[0])
		path = "/run/pcmd/pcmd.sock";
	if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		return true;
	FI_INFO(&pcmfi_prov, FI_LOG_CORE,
		"pcmd's socket %s is not there (start pcmd, or set PCMD_SOCKET)\n", path);
	return false;
}

/**
 * pcmfi_getinfo() - the provider's fi_getinfo().
 *
 * Return: 0 with one fi_info, -FI_ENODATA (hints not met, an address that
 * does not resolve, or pcmd not running), -FI_ENOMEM.
 */
int pcmfi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
		  const struct fi_info *hints, struct fi_info **info)
{
	struct sockaddr_in src, dest;
	bool has_dest;
	int rc;

	if (pcmfi_cfg.backend == PCM_TP_BACKEND_DAEMON && !daemon_reachable())
		return -FI_ENODATA;
	if (hints && !hints_ok(hints))
		return -FI_ENODATA;
	rc = addresses(node, service, flags, hints, &src, &dest, &has_dest);
	if (rc)
		return rc;
	return build(version, hints, &src, has_dest ? &dest : NULL, info);
}
