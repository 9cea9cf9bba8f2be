"""The warnings admission adds to a write's answer (kube-apiserver's warning.AddWarning): collected for the
request being served, then sent as its Warning headers."""

from __future__ import annotations

from contextvars import ContextVar
from types import TracebackType

_COLLECTED: ContextVar[list[str] | None] = ContextVar("admission_warnings", default=None)


def warn(messages: list[str]) -> None:
    """Add ``messages`` to the warnings of the request being served (none is being collected: dropped)."""
    collected = _COLLECTED.get()
    if collected is not None:
        for message in messages:
            if message not in collected:  # (upstream's recorder drops a repeated warning)
                collected.append(message)


class collecting:  # lower case: used as a function, ``with collecting() as warnings:``
    """Collect the warnings admission adds while the block runs, in the list it gives."""

    __slots__ = ("_token", "warnings")

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def __enter__(self) -> list[str]:
        self._token = _COLLECTED.set(self.warnings)
        return self.warnings

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        _COLLECTED.reset(self._token)
