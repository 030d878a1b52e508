// SPDX-License-Identifier: MIT
/*
 * pcmfi_prov.c - the entry point libfabric calls when it loads
 * libpcm-fi.so (from FI_PROVIDER_PATH or its provider directory): read the
 * settings and hand over the provider, whose getinfo and fabric calls are
 * filled in here.
 */
#include "pcmfi.h"

static void pcmfi_cleanup(void)
{
}

/**
 * fi_prov_ini() - libfabric's external provider entry point (fi_provider(7)).
 *
 * Return: the pcm provider.
 */
FI_EXT_INI
{
	pcmfi_config_read();
	pcmfi_prov.getinfo = pcmfi_getinfo;
	pcmfi_prov.fabric = pcmfi_fabric_open;
	pcmfi_prov.cleanup = pcmfi_cleanup;
	return &pcmfi_prov;
}
