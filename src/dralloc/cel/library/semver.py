"""The Kubernetes semver library (library/semverlib.go): semver(), isSemver(), major(), minor(), patch();
the comparisons are the quantity library's (one implementation serves both)."""

from __future__ import annotations

from typing import Any

from dralloc.api.semver import Semver
from dralloc.cel.errors import CELError
from dralloc.cel.library.registry import function, member, want


@function("semver", "kubernetes.Semver")
def _semver(s: Any, normalize: Any = False) -> Semver:
    want("semver", type(s) is str and type(normalize) is bool, s, normalize)
    try:
        return Semver.parse(s, normalize=normalize)
    except ValueError:
        raise CELError("invalid semver") from None


@function("isSemver", "bool")
def _is_semver(s: Any, normalize: Any = False) -> bool:
    want("isSemver", type(s) is str and type(normalize) is bool, s, normalize)
    try:
        Semver.parse(s, normalize=normalize)
    except ValueError:
        return False
    return True


@member("major", "int")
def _major(v: Any) -> int:
    want("major", type(v) is Semver, v)
    return v.major


@member("minor", "int")
def _minor(v: Any) -> int:
    want("minor", type(v) is Semver, v)
    return v.minor


@member("patch", "int")
def _patch(v: Any) -> int:
    want("patch", type(v) is Semver, v)
    return v.patch
