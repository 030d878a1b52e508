// SPDX-License-Identifier: MIT
/*
 * pcmctl - operate a running pcmd (pcmctl(1)): status, per-flow state,
 * policies (list, load, unload, set per flow or per rule), counters (text,
 * JSON, or the Prometheus text exposition format), `top`, a live view, and
 * pcmd's log level.
 *
 * It is a client of pcmd's control socket like any other (pcmd-abi/pcmd_proto.h),
 * saying HELLO as an admin; pcmd decides from its credentials what it may do
 * and what it sees: an admin every user's clients, flows and counters, any
 * other user its own. Every text that came from pcmd (peer addresses, names,
 * paths, pcmd's error messages) is printed in its visible form, or escaped in
 * JSON (pcm_text.h): a peer name cannot reach the terminal as an escape sequence.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "pcm_text.h"
#include "pcm_units.h"
#include "pcmd_metrics.h"
#include "pcmd_proto.h"

#ifndef PCM_VERSION
#define PCM_VERSION "unknown"
#endif

#define RPC_TIMEOUT_MS 10000
#define MAX_FLOWS_SHOWN 100000

struct ctl {
	int fd;
	uint32_t seq;
	bool json;
	bool admin;    /* pcmd's HELLO reply: this user sees every user's (else its own) */
	double wait_s; /* --wait: keep trying to reach pcmd this long */
	const char *sock;
	_Alignas(8) uint8_t rep[PCMD_MSG_MAX_BYTES];
};

static const char *const mode_names[] = {"sync", "async_relaxed", "async_locked", "async_bounded"};
static const char *const state_names[] = {"?", "connecting", "established", "closing"};

static const char *mode_name(uint32_t m)
{
	return m < 4 ? mode_names[m] : "?";
}

/* @s as a JSON string, quotes included. */
static void json_str(const char *s)
{
	size_t len = PCM_TEXT_JSON_MAX(strlen(s));
	char *buf = malloc(len);

	if (buf)
		pcm_text_json(buf, len, s);
	printf("\"%s\"", buf ? buf : "");
	free(buf);
}

/* Room for the visible form of a field of pcmd's replies (at most PCMD_PATH_MAX bytes). */
#define SHOWN_MAX PCM_TEXT_VISIBLE_MAX(PCMD_PATH_MAX)

/* @s as it may reach a terminal (pcm_text_visible()), cut to @width bytes at a whole character. */
static const char *shown(const char *s, char *buf, size_t width)
{
	pcm_text_visible(buf, width + 1, s);
	return buf;
}

static int die(struct ctl *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Report a failure (as JSON with --json) and return the exit status 1. */
static int die(struct ctl *c, int status, const char *fmt, ...)
{
	char msg[600], vis[PCM_TEXT_VISIBLE_MAX(sizeof(msg))];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c && c->json) {
		printf("{\"ok\":false,\"status\":%d,\"error\":", status);
		json_str(msg);
		printf("}\n");
	}
	fprintf(stderr, "pcmctl: %s\n", shown(msg, vis, sizeof(vis) - 1));
	return 1;
}

