// SPDX-License-Identifier: MIT
/*
 * test_pcmd_shutdown_status.c - the error a shutdown gives a descriptor, the
 * same whichever datapath runs it (pcmd(8), SIGTERM): while pcmd drains, a new
 * send is refused with -ESHUTDOWN (a receive still goes on, so posted sends
 * can finish); once it aborts, whatever is left completes with -ECONNABORTED,
 * be it in the data plane (the integration tests' SIGTERM cases) or still on
 * the client's ring when the abort came (here: the phase is set in process,
 * and the descriptor taken after it; on the engine threads of verbs such
 * descriptors used to complete with -ESHUTDOWN).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "inproc.h"
#include "phase.h"

static const char yaml[] = "log_level: error\n"
			   "socket: {path: \"/tmp/pcmd-shutdown-unused.sock\", group: \"\"}\n";

/* Post one descriptor (on a conn id that names nothing) and take its completion. */
static int32_t status_of(struct inproc *ip, struct inproc_client *cl, uint8_t op, uint64_t cookie)
{
	struct pcmd_sqe s = {.op = op, .conn_id = 12345, .len = 16, .cookie = cookie};
	struct pcmd_cqe e = {0};
	int taken = 0;

	assert_int_equal(inproc_post(cl, &s), 0);
	for (int i = 0; i < 100 && !taken; i++) {
		inproc_pump(ip, 1);
		taken = inproc_take(cl, &e);
	}
	assert_true(taken);
	assert_int_equal(e.cookie, cookie);
	return e.status;
}

static void test_draining_refuses_new_sends_and_aborting_cuts_everything_off(void **state)
{
	struct inproc ip;
	struct inproc_client cl;

	(void)state;
	assert_int_equal(inproc_create(&ip, yaml), 0);
	assert_int_equal(inproc_client_open(&ip, &cl, PCMD_ROLE_APP, 1 << 16, 0, 0), 0);
	/* Running: the conn id is checked (and names nothing). */
	assert_int_equal(status_of(&ip, &cl, PCMD_OP_RECV, 1), -EBADF);
	atomic_store(&ip.d->phase, PCMD_PHASE_DRAINING);
	assert_int_equal(status_of(&ip, &cl, PCMD_OP_SEND, 2), -ESHUTDOWN);
	assert_int_equal(status_of(&ip, &cl, PCMD_OP_RECV, 3), -EBADF);
	atomic_store(&ip.d->phase, PCMD_PHASE_ABORTING);
	assert_int_equal(status_of(&ip, &cl, PCMD_OP_RECV, 4), -ECONNABORTED);
	assert_int_equal(status_of(&ip, &cl, PCMD_OP_SEND, 5), -ECONNABORTED);
	atomic_store(&ip.d->phase, PCMD_PHASE_RUNNING);
	inproc_client_kill(&ip, &cl);
	inproc_destroy(&ip);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_draining_refuses_new_sends_and_aborting_cuts_everything_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
