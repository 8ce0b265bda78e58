#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the hand-made seed inputs of tests/fuzz/corpus/ (well-formed
requests a fuzzer takes long to find on its own). The encoding follows
fuzz_common.c (fzq_driver_op / fzq_chain) and each target's op switch.
Run from the repository root: tests/fuzz/seeds/make-seeds.py"""
import os
import struct

def u16(v): return struct.pack('<H', v)
def u32(v): return struct.pack('<I', v)

def seg(flags, off, length=None, fill=b''):
    """One fzq_chain segment: flags bit0 writable, bit1 u32 length, bit7 fill."""
    out = bytes([flags]) + u16(off)
    if flags & 2:
        out += u32(length)
    else:
        out += bytes([length - 1])
    if flags & 0x80:
        out += fill[:64].ljust(min(length, 64), b'\0')
    return out

def chain(segs, start, indirect=False):
    hdr = (len(segs) - 1) | (8 if indirect else 0)
    return bytes([0x03, hdr, start]) + b''.join(segs)

def write(target, name, data):
    d = os.path.join('tests/fuzz/corpus', target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)

# ---- virtio_blk: features (0 = all), queue size 128, DRIVER_OK, requests,
# kicks; the last byte even: the read-write disk
def blk_req(rtype, sector, data_segs, start, indirect=False):
    hdr = seg(0x80, 0x000, 16, u32(rtype) + u32(0) + struct.pack('<Q', sector))
    status = seg(0x01, 0x7ff0, 1)
    return bytes([0x05]) + chain([hdr] + data_segs + [status], start, indirect) + b'\x01'

blk_pre = bytes([0x00, 0x00, 0x07, 0x00])
rd = seg(0x03, 0x1000, 1024)
wr = seg(0x82, 0x2000, 512, b'skiff' * 20)
dwz = seg(0x80, 0x3000, 16, struct.pack('<QII', 8, 8, 0))
wz_unmap = seg(0x80, 0x3000, 32, struct.pack('<QII', 0, 4, 1) + struct.pack('<QII', 64, 2, 0))
write('virtio_blk', 'in-out', blk_pre + blk_req(1, 2, [wr], 0) + blk_req(0, 2, [rd], 4) + b'\0')
write('virtio_blk', 'flush-getid', blk_pre + blk_req(4, 0, [], 0) +
      blk_req(8, 0, [seg(0x01, 0x1000, 20)], 3) + b'\0')
write('virtio_blk', 'discard-wz', blk_pre + blk_req(11, 0, [dwz], 0) +
      blk_req(13, 0, [wz_unmap], 3) + b'\0')
write('virtio_blk', 'indirect-reset', blk_pre + blk_req(1, 0, [wr, wr], 0, True) +
      b'\x03' + b'\x00' + blk_req(0, 0, [rd], 0) + b'\0')
write('virtio_blk', 'read-only-out', blk_pre + blk_req(1, 0, [wr], 0) + b'\x01')

# ---- virtio_net: features (u64 mask, 0 = all), queue sizes 256/256 and
# the control queue 1, DRIVER_OK (op 0x00); ops are op % 12, a driver op
# (10 or 11) on queue (op >> 6) % 3: TX chains (0x46: queue 1) + kick
# (0x49: notify queue 1), RX buffers (0x0a: queue 0) + a frame from the
# host (0x02) + RX run (0x03)
net_pre = bytes([0x00]) + bytes(8) + bytes([0x08, 0x08, 0x00]) + b'\x00'
txhdr = bytes([1, 1]) + u16(54) + u16(1448) + u16(34) + u16(16) + u16(0)
tx = bytes([0x46]) + chain([seg(0x80, 0x0000, 12, txhdr), seg(0x82, 0x1000, 1500)], 0) + b'\x49'
rxbuf = lambda start, off: bytes([0x0a]) + chain([seg(0x03, off, 1526)], start)
frame = bytes([0x02, 0x01]) + u16(3000) + bytes(12) + b'frame-tail'.ljust(64, b'.')
write('virtio_net', 'tx-gso', net_pre + tx + b'\x06')
write('virtio_net', 'rx-merge', net_pre + rxbuf(0, 0x0000) + rxbuf(1, 0x1000) +
      rxbuf(2, 0x2000) + frame + b'\x03')
write('virtio_net', 'tx-full', net_pre + b'\x8a' + tx + tx + b'\x04' + b'\x07' + tx)
# Three queues (rx 16, tx 16, control 1), DRIVER_OK (0x00), ten RX chains
# of 1526 bytes (0x0a: driver op on queue 0), frames of 3000, 4000, 2000
# and 1000 bytes, the tap readable (0x03). MRG_RXBUF: two buffers (the rest
# gathered), three (one popped ahead, the rest gathered), two (the second
# popped ahead and filled in part, a third given back), one (the one popped
# ahead given back).
net3_pre = bytes([0x00]) + bytes(8) + bytes([0x04, 0x04, 0x00, 0x00])
rxbuf3 = lambda i: bytes([0x0a]) + chain([seg(0x03, 0x4000 + 0x600 * i, 1526)], i)
nframe = lambda n: bytes([0x02, 0x01]) + u16(n) + bytes(12) + b'frame-tail'.ljust(64, b'.')
write('virtio_net', 'rx-mrg-multi', net3_pre + b''.join(rxbuf3(i) for i in range(10)) +
      nframe(3000) + nframe(4000) + nframe(2000) + nframe(1000) + b'\x03')

# ---- virtq: size 256 (last byte 8), standard layout + features
# (INDIRECT|EVENT_IDX), chains, pops, pushes, reset
vq_pre = bytes([0x00, 0x02, 0x03])
c = bytes([0x0e]) + chain([seg(0x00, 0, 64), seg(0x01, 0x100, 64)], 0)
ci = bytes([0x0e]) + chain([seg(0x00, 0, 64), seg(0x01, 0x100, 64), seg(0x01, 0x200, 8)], 5, True)
write('virtq', 'pop-push', vq_pre + c + ci + b'\x05\x05\x08\x01\x00\x00\x00\x00' +
      b'\x08\x41' + bytes(8) + b'\x0a\x0c' + b'\x08')
write('virtq', 'notify', vq_pre + c + b'\x0b\x00\x05\x0b\x01\x0b\x03\x01\x0b\x03\x00' + b'\x08')

# ---- e1000: byte 0 = no mutation records, then the setup byte (bits 0-1:
# coalesce off/on/all, 2: decoding off, 3: other vCPUs, 4: a page-sized
# coalesced ring), then ops (op % 16, fuzz_e1000.c's switch)
E1K = {'CTRL': 0x0, 'EECD': 0x10, 'EERD': 0x14, 'MDIC': 0x20, 'ICR': 0xc0, 'ITR': 0xc4,
       'RDBAL': 0x2800, 'RDLEN': 0x2808, 'RDTR': 0x2820, 'RADV': 0x282c, 'TDBAL': 0x3800,
       'TDLEN': 0x3808, 'TIDV': 0x3820, 'TADV': 0x382c}
def e_wr(reg, v):  # a 4-byte register write
    return bytes([0x80, 0x02]) + u32(E1K[reg]) + struct.pack('<Q', v)
def e_rd(reg):
    return bytes([0x00, 0x02]) + u32(E1K[reg]) + bytes(8)
def e_low(gpa):  # pick_gpa: an address in low RAM (rings from 0, buffers from 0x8000)
    return bytes([0x00]) + u16(gpa)
def e_ring(op, ndesc_sel, base, ctl_extra=None):  # op 3 TX, 4 RX: 8 << ndesc_sel descriptors
    s = ndesc_sel << 1 | (0x40 if ctl_extra is not None else 0)
    return bytes([op, s]) + e_low(base) + (u32(ctl_extra) if ctl_extra is not None else b'')
def e_txd(kind, k, buf, length, cmd, tail3, ctx8=b''):  # kind 0 legacy, 1 context, 2 data
    return bytes([0x05, kind | 0x08 | k << 4]) + e_low(buf) + u32(length) + bytes([cmd]) + ctx8 + tail3
def e_tdt(k):  # TDT moves k descriptors on
    return bytes([0x06, k - 1])
def e_pkt(pos, v6=False):  # TCP/IP headers at buffer 0x8000 + pos
    return bytes([0x07, 1 if v6 else 0]) + u16(pos) + b'\0'
def e_rxd(n, bufs, give=True):  # n RX descriptors from RDT on (and RDT moves)
    return bytes([0x08, (n - 1) | (8 if give else 0)]) + b''.join(e_low(b) for b in bufs)
def e_frame(length, to_us=True):  # a frame of `length` bytes from the host
    sel = 0x08 if to_us else 0x00
    if 14 <= length < 14 + 256:
        return bytes([0x09, sel, length - 14])
    return bytes([0x09, sel | 1]) + u16(length)
E_RX, E_RX_SCHED, E_DRAIN, E_FILL, E_FLUSH, E_RESET = b'\x0a', b'\x8a', b'\x0b', b'\x8b', b'\x8f', b'\x8e' + bytes(4)
def e_time(units):  # advance the clock by units * 1.024 us, fire the timers
    return b'\x8c' + u16(units)
def e_eeprom_read(word):  # the driver's microwire read through EECD
    REQ, CS, SK, DI = 0x40, 0x02, 0x01, 0x04
    out, e = e_wr('EECD', REQ), REQ | CS
    out += e_wr('EECD', e)
    for i in range(8, -1, -1):
        e = (e & ~DI) | (DI if (0x6 << 6 | word) >> i & 1 else 0)
        out += e_wr('EECD', e) + e_wr('EECD', e | SK) + e_wr('EECD', e)
    for i in range(16):
        out += e_wr('EECD', e | SK) + e_rd('EECD') + e_wr('EECD', e)
    return out + e_wr('EECD', REQ) + e_wr('EECD', 0)

EOP, RS, TSE, IDE = 0x01, 0x08, 0x04, 0x80
tso_ctx = bytes([14, 24, 33, 0, 34, 50, 0, 0])
write('e1000', 'tx-legacy', bytes([0, 0x01]) + e_ring(3, 1, 0x0000) + e_pkt(0) +
      e_txd(0, 0, 0x8000, 60, EOP | RS, bytes(3)) + e_tdt(1) + E_DRAIN)
write('e1000', 'tx-tso-all', bytes([0, 0x12]) + e_ring(3, 1, 0x0000) + e_pkt(0) +
      e_txd(1, 0, 0, 3054, 0x07, bytes([54]) + u16(1448), tso_ctx) +
      e_txd(2, 1, 0x8000, 3054, EOP | RS | TSE, bytes([3, 0, 0])) + e_tdt(2) + E_FLUSH + E_DRAIN)
write('e1000', 'tx-csum-v6-full', bytes([0, 0x00]) + e_ring(3, 1, 0x0000) + e_pkt(0x100, True) +
      e_txd(1, 0, 0, 0, 0x01, bytes([0]) + u16(0), bytes([14, 0, 0, 0, 54, 70, 0, 0])) +
      e_txd(2, 1, 0x8100, 200, EOP | RS | IDE, bytes([2, 0, 0])) + e_wr('TIDV', 8) +
      e_wr('TADV', 20) + e_tdt(2) + E_FILL + e_txd(0, 0, 0x8100, 100, EOP | RS, bytes(3)) +
      e_tdt(1) + e_time(10) + E_DRAIN + e_time(30))
write('e1000', 'rx-batched-rdt', bytes([0, 0x11]) + e_ring(4, 1, 0x0400) +
      e_rxd(8, [0x8000 + 0x800 * i for i in range(8)]) + e_frame(100) +
      e_frame(50, False) + E_RX + e_rd('ICR') + e_time(5))
write('e1000', 'rx-delay-itr-reset', bytes([0, 0x00]) + e_wr('RDTR', 10) + e_wr('RADV', 25) +
      e_wr('ITR', 200) + e_ring(4, 0, 0x0000) + e_rxd(4, [0x8000, 0x9000, 0xa000, 0xb000]) +
      e_frame(60) + E_RX + e_frame(60) + E_RX + e_time(12) + e_rd('ICR') + e_frame(60) +
      E_RX + e_time(40) + E_RESET + e_ring(4, 0, 0x0200) + e_rxd(3, [0x8000, 0x9000, 0xa000]) +
      e_frame(1400) + e_frame(200) + E_RX_SCHED + E_RX + e_time(100))
write('e1000', 'bar-move-multi', bytes([0, 0x19]) + e_wr('RDBAL', 0x400) + e_wr('TDBAL', 0) +
      b'\x4e' + u16(0x7001) + e_wr('RDLEN', 128) + b'\x0e' + u16(0) + e_wr('TDLEN', 128) +
      b'\x0e' + u16(6) + E_FLUSH)
v6_ctx = bytes([14, 0, 0, 0, 54, 70, 0, 0])
v6_tso = e_txd(2, 0, 0x8000, 5074, EOP | RS | TSE, bytes([2, 0, 0]))
write('e1000', 'tx-tso-v6-refused', bytes([0, 0x01]) + e_ring(3, 1, 0x0000) + e_pkt(0, True) +
      e_txd(1, 0, 0, 5000, 0x05, bytes([74]) + u16(1000), v6_ctx) + e_tdt(1) + v6_tso +
      e_tdt(1) + E_DRAIN + b'\x4b' + u16(0) + v6_tso + e_tdt(1) + E_DRAIN)
write('e1000', 'eeprom-phy', bytes([0, 0x01]) + e_eeprom_read(0x3f) + e_wr('EERD', 0x0101) +
      e_rd('EERD') + e_wr('MDIC', 0x08220000) + e_wr('MDIC', 0x24208000) + e_rd('ICR'))

# ---- virtio_rng: no mutations, features (0 = all), queue size 256,
# DRIVER_OK; ops are op % 8 (fuzz_virtio_rng.c): 0x05 a driver op (0x03: a
# chain), 0x01 a kick, after which each host-source call takes a byte (% 4:
# 0 EINTR, 1 EAGAIN, 2 short, 3 full). The last byte odd: the rate-limited
# device.
rng_pre = bytes([0x00, 0x00, 0x08, 0x00])
def rng_req(segs, start, indirect=False):
    return bytes([0x05]) + chain(segs, start, indirect)
rng_w = seg(0x01, 0x1000, 64)
write('virtio_rng', 'fill', rng_pre + rng_req([rng_w], 0) + b'\x01\x03' + b'\0')
write('virtio_rng', 'readable', rng_pre + rng_req([seg(0x00, 0x1000, 16), rng_w], 0) +
      b'\x01' + rng_req([rng_w], 2) + b'\x01\x03' + b'\0')
write('virtio_rng', 'huge-split', rng_pre + rng_req([seg(0x03, 0x1000, 0x100000)], 0) +
      rng_req([seg(0x01, 0x2000, 200), seg(0x01, 0x3000, 1)], 1, True) +
      b'\x01\x03\x03' + b'\0')
write('virtio_rng', 'eintr-short-eagain', rng_pre + rng_req([seg(0x03, 0x1000, 300)], 0) +
      b'\x01\x00\x06\x03' + rng_req([rng_w], 1) + b'\x01\x01' + b'\0')
write('virtio_rng', 'limited', rng_pre + b''.join(rng_req([rng_w], i) for i in range(8)) +
      b'\x01' + b'\x03' * 8 + b'\x03\x00' + rng_req([rng_w], 0) + b'\x01\x03' + b'\x01')

# ---- virtio_balloon: no mutations, features (two masks, 0 = all), queue
# sizes 256 x 4, DRIVER_OK; ops are op % 10 (fuzz_virtio_balloon.c) on
# queue (op >> 4) % 4: 8 a driver op (0x08 inflate, 0x1c deflate, 0x26
# stats, 0x3a reporting; 0x03: a chain), 1 a kick (0x01, 0x15, 0x29,
# 0x33), 6 the stats timer, 7 an update (a byte: odd amount=, even stats=;
# a u16), 3 a reset.
bal_pre = bytes([0x00, 0x00, 0x00, 0x08, 0x08, 0x08, 0x08, 0x00])
def pfns(*p): return b''.join(u32(x) for x in p)
def stat(tag, val): return u16(tag) + struct.pack('<Q', val)
write('virtio_balloon', 'inflate-deflate', bal_pre +
      b'\x08' + chain([seg(0x80, 0x1000, 16, pfns(0x20, 0x21, 0x22, 0x40))], 0) + b'\x01' +
      b'\x1c' + chain([seg(0x80, 0x1000, 8, pfns(0x20, 0x21))], 0) + b'\x15' + b'\0')
write('virtio_balloon', 'inflate-outside', bal_pre +
      b'\x08' + chain([seg(0x80, 0x1000, 12, pfns(0xffffffff, 0xc0000, 0x30))], 0) +
      b'\x08' + chain([seg(0x81, 0x1000, 6, pfns(0x30))], 1) + b'\x01' + b'\0')
write('virtio_balloon', 'stats-tick', bal_pre +
      b'\x26' + chain([seg(0x80, 0x1000, 30, stat(4, 1 << 20) + stat(5, 1 << 28) +
                           stat(99, 1))], 0) + b'\x29' + b'\x06' +
      b'\x26' + chain([seg(0x80, 0x1000, 15, stat(0, 7))], 1) + b'\x29' + b'\x06\x06' + b'\0')
write('virtio_balloon', 'report-update-reset', bal_pre +
      b'\x3a' + chain([seg(0x03, 0x2000, 0x4000), seg(0x01, 0x7100, 200)], 0) + b'\x33' +
      b'\x07\x01' + u16(64) + b'\x07\x00' + u16(3) + b'\x03' + b'\x00' + b'\x01' + b'\0')

# ---- virtio_vsock: no mutations, features (0 = all), queue sizes 256 x 3,
# then ops are op % 16 (fuzz_virtio_vsock.c): 0 DRIVER_OK, 1 a kick of
# queue (op >> 4) % 3 (0x01 RX, 0x11 TX), 2 a poll of the host side, 3 a
# reset, 5 a TX packet, 6 RX buffers, 7 a host peer connects to uds_path,
# 8 its first line, 9/10 a host peer's write (0x09), read (0x19),
# SHUT_WR (0x29), close (0x49), 11 an accept at uds_path_1000/1001,
# 12 a device stream's send buffer shrunk, 13 a flood of REQUESTs.
vs_pre = bytes([0x00, 0x00, 0x08, 0x08, 0x08]) + b'\x00'
vs_rx = b'\x06' + bytes([0x0f, 0x02]) + b''.join(u16(0x1000 * (i % 7)) for i in range(16))

def vs_pkt(op, sport=0, dport=0, lenb=0, flags=0, ba=3, lay=0, at=0x6000, extra=b'', lenx=b''):
    """A TX packet (make_hdr's encoding): guest port 5000 + sport, dport
    a pick_dst_port byte (0: 1000, 1: 1001, 2: 1002, 3: the device's first
    host port), lenb a pick_len byte, ba a buf_alloc byte (3: 256 KiB),
    fwd_cnt honest, lay the layout byte (bit 3: payload bytes follow);
    lenx the length's own bytes when lenb asks for them (lenb % 4 == 1: a u16)."""
    return (b'\x05' + bytes([0, op, sport, dport, lenb]) + lenx + bytes([flags, ba, 0, lay]) +
            u16(at) + extra)

write('virtio_vsock', 'guest-connect-stream', vs_pre + vs_rx +
      vs_pkt(1) + b'\x11' + b'\x0b\x00' + b'\x02' +
      vs_pkt(5, lenb=0x03 | (10 << 2), lay=8, extra=b'skiff' * 13) + b'\x11' +
      b'\x19\x00' + u16(0xffff) + b'\x09\x00' + u16(3000) + b'\x02\x01' +
      vs_pkt(6, ba=2) + b'\xff\xff\x00\x00' + b'\x11\x02\x01' +
      vs_pkt(4, flags=3) + b'\x11\x49\x00\x02\x01')
write('virtio_vsock', 'host-connect-stream', vs_pre + vs_rx +
      b'\x07\x08\x00\x00\x02' + vs_pkt(2, dport=3) + b'\x11' +
      b'\x19\x00' + u16(64) + b'\x09\x00' + u16(5000) + b'\x02\x01' +
      vs_pkt(7, dport=3) + b'\x11\x02\x01' + b'\x29\x00\x02\x01' +
      vs_pkt(5, dport=3, lenb=0x01, lenx=u16(0x4000), lay=1) + b'\x11\x0c' + u16(0) +
      vs_pkt(5, dport=3, lenb=0x0a) + b'\x11\x02\x03\x02')
write('virtio_vsock', 'request-flood', vs_pre + vs_rx +
      b'\x0d\xff\x00' + u16(0) + b'\x11\x01' + vs_rx + b'\x01' +
      b'\x0d\xff\x01' + u16(300) + b'\x11\x01\x02\x03\x00\x01')
write('virtio_vsock', 'bad-lines-lies', vs_pre + vs_rx +
      b'\x07\x07\x07' + b'\x08\x01\x02' + bytes([24]) + b'CONNECT 99999999999999\n' +
      b'\x08\x02\x03' + b'\x02' + b'\x08\x02\x02' + bytes([2]) + b'0\n' + b'\x02' +
      vs_pkt(1, dport=1) + b'\x11\x0b\x01' +
      vs_pkt(5, dport=1, lenb=0x06, lay=0x04) + u16(8) + b'\x11' +
      vs_pkt(1, sport=1, dport=1) + b'\x11\x0b\x01\x0c' + u16(1) +
      vs_pkt(5, sport=1, dport=1, lenb=0x01, lenx=u16(0xffff)) + b'\x11' +
      vs_pkt(5, sport=1, dport=1, lenb=0x01, lenx=u16(0xffff)) + b'\x11' +
      vs_pkt(3, sport=1, dport=1) + b'\x11\x02\x01')
# The guest grants 1 KiB of credit, the host peer writes 5000 bytes: the
# device must stop at 1 KiB until the guest's CREDIT_UPDATE (honest fwd_cnt).
write('virtio_vsock', 'small-credit', vs_pre + vs_rx +
      b'\x07\x08\x00\x00\x02' + vs_pkt(2, dport=3, ba=0x01 | (10 << 2)) + b'\x11' +
      b'\x09\x00' + u16(5000) + b'\x02\x01\x02\x01' +
      vs_pkt(6, dport=3, ba=0x01 | (11 << 2)) + b'\x11\x02\x01' +
      vs_pkt(6, dport=3, ba=0x01 | (13 << 2)) + b'\x11\x02\x01')
