"""When the PV controller's passes look at what: a claim or pod another client writes while a volume pass
runs is looked at in the next pass (it used to be lost: the claim stayed Pending beside an Available volume),
and every claim and volume is synced again every ``RESYNC_SECONDS`` as kube-controller-manager's resync does."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from cluster import NS, Cluster
from test_volume_controllers import PVCS, PVS, claim, node, pod, volume

from dralloc.server.controllers import volumes as volume_controllers
from dralloc.server.controllers.volumes import RESYNC_SECONDS, VolumeControllers
from dralloc.store import Change


def _after_the_first_writing_pass(monkeypatch: pytest.MonkeyPatch, write: Callable[[], object]) -> None:
    """Another client's ``write`` lands right after the first volume pass that wrote something, before the
    manager reads the store's feed again (as kubectl's second object of a manifest can)."""
    original = VolumeControllers.cycle
    done: list[bool] = []

    def cycle(self: VolumeControllers, *args: Any, **kwargs: Any) -> bool:
        wrote = original(self, *args, **kwargs)
        if wrote and not done:
            done.append(True)
            write()
        return wrote

    monkeypatch.setattr(VolumeControllers, "cycle", cycle)


def _phase(c: Cluster, resource: str, name: str, namespace: str = "default") -> str:
    return str(c.get(resource, name, namespace)["status"]["phase"])


def test_a_claim_made_while_a_volume_pass_runs_binds_the_volume_that_pass_made_available(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The order of the failing e2e run: the volume comes, a pass makes it Available (and adds its
    # finalizer), the claim comes while that pass still runs.
    c = Cluster()
    c.post(PVS, volume("pv-static", storageClassName="manual"))
    _after_the_first_writing_pass(monkeypatch, lambda: c.post(PVCS, claim("static", "2Gi",
                                                                           storageClassName="manual")))
    c.settle()
    assert c.get("persistentvolumeclaims", "static")["spec"].get("volumeName") == "pv-static"
    assert _phase(c, "persistentvolumeclaims", "static") == "Bound"
    assert _phase(c, "persistentvolumes", "pv-static", "") == "Bound"


def test_a_pod_made_while_a_volume_pass_runs_gets_its_ephemeral_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    c = Cluster()
    c.post("/api/v1/nodes", node("node-1"))
    c.post(PVS, volume("pv-1", storageClassName=""))
    scratch = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "", "resources": {"requests": {"storage": "1Gi"}}}}}}
    web = {**pod("web"), "spec": {**pod("web")["spec"], "volumes": [scratch]}}
    _after_the_first_writing_pass(monkeypatch, lambda: c.post(f"{NS}/pods", web))
    c.settle()
    assert _phase(c, "persistentvolumeclaims", "web-scratch") == "Bound"
    assert c.get("pods", "web")["spec"]["nodeName"] == "node-1"


def test_a_claim_whose_change_was_missed_binds_at_the_next_resync(monkeypatch: pytest.MonkeyPatch) -> None:
    c = Cluster()
    c.post(PVS, volume("pv-1", storageClassName=""))
    c.settle()
    missed = VolumeControllers.note

    def note(self: VolumeControllers, change: Change) -> None:
        if change.resource != "persistentvolumeclaims":
            missed(self, change)

    monkeypatch.setattr(VolumeControllers, "note", note)
    c.post(PVCS, claim(storageClassName=""))
    c.settle()
    assert _phase(c, "persistentvolumeclaims", "data") == "Pending"  # (nothing looked at it)
    later = time.time() + RESYNC_SECONDS + 1
    monkeypatch.setattr(volume_controllers, "time", SimpleNamespace(time=lambda: later))
    assert c.manager.volumes.due()
    c.settle()
    assert _phase(c, "persistentvolumeclaims", "data") == "Bound"
    assert not c.manager.volumes.due()  # (the next one RESYNC_SECONDS later)


def test_without_claims_or_volumes_no_resync_is_due(monkeypatch: pytest.MonkeyPatch) -> None:
    c = Cluster()
    c.post(PVS, volume("pv-1", storageClassName=""))
    c.settle()
    assert c.manager.volumes.next_due is not None
    assert c.http.delete("/api/v1/persistentvolumes/pv-1").status_code == 202  # (its finalizer)
    c.settle()
    assert not c.store.list("persistentvolumes")[0]
    later = time.time() + RESYNC_SECONDS + 1
    monkeypatch.setattr(volume_controllers, "time", SimpleNamespace(time=lambda: later))
    passes = c.manager.passes
    c.settle()
    assert c.manager.passes == passes and not c.manager.volumes.due()
