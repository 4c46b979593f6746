"""Lifecycle enumerations of alerts and their webhook deliveries (netbox keeps choices per app).

The rule an alert is about is `sliceportal.domain.sla.Rule`, defined with the pure rules.
"""

from __future__ import annotations

from sliceportal.db.choices import Choice


class AlertState(Choice):
    """firing -> resolved; acknowledging is separate (an operator says "seen"), in any state."""

    FIRING = "firing"
    RESOLVED = "resolved"


class AlertEventKind(Choice):
    """What happened to an alert: each event is pushed to browsers and sent to the webhooks."""

    FIRING = "firing"
    RESOLVED = "resolved"
    ACKNOWLEDGED = "acknowledged"


class DeliveryStatus(Choice):
    """pending -> delivered, or failed after a permanent refusal or the last retry."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"
