# SPDX-License-Identifier: Apache-2.0
import gzip, re, sys, collections
for path in sys.argv[1:]:
    pend = set(); c = collections.Counter(); in_guest = False; cur_exit = None; trans = 0
    for line in gzip.open(path, 'rt'):
        m = re.search(r' ([a-z_0-9]+): (.*)$', line)
        if not m: continue
        ev, a = m.groups()
        if ev == 'kvm_entry': in_guest = True
        elif ev == 'kvm_exit':
            in_guest = False; cur_exit = re.search(r'reason (\S+)', a).group(1)
        elif ev == 'kvm_msi_set_irq':
            v = int(re.search(r'vec (\d+)', a).group(1))
            c['msi'] += 1
            c['msi_while ' + ('guest' if in_guest else 'kvm:' + str(cur_exit))] += 1
            if pend - {236}: c['msi_with_other_pending'] += 1
            if v == 37 or v == 38 or v == 36: pass
        elif ev == 'kvm_apic_accept_irq':
            v = int(re.search(r'vec (\d+)', a).group(1)); pend.add(v)
        elif ev == 'kvm_inj_virq':
            v = int(re.search(r'IRQ 0x([0-9a-f]+)', a).group(1), 16)
            if 'reinjected' in a: continue
            pend.discard(v)
            if v != 236:
                c['inj'] += 1
                if pend - {236}: c['inj_with_other_vq_pending'] += 1
                c['inj_after ' + str(cur_exit)] += 1
        elif ev == 'kvm_apic' and 'APIC_EOI' in a: c['eoi_write'] += 1
        elif ev == 'kvm_pio' or (ev == 'kvm_mmio' and 'write' in a): c['kick'] += 1
    n = max(c['msi'] / 2, 1)
    print(path.split('/raw/')[-1], 'transactions in slice ~%d' % n)
    for k in sorted(c): print('  %-30s %6d  %.2f/trans' % (k, c[k], c[k] / n))