/* ---- talking to pcmd ------------------------------------------------------------------- */

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int rpc(struct ctl *c, void *req, uint16_t type, size_t len, size_t min_reply)
{
	struct pcmd_msg_hdr *h = req;
	const struct pcmd_reply_error *e = (const void *)c->rep;
	struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
	ssize_t n;

	h->magic = PCMD_PROTO_MAGIC;
	h->version = PCMD_PROTO_VERSION;
	h->type = type;
	h->len = (uint32_t)len;
	h->seq = ++c->seq;
	if (send(c->fd, req, len, MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET)
		return -errno;
	for (;;) {
		if (poll(&pfd, 1, RPC_TIMEOUT_MS) <= 0)
			return -ETIMEDOUT;
		n = recv(c->fd, c->rep, sizeof(c->rep), 0);
		/* Refused outright: the reset comes first, pcmd's reason may wait behind it. */
		if (n < 0 && errno == ECONNRESET && (n = recv(c->fd, c->rep, sizeof(c->rep),
							      MSG_DONTWAIT)) <= 0)
			errno = ECONNRESET;
		if (n <= 0)
			return n == 0 ? -ECONNRESET : -errno;
		if (e->st.hdr.type == PCMD_MSG_NOTICE)
			continue;
		if ((size_t)n < sizeof(e->st) || e->st.hdr.magic != PCMD_PROTO_MAGIC)
			return -EPROTO;
		if (e->st.status < 0)
			return e->st.status;
		return (size_t)n < min_reply ? -EPROTO : 0;
	}
}

static const char *rpc_error(struct ctl *c, int rc)
{
	const struct pcmd_reply_error *e = (const void *)c->rep;

	if (rc < 0 && e->st.status == rc && e->st.hdr.magic == PCMD_PROTO_MAGIC)
		return e->text;
	return strerror(-rc);
}

/* Is connect()'s error one that a pcmd still starting gives (no socket yet, or not listening)? */
static bool not_up_yet(int err)
{
	return err == ENOENT || err == ECONNREFUSED;
}

/* Connect to pcmd's socket; with --wait, retry every 50 ms while pcmd is not up yet. */
static int connect_ctl(struct ctl *c, const struct sockaddr_un *sa)
{
	double deadline = mono_s() + c->wait_s;
	int err;

	for (;;) {
		c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (c->fd < 0)
			return -errno;
		if (connect(c->fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
			return 0;
		err = errno;
		close(c->fd);
		c->fd = -1;
		if (!not_up_yet(err) || mono_s() >= deadline)
			return -err;
		(void)nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
	}
}

static int open_ctl(struct ctl *c)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct pcmd_req_hello h = {.version_min = PCMD_PROTO_VERSION,
				   .version_max = PCMD_PROTO_VERSION,
				   .role = PCMD_ROLE_ADMIN};
	int rc;

	if (strlen(c->sock) >= sizeof(sa.sun_path))
		return die(c, -ENAMETOOLONG, "socket path %s is too long", c->sock);
	memcpy(sa.sun_path, c->sock, strlen(c->sock) + 1);
	rc = connect_ctl(c, &sa);
	if (rc < 0)
		return die(c, rc,
			   "cannot reach pcmd at %s%s: %s (is pcmd running? may you use its socket, "
			   "e.g. as a member of group pcm?)",
			   c->sock, c->wait_s > 0 ? " within --wait" : "", strerror(-rc));
	snprintf(h.name, sizeof(h.name), "pcmctl");
	rc = rpc(c, &h, PCMD_MSG_HELLO, sizeof(h), sizeof(struct pcmd_rep_hello));
	if (rc < 0)
		return die(c, rc, "%s", rpc_error(c, rc));
	c->admin = ((const struct pcmd_rep_hello *)c->rep)->admin != 0;
	return 0;
}

/* ---- output helpers -------------------------------------------------------------------- */

static void human_rate(uint64_t bps, char *buf, size_t len)
{
	pcm_units_format_rate(bps, "", buf, len);
}

static void human_bytes(uint64_t b, char *buf, size_t len)
{
	if (b >= 1ull << 30)
		snprintf(buf, len, "%.2fGiB", (double)b / (1ull << 30));
	else if (b >= 1ull << 20)
		snprintf(buf, len, "%.1fMiB", (double)b / (1ull << 20));
	else if (b >= 1ull << 10)
		snprintf(buf, len, "%.1fKiB", (double)b / (1ull << 10));
	else
		snprintf(buf, len, "%" PRIu64 "B", b);
}

static void human_duration(uint64_t ns, char *buf, size_t len)
{
	uint64_t s = ns / 1000000000ull;

	if (s >= 86400)
		snprintf(buf, len, "%" PRIu64 "d %" PRIu64 "h", s / 86400, s % 86400 / 3600);
	else if (s >= 3600)
		snprintf(buf, len, "%" PRIu64 "h %" PRIu64 "m", s / 3600, s % 3600 / 60);
	else if (s >= 60)
		snprintf(buf, len, "%" PRIu64 "m %" PRIu64 "s", s / 60, s % 60);
	else
		snprintf(buf, len, "%.1fs", (double)ns / 1e9);
}

/* ---- status ---------------------------------------------------------------------------- */

static int get_status(struct ctl *c, struct pcmd_rep_status *out)
{
	struct pcmd_req_empty q;
	int rc = rpc(c, &q, PCMD_MSG_STATUS, sizeof(q), sizeof(*out));

	if (rc == 0)
		memcpy(out, c->rep, sizeof(*out));
	return rc;
}

static void print_status_text(const struct pcmd_rep_status *s, bool all)
{
	char up[32], rate[32], version[SHOWN_MAX], path[SHOWN_MAX], datapath[SHOWN_MAX];

	human_duration(s->uptime_ns, up, sizeof(up));
	pcm_units_format_rate(s->goodput_bps, "bit/s", rate, sizeof(rate));
	printf("pcmd %s (pid %u, run %016" PRIx64 "), %s for %s\n",
	       shown(s->version, version, SHOWN_MAX - 1), s->pid, s->run_id,
	       s->state == PCMD_STATE_RUNNING ? "running" : "stopping", up);
	printf("config %s (generation %u), datapath %s\n",
	       s->config_path[0] ? shown(s->config_path, path, SHOWN_MAX - 1) : "(defaults)",
	       s->config_generation, shown(s->datapath, datapath, SHOWN_MAX - 1));
	printf("clients %u, flows %u, listeners %u, policies %u, rules %u (%s)\n", s->clients,
	       s->flows, s->listeners, s->policies, s->rules,
	       all ? "every user's: an admin's view" : "this user's own: not an admin");
	/* pcmd measures goodput over wall time on every datapath (pcmd(8), Data plane) */
	printf("goodput %s (wall clock%s)\n", rate,
	       strcmp(s->datapath, "softnic") == 0 ? "; the fabric is emulated" : "");
}

static int cmd_status(struct ctl *c)
{
	struct pcmd_rep_status s;
	int rc = get_status(c, &s);

	if (rc < 0)
		return die(c, rc, "status: %s", rpc_error(c, rc));
	if (!c->json) {
		print_status_text(&s, c->admin);
		return 0;
	}
	printf("{\"version\":");
	json_str(s.version);
	printf(",\"pid\":%u,\"run_id\":\"%016" PRIx64 "\",\"state\":\"%s\",\"uptime_ns\":%" PRIu64
	       ",\"config_path\":",
	       s.pid, s.run_id, s.state == PCMD_STATE_RUNNING ? "running" : "stopping", s.uptime_ns);
	json_str(s.config_path);
	printf(",\"config_generation\":%u,\"datapath\":", s.config_generation);
	json_str(s.datapath);
	printf(",\"clients\":%u,\"flows\":%u,\"listeners\":%u,\"policies\":%u,\"rules\":%u,"
	       "\"goodput_bps\":%" PRIu64 ",\"goodput_clock\":\"wall\",\"view\":\"%s\"}\n",
	       s.clients, s.flows, s.listeners, s.policies, s.rules, s.goodput_bps,
	       c->admin ? "all" : "own");
	return 0;
}

/* ---- flows ----------------------------------------------------------------------------- */

/* Every flow, page by page. Return: their count (*out malloc'd) or -errno. */
static int get_flows(struct ctl *c, struct pcmd_flow_info **out)
{
	struct pcmd_req_page q = {.start = 0, .max = 0};
	const struct pcmd_rep_flows *p = (const void *)c->rep;
	struct pcmd_flow_info *all = NULL;
	uint32_t n = 0;

	for (;;) {
		int rc = rpc(c, &q, PCMD_MSG_FLOWS, sizeof(q), sizeof(*p));
		struct pcmd_flow_info *grown;

		if (rc < 0) {
			free(all);
			return rc;
		}
		if (p->n > PCMD_FLOWS_PER_PAGE || n + p->n > MAX_FLOWS_SHOWN) {
			free(all);
			return -EPROTO;
		}
		grown = realloc(all, (n + p->n + 1) * sizeof(*all));
		if (!grown) {
			free(all);
			return -ENOMEM;
		}
		all = grown;
		memcpy(all + n, p->flows, p->n * sizeof(*all));
		n += p->n;
		if (p->n == 0 || p->next >= p->total)
			break;
		q.start = p->next;
	}
	*out = all;
	return (int)n;
}

/*
 * One figure for the text table: "-" when the datapath does not measure it;
 * a window without a limit is "unlimited", a rate of 0 "unpaced".
 */
static void field(bool valid, uint64_t v, int kind, char *buf, size_t len)
{
	if (!valid)
		snprintf(buf, len, "-");
	else if (kind == 'b')
		human_bytes(v, buf, len);
	else if (kind == 'w' && v == PCMD_CWND_UNLIMITED)
		snprintf(buf, len, "unlimited");
	else if (kind == 'w')
		human_bytes(v, buf, len);
	else if (kind == 'r' && v == 0)
		snprintf(buf, len, "unpaced");
	else if (kind == 'r')
		human_rate(v, buf, len);
	else if (kind == 't')
		snprintf(buf, len, "%.1fus", (double)v / 1e3);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

static void print_flow_header(void)
{
	printf("%-6s %-6s %-7s %-6s %-20s %-18s %-14s %-10s %-13s %-11s %9s %9s %9s %9s %9s %5s "
	       "%5s %10s %10s\n",
	       "FLOW", "CLIENT", "PID", "UID", "PEER", "PEER-UID:GID/PID", "POLICY", "LB", "MODE",
	       "STATE", "CWND", "RATE", "SRTT", "RTTVAR", "INFLIGHT", "RETX", "RTO", "TX", "RX");
}

/* The other end's uid:gid/pid, "-" when pcmd does not know it. */
static void peer_ids(const struct pcmd_flow_info *f, char *buf, size_t len)
{
	if (f->peer_cred.known)
		snprintf(buf, len, "%u:%u/%u", f->peer_cred.uid, f->peer_cred.gid,
			 f->peer_cred.pid);
	else
		snprintf(buf, len, "-");
}

static void print_flow_row(const struct pcmd_flow_info *f)
{
	char cwnd[16], rate[16], srtt[16], rttvar[16], infl[16], retx[24], rto[24], tx[16], rx[16];
	char peer[SHOWN_MAX], policy[SHOWN_MAX], lb[SHOWN_MAX], ids[40];
	const struct pcmd_flow_measure *m = &f->m;

	field(m->valid & PCMD_FIELD_CWND, m->cwnd_bytes, 'w', cwnd, sizeof(cwnd));
	field(m->valid & PCMD_FIELD_RATE, m->rate_bps, 'r', rate, sizeof(rate));
	field(m->valid & PCMD_FIELD_RTT, m->srtt_ns, 't', srtt, sizeof(srtt));
	field(m->valid & PCMD_FIELD_RTT, m->rttvar_ns, 't', rttvar, sizeof(rttvar));
	field(m->valid & PCMD_FIELD_INFLIGHT, m->in_flight_bytes, 'b', infl, sizeof(infl));
	field(m->valid & PCMD_FIELD_RETRANSMITS, m->retransmits, 'n', retx, sizeof(retx));
	field(m->valid & PCMD_FIELD_RTOS, m->rtos, 'n', rto, sizeof(rto));
	human_bytes(f->tx_bytes, tx, sizeof(tx));
	human_bytes(f->rx_bytes, rx, sizeof(rx));
	peer_ids(f, ids, sizeof(ids));
	printf("%-6u %-6u %-7u %-6u %-20s %-18s %-14s %-10s %-13s %-11s %9s %9s %9s %9s %9s %5s "
	       "%5s %10s %10s\n",
	       f->flow_id, f->client_id, f->pid, f->uid, shown(f->peer, peer, 20), ids,
	       shown(f->policy, policy, 14), f->lb_policy[0] ? shown(f->lb_policy, lb, 10) : "-",
	       mode_name(f->mode),
	       f->state < 4 ? state_names[f->state] : "?", cwnd, rate, srtt, rttvar, infl, retx,
	       rto, tx, rx);
}

static void json_opt(const char *key, bool valid, uint64_t v)
{
	if (valid)
		printf(",\"%s\":%" PRIu64, key, v);
	else
		printf(",\"%s\":null", key);
}

/* A figure whose one value means "no limit": that word as a string, else the number. */
static void json_word(const char *key, bool valid, uint64_t v, uint64_t none, const char *word)
{
	if (valid && v == none)
		printf(",\"%s\":\"%s\"", key, word);
	else
		json_opt(key, valid, v);
}

static void print_flow_json(const struct pcmd_flow_info *f, uint64_t run_id)
{
	const struct pcmd_flow_measure *m = &f->m;
	char uid[PCMD_FLOW_UID_MAX];

	pcmd_flow_uid(uid, run_id, f->flow_id);
	printf("{\"flow\":%u,\"flow_id\":\"%s\",\"client\":%u,\"pid\":%u,\"uid\":%u,"
	       "\"gid\":%u,\"conn_id\":%u,\"peer\":",
	       f->flow_id, uid, f->client_id, f->pid, f->uid, f->gid, f->conn_id);
	json_str(f->peer);
	json_opt("peer_uid", f->peer_cred.known, f->peer_cred.uid);
	json_opt("peer_gid", f->peer_cred.known, f->peer_cred.gid);
	json_opt("peer_pid", f->peer_cred.known, f->peer_cred.pid);
	printf(",\"policy\":");
	json_str(f->policy);
	printf(",\"lb_policy\":");
	if (f->lb_policy[0])
		json_str(f->lb_policy);
	else
		printf("null");
	printf(",\"mode\":\"%s\",\"state\":\"%s\",\"rule\":%d", mode_name(f->mode),
	       f->state < 4 ? state_names[f->state] : "?", f->rule);
	json_word("cwnd_bytes", m->valid & PCMD_FIELD_CWND, m->cwnd_bytes, PCMD_CWND_UNLIMITED,
		  "unlimited");
	json_word("rate_bps", m->valid & PCMD_FIELD_RATE, m->rate_bps, 0, "unpaced");
	json_opt("srtt_ns", m->valid & PCMD_FIELD_RTT, m->srtt_ns);
	json_opt("rttvar_ns", m->valid & PCMD_FIELD_RTT, m->rttvar_ns);
	json_opt("in_flight_bytes", m->valid & PCMD_FIELD_INFLIGHT, m->in_flight_bytes);
	json_opt("retransmits", m->valid & PCMD_FIELD_RETRANSMITS, m->retransmits);
	json_opt("rtos", m->valid & PCMD_FIELD_RTOS, m->rtos);
	printf(",\"tx_bytes\":%" PRIu64 ",\"rx_bytes\":%" PRIu64 ",\"tx_msgs\":%" PRIu64
	       ",\"rx_msgs\":%" PRIu64 "}",
	       f->tx_bytes, f->rx_bytes, f->tx_msgs, f->rx_msgs);
}

static int cmd_flows(struct ctl *c)
{
	struct pcmd_flow_info *f = NULL;
	struct pcmd_rep_status s;
	int n, rc = get_status(c, &s);

	if (rc < 0)
		return die(c, rc, "status: %s", rpc_error(c, rc));
	n = get_flows(c, &f);
	if (n < 0)
		return die(c, n, "flows: %s", rpc_error(c, n));
	if (c->json) {
		printf("[");
		for (int i = 0; i < n; i++) {
			printf(i ? "," : "");
			print_flow_json(&f[i], s.run_id);
		}
		printf("]\n");
	} else {
		print_flow_header();
		for (int i = 0; i < n; i++)
			print_flow_row(&f[i]);
	}
	free(f);
	return 0;
}

/* ---- stats ----------------------------------------------------------------------------- */

/* The Prometheus text (pcmd_metrics.h): the counters, and with @per_flow every flow's series. */
static int print_prometheus(struct ctl *c, const struct pcmd_rep_stats *s, bool per_flow)
{
	struct pcmd_flow_info *f = NULL;
	struct pcmd_rep_status st = {0};
	size_t len;
	char *text;
	int n = 0, rc;

	if (per_flow) {
		rc = get_status(c, &st);
		if (rc < 0)
			return die(c, rc, "status: %s", rpc_error(c, rc));
		n = get_flows(c, &f);
		if (n < 0)
			return die(c, n, "flows: %s", rpc_error(c, n));
	}
	len = pcmd_metrics_prometheus(s, per_flow ? f : NULL, (uint32_t)n, st.run_id, NULL, 0);
	text = malloc(len + 1);
	if (!text) {
		free(f);
		return die(c, -ENOMEM, "out of memory");
	}
	pcmd_metrics_prometheus(s, per_flow ? f : NULL, (uint32_t)n, st.run_id, text, len + 1);
	fputs(text, stdout);
	free(text);
	free(f);
	return 0;
}

static int cmd_stats(struct ctl *c, bool prometheus, bool per_flow)
{
	struct pcmd_req_empty q;
	struct pcmd_rep_stats s;
	char members[4096];
	int rc = rpc(c, &q, PCMD_MSG_STATS, sizeof(q), sizeof(s));

	if (rc < 0)
		return die(c, rc, "stats: %s", rpc_error(c, rc));
	if (per_flow && !prometheus)
		return die(c, -EINVAL, "stats --per-flow: only with --prometheus");
	memcpy(&s, c->rep, sizeof(s));
	if (prometheus)
		return print_prometheus(c, &s, per_flow);
	if (c->json) {
		pcmd_metrics_json(&s, members, sizeof(members));
		printf("{%s}\n", members);
		return 0;
	}
	for (size_t i = 0; i < pcmd_metrics_count; i++)
		printf("%-22s %" PRIu64 "\n", pcmd_metrics[i].key,
		       pcmd_metric_value(&s, &pcmd_metrics[i]));
	return 0;
}

/* ---- policies -------------------------------------------------------------------------- */

static int cmd_policy_list(struct ctl *c)
{
	struct pcmd_req_page q = {.start = 0, .max = 0};
	const struct pcmd_rep_policies *p = (const void *)c->rep;
	bool first = true;

	if (c->json)
		printf("[");
	else
		printf("%-16s %-8s %5s  %s\n", "NAME", "ARITH", "FLOWS", "SOURCE");
	for (;;) {
		int rc = rpc(c, &q, PCMD_MSG_POLICY_LIST, sizeof(q), sizeof(*p));

		if (rc < 0)
			return die(c, rc, "policies: %s", rpc_error(c, rc));
		for (uint32_t i = 0; i < p->n && i < PCMD_POLICIES_PER_PAGE; i++) {
			const struct pcmd_policy_info *e = &p->policies[i];

			if (!c->json) {
				char name[SHOWN_MAX], arith[SHOWN_MAX], source[SHOWN_MAX];

				printf("%-16s %-8s %5u  %s\n", shown(e->name, name, SHOWN_MAX - 1),
				       shown(e->arith, arith, SHOWN_MAX - 1), e->flows,
				       shown(e->source, source, SHOWN_MAX - 1));
				continue;
			}
			printf(first ? "{\"name\":" : ",{\"name\":");
			first = false;
			json_str(e->name);
			printf(",\"arith\":");
			json_str(e->arith);
			printf(",\"flows\":%u,\"builtin\":%s,\"source\":", e->flows,
			       e->builtin ? "true" : "false");
			json_str(e->source);
			printf("}");
		}
		if (p->n == 0 || p->next >= p->total)
			break;
		q.start = p->next;
	}
	if (c->json)
		printf("]\n");
	return 0;
}

static int cmd_policy_load(struct ctl *c, const char *path)
{
	struct pcmd_req_policy_load q = {0};
	char real[PCMD_PATH_MAX];
	int rc;

	/* pcmd resolves the path itself, relative to its own directory: make it absolute. */
	if (!realpath(path, real))
		return die(c, -errno, "%s: %s", path, strerror(errno));
	snprintf(q.path, sizeof(q.path), "%s", real);
	rc = rpc(c, &q, PCMD_MSG_POLICY_LOAD, sizeof(q), sizeof(struct pcmd_rep_policy_load));
	/* pcmctl can read it and pcmd cannot: pcmd sees another file system (its sandbox). */
	if ((rc == -ENOENT || rc == -EACCES) && access(real, R_OK) == 0)
		return die(c, rc,
			   "load %s: %s; pcmctl can read the file but pcmd cannot: pcmd.service "
			   "hides /tmp and /var/tmp (PrivateTmp=), /home, /root and /run/user "
			   "(ProtectHome=) from pcmd; put packages in " PCM_POLICY_DIR
			   " (pcmd(8), Files)",
			   real, rpc_error(c, rc));
	if (rc < 0)
		return die(c, rc, "load %s: %s", real, rpc_error(c, rc));
	if (c->json) {
		printf("{\"ok\":true,\"name\":");
		json_str(((const struct pcmd_rep_policy_load *)c->rep)->name);
		printf("}\n");
	} else {
		char name[SHOWN_MAX], from[SHOWN_MAX];

		printf("loaded %s from %s\n",
		       shown(((const struct pcmd_rep_policy_load *)c->rep)->name, name, SHOWN_MAX - 1),
		       shown(real, from, SHOWN_MAX - 1));
	}
	return 0;
}

static int cmd_policy_unload(struct ctl *c, const char *name)
{
	struct pcmd_req_policy_unload q = {0};
	int rc;

	if (strlen(name) >= sizeof(q.name))
		return die(c, -ENAMETOOLONG, "policy name '%s' is too long", name);
	snprintf(q.name, sizeof(q.name), "%s", name);
	rc = rpc(c, &q, PCMD_MSG_POLICY_UNLOAD, sizeof(q), sizeof(struct pcmd_reply_status));
	if (rc < 0)
		return die(c, rc, "unload %s: %s", name, rpc_error(c, rc));
	if (c->json)
		printf("{\"ok\":true}\n");
	else
		printf("unloaded %s\n", name);
	return 0;
}

static int parse_mode(const char *s, uint32_t *out)
{
	for (uint32_t i = 0; i < 4; i++)
		if (strcmp(s, mode_names[i]) == 0) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

static int cmd_policy_set(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"flow", required_argument, NULL, 'f'},
	    {"rule", required_argument, NULL, 'r'},
	    {"lb", required_argument, NULL, 'b'},
	    {"mode", required_argument, NULL, 'm'},
	    {NULL, 0, NULL, 0},
	};
	struct pcmd_req_policy_set q = {.opts.mode = PCMD_SHELL_DEFAULT};
	char *end;
	int o, rc;

	optind = 0;
	while ((o = getopt_long(argc, argv, "f:r:b:m:", opts, NULL)) != -1) {
		switch (o) {
		case 'f':
		case 'r':
			q.target = o == 'f' ? PCMD_TARGET_FLOW : PCMD_TARGET_RULE;
			q.id = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || !*optarg)
				return die(c, -EINVAL, "--%s %s: not a number",
					   o == 'f' ? "flow" : "rule", optarg);
			break;
		case 'b':
			snprintf(q.opts.lb_policy, sizeof(q.opts.lb_policy), "%s", optarg);
			break;
		case 'm':
			if (parse_mode(optarg, &q.opts.mode) < 0)
				return die(c, -EINVAL,
					   "--mode %s: one of sync, async_relaxed, "
					   "async_locked, async_bounded",
					   optarg);
			break;
		default:
			return 2;
		}
	}
	if (!q.target || optind != argc - 1)
		return die(c, -EINVAL,
			   "usage: pcmctl policies set (--flow ID | --rule N) POLICY "
			   "[--lb LB] [--mode MODE]");
	snprintf(q.opts.policy, sizeof(q.opts.policy), "%s", argv[optind]);
	rc = rpc(c, &q, PCMD_MSG_POLICY_SET, sizeof(q), sizeof(struct pcmd_rep_policy_set));
	if (rc < 0)
		return die(c, rc, "set: %s", rpc_error(c, rc));
	if (c->json)
		printf("{\"ok\":true,\"flows_changed\":%u}\n",
		       ((const struct pcmd_rep_policy_set *)c->rep)->flows_changed);
	else
		printf("%u flow(s) now run %s\n",
		       ((const struct pcmd_rep_policy_set *)c->rep)->flows_changed, q.opts.policy);
	return 0;
}

static int cmd_policies(struct ctl *c, int argc, char **argv)
{
	if (argc < 1 || strcmp(argv[0], "list") == 0)
		return cmd_policy_list(c);
	if (strcmp(argv[0], "load") == 0 && argc == 2)
		return cmd_policy_load(c, argv[1]);
	if (strcmp(argv[0], "unload") == 0 && argc == 2)
		return cmd_policy_unload(c, argv[1]);
	if (strcmp(argv[0], "set") == 0)
		return cmd_policy_set(c, argc, argv);
	return die(c, -EINVAL, "usage: pcmctl policies [list | load PATH | unload NAME | set ...]");
}

/* ---- log level ------------------------------------------------------------------------- */

static int cmd_log_level(struct ctl *c, int argc, char **argv)
{
	static const char *const levels[] = {"error", "warn", "info", "debug"};
	struct pcmd_req_log_level q = {0};
	int rc;

	if (argc != 2)
		return die(c, -EINVAL, "usage: pcmctl log-level error|warn|info|debug");
	for (q.level = 0; q.level < 4 && strcmp(argv[1], levels[q.level]) != 0; q.level++)
		;
	if (q.level == 4)
		return die(c, -EINVAL, "log-level %s: one of error, warn, info, debug", argv[1]);
	rc = rpc(c, &q, PCMD_MSG_LOG_LEVEL, sizeof(q), sizeof(struct pcmd_reply_status));
	if (rc < 0)
		return die(c, rc, "log-level: %s", rpc_error(c, rc));
	if (c->json)
		printf("{\"ok\":true,\"log_level\":\"%s\"}\n", levels[q.level]);
	else
		printf("pcmd logs at %s now (until a reload sets log_level again)\n",
		       levels[q.level]);
	return 0;
}

/* ---- top ------------------------------------------------------------------------------- */

static struct termios saved_tty;
static bool tty_raw;
static volatile sig_atomic_t top_stop;

static void restore_tty(void)
{
	if (tty_raw)
		tcsetattr(0, TCSANOW, &saved_tty);
	tty_raw = false;
}

static void on_signal(int sig)
{
	top_stop = 1;
}

static void raw_tty(void)
{
	struct termios t;

	if (!isatty(0) || tcgetattr(0, &saved_tty) < 0)
		return;
	t = saved_tty;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(0, TCSANOW, &t) == 0) {
		tty_raw = true;
		atexit(restore_tty);
	}
}

