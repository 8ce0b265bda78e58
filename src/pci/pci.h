/* PCI: a host bridge on bus 0 with type-1 configuration access through
 * ports 0xcf8/0xcfc. (Stub until the PCI work lands.) */
#ifndef SKIFF_PCI_H
#define SKIFF_PCI_H

struct vm;
struct pci_bus;

/* Creates bus 0 and registers the configuration ports; NULL on failure. */
struct pci_bus *pci_bus_create(struct vm *vm);
void pci_bus_destroy(struct pci_bus *bus);

#endif
