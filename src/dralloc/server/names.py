"""The names the server gives: generateName's random suffix."""

from __future__ import annotations

import random

from dralloc.controllers import names

# kube-apiserver draws the suffix from Go's math/rand (k8s.io/apimachinery's util/rand): random, not secret.
# One generator seeded from the system's randomness: a draw is a few instructions, where secrets.choice makes
# a system call per character (five per created pod: its token volume's name).
_SUFFIXES = random.Random()

# The suffix is one draw of the 27**5 suffixes, read as five base-27 digits: two pairs and a last character.
# (random.choices draws each character as floor(random() * 27); one draw of the whole number is as uniform,
# at a tenth of the interpreter's work, which every created pod pays for its token volume's name.)
_RADIX = len(names.ALPHANUMS)
_PAIR_COUNT = _RADIX * _RADIX
_PAIRS = tuple(a + b for a in names.ALPHANUMS for b in names.ALPHANUMS)  # (read-only after import)
_SUFFIX_COUNT = _RADIX ** names.RANDOM_LENGTH
assert names.RANDOM_LENGTH == 5  # two pairs and one character


def random_suffix() -> str:
    """Five characters of ``names.ALPHANUMS``, each as likely as any other."""
    drawn = int(_SUFFIXES.random() * _SUFFIX_COUNT)
    high, low = divmod(drawn, _PAIR_COUNT)
    last, middle = divmod(high, _PAIR_COUNT)
    return _PAIRS[low] + _PAIRS[middle] + names.ALPHANUMS[last]


def generated_name(prefix: str) -> str:
    """The API server's generateName: the base cut to 58 characters and 5 random characters."""
    return names.generated_name(prefix, random_suffix())
