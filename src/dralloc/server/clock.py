"""Timestamps as kube-apiserver writes them: RFC 3339 in UTC, to the second."""

from __future__ import annotations

import time
from datetime import datetime
from functools import lru_cache

RFC3339 = "%Y-%m-%dT%H:%M:%SZ"


@lru_cache(maxsize=1)
def _rfc3339(second: int) -> str:
    return time.strftime(RFC3339, time.gmtime(second))


def now() -> str:
    # Every write asks at least twice (creationTimestamp, managedFields) and the writes of one second share
    # their text: formatting it once per second costs a tenth of formatting it every time.
    return _rfc3339(int(time.time()))


def timestamp(when: datetime | None = None) -> str:
    """``when`` (an aware UTC datetime), or now, as an RFC 3339 timestamp."""
    return when.strftime(RFC3339) if when is not None else now()
