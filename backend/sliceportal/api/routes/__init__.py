"""One `APIRouter(prefix=…, tags=[…])` per resource."""
