// SPDX-License-Identifier: MIT
/*
 * test_pcmd_config.c - pcmd's config: defaults, every key, file:line:col:key
 * errors, command-line overrides through the same key table, sizes, id
 * names, cross-key checks, datapath auto-detection, per-destination rule
 * matching (exact, prefix, IPv4 and IPv6 networks), each user's limits and
 * the shared_names rules. Also checks that the example in systemd/pcmd.yaml
 * loads.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"

static struct pcmd_config cfg;
static char err[PCMD_CFG_ERR_MAX];

static int load(const char *yaml)
{
	return pcmd_config_load_buffer("t.yaml", yaml, strlen(yaml), NULL, &cfg, err, sizeof(err));
}

static void expect_error(const char *yaml, const char *want)
{
	if (load(yaml) == 0)
		fail_msg("accepted: %s", yaml);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
}

static void test_defaults_are_valid_and_documented_values(void **state)
{
	assert_int_equal(pcmd_config_load_buffer(NULL, NULL, 0, NULL, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.socket.path, "/run/pcmd/pcmd.sock");
	assert_string_equal(cfg.socket.group, "pcm");
	assert_int_equal(cfg.socket.mode, 0660);
	assert_int_equal(cfg.datapath.kind, PCMD_DATAPATH_AUTO);
	assert_string_equal(cfg.policies.default_policy, "swift");
	assert_int_equal(cfg.limits.flows_per_client, 1024);
	assert_int_equal(cfg.limits.memory_per_client_bytes, 256ull << 20);
	assert_int_equal(cfg.shutdown.mode, PCMD_SHUTDOWN_DRAIN);
	assert_int_equal(cfg.socket.n_admin_uids, 1);
	assert_int_equal(cfg.socket.admin_uids[0], 0);
	/* one key of each kind the key table's def column is read as */
	assert_int_equal(cfg.log_level, PCMD_LOG_INFO);
	assert_int_equal(cfg.limits.memory_total_bytes, 4ull << 30);
	assert_int_equal(cfg.engines.numa_node, -1);
	assert_int_equal(cfg.datapath.softnic_link_gbps, 100);
	assert_int_equal(cfg.engines.spin_ns, 20000);
	assert_int_equal(cfg.policies.mode, PCMD_SHELL_SYNC);
	assert_int_equal(cfg.limits.sq_entries, 4096);
	assert_int_equal(cfg.datapath.resolved, PCMD_DATAPATH_SOFTNIC);
	assert_int_equal(pcmd_config_defaults(&cfg, err, sizeof(err)), 0);
}

/* A device entry's port and gid_index, and a rule's mode, when the file leaves them out. */
static void test_list_entries_take_their_rows_defaults(void **state)
{
	assert_int_equal(load("datapath:\n"
			      "  verbs:\n"
			      "    devices:\n"
			      "      - name: rxe0\n"
			      "policies:\n"
			      "  mode: async_locked\n"
			      "  rules:\n"
			      "    - peer: 10.0.0.1\n"),
			 0);
	assert_int_equal(cfg.datapath.devices[0].port, 1);
	assert_int_equal(cfg.datapath.devices[0].gid_index, -1);
	assert_int_equal(cfg.policies.rules[0].mode, PCMD_SHELL_ASYNC_LOCKED);
	assert_int_equal(cfg.policies.rules[0].skew_bound, 4);
}

