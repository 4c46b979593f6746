from telemetry.helpers import counters, emulator  # noqa: F401 - fixtures
from utils.fixtures import (  # noqa: F401 - fixtures
    app,
    client,
    db,
    migrated_url,
    operator_headers,
    settings,
    viewer_headers,
)
