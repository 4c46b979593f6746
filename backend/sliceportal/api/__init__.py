"""The REST API (`/api/v1`); `main.create_app` builds it."""
