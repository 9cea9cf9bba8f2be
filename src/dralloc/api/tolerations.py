"""Whether a toleration tolerates a taint: ``v1.Toleration.ToleratesTaint`` and, with the same rule,
``resource.k8s.io``'s ``DeviceToleration`` against a ``DeviceTaint`` (both live beside their API types upstream).

Effect empty or equal, key empty or equal, then ``Exists`` matches any value and ``Equal`` (or no operator)
needs equal values. Any other operator (the alpha ``Gt``/``Lt``, off by default) matches nothing.
"""

from __future__ import annotations

from typing import Protocol


class TaintLike(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def value(self) -> str | None: ...
    @property
    def effect(self) -> str: ...


class TolerationLike(Protocol):
    @property
    def key(self) -> str | None: ...
    @property
    def operator(self) -> str | None: ...
    @property
    def value(self) -> str | None: ...
    @property
    def effect(self) -> str | None: ...


def tolerates(toleration: TolerationLike, taint: TaintLike) -> bool:
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.value or "") == (taint.value or "")
    return False
