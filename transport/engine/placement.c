// SPDX-License-Identifier: MIT
/*
 * placement.c - engine threads and their memory on the NIC's NUMA node,
 * with libnuma.
 *
 * An engine thread runs on its configured CPU, or else anywhere on the
 * NIC's node, and prefers that node's memory: what it allocates itself
 * (the datapath instance, the core's pools, the rings: an engine opens
 * them on its own thread) lands there by first touch. Without NUMA support,
 * with a single node, or with a device that does not say its node, nothing
 * is changed: the engine runs where the scheduler puts it.
 */
#include <numa.h>
#include <pthread.h>
#include <sched.h>

#include "engine_int.h"

int xp_place_node(int dp_node)
{
	if (numa_available() < 0 || numa_max_node() < 1)
		return -1;
	if (dp_node < 0 || dp_node > numa_max_node())
		return -1;
	return dp_node;
}

void xp_place_thread(int node, int cpu)
{
	if (cpu >= 0 && cpu < CPU_SETSIZE) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	} else if (node >= 0) {
		(void)numa_run_on_node(node);
	}
	if (node >= 0)
		numa_set_preferred(node);
}