/* Per-flow receive + send rate since the previous frame, by flow id. */
struct prev {
	uint32_t flow;
	uint64_t bytes;
};

static uint64_t rate_of(const struct pcmd_flow_info *f, const struct prev *p, int np, double dt)
{
	for (int i = 0; i < np; i++)
		if (p[i].flow == f->flow_id && f->tx_bytes + f->rx_bytes >= p[i].bytes && dt > 0)
			return (uint64_t)((double)(f->tx_bytes + f->rx_bytes - p[i].bytes) * 8 /
					  dt);
	return 0;
}

static int top_frame(struct ctl *c, struct prev **prev, int *n_prev, double *t_prev)
{
	struct pcmd_rep_status s;
	struct pcmd_flow_info *f = NULL;
	double now = mono_s(), dt = now - *t_prev;
	struct prev *next;
	int n, rc = get_status(c, &s);
	char rate[16];

	if (rc < 0)
		return die(c, rc, "status: %s", rpc_error(c, rc));
	n = get_flows(c, &f);
	if (n < 0)
		return die(c, n, "flows: %s", rpc_error(c, n));
	printf("\033[H\033[2J");
	print_status_text(&s, c->admin);
	printf("\n%-9s ", "BIT/S");
	print_flow_header();
	next = calloc((size_t)n + 1, sizeof(*next));
	for (int i = 0; i < n && next; i++) {
		uint64_t r = rate_of(&f[i], *prev, *n_prev, dt);

		human_rate(r, rate, sizeof(rate));
		printf("%-9s ", rate);
		print_flow_row(&f[i]);
		next[i] = (struct prev){f[i].flow_id, f[i].tx_bytes + f[i].rx_bytes};
	}
	printf("\n(q to quit; refreshed every frame from pcmd at %s)\n", c->sock);
	fflush(stdout);
	free(*prev);
	*prev = next;
	*n_prev = n;
	*t_prev = now;
	free(f);
	return 0;
}

