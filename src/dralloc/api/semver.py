"""Semantic versions as Kubernetes uses them (blang/semver v4 semantics, SemVer 2.0.0 ordering).

Used for ``version`` device attributes and the CEL ``semver()`` library. ``Semver.parse("1.2.3-rc.1+b5")``
is strict (no "v" prefix, no leading zeros, all three numbers); ``Semver.parse(s, normalize=True)`` accepts
what the Kubernetes CEL library's normalisation accepts: a "v" prefix, missing minor/patch, leading zeros.
"""

from __future__ import annotations

import functools
import re

# semver.org's regular expression (also what API validation uses for version attributes)
SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


@functools.total_ordering
class Semver:
    __slots__ = ("major", "minor", "patch", "pre", "build", "_text")

    def __init__(self, major: int, minor: int, patch: int, pre: tuple[str, ...] = (), build: tuple[str, ...] = ()):
        self.major, self.minor, self.patch = major, minor, patch
        self.pre, self.build = pre, build
        text = f"{major}.{minor}.{patch}"
        if pre:
            text += "-" + ".".join(pre)
        if build:
            text += "+" + ".".join(build)
        self._text = text

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Semver:
        if normalize:
            text = _normalize(text)
        m = SEMVER_RE.match(text) if isinstance(text, str) and text.isascii() else None
        if m is None:
            raise ValueError(f"invalid semantic version: {text!r}")
        major, minor, patch, pre, build = m.groups()
        if max(int(major), int(minor), int(patch)) > (1 << 64) - 1:
            raise ValueError(f"invalid semantic version: {text!r}")
        return cls(int(major), int(minor), int(patch), tuple(pre.split(".")) if pre else (),
                   tuple(build.split(".")) if build else ())

    def _key(self) -> tuple[object, ...]:
        # A version without pre-release ranks above one with; identifiers compare numerically when numeric.
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)

    def compare(self, other: Semver) -> int:
        a, b = self._key(), other._key()
        return (a > b) - (a < b)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self._key() == other._key()

    def __lt__(self, other: Semver) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Semver({self._text!r})"


def _normalize(text: str) -> str:
    """Kubernetes' semver normalisation: drop a "v", pad to three numbers, strip leading zeros."""
    if not isinstance(text, str):
        return text
    text = text[1:] if text.startswith("v") else text
    core, sep, rest = text, "", ""
    for i, ch in enumerate(text):
        if ch in "-+":
            core, sep, rest = text[:i], ch, text[i + 1:]
            break
    parts = core.split(".")
    if len(parts) > 3 or any(not p.isdigit() for p in parts):
        return text
    parts = [str(int(p)) for p in parts] + ["0"] * (3 - len(parts))
    return ".".join(parts) + (sep + rest if sep else "")
