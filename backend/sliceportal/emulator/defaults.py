"""Where the emulator listens, which device it is and which program it models, by default."""

from pathlib import Path

DEFAULT_GRPC_ADDRESS = "127.0.0.1:9559"
DEFAULT_DEVICE_ID = 1
# The repository's committed P4Info of the portal's P4 program.
DEFAULT_P4INFO = Path(__file__).resolve().parents[3] / "p4/build/sliceportal.p4info.txtpb"
