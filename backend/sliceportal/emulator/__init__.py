"""The switch emulator: a P4Runtime server that stands in for BMv2 running the portal's program.

It serves the program's P4Info, accepts the same pipeline, entries, reads and arbitration as
BMv2's `simple_switch_grpc`, and keeps counters and registers for the packet model
(`pipeline.PipelineModel`) to update. Start one with `server.EmulatorServer`; see
docs/emulator.md. This package imports nothing itself, so that the CLI starts fast.
"""
