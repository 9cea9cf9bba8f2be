"""Checks every test of the API server gets."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from dralloc.server.controllers.writes import Mutation, Writer
from dralloc.store import Outcome
from dralloc.validation.pod_status import status_update_errors


@pytest.fixture(autouse=True)
def controllers_write_pods_kube_apiserver_would_take(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The controllers write pods to the store directly (the scheduler's conditions and nomination, the claim
    controller's resourceClaimStatuses, the fake kubelet's IPs and container statuses, eviction and
    termination): what they write must pass the rules kube-apiserver applies to a client's pod status
    write. (Collected here and asserted at the end: the controller manager keeps going after an error.)"""
    refused: list[str] = []
    update = Writer.update

    def checked(self: Writer, resource: str, namespace: str, name: str, mutate: Mutation,
                uid: str | None = None) -> dict[str, Any] | None:
        if resource != "pods":
            return update(self, resource, namespace, name, mutate, uid)

        def validated(current: dict[str, Any]) -> Any:
            before = copy.deepcopy(current)
            changed = mutate(current)
            written = changed.object if isinstance(changed, Outcome) else changed
            if written is not None and not (isinstance(changed, Outcome) and changed.type == "DELETED"):
                # a graceful deletion (the termination controller's, as a kubelet's DELETE) is no status write
                meta = written.get("metadata") or {}
                before["metadata"] = {**before.get("metadata", {}), **{
                    k: meta.get(k) for k in ("deletionTimestamp", "deletionGracePeriodSeconds")}}
                refused.extend(f"{namespace}/{name}: {e}" for e in status_update_errors(written, before))
            return changed

        return update(self, resource, namespace, name, validated, uid)

    monkeypatch.setattr(Writer, "update", checked)
    yield
    assert not refused, refused
