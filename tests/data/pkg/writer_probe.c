// SPDX-License-Identifier: MIT
/*
 * Test handler. COMMAND (LAST of ECN) says what to do with the signals:
 *   1: consume one backlog packet (update_signal -1) per call
 *   2: re-arm KEEP (PCM_SIG_REARM)
 *   3: overwrite CONSUMED with 42
 *   4: return PCM_ERROR
 *   5: as 1, and re-arm TIMER (PCM_SIG_REARM: its DELTA period restarts now)
 */
#include "writer_probe.h"
#include "pcmh.h"

int algorithm_main()
{
	pcm_uint cmd = get_signal(COMMAND);

	set_var_uint(CALLS, get_var_uint(CALLS) + 1);
	set_var_uint(SEEN_KEEP, get_signal(KEEP));
	set_var_uint(SEEN_CONSUMED, get_signal(CONSUMED));
	set_var_uint(SEEN_TIMER, get_signal(TIMER));
	if (get_signal_trigger_mask() & TIMER)
		set_var_uint(TIMER_FIRES, get_var_uint(TIMER_FIRES) + 1);
	if ((cmd == 1 || cmd == 5) && get_signal(BACKLOG) > 0) {
		update_signal(BACKLOG, -1);
		set_control(EV_OUT, get_control(EV_OUT) + 1);
	}
	if (cmd == 2)
		set_signal(KEEP, PCM_SIG_REARM);
	if (cmd == 3)
		set_signal(CONSUMED, 42);
	if (cmd == 5)
		set_signal(TIMER, PCM_SIG_REARM);
	return cmd == 4 ? PCM_ERROR : PCM_SUCCESS;
}
