# One image for every process of the portal: the API, the Celery worker and beat (docker-compose
# gives each its command) run the same code with the same Settings. Alone, `docker run -p
# 8000:8000 -v sliceportal:/app/.sliceportal <image>` is the laptop setup: embedded PostgreSQL and
# Redis, an emulated switch, the worker and beat, all under `sliceportal serve`, which keeps its
# data and its generated signing key in the volume.
FROM python:3.11-slim
WORKDIR /app
COPY . /app
RUN python -m pip install --no-cache-dir -e .
# `sliceportal shell SWITCH` runs p4runtime-shell in a venv of its own: its protobuf pins must not
# reach the portal's (the same layout as `make setup`).
RUN python -m venv /app/.venv-shell \
 && /app/.venv-shell/bin/pip install --no-cache-dir 'p4runtime-shell==0.0.6'
EXPOSE 8000
CMD ["sliceportal", "serve", "--host", "0.0.0.0", "--port", "8000"]
