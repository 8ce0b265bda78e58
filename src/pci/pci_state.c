// SPDX-License-Identifier: Apache-2.0
/* A PCI function's state in a snapshot (docs/SNAPSHOT.md): what the guest
 * wrote into its config space (command, BARs, capabilities it may write)
 * and its MSI-X table and PBA. Restore onto the function built afresh from
 * the same device list: the read-only bytes must agree, so a section that
 * belongs to another function (or a skiff that lays it out differently) is
 * refused before anything changes. */
#include <stdio.h>
#include <string.h>

#include "core/snap.h"
#include "pci/pci.h"
#include "pci/pci_msix.h"

struct pci_fn_state {
	uint8_t cfg[PCI_CFG_SIZE];
	uint32_t slot, has_msix;
	struct pci_msix_state msix;
};

int pci_device_save(struct pci_device *dev, struct snap_writer *w, uint32_t instance, char *err,
		    size_t errlen)
{
	struct pci_fn_state s;
	memset(&s, 0, sizeof(s));
	memcpy(s.cfg, dev->cfg, sizeof(s.cfg));
	s.slot = dev->slot;
	s.has_msix = dev->msix != NULL;
	if (dev->msix)
		pci_msix_state_save(dev, &s.msix);
	if (snap_put(w, SNAP_ID_PCI_FN, instance, &s, sizeof(s)) < 0) {
		snprintf(err, errlen, "%s: out of memory saving its PCI state", dev->name);
		return -1;
	}
	return 0;
}

static const char *pci_state_odd(const struct pci_device *dev, const struct pci_fn_state *s)
{
	static const struct pci_msix_state none;
	if (s->slot != dev->slot)
		return "it was in another PCI slot";
	if (s->has_msix != (dev->msix != NULL))
		return "its MSI-X capability differs";
	for (unsigned int i = 0; i < PCI_CFG_SIZE; i++)
		if ((s->cfg[i] ^ dev->cfg[i]) & ~dev->wmask[i])
			return "a read-only config byte differs";
	if (!dev->msix)
		return memcmp(&s->msix, &none, sizeof(none)) ? "MSI-X state without MSI-X" : NULL;
	return pci_msix_state_check(dev, &s->msix);
}

int pci_device_restore(struct pci_device *dev, const void *data, size_t len, char *err,
		       size_t errlen)
{
	struct pci_fn_state s;
	const char *why = len != sizeof(s) ? "its size is wrong" : NULL;
	if (!why) {
		memcpy(&s, data, sizeof(s));
		why = pci_state_odd(dev, &s);
	}
	if (why) {
		snprintf(err, errlen, "%s: saved PCI state refused: %s", dev->name, why);
		return -1;
	}
	/* As a config write of every byte would, without the hooks that
	 * would read a window into the device mid-restore. */
	for (unsigned int i = 0; i < PCI_CFG_SIZE; i++)
		dev->cfg[i] =
		    (uint8_t)((dev->cfg[i] & ~dev->wmask[i]) | (s.cfg[i] & dev->wmask[i]));
	pci_bars_update(dev);
	pci_intx_update(dev);
	if (dev->msix)
		pci_msix_state_apply(dev, &s.msix);
	return 0;
}
