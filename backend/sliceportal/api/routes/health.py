from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import text

from sliceportal.api.deps import RedisDep, SessionDep
from sliceportal.api.problems import service_unavailable
from sliceportal.schemas.common import Message, Readiness

router = APIRouter(prefix="/health", tags=["health"])


@router.get("")
async def liveness() -> Message:
    """The process answers (no dependency checked): for restarts by a supervisor."""
    return Message(message="alive")


@router.get("/ready")
def readiness(session: SessionDep, redis_client: RedisDep) -> Readiness:
    """The database and Redis answer: for load balancers. 503 problem+json when one does not."""
    session.execute(text("SELECT 1"))
    if not redis_client.ping():
        raise service_unavailable("redis-unavailable", "Redis does not answer PING")
    return Readiness(database="ok", redis="ok")
