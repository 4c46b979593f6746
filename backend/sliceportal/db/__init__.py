"""Persistence: SQLAlchemy 2 models, engine/session factory and Alembic migrations."""
