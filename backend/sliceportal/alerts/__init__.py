"""SLA alerts: the engine that turns rule breaches into stored alerts, their API service, and
the webhook deliveries (docs/telemetry.md)."""
