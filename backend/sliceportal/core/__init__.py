"""Process-wide configuration and start-up shared by the API, the CLI and the workers."""
