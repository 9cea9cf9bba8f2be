"""The names the server gives: generateName's random suffix."""

from __future__ import annotations

import secrets

from dralloc.controllers import names


def generated_name(prefix: str) -> str:
    """The API server's generateName: the base cut to 58 characters and 5 random characters (the server draws
    them from the system's randomness; the simulator from its seed)."""
    return names.generated_name(prefix, "".join(secrets.choice(names.ALPHANUMS) for _ in range(names.RANDOM_LENGTH)))
