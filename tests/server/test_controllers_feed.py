"""How the controllers take in the store's change feed: each run of changes of one resource goes to the
controllers that look at that resource (in the log's order), and the scheduler learns what another client's
changes may have freed."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dralloc.server.controllers import ControllerManager, Options
from dralloc.server.controllers.manager import REST_RATIO
from dralloc.store import Change, SQLiteStore


def _obj(name: str, rv: str, **fields: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}, **fields}


def _manager(tmp_path: Path) -> tuple[SQLiteStore, ControllerManager, dict[str, list[tuple[str, list[str]]]]]:
    """A manager at the store's current position whose controllers record the runs they are handed."""
    store = SQLiteStore(str(tmp_path / "s.db"))
    manager = ControllerManager(store, Options(scheduler=False))
    manager.position = store.current_rv()
    handed: dict[str, list[tuple[str, list[str]]]] = {}
    for name in ("garbage", "namespaces", "service_accounts", "root_ca", "workloads", "endpoints", "disruption",
                 "quotas", "autoscalers"):
        controller = getattr(manager, name)
        runs = handed[name] = []

        def recording(changes: Sequence[Change], runs: list[tuple[str, list[str]]] = runs,
                      notes: Any = controller.notes) -> None:
            runs.append((changes[0].resource, [c.name for c in changes]))
            notes(changes)

        controller.notes = recording
    return store, manager, handed


def test_a_run_of_changes_goes_only_to_the_controllers_that_look_at_its_resource(tmp_path: Path) -> None:
    store, manager, handed = _manager(tmp_path)
    for resource, name in [("pods", "a"), ("pods", "b"), ("configmaps", "c"), ("horizontalpodautoscalers", "h"),
                           ("pods", "d")]:
        store.create(resource, "ns", name, lambda _old, rv, name=name: _obj(name, rv))
    manager._changes()
    everything = [("pods", ["a", "b"]), ("configmaps", ["c"]), ("horizontalpodautoscalers", ["h"]), ("pods", ["d"])]
    assert handed["garbage"] == handed["namespaces"] == handed["quotas"] == everything
    assert handed["workloads"] == handed["endpoints"] == handed["disruption"] == [("pods", ["a", "b"]),
                                                                                  ("pods", ["d"])]
    assert handed["root_ca"] == [("configmaps", ["c"])] and handed["service_accounts"] == []
    assert handed["autoscalers"] == [("horizontalpodautoscalers", ["h"])]
    assert manager.autoscalers.changed
    assert manager.position == store.current_rv()
    store.close()


def test_the_scheduler_hears_of_other_clients_pod_changes_and_deletions_not_of_new_pods_or_own_writes(
        tmp_path: Path) -> None:
    store, manager, _ = _manager(tmp_path)
    for name in ("new", "changed", "gone"):
        store.create("pods", "ns", name, lambda _old, rv, name=name: _obj(name, rv))
    manager.scheduler.retry_all = False
    assert manager._changes() and not manager.scheduler.retry_all and not manager.scheduler.changed_pods
    store.update("pods", "ns", "changed", lambda old, rv: _obj("changed", rv, spec={"x": 1}))
    manager._changes()
    assert manager.scheduler.changed_pods == {("ns", "changed")} and not manager.scheduler.retry_all
    manager.writer.update("pods", "ns", "new", lambda old: {**old, "spec": {"own": True}})  # the controllers' own
    assert not manager._changes() and manager.scheduler.changed_pods == {("ns", "changed")}
    store.delete("pods", "ns", "gone")
    assert manager._changes() and manager.scheduler.retry_all
    store.close()


def test_a_storage_objects_deletion_is_news_but_no_reason_to_retry_every_pod(tmp_path: Path) -> None:
    store, manager, _ = _manager(tmp_path)
    store.create("persistentvolumes", "", "pv", lambda _old, rv: _obj("pv", rv))
    manager._changes()
    manager.scheduler.retry_all = False
    store.delete("persistentvolumes", "", "pv")
    assert manager._changes() and not manager.scheduler.retry_all
    store.create("persistentvolumes", "", "pv-2", lambda _old, rv: _obj("pv-2", rv))
    assert manager._changes() and manager.scheduler.retry_all
    store.close()


def test_after_a_costly_pass_the_next_one_rests_in_proportion(tmp_path: Path, monkeypatch: Any) -> None:
    """A pass that took the thread T seconds of CPU is followed by REST_RATIO × T without a pass, so that
    controllers whose passes grow with the cluster take in more changes at once instead of most of the
    interpreter."""
    store, manager, _ = _manager(tmp_path)

    def busy(force: bool = True) -> bool:
        end = time.thread_time() + 0.05
        while time.thread_time() < end:
            pass
        return False

    monkeypatch.setattr(manager, "run_once", busy)
    manager.timed_pass(False)
    assert manager.pause() >= REST_RATIO * 0.05 - 0.01
    store.close()
