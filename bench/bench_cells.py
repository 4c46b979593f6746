"""Benchmark the one hot path that bypasses the generated messages: the counter and register
cells of a 1 Hz poll of 4,096 slices (81,920 counter cells, 8,192 register cells), encoded
by the switch (the emulator) and decoded by the client, through the generated messages and
through `p4rt.cells` (numpy, column-wise). `p4rt.cells` is kept only while this shows the
generated path more than 2x slower; prints the protobuf backend it ran on.

    python bench/bench_cells.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from sliceportal.p4rt import cells, proto
from sliceportal.p4rt.proto import p4r

COUNTER_CELLS, REGISTER_CELLS = 81_920, 8_192


def best(run: Callable[[], object], rounds: int = 7) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def generated_encode(indices: list[int], packets: list[int], byte_counts: list[int]) -> bytes:
    response = p4r.ReadResponse()
    add = response.entities.add
    for index, packet_count, byte_count in zip(indices, packets, byte_counts, strict=True):
        entry = add().counter_entry
        entry.counter_id = 302006785
        entry.index.index = index
        data = entry.data
        data.packet_count = packet_count
        data.byte_count = byte_count
    return response.SerializeToString()


def generated_decode(data: bytes) -> np.ndarray:
    rows = []
    for entity in p4r.ReadResponse.FromString(data).entities:
        entry = entity.counter_entry
        cell = entry.data
        rows.append((entry.counter_id, entry.index.index, cell.packet_count, cell.byte_count))
    return np.array(rows, dtype=np.int64)


def main() -> None:
    rng = np.random.default_rng(1)
    indices = np.arange(COUNTER_CELLS) % 4096
    packets = rng.integers(1 << 20, 1 << 40, COUNTER_CELLS)
    byte_counts = packets * 1000
    lists = indices.tolist(), packets.tolist(), byte_counts.tolist()
    data = generated_encode(*lists)
    assert data == b"".join(cells.counter_items(302006785, indices, packets, byte_counts))
    print(f"protobuf backend: {proto.backend()}")
    figures = {
        "encode, generated messages": best(lambda: generated_encode(*lists), 3),
        "encode, p4rt.cells": best(
            lambda: b"".join(cells.counter_items(302006785, indices, packets, byte_counts))
        ),
        "decode, generated messages": best(lambda: generated_decode(data), 3),
        "decode, p4rt.cells": best(lambda: cells.decode([data], cells.CellKind.COUNTER)),
    }
    for name, seconds in figures.items():
        print(f"{COUNTER_CELLS:,} counter cells, {name}: {seconds * 1e3:.1f} ms")
    for side in ("encode", "decode"):
        ratio = figures[f"{side}, generated messages"] / figures[f"{side}, p4rt.cells"]
        print(f"{side}: generated messages / p4rt.cells = {ratio:.1f}x (kept while > 2x)")
    values = rng.integers(0, 1 << 48, REGISTER_CELLS).astype(np.uint64)
    at = np.arange(REGISTER_CELLS)
    register_data = b"".join(cells.register_items(369098753, at, values))
    seconds = best(lambda: cells.decode([register_data], cells.CellKind.REGISTER))
    print(f"{REGISTER_CELLS:,} register cells, decode, p4rt.cells: {seconds * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
