"""Exceptions shared by every layer.

    DrallocError                  base of everything dralloc raises on purpose
    ├── InputError                bad input from a user: a file, a manifest, a flag (CLI exit 2, HTTP 4xx)
    │   ├── DecodeError           a file or document that cannot be parsed or decoded (names file, document, line)
    │   └── ValidationFailed      objects that kube-apiserver would reject (carries the field errors)
    └── AllocationError           the allocator's hard errors (CLI exit 3), in upstream's wording

Subpackages may define more specific subclasses (e.g. ``dralloc.cel.CELCompileError``) under these.
"""

from __future__ import annotations


class DrallocError(Exception):
    """Base class of every error dralloc raises on purpose."""


class InputError(DrallocError, ValueError):
    """Bad input from a user: the message says where and what is wrong."""


class DecodeError(InputError):
    """A file or document could not be parsed or decoded."""


class ValidationFailed(InputError):
    """One or more objects failed validation; ``errors`` holds the field errors."""

    def __init__(self, message: str, errors: list | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


class AllocationError(DrallocError):
    """A hard allocation error (invalid claim, CEL runtime error, ...), worded as upstream."""
