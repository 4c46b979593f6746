# One image for the API (and, later, the Celery worker and beat): the same code and Settings.
FROM python:3.11-slim
WORKDIR /app
COPY . /app
RUN python -m pip install --no-cache-dir -e .
ENV SLICEPORTAL_ENVIRONMENT=production
EXPOSE 8000
CMD ["sliceportal", "serve", "--host", "0.0.0.0", "--port", "8000"]
