#!/usr/bin/env python3
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

# ---- virtio_net: features (u64 mask, 0 = all), sizes 256/256, DRIVER_OK,
# TX chains (op 0x80: driver op on queue 1) + kick (0x85), RX buffers
# (0x08) + a frame from the host (0x02) + RX run (0x03); ops are op % 12
net_pre = bytes([0x00]) + bytes(8) + bytes([0x08, 0x08, 0x00])
txhdr = bytes([1, 1]) + u16(54) + u16(1448) + u16(34) + u16(16) + u16(0)
tx = bytes([0x80]) + chain([seg(0x80, 0x0000, 12, txhdr), seg(0x82, 0x1000, 1500)], 0) + b'\x85'
rxbuf = lambda start, off: bytes([0x08]) + chain([seg(0x03, off, 1526)], start)
frame = bytes([0x02, 0x01]) + u16(3000) + bytes(12) + b'frame-tail'.ljust(64, b'.')
write('virtio_net', 'tx-gso', net_pre + tx + b'\x06')
write('virtio_net', 'rx-merge', net_pre + rxbuf(0, 0x0000) + rxbuf(1, 0x1000) +
      rxbuf(2, 0x2000) + frame + b'\x03')
write('virtio_net', 'tx-full', net_pre + b'\x8a' + tx + tx + b'\x04' + b'\x07' + tx)

# ---- virtq: size 256 (last byte 8), standard layout + features
# (INDIRECT|EVENT_IDX), chains, pops, pushes, reset
vq_pre = bytes([0x00, 0x02, 0x03])
c = bytes([0x0e]) + chain([seg(0x00, 0, 64), seg(0x01, 0x100, 64)], 0)
ci = bytes([0x0e]) + chain([seg(0x00, 0, 64), seg(0x01, 0x100, 64), seg(0x01, 0x200, 8)], 5, True)
write('virtq', 'pop-push', vq_pre + c + ci + b'\x05\x05\x08\x01\x00\x00\x00\x00' +
      b'\x08\x41' + bytes(8) + b'\x0a\x0c' + b'\x08')
write('virtq', 'notify', vq_pre + c + b'\x0b\x00\x05\x0b\x01\x0b\x03\x01\x0b\x03\x00' + b'\x08')
