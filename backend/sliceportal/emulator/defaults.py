"""Where the emulator listens, which device it is and which program it models, by default."""

from sliceportal.core.paths import P4INFO_PATH

DEFAULT_GRPC_ADDRESS = "127.0.0.1:9559"
DEFAULT_DEVICE_ID = 1
# The repository's committed P4Info of the portal's P4 program.
DEFAULT_P4INFO = P4INFO_PATH
