// SPDX-License-Identifier: MIT
/*
 * main.c - the pcmd binary: pcmd_main() over the transport engine's data plane.
 */
#include "plane_engine.h"
#include "pcmd.h"

int main(int argc, char **argv)
{
	return pcmd_main(argc, argv, &pcmd_plane_engine);
}