static void test_every_section_parses(void **state)
{
	static const char yaml[] =
	    "log_level: debug\n"
	    "socket:\n"
	    "  path: /tmp/x.sock\n"
	    "  group: \"\"\n"
	    "  mode: \"0600\"\n"
	    "  allow_uids: [0, root, 1000]\n"
	    "  allow_gids: [root]\n"
	    "  admin_uids: []\n"
	    "  admin_gids: [0]\n"
	    "datapath:\n"
	    "  kind: verbs\n"
	    "  chunk_bytes: 16384\n"
	    "  paths: 8\n"
	    "  verbs:\n"
	    "    devices:\n"
	    "      - {name: mlx5_0, port: 2, gid_index: 3}\n"
	    "      - name: rxe0\n"
	    "  softnic: {topology: /etc/pcm/fabric.yaml, hosts: 64, link_gbps: 400, seed: 9,\n"
	    "            dup_ppm: 100, delay_ppm: 200, delay_us: 30}\n"
	    "engines: {count: 2, numa_node: 1, cpus: [2, 3]}\n"
	    "workers: {count: 1, numa_node: -1, cpus: [4]}\n"
	    "policies:\n"
	    "  default: cubic\n"
	    "  default_lb: reps\n"
	    "  mode: async_relaxed\n"
	    "  skew_bound: 8\n"
	    "  load: [/usr/lib/pcm/a.so, /usr/lib/pcm/b.so]\n"
	    "  rules:\n"
	    "    - {peer: \"10.0.0.0/8\", policy: dctcp, lb: none, mode: async_bounded, "
	    "skew_bound: 2, no_progress_ms: 2.5s}\n"
	    "    - {peer: \"rack*\"}\n"
	    "limits:\n"
	    "  max_clients: 10\n"
	    "  flows_per_client: 20\n"
	    "  memory_per_client_bytes: 64MiB\n"
	    "  memory_total_bytes: 1GiB\n"
	    "  outstanding_per_client: 100\n"
	    "  sq_entries: 64\n"
	    "  cq_entries: 128\n"
	    "  max_message_bytes: 16MiB\n"
	    "  listeners_per_client: 4\n"
	    "  backlog: 8\n"
	    "output: {stats_path: /tmp/s, stats_interval_ms: 500, records_path: /tmp/r, "
	    "status_interval_ms: 250}\n"
	    "shutdown: {mode: abort, drain_timeout_ms: 0}\n";

	assert_int_equal(load(yaml), 0);
	assert_int_equal(cfg.log_level, PCMD_LOG_DEBUG);
	assert_int_equal(cfg.socket.mode, 0600);
	assert_int_equal(cfg.socket.n_allow_uids, 3);
	assert_int_equal(cfg.socket.allow_uids[1], 0); /* "root" */
	assert_int_equal(cfg.socket.allow_uids[2], 1000);
	assert_int_equal(cfg.socket.n_admin_uids, 0);
	assert_int_equal(cfg.datapath.kind, PCMD_DATAPATH_VERBS);
	assert_int_equal(cfg.datapath.n_devices, 2);
	assert_string_equal(cfg.datapath.devices[0].name, "mlx5_0");
	assert_int_equal(cfg.datapath.devices[0].port, 2);
	assert_int_equal(cfg.datapath.devices[0].gid_index, 3);
	assert_int_equal(cfg.datapath.devices[1].port, 1);
	assert_int_equal(cfg.datapath.devices[1].gid_index, -1);
	assert_int_equal(cfg.datapath.softnic_hosts, 64);
	assert_int_equal(cfg.datapath.softnic_link_gbps, 400);
	assert_int_equal(cfg.datapath.softnic_seed, 9);
	assert_int_equal(cfg.datapath.softnic_dup_ppm, 100);
	assert_int_equal(cfg.datapath.softnic_delay_ppm, 200);
	assert_int_equal(cfg.datapath.softnic_delay_us, 30);
	assert_int_equal(cfg.engines.n_cpus, 2);
	assert_int_equal(cfg.engines.cpus[1], 3);
	assert_int_equal(cfg.workers.numa_node, -1);
	assert_int_equal(cfg.policies.n_load, 2);
	assert_int_equal(cfg.policies.n_rules, 2);
	assert_int_equal(cfg.policies.rules[0].mode, PCMD_SHELL_ASYNC_BOUNDED);
	assert_int_equal(cfg.policies.rules[0].skew_bound, 2);
	assert_string_equal(cfg.policies.rules[0].lb_policy, "none");
	assert_int_equal(cfg.policies.rules[0].no_progress_ms, 2500);
	assert_int_equal(cfg.policies.rules[1].no_progress_ms, 0); /* the engine's 5 s */
	/* A rule without a mode or bound takes the section's. */
	assert_int_equal(cfg.policies.rules[1].mode, PCMD_SHELL_ASYNC_RELAXED);
	assert_int_equal(cfg.policies.rules[1].skew_bound, 8);
	assert_int_equal(cfg.limits.memory_per_client_bytes, 64ull << 20);
	assert_int_equal(cfg.limits.memory_total_bytes, 1ull << 30);
	assert_int_equal(cfg.shutdown.mode, PCMD_SHUTDOWN_ABORT);
}

