"""The seam between the P4Runtime server and the packet-level model of the P4 program.

The server owns the forwarding state and decides when a pipeline is realized; the model, which
another task writes, runs packets through it. When a controller commits a pipeline, the server
builds a fresh `DeviceState` and hands it to the model with `attach`; before the state is dropped
(a new pipeline, or shutdown) it calls `detach`.

What the model may do with the state, always while holding `state.lock`:
- read table contents: `state.tables[table_id].entries` (canonical key -> `Entry`, insertion
  order), `.default` (the default entry), `.info` (match fields, kinds, widths, size); a table's
  `.version` changes on every write, so lookup structures can be rebuilt lazily;
- update direct counters on the matched `Entry` (`packet_count`, `byte_count`);
- update `state.counters[counter_id].packets / .bytes` and `state.registers[reg_id].values`.
Controllers see all of it through P4Runtime reads.
"""

from __future__ import annotations

from typing import Protocol

from sliceportal.emulator.state import DeviceState


class PipelineModel(Protocol):
    def attach(self, state: DeviceState) -> None:
        """A pipeline was committed: model it over this (empty) state from now on."""

    def detach(self) -> None:
        """The state attached last is being dropped: stop touching it."""


class NoTraffic:
    """The model until the packet model exists: no packets, so counters stay where written."""

    def attach(self, state: DeviceState) -> None:
        """Nothing runs, so there is nothing to attach."""

    def detach(self) -> None:
        """Nothing runs, so there is nothing to stop."""
