// SPDX-License-Identifier: MIT
/*
 * cnp.c - congestion notification packets, DCQCN's notification point (NP)
 * and the sender's view of them (a pcm extension; Zhu et al., SIGCOMM
 * 2015, section 3.1, and htsim's DCQCNSink).
 *
 * The receiver is the NP, one per receiving group (the flow a sender's
 * group is to its policy). When a CE-marked data packet arrives and the
 * group has sent no CNP for CnpInterval (50 us), it sends one at once and
 * starts the interval; a marked packet inside the interval is remembered,
 * and when the interval ends with marks remembered the NP sends one CNP for
 * them all and starts the next interval. So while marks keep arriving the
 * sender gets one CNP per interval, and no mark goes unreported.
 *
 * The CNP is a control packet (66 B on the wire) to the sender, which feeds
 * PCM_SIG_CNP = 1 to the group of the PDC whose packet was marked (its
 * reaction point). Receivers notify only when a package of the run reads
 * PCM_SIG_CNP, as a NIC's NP is enabled by configuration, so runs of other
 * policies carry no CNPs.
 */
#include "nic.h"

void uet_cnp_setup(struct uet_nics *ns)
{
	ns->cnp_on = false;
	for (uint32_t i = 0; i < ns->cc.n; i++)
		if (ns->cc.cc[i].pkg && (ns->cc.cc[i].pkg->signal_types & UET_BIT(PCM_SIG_CNP)))
			ns->cnp_on = true;
}

/* Send one CNP for @pdc from its receiving group @g and start a new interval. */
static void notify(struct uet_nics *ns, struct uet_nic *nic, struct uet_group *g, uint32_t pdc_id)
{
	uet_send_control(ns, nic, g->peer, pdc_id, UET_PKT_CNP, 0, UET_CNP_WIRE_BYTES);
	g->cnp_last_ps = uet_now(ns);
	g->cnp_marks = 0;
	g->cnp_pdc = pdc_id;
	g->cnp_ev = uet_nic_schedule(ns, uet_now(ns) + ns->cfg.cnp_interval_ps, UET_EV_CNP, g, 0);
}

void uet_cnp_marked(struct uet_nics *ns, struct uet_nic *nic, struct uet_pdc *pdc)
{
	struct uet_group *g = pdc->rx.grp;

	if (!g)
		return;
	if (!g->cnp_ev) {
		notify(ns, nic, g, pdc->id);
		return;
	}
	/* inside the interval: remembered, sent when it ends */
	g->cnp_marks++;
	g->cnp_pdc = pdc->id;
}

void uet_nic_cnp_interval_end(struct uet_nics *ns, struct uet_group *g)
{
	g->cnp_ev = NULL;
	if (g->cnp_marks)
		notify(ns, g->nic, g, g->cnp_pdc);
}

void uet_cnp_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt)
{
	struct uet_pdc *pdc = pkt->pdc < ns->n_pdcs ? ns->pdcs[pkt->pdc] : NULL;
	struct uet_group *g = pdc && pdc->nic == nic->id ? pdc->grp : NULL;
	struct pcm_event ev;

	if (!g && ns->cfg.pdc_groups)
		g = uet_group_find(nic, pkt->src);
	if (!g || !g->n_tx)
		return; /* the flow is done: nothing to slow down */
	ev.valid = UET_BIT(PCM_SIG_CNP);
	ev.values[PCM_SIG_CNP] = 1;
	uet_group_feed(ns, g, &ev);
}
