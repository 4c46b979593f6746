from __future__ import annotations

from fastapi import APIRouter

from sliceportal.api.deps import SessionDep, SettingsDep, ViewerUser
from sliceportal.schemas.topology import Topology
from sliceportal.services import topology as service

router = APIRouter(prefix="/topology", tags=["topology"])


@router.get("")
def read_topology(session: SessionDep, settings: SettingsDep, _: ViewerUser) -> Topology:
    """The whole network in one answer: switches with their health, every link with its far
    end (the switch across its cable, or its hosts), reserved rate and live throughput, and the
    cables."""
    return service.read_topology(session, settings)
