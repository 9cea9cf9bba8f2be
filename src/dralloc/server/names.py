"""The names the server gives: generateName's random suffix."""

from __future__ import annotations

import random

from dralloc.controllers import names

# kube-apiserver draws the suffix from Go's math/rand (k8s.io/apimachinery's util/rand): random, not secret.
# One generator seeded from the system's randomness: a draw is a few instructions, where secrets.choice makes
# a system call per character (five per created pod: its token volume's name).
_SUFFIXES = random.Random()


def generated_name(prefix: str) -> str:
    """The API server's generateName: the base cut to 58 characters and 5 random characters."""
    return names.generated_name(prefix, "".join(_SUFFIXES.choices(names.ALPHANUMS, k=names.RANDOM_LENGTH)))
