"""The packet-level model of `p4/sliceportal.p4` that runs inside the switch emulator.

- `program`: the match-action tables as the P4 program applies them (routing, classifiers,
  slice_policy), read from the emulator's `DeviceState`;
- `reference`: the per-packet pipeline in plain Python on `domain.dataplane`'s reference
  arithmetic, the yardstick the compiled path is checked against;
- `kernel` (numba) and `engine` (its typed wrapper): the same pipeline, egress ports with
  strict-priority queues, and responsive (TCP-like) senders, compiled;
- `traffic`: traffic profiles and the open-loop generators (CBR, Poisson, on/off);
- `switch_model`: `PacketModel`, the `PipelineModel` the emulator server drives, with its two
  clocks (real time and as fast as possible) and the start/stop controls of the side door;
- the shared test vectors of `p4/tests/vectors/` run through `tests/emulator/model/vectors.py`.

docs/emulator.md ("The packet model") describes the design.
"""