static int cmd_top(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"interval", required_argument, NULL, 'i'},
	    {"iterations", required_argument, NULL, 'n'},
	    {NULL, 0, NULL, 0},
	};
	long interval_ms = 1000, iterations = -1;
	struct prev *prev = NULL;
	double t_prev = mono_s();
	int n_prev = 0, o, rc = 0;

	optind = 0;
	while ((o = getopt_long(argc, argv, "i:n:", opts, NULL)) != -1) {
		uint64_t ps;

		if (o == 'i') {
			if (pcm_units_parse(PCM_UNIT_TIME, optarg, "ms", &ps, NULL, 0) < 0) {
				fprintf(stderr,
					"pcmctl top: --interval %s: milliseconds (or with a unit: "
					"2s; pcm-units(7))\n",
					optarg);
				return 2;
			}
			ps /= PCM_UNITS_PS_PER_MS;
			interval_ms = ps < INT_MAX ? (long)ps : INT_MAX;
		} else if (o == 'n')
			iterations = strtol(optarg, NULL, 10);
		else
			return 2;
	}
	if (interval_ms < 50)
		interval_ms = 50;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	raw_tty();
	while (!top_stop && iterations != 0 && rc == 0) {
		struct pollfd pfd = {.fd = 0, .events = POLLIN};
		char key;

		rc = top_frame(c, &prev, &n_prev, &t_prev);
		if (iterations > 0)
			iterations--;
		if (iterations == 0)
			break;
		if (poll(&pfd, 1, (int)interval_ms) > 0 && read(0, &key, 1) == 1 &&
		    (key == 'q' || key == 'Q'))
			break;
	}
	restore_tty();
	free(prev);
	return rc;
}

