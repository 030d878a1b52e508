// SPDX-License-Identifier: MIT
/*
 * pcmd_loopback.c - pcmd over the tests' loopback data plane: the daemon the
 * integration tests start (the same code as pcmd, only the data plane differs).
 */
#include "plane_loopback.h"
#include "pcmd.h"

int main(int argc, char **argv)
{
	return pcmd_main(argc, argv, &pcmd_plane_loopback);
}
