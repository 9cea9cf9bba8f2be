"""Timestamps as kube-apiserver writes them: RFC 3339 in UTC, to the second."""

from __future__ import annotations

import time
from datetime import datetime

RFC3339 = "%Y-%m-%dT%H:%M:%SZ"


def now() -> str:
    # time.strftime over gmtime: a third of datetime.now(UTC).strftime's cost, and every write asks twice
    # (creationTimestamp, managedFields).
    return time.strftime(RFC3339, time.gmtime())


def timestamp(when: datetime | None = None) -> str:
    """``when`` (an aware UTC datetime), or now, as an RFC 3339 timestamp."""
    return when.strftime(RFC3339) if when is not None else now()