static void test_errors_name_file_line_column_and_key(void **state)
{
	expect_error("limits:\n  flows_per_client: 0\n",
		     "t.yaml:2:21: limits.flows_per_client: 0 is outside 1..65535");
	expect_error("socket:\n  pth: /x\n",
		     "t.yaml:2:3: socket.pth: unknown key (valid here: path, group, mode");
	expect_error("nope: 1\n", "t.yaml:1:1: nope: unknown key (valid here: log_level, socket");
	expect_error("log_level: loud\n",
		     "t.yaml:1:12: log_level: 'loud' is not one of: error, warn, info, debug");
	expect_error("limits: {memory_per_client_bytes: 12XB}\n",
		     "limits.memory_per_client_bytes: '12XB' is not a size");
	expect_error("socket: {mode: 0999}\n", "socket.mode: '0999' is not an octal file mode");
	expect_error("socket: {allow_uids: [no_such_user_xyz]}\n",
		     "socket.allow_uids: no user named 'no_such_user_xyz' on this system");
	expect_error("socket: {allow_gids: [no_such_group_xyz]}\n",
		     "no group named 'no_such_group_xyz'");
	expect_error("engines: {count: -1}\n", "engines.count: '-1' is not a non-negative integer");
	expect_error("engines: {numa_node: x}\n", "engines.numa_node: 'x' is not an integer");
	expect_error("engines: {numa_node: \"- 1\"}\n", "engines.numa_node: '- 1' is not an integer");
	expect_error("engines: {numa_node: \" 1\"}\n", "engines.numa_node: ' 1' is not an integer");
	expect_error("engines: {numa_node: \"\\t1\"}\n", "engines.numa_node: '\t1' is not an integer");
	expect_error("engines: {numa_node: \"+-1\"}\n", "engines.numa_node: '+-1' is not an integer");
	expect_error("engines: {numa_node: -2}\n", "engines.numa_node: -2 is outside -1..1023");
	expect_error("engines: {numa_node: -9223372036854775809}\n", "is not an integer");
	expect_error("engines: {count: \"\\t-1\"}\n", "is not a non-negative integer");
	expect_error("engines: {count: \"+2\"}\n", "engines.count: '+2' is not a non-negative integer");
	expect_error("policies: {rules: [{peer: \"10.1.2.3/16\"}]}\n",
		     "policies.rules[0].peer: '10.1.2.3/16' has host bits set beyond /16");
	expect_error("policies: {rules: [{peer: \"10.0.0.0/33\"}]}\n",
		     "'/33' is not a prefix length 0..32");
	expect_error("policies: {rules: [{peer: \"a*b*\"}]}\n", "'*' may only end a prefix");
	expect_error(
	    "policies:\n  rules:\n    - {peer: x, polcy: y}\n",
	    "t.yaml:3:17: policies.rules[0].polcy: unknown key (valid here: peer, policy, lb, "
	    "mode, skew_bound, no_progress_ms)");
	expect_error("policies: {rules: [{peer: x, no_progress_ms: 7200s}]}\n",
		     "policies.rules[0].no_progress_ms: 7200s is outside 1..3600000 ms");
	expect_error("policies: {rules: [{policy: x}]}\n", "policies.rules[0].peer");
	expect_error("policies: {rules: [x]}\n", "policies.rules[0]: each entry is a mapping");
	expect_error("limits: [1]\n", "t.yaml:1:9: limits: needs a mapping of keys");
	expect_error("socket: {allow_uids: 3}\n", "socket.allow_uids: needs a list");
	expect_error("log_level: [a]\n", "log_level: needs a plain value");
	expect_error("a: [\n", "t.yaml:2:1: not valid YAML");
	expect_error("log_level: info\nlog_level: debug\n", "t.yaml:2:1: log_level: given twice");
	expect_error("--- {}\n--- {}\n", "more than one YAML document");
	expect_error("[1, 2]\n", "the file must be a mapping of keys");
	expect_error("socket: {path: relative.sock}\n",
		     "t.yaml:1:16: socket.path: 'relative.sock' is not an absolute path");
}

