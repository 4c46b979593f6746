from utils.fixtures import db, migrated_url, settings  # noqa: F401 - fixtures
