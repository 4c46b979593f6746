"""Helpers and factories for the API and database tests."""
