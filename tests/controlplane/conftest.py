from controlplane.fixtures import breaker, device_id, emulator, engine, pool, reconciler  # noqa: F401
from utils.fixtures import (  # noqa: F401 - fixtures
    admin_headers,
    app,
    client,
    db,
    migrated_url,
    operator_headers,
    settings,
    viewer_headers,
)
