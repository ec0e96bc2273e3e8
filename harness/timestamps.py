"""Kubernetes' timestamps (metav1.Time: RFC 3339 in UTC, whole seconds, as in creationTimestamp)."""

from __future__ import annotations

from datetime import datetime


def kube_time(text: str) -> datetime:
    """kube_time('2026-12-05T10:00:04Z') is that moment as an aware datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def optional_kube_time(text: str | None) -> datetime | None:
    """optional_kube_time(status.get('startTime')) is None for a time not written yet."""
    return kube_time(text) if text else None