static void test_cross_key_errors_point_at_the_key_that_was_set(void **state)
{
	expect_error("limits:\n  memory_per_client_bytes: 64MiB\n",
		     "t.yaml:2:28: limits.memory_per_client_bytes: limits.max_message_bytes "
		     "(268435456) is above limits.memory_per_client_bytes");
	expect_error("limits:\n  sq_entries: 100\n",
		     "t.yaml:2:15: limits.sq_entries: 100 is not a power of two");
	expect_error("limits: {sq_entries: 256, cq_entries: 128}\n",
		     "limits.cq_entries (128) is below limits.sq_entries (256)");
	expect_error(
	    "engines:\n  count: 2\n  cpus: [1]\n",
	    "t.yaml:2:10: engines.count: 1 CPUs listed in engines.cpus for engines.count = 2");
	expect_error("workers:\n  cpus: [1, 2]\n",
		     "workers.count: 2 CPUs listed in workers.cpus for workers.count = 1 "
		     "(list one per worker, or none)");
	expect_error(
	    "datapath:\n  kind: softnic\n  verbs: {devices: [{name: x}]}\n",
	    "t.yaml:2:9: datapath.kind: softnic, but datapath.verbs.devices lists devices");
	expect_error(
	    "datapath:\n  softnic: {delay_ppm: 5}\n",
	    "t.yaml:2:24: datapath.softnic.delay_ppm: 5, but datapath.softnic.delay_us is 0");
	expect_error("datapath:\n  softnic:\n    dup_ppm: 1000001\n",
		     "t.yaml:3:14: datapath.softnic.dup_ppm: 1000001 is outside 0..1000000");
	expect_error(
	    "limits: {memory_total_bytes: 1MiB}\n",
	    "limits.memory_per_client_bytes (268435456) is above limits.memory_total_bytes");
}