/* ---- main ------------------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f, "usage: pcmctl [--socket PATH] [--wait SECONDS] [--json] COMMAND\n"
		   "       pcmctl --version\n"
		   "  status                          pcmd's state, clients, flows, goodput\n"
		   "  flows                           every flow: cwnd, rate, RTT, in flight, "
		   "retransmits, policy\n"
		   "  policies [list]                 the policies pcmd can run\n"
		   "  policies load PATH.so           load a package built by pcmc\n"
		   "  policies unload NAME            unload it (refused while in use)\n"
		   "  policies set (--flow ID | --rule N) POLICY [--lb LB] [--mode MODE]\n"
		   "  stats [--prometheus [--per-flow]]   counters (text, --json, or Prometheus)\n"
		   "  top [--interval MS] [--iterations N]   a live view (q quits)\n"
		   "  log-level error|warn|info|debug pcmd's log level, until the next reload\n"
		   "--wait: retry while pcmd is not up yet, for at most SECONDS.\n"
		   "The socket is $PCMD_SOCKET or " PCMD_DEFAULT_SOCKET ". See pcmctl(1).\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"json", no_argument, NULL, 'j'},
	    {"prometheus", no_argument, NULL, 'p'},
	    {"wait", required_argument, NULL, 'w'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	struct ctl *c = calloc(1, sizeof(*c));
	bool prometheus = false, per_flow = false;
	const char *cmd;
	int o, rc;

	if (!c)
		return 1;
	c->sock = getenv("PCMD_SOCKET") ? getenv("PCMD_SOCKET") : PCMD_DEFAULT_SOCKET;
	/* Options before the command; the command parses its own. */
	while ((o = getopt_long(argc, argv, "+s:w:jh", opts, NULL)) != -1) {
		uint64_t ps;

		switch (o) {
		case 's':
			c->sock = optarg;
			break;
		case 'w':
			if (pcm_units_parse(PCM_UNIT_TIME, optarg, "s", &ps, NULL, 0) < 0 ||
			    ps > 3600 * PCM_UNITS_PS_PER_S)
				return die(c, -EINVAL,
					   "--wait %s: seconds, from 0 to 3600 (or with a unit: "
					   "500ms, 2s; pcm-units(7))",
					   optarg);
			c->wait_s = (double)ps / (double)PCM_UNITS_PS_PER_S;
			break;
		case 'j':
			c->json = true;
			break;
		case 'p':
			prometheus = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("pcmctl %s (pcmd control protocol %d)\n", PCM_VERSION,
			       PCMD_PROTO_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind];
	argc -= optind;
	argv += optind;
	/* --json and --prometheus may also follow the command. */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			c->json = true;
		else if (strcmp(argv[i], "--prometheus") == 0)
			prometheus = true;
		else if (strcmp(argv[i], "--per-flow") == 0 && strcmp(cmd, "stats") == 0)
			per_flow = true;
		else
			continue;
		memmove(&argv[i], &argv[i + 1], (size_t)(argc - i - 1) * sizeof(*argv));
		argc--;
		i--;
	}
	if (strcmp(cmd, "status") && strcmp(cmd, "flows") && strcmp(cmd, "policies") &&
	    strcmp(cmd, "stats") && strcmp(cmd, "top") && strcmp(cmd, "log-level")) {
		usage(stderr);
		return 2;
	}
	if (open_ctl(c))
		return 1;
	if (strcmp(cmd, "status") == 0)
		rc = cmd_status(c);
	else if (strcmp(cmd, "flows") == 0)
		rc = cmd_flows(c);
	else if (strcmp(cmd, "policies") == 0)
		rc = cmd_policies(c, argc - 1, argv + 1);
	else if (strcmp(cmd, "stats") == 0)
		rc = cmd_stats(c, prometheus, per_flow);
	else if (strcmp(cmd, "log-level") == 0)
		rc = cmd_log_level(c, argc, argv);
	else
		rc = cmd_top(c, argc, argv);
	close(c->fd);
	free(c);
	return rc;
}
