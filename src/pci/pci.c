#include "pci/pci.h"

#include <stdlib.h>

struct pci_bus {
	struct vm *vm;
};

struct pci_bus *pci_bus_create(struct vm *vm)
{
	struct pci_bus *b = calloc(1, sizeof(*b));
	if (b)
		b->vm = vm;
	return b;
}

void pci_bus_destroy(struct pci_bus *bus)
{
	free(bus);
}
