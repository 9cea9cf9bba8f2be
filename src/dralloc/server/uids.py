"""The uid of a new object, as kube-apiserver gives every object it creates."""

from __future__ import annotations

import os


def new_uid() -> str:
    """A random UUID (version 4, RFC 4122 variant) as text: what ``str(uuid.uuid4())`` returns, written
    straight from the random bytes (building the UUID object costs twice as much, on every create)."""
    digits = os.urandom(16).hex()
    variant = "89ab"[int(digits[16], 16) & 3]  # the two top bits of the 17th digit are 10
    return f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-{variant}{digits[17:20]}-{digits[20:]}"
