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
