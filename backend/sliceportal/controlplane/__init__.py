"""The control plane: deploy, reconcile, the outbox and their Celery tasks."""
