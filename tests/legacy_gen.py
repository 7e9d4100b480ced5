"""Writes legacy profiler dumps (prof_result.bin, FORMATS.md §7) for tests.

Test-side generator following the runtime's struct layout, written from the
layout description (not from the library): little-endian, header of 60
bytes padded to 64, 56-byte profiling entries, 40-byte allocator entries,
8-byte allocation entries; unused slots are zero-filled.
"""
import struct


def name32(s):
    b = s.encode("utf-8")
    assert len(b) <= 32
    return b + b"\0" * (32 - len(b))


def block(name, events=(), allocators=(), allocations=(), max_prof=None,
          max_alloc=None, max_mem=None, prof_ver=1, counts=None, header_only=False):
    """events: (name, chain, instr, start, end); allocators: (name, id);
    allocations: (allocator_id, size). max_* default to the used counts;
    counts overrides the (prof, alloc, mem) used counts written; header_only
    stops after the 64-byte header."""
    max_prof = len(events) if max_prof is None else max_prof
    max_alloc = len(allocators) if max_alloc is None else max_alloc
    max_mem = len(allocations) if max_mem is None else max_mem
    used = counts or (len(events), len(allocators), len(allocations))
    out = name32(name) + struct.pack("<7I", prof_ver, max_prof, used[0], max_alloc,
                                     used[1], max_mem, used[2]) + b"\0" * 4
    assert len(out) == 64
    if header_only:
        return out
    for i in range(max_prof):
        if i < len(events):
            n, chain, instr, start, end = events[i]
            out += name32(n) + struct.pack("<iIQQ", chain, instr, start, end)
        else:
            out += b"\0" * 56
    for i in range(max_alloc):
        if i < len(allocators):
            n, aid = allocators[i]
            out += name32(n) + struct.pack("<Q", aid)
        else:
            out += b"\0" * 40
    for i in range(max_mem):
        if i < len(allocations):
            out += struct.pack("<II", *allocations[i])
        else:
            out += b"\0" * 8
    return out