static void test_overrides_use_the_same_keys_and_say_command_line(void **state)
{
	struct pcmd_overrides ovr = {0};

	assert_int_equal(pcmd_overrides_add(&ovr, "socket.path=/tmp/o.sock"), 0);
	assert_int_equal(pcmd_overrides_add(&ovr, "log_level=warn"), 0);
	assert_int_equal(pcmd_overrides_add(&ovr, "socket.allow_uids=0,1,2"), 0);
	assert_int_equal(pcmd_overrides_add(&ovr, "limits.memory_per_client_bytes=1GiB"), 0);
	assert_int_equal(pcmd_overrides_add(&ovr, "limits.memory_total_bytes=2GiB"), 0);
	assert_int_equal(pcmd_config_load_buffer("t.yaml", "log_level: debug\n", 17, &ovr, &cfg,
						 err, sizeof(err)),
			 0);
	assert_string_equal(cfg.socket.path, "/tmp/o.sock");
	assert_int_equal(cfg.log_level, PCMD_LOG_WARN);
	assert_int_equal(cfg.socket.n_allow_uids, 3);
	assert_int_equal(cfg.limits.memory_per_client_bytes, 1ull << 30);

	memset(&ovr, 0, sizeof(ovr));
	assert_int_equal(pcmd_overrides_add(&ovr, "novalue"), -EINVAL);
	assert_int_equal(pcmd_overrides_add(&ovr, "limits.backlog=0"), 0);
	assert_int_equal(pcmd_config_load_buffer("t.yaml", NULL, 0, &ovr, &cfg, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "command line: --set limits.backlog: 0 is outside 1..4096");
	memset(&ovr, 0, sizeof(ovr));
	pcmd_overrides_add(&ovr, "limits=3");
	assert_int_equal(pcmd_config_load_buffer("t.yaml", NULL, 0, &ovr, &cfg, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "command line: --set limits: unknown key"));
	memset(&ovr, 0, sizeof(ovr));
	pcmd_overrides_add(&ovr, "limits.sq_entries=100");
	assert_int_equal(pcmd_config_load_buffer("t.yaml", NULL, 0, &ovr, &cfg, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "command line: limits.sq_entries: 100 is not a power of two");
}

/* Sizes are read as scenario files read them (pcm_units.h, tests/unit/test_units.c). */
static void test_sizes_take_unit_spellings_and_reject_overflow(void **state)
{
	assert_int_equal(load("limits: {memory_total_bytes: 8GiB, memory_per_client_bytes: 4096, "
			      "max_message_bytes: 4096}\n"),
			 0);
	assert_int_equal(cfg.limits.memory_total_bytes, 8ull << 30);
	assert_int_equal(cfg.limits.memory_per_client_bytes, 4096);
	assert_int_equal(load("limits: {memory_total_bytes: 1 GiB, memory_per_client_bytes: 64 MB, "
			      "max_message_bytes: 1.5MiB}\n"),
			 0);
	assert_int_equal(cfg.limits.memory_total_bytes, 1ull << 30);
	assert_int_equal(cfg.limits.memory_per_client_bytes, 64000000);
	assert_int_equal(cfg.limits.max_message_bytes, 3ull << 19);
	expect_error("limits: {memory_total_bytes: 99999999999TiB}\n", "does not fit in 64 bits");
	expect_error("limits: {memory_per_client_bytes: 100}\n",
		     "100 is outside 4096..70368744177664 bytes");
	expect_error("limits: {max_message_bytes: 0.5KiB0}\n",
		     "limits.max_message_bytes: '0.5KiB0' is not a size: unknown unit 'KiB0'");
	expect_error("limits: {max_message_bytes: 1.5}\n", "is not a whole number of bytes");
}

/* A key named for its unit (_ms, _us, _ns, _gbps) takes a bare number in it, or a unit. */
static void test_durations_and_rates_take_their_key_unit_or_another(void **state)
{
	assert_int_equal(load("output: {stats_interval_ms: 2s, status_interval_ms: 250}\n"
			      "shutdown: {drain_timeout_ms: 1.5 s}\n"
			      "engines: {spin_ns: 2us}\n"
			      "datapath: {softnic: {delay_us: 40, link_gbps: 25Gbps}}\n"),
			 0);
	assert_int_equal(cfg.output.stats_interval_ms, 2000);
	assert_int_equal(cfg.output.status_interval_ms, 250);
	assert_int_equal(cfg.shutdown.drain_timeout_ms, 1500);
	assert_int_equal(cfg.engines.spin_ns, 2000);
	assert_int_equal(cfg.datapath.softnic_delay_us, 40);
	assert_int_equal(cfg.datapath.softnic_link_gbps, 25);
	expect_error("output: {stats_interval_ms: 1500us}\n",
		     "output.stats_interval_ms: '1500us' is not a whole number of ms");
	expect_error("output: {stats_interval_ms: 5}\n",
		     "output.stats_interval_ms: 5 is outside 10..3600000 ms");
	expect_error("shutdown: {drain_timeout_ms: 5 parsecs}\n",
		     "shutdown.drain_timeout_ms: '5 parsecs' is not a duration: unknown unit");
	expect_error("datapath: {softnic: {link_gbps: 100Mbps}}\n",
		     "datapath.softnic.link_gbps: '100Mbps' is not a whole number of Gbps");
}

static void test_rules_match_exact_prefix_and_networks(void **state)
{
	static const char yaml[] = "policies:\n"
				   "  rules:\n"
				   "    - {peer: \"10.1.0.0/16\", policy: dctcp}\n"
				   "    - {peer: \"fd00::/8\", policy: cubic}\n"
				   "    - {peer: \"rack1-*\", policy: newreno}\n"
				   "    - {peer: \"exact-host\", policy: swift}\n"
				   "    - {peer: \"0.0.0.0/0\", policy: timely}\n";

	assert_int_equal(load(yaml), 0);
	assert_int_equal(pcmd_config_find_rule(&cfg, "10.1.200.3:4791"), 0);
	assert_int_equal(pcmd_config_find_rule(&cfg, "10.1.0.1"), 0);
	assert_int_equal(pcmd_config_find_rule(&cfg, "10.2.0.1:1"), 4); /* only the catch-all */
	assert_int_equal(pcmd_config_find_rule(&cfg, "[fd12::1]:4791"), 1);
	assert_int_equal(pcmd_config_find_rule(&cfg, "fd12::1"), 1);
	assert_int_equal(pcmd_config_find_rule(&cfg, "[fe80::1]:1"), -1); /* no v6 catch-all */
	assert_int_equal(pcmd_config_find_rule(&cfg, "rack1-host7"), 2);
	assert_int_equal(pcmd_config_find_rule(&cfg, "rack1-"), 2);
	assert_int_equal(pcmd_config_find_rule(&cfg, "rack2-host"), -1);
	assert_int_equal(pcmd_config_find_rule(&cfg, "exact-host"), 3);
	assert_int_equal(pcmd_config_find_rule(&cfg, "exact-hostX"), -1);
	assert_int_equal(pcmd_config_find_rule(&cfg, ""), -1);
}

static void test_auto_datapath_is_softnic_without_rdma_devices(void **state)
{
	char dir[] = "/tmp/pcmd-ib-XXXXXX", dev[64];

	assert_non_null(mkdtemp(dir));
	assert_int_equal(load("datapath: {kind: auto}\n"), 0);
	pcmd_config_resolve(&cfg, dir);
	assert_int_equal(cfg.datapath.resolved, PCMD_DATAPATH_SOFTNIC);
	snprintf(dev, sizeof(dev), "%s/mlx5_0", dir);
	assert_int_equal(mkdir(dev, 0755), 0);
	pcmd_config_resolve(&cfg, dir);
	assert_int_equal(cfg.datapath.resolved, PCMD_DATAPATH_VERBS);
	pcmd_config_resolve(&cfg, "/nonexistent/infiniband");
	assert_int_equal(cfg.datapath.resolved, PCMD_DATAPATH_SOFTNIC);
	assert_int_equal(load("datapath: {kind: softnic}\n"), 0);
	pcmd_config_resolve(&cfg, dir);
	assert_int_equal(cfg.datapath.resolved, PCMD_DATAPATH_SOFTNIC);
	/* null, named outright, stays null even with a device present */
	assert_int_equal(load("datapath: {kind: null}\n"), 0);
	pcmd_config_resolve(&cfg, dir);
	assert_int_equal(cfg.datapath.resolved, PCMD_DATAPATH_NULL);
	rmdir(dev);
	rmdir(dir);
}

static void test_user_limits_derive_from_the_totals_unless_given(void **state)
{
	assert_int_equal(load("limits: {max_clients: 40, memory_total_bytes: 8GiB}\n"), 0);
	assert_int_equal(cfg.limits.user.clients, 10);
	assert_int_equal(cfg.limits.user.regions, 10);
	assert_int_equal(cfg.limits.user.region_bytes, 2ull << 30);
	assert_int_equal(cfg.limits.user.flows, 4 * 1024);
	assert_int_equal(cfg.limits.user.listeners, 4 * 16);
	assert_int_equal(cfg.limits.user.hosts, 0); /* pcmd's: half the fabric's hosts */
	assert_int_equal(cfg.limits.admin_clients, 8);
	assert_int_equal(cfg.limits.hello_timeout_ms, 5000);
	assert_int_equal(load("limits: {max_clients: 2, hello_timeout_ms: 2s, admin_clients: 0,\n"
			      "         user: {clients: 2, hosts: 3, region_bytes: 1GiB}}\n"),
			 0);
	assert_int_equal(cfg.limits.user.clients, 2);
	assert_int_equal(cfg.limits.user.hosts, 3);
	assert_int_equal(cfg.limits.user.region_bytes, 1ull << 30);
	assert_int_equal(cfg.limits.hello_timeout_ms, 2000);
	assert_int_equal(cfg.limits.admin_clients, 0);
	expect_error("limits:\n  max_clients: 8\n  user: {clients: 9}\n",
		     "t.yaml:3:19: limits.user.clients: limits.user.clients (9) is above "
		     "limits.max_clients (8)");
	expect_error("limits: {user: {flows: 0}}\n", "limits.user.flows: 0 is outside");
	expect_error("limits: {hello_timeout_ms: 5us}\n", "limits.hello_timeout_ms");
}

/* @n entries of @entry under @key ("datapath:\n  verbs:\n    devices:", say), each "- ENTRY". */
static const char *list_of(const char *key, const char *entry, unsigned n)
{
	static char yaml[65536];
	size_t used = (size_t)snprintf(yaml, sizeof(yaml), "%s\n", key);

	for (unsigned i = 0; i < n && used < sizeof(yaml); i++)
		used += (size_t)snprintf(yaml + used, sizeof(yaml) - used, "  - %s\n", entry);
	assert_true(used < sizeof(yaml));
	return yaml;
}

static void test_lists_of_mappings_hold_their_limit_and_no_more(void **state)
{
	(void)state;
	assert_int_equal(load(list_of("policies:\n mode: async_relaxed\n rules:", "{peer: x}",
				      PCMD_CFG_MAX_RULES)),
			 0);
	assert_int_equal(cfg.policies.n_rules, PCMD_CFG_MAX_RULES);
	/* a rule without mode: takes the section's */
	assert_int_equal(cfg.policies.rules[PCMD_CFG_MAX_RULES - 1].mode, PCMD_SHELL_ASYNC_RELAXED);
	expect_error(list_of("policies:\n rules:", "{peer: x}", PCMD_CFG_MAX_RULES + 1),
		     "policies.rules[256]: more than 256 rules");
	assert_int_equal(load(list_of("datapath:\n verbs:\n  devices:", "{name: d}",
				      PCMD_CFG_MAX_DEVICES)),
			 0);
	assert_int_equal(cfg.datapath.n_devices, PCMD_CFG_MAX_DEVICES);
	assert_int_equal(cfg.datapath.devices[PCMD_CFG_MAX_DEVICES - 1].gid_index, -1);
	expect_error(list_of("datapath:\n verbs:\n  devices:", "{name: d}", PCMD_CFG_MAX_DEVICES + 1),
		     "datapath.verbs.devices[16]: more than 16 devices");
	expect_error(list_of("shared_names:", "{name: a, owner: 0, dial_uids: [1]}",
			     PCMD_CFG_MAX_NAME_RULES + 1),
		     "shared_names[64]: more than 64 rules");
}

static void test_shared_names_need_a_name_an_owner_and_dialers(void **state)
{
	assert_int_equal(
	    load("shared_names:\n"
		 "  - {name: \"storage-*\", owner: 0, dial_uids: [0, 12], dial_gids: [0]}\n"
		 "  - {name: db, owner: root, dial_gids: [root]}\n"),
	    0);
	assert_int_equal(cfg.n_shared_names, 2);
	assert_string_equal(cfg.shared_names[0].name, "storage-*");
	assert_int_equal(cfg.shared_names[0].n_dial_uids, 2);
	assert_int_equal(cfg.shared_names[0].dial_uids[1], 12);
	assert_int_equal(cfg.shared_names[1].owner, 0);
	assert_int_equal(cfg.shared_names[1].dial_gids[0], 0);
	expect_error("shared_names: [{name: \"a@b\", owner: 0, dial_uids: [1]}]\n",
		     "shared_names[0]: name 'a@b': a listening name (no '@')");
	expect_error("shared_names: [{name: \"a*b\", owner: 0, dial_uids: [1]}]\n",
		     "or a prefix ending in '*'");
	expect_error("shared_names: [{name: a, dial_uids: [1]}]\n",
		     "shared_names[0]: owner: the user whose listeners the rule opens is missing");
	expect_error("shared_names: [{name: a, owner: 0}]\n",
		     "lists neither dial_uids nor dial_gids: it lets nobody in");
	expect_error("shared_names: [{name: a, owner: no_such_user_xyz, dial_uids: [1]}]\n",
		     "shared_names[0].owner: no user named 'no_such_user_xyz'");
	expect_error("shared_names: [{name: a, owner: 0, dial_uids: [1], dial: 1}]\n",
		     "unknown key (valid here: name, owner, dial_uids, dial_gids)");
}

static void test_example_config_loads(void **state)
{
	assert_int_equal(
	    pcmd_config_load(PCM_SOURCE_ROOT "/systemd/pcmd.yaml", NULL, &cfg, err, sizeof(err)),
	    0);
	assert_int_equal(cfg.policies.n_rules, 2);
	assert_int_equal(pcmd_config_load("/nonexistent.yaml", NULL, &cfg, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent.yaml: cannot open"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_are_valid_and_documented_values),
	    cmocka_unit_test(test_list_entries_take_their_rows_defaults),
	    cmocka_unit_test(test_every_section_parses),
	    cmocka_unit_test(test_errors_name_file_line_column_and_key),
	    cmocka_unit_test(test_cross_key_errors_point_at_the_key_that_was_set),
	    cmocka_unit_test(test_overrides_use_the_same_keys_and_say_command_line),
	    cmocka_unit_test(test_sizes_take_unit_spellings_and_reject_overflow),
	    cmocka_unit_test(test_durations_and_rates_take_their_key_unit_or_another),
	    cmocka_unit_test(test_rules_match_exact_prefix_and_networks),
	    cmocka_unit_test(test_auto_datapath_is_softnic_without_rdma_devices),
	    cmocka_unit_test(test_user_limits_derive_from_the_totals_unless_given),
	    cmocka_unit_test(test_lists_of_mappings_hold_their_limit_and_no_more),
	    cmocka_unit_test(test_shared_names_need_a_name_an_owner_and_dialers),
	    cmocka_unit_test(test_example_config_loads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
