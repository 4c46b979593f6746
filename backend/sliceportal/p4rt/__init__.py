"""The portal's P4Runtime client, and the only package that talks P4Runtime (with the emulator).

- `proto`: the generated messages (finsy's stubs on protobuf >= 6, upb), imported only there;
- `p4info`: a typed index of one P4Info; `entries`: domain table entries <-> messages;
- `pipeline`: the program deployed (P4Info, device config, cookie);
- `connection`: channel options, TLS, readiness, arbitration on the StreamChannel;
- `session`: `SwitchSession` (one client per switch and process) and `SessionPool`;
- `writes`: batches and each update's outcome; `errors`: `SwitchError`, `TransientSwitchError`;
- `reads`: counter and register reads into numpy columns, on `cells`, the one hot path decoded
  without the generated messages (its docstring has the figures that justify it).
"""
