"""The ResourceQuota admission's charges: one write of a quota for the creates admitted while it waits for its
group commit (upstream's quota evaluator likewise takes the waiting admissions of a namespace into one update),
written in the same group commit as those creates, before them.

The quota's write is queued with the first charge, before that create's own write; the charges of the creates
admitted after it join it until it is made. When it is made, each charge is checked in turn against the quota
as stored (creates admitted together cannot take more than is left between them); a create whose charge was
refused is refused as its own write is made, with upstream's 403, while the others are charged."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from dralloc.api.quantity import Quantity
from dralloc.errors import InputError
from dralloc.server.types import Obj
from dralloc.store import SQLStore

Usage = dict[str, Quantity]
# (usage, the quota's used, its hard) -> raises the refusal of that charge
Check = Callable[[Usage, Usage, Usage], None]


def usage_of(texts: object) -> Usage:
    """A status.used or status.hard as quantities (what does not parse is left out)."""
    out: Usage = {}
    for key, text in (texts.items() if isinstance(texts, dict) else ()):
        try:
            out[key] = Quantity(str(text))
        except (InputError, ValueError, TypeError):
            continue
    return out


@dataclass
class _Write:
    """The charges one write of a quota takes: open until it is made."""

    charges: list[Charge] = field(default_factory=list)
    made: bool = False


@dataclass
class Charge:
    requested: Usage
    check: Check
    write: _Write
    error: Exception | None = None

    def settled(self) -> None:
        """Raise this charge's refusal. Called as the create it admits is written: the quota's write, queued
        before it, has been made by then (not made: the quota is gone, nothing to charge)."""
        if self.write.made and self.error is not None:
            raise self.error


class QuotaCharges:
    def __init__(self) -> None:
        self._open: dict[tuple[str, str], _Write] = {}
        # (a store that commits on another thread makes the write there: a charge must not join a write
        # already made)
        self._lock = threading.Lock()

    def charge(self, store: SQLStore, namespace: str, quota: str, requested: Usage, check: Check) -> Charge:
        """Add ``requested`` to the quota's status.used with the other charges waiting (from a coroutine, before
        the create's own write is queued); ``check`` raises the refusal when the quota as stored has no room."""
        key = (namespace, quota)
        with self._lock:
            write = self._open.get(key)
            if write is None:
                write = self._open[key] = _Write()
                submit = True
            else:
                submit = False
            charge = Charge(requested, check, write)
            write.charges.append(charge)
        if submit:
            done = store.submit_update("resourcequotas", namespace, quota, partial(self._build, key, write))
            done.add_done_callback(_seen)
        return charge

    def _build(self, key: tuple[str, str], write: _Write, old: Obj, rv: str) -> Obj:
        with self._lock:
            if self._open.get(key) is write:
                del self._open[key]  # (later charges take a new write)
            write.made = True
        status = dict(old.get("status") or {})
        used, hard = usage_of(status.get("used")), usage_of(status.get("hard"))
        taken = False
        for charge in write.charges:
            try:
                charge.check(charge.requested, used, hard)
            except Exception as exc:  # noqa: BLE001 - this create's refusal; the others go on
                charge.error = exc
                continue
            for name, value in charge.requested.items():
                used[name] = used.get(name, Quantity(0)) + value
            taken = True
        if not taken:
            return old  # (nothing to write)
        texts = dict(status.get("used") or {})
        for charge in write.charges:
            if charge.error is None:
                for name in charge.requested:
                    texts[name] = str(used[name])
        return {**old, "metadata": {**old["metadata"], "resourceVersion": rv}, "status": {**status, "used": texts}}


def _seen(done: asyncio.Future[Obj]) -> None:
    """(The write's own outcome is read by no one: its creates learn theirs from their charges.)"""
    if not done.cancelled():
        done.exception()
