"""The Celery worker and beat processes: the same Settings and domain code as the API."""
