// SPDX-License-Identifier: MIT
/*
 * main.c - the pcmd binary: pcmd_main() over the data plane this build links.
 */
#include "pcmd.h"

int main(int argc, char **argv)
{
	return pcmd_main(argc, argv, &pcmd_dp_absent);
}
