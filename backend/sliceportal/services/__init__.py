"""Transactional operations shared by the API, the CLI and the workers.

Each function takes a Session and a `ChangeContext`, checks, changes, writes the change log and
commits; errors are `services.errors` exceptions that know nothing about HTTP.
"""
