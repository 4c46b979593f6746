"""The program the portal deploys: its P4Info, BMv2 device config and cookie."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sliceportal.core.config import Settings
from sliceportal.p4rt.entries import EntryCodec
from sliceportal.p4rt.errors import SwitchError
from sliceportal.p4rt.p4info import P4InfoIndex
from sliceportal.schemas.choices import SwitchKind

HOW_TO_COMPILE = (
    "compile p4/sliceportal.p4 with `make -C p4 compile` (needs p4c-bm2-ss) or "
    "`make -C p4 compile-docker` (needs Docker: the p4lang/p4c image), or set "
    "SLICEPORTAL_P4_DEVICE_CONFIG_PATH to a compiled sliceportal.json; then restart the portal"
)


class MissingDeviceConfig(SwitchError):
    """The target needs the program's device config and the portal has none: nothing is pushed
    (BMv2 would take an empty one and then fail every read and write)."""


def pipeline_cookie(p4info: bytes, device_config: bytes) -> int:
    """The cookie of a pipeline: the first 8 bytes of a SHA-256 over P4Info and device config
    (length-prefixed, so no two pairs collide by concatenation). Stable across runs and hosts,
    so a switch that reports it already runs exactly this pipeline."""
    digest = hashlib.sha256(len(p4info).to_bytes(8, "big") + p4info + device_config).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class Pipeline:
    """The program the portal deploys: its P4Info, BMv2 device config (empty when the program
    was not compiled: the emulator needs none, and no other target is given the pipeline
    without one, `check_deployable`) and cookie."""

    program: P4InfoIndex
    device_config: bytes
    cookie: int
    codec: EntryCodec
    device_config_path: Path | None = None
    """Where the device config was looked for (named when it is missing)."""

    @classmethod
    def load(cls, p4info_path: Path, device_config_path: Path) -> Pipeline:
        try:
            p4info = p4info_path.read_bytes()
        except OSError as exc:
            raise SwitchError(f"cannot read the P4Info {p4info_path}: {exc.strerror}") from None
        device_config = device_config_path.read_bytes() if device_config_path.is_file() else b""
        program = P4InfoIndex.from_file(p4info_path)
        cookie = pipeline_cookie(p4info, device_config)
        return cls(program, device_config, cookie, EntryCodec(program), device_config_path)

    def check_deployable(self, kind: SwitchKind) -> None:
        """Raise MissingDeviceConfig when a target of `kind` needs a device config and this
        pipeline has none."""
        if self.device_config or not kind.needs_device_config:
            return
        path = self.device_config_path
        where = "" if path is None else f" ({path} is missing)"
        raise MissingDeviceConfig(
            f"not deployed: a {kind.label} switch needs the program's compiled device config, "
            f"and the portal has none{where}: {HOW_TO_COMPILE}"
        )


@lru_cache(maxsize=4)
def load_pipeline(p4info_path: Path, device_config_path: Path) -> Pipeline:
    """`Pipeline.load`, once per process and pair of paths."""
    return Pipeline.load(p4info_path, device_config_path)


def settings_pipeline(settings: Settings) -> Pipeline:
    return load_pipeline(settings.p4info_path, settings.p4_device_config_path)
