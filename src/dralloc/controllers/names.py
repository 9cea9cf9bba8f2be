"""Names and UIDs as the API server and the controllers make them, from a seeded generator.

* ``NameGenerator(seed).generate(base)`` is the API server's ``generateName``: the base cut to 58 characters
  plus 5 characters from ``bcdfghjklmnpqrstvwxz2456789`` (consonants and digits that cannot spell words),
  e.g. ``web-7c5ddbdf54-`` -> ``web-7c5ddbdf54-x8f9p``. Upstream draws them at random; here they come from
  a ``random.Random(seed)`` owned by the generator, so the same inputs and seed give the same names.
* ``pod_template_hash(template, collision_count)`` is the Deployment controller's ``pod-template-hash``:
  FNV-32a over the pod template plus the collision count (8 bytes, little-endian), its decimal digits
  re-encoded with ``safe_encode``. Upstream hashes go-spew's dump of the Go struct, which depends on every
  field of the Go types and their defaults; dralloc hashes the template's canonical JSON (sorted keys)
  instead, so the hash has upstream's form and stability but not its exact value.
"""

from __future__ import annotations

import json
import random
import uuid

from dralloc.api import codec
from dralloc.api.core_v1 import PodTemplateSpec

__all__ = ["ALPHANUMS", "MAX_GENERATED_NAME_LENGTH", "NameGenerator", "fnv32a", "generated_name", "pod_template_hash",
           "safe_encode"]

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
RANDOM_LENGTH = 5
MAX_GENERATED_NAME_LENGTH = 63 - RANDOM_LENGTH  # 58: room for the random suffix in a 63-character name


def generated_name(base: str, suffix: str) -> str:
    """``SimpleNameGenerator.GenerateName``: the base cut to 58 characters, then the random suffix."""
    return base[:MAX_GENERATED_NAME_LENGTH] + suffix


class NameGenerator:
    """The random parts of created objects (name suffixes, UIDs), drawn from one seeded stream.

    Draws happen in call order, so callers must call in a deterministic order (input order)."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)

    def suffix(self, length: int = RANDOM_LENGTH) -> str:
        return "".join(self._rng.choices(ALPHANUMS, k=length))

    def generate(self, base: str) -> str:
        """The name the API server gives an object created with ``generateName: base``."""
        return generated_name(base, self.suffix())

    def uid(self) -> str:
        """A random (version 4) UUID, as the API server assigns to every new object."""
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))


def safe_encode(text: str) -> str:
    """apimachinery's SafeEncodeString: every byte mapped onto ALPHANUMS (by its value modulo 27)."""
    return "".join(ALPHANUMS[b % len(ALPHANUMS)] for b in text.encode())


_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193
_LOW32 = 0xFFFFFFFF
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json(value: object) -> bytes:
    """Go's json.Marshal of a decoded JSON value: map keys sorted, no spaces, ``<``, ``>`` and ``&`` escaped
    (HTML), and U+2028 and U+2029."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in _GO_ESCAPES.items():
        if char in text:
            text = text.replace(char, escaped)
    return text.encode()


def fnv32(data: bytes) -> int:
    """FNV-1 (hash/fnv New32: multiply, then xor), 32 bits, eight bytes a step as :func:`fnv32a`."""
    value = _FNV_OFFSET
    whole = len(data) & ~7
    p = _FNV_PRIME
    for a, b, c, d, e, f, g, h in zip(*[iter(data[:whole])] * 8):
        value = ((((((value * p ^ a) * p ^ b) * p ^ c) * p ^ d) & _LOW32) * p ^ e) * p ^ f
        value = ((value * p ^ g) * p ^ h) & _LOW32
    for byte in data[whole:]:
        value = (value * p & _LOW32) ^ byte
    return value


def fnv32a(data: bytes, value: int = 0x811C9DC5) -> int:
    """FNV-1a, 32 bits, over ``data`` from ``value`` (the offset basis unless a hash is continued).

    Eight bytes a step: the 32-bit truncation is taken after every fourth multiplication instead of each one,
    which gives the same value (a product's low 32 bits depend only on the factors' low 32 bits, and the XOR
    with a byte touches only the low 8), at half the interpreter's work per byte."""
    whole = len(data) & ~7
    p = _FNV_PRIME
    for a, b, c, d, e, f, g, h in zip(*[iter(data[:whole])] * 8):
        value = ((((((value ^ a) * p ^ b) * p ^ c) * p ^ d) * p & _LOW32 ^ e) * p ^ f) * p
        value = (((value ^ g) * p ^ h) * p) & _LOW32
    for byte in data[whole:]:
        value = ((value ^ byte) * p) & _LOW32
    return value


def pod_template_hash(template: PodTemplateSpec, collision_count: int | None = None) -> str:
    """The ``pod-template-hash`` label value of a Deployment's ReplicaSet (see the module docstring)."""
    canonical = json.dumps(codec.to_dict(template), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    value = fnv32a(canonical.encode())
    if collision_count is not None:
        value = fnv32a((collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4), value)
    return safe_encode(str(value))
