"""The workload controllers of ``dralloc serve`` in one cycle of the controller pass: Deployments
(``deployments.py``: their ReplicaSets), ReplicaSets (their pods), StatefulSets (``stateful_sets.py``),
DaemonSets (``daemon_sets.py``) and Jobs (``jobs.py``), each over the objects it controls (found by the owner
reference with ``controller: true``). A cycle runs when a workload, a pod or a node changed since the last
one; an owner deleted takes what it controls with it through the garbage collector."""

from __future__ import annotations

from dataclasses import dataclass

from dralloc.server.controllers import jobs
from dralloc.server.controllers.daemon_sets import sync_daemon_set
from dralloc.server.controllers.deployments import sync_deployment, sync_replica_set
from dralloc.server.controllers.snapshot import Mirror, Snapshot
from dralloc.server.controllers.stateful_sets import sync_stateful_set
from dralloc.server.controllers.workload_pods import DeletePod, by_controller, meta
from dralloc.server.controllers.writes import Writer

WORKLOADS = ("deployments", "replicasets", "statefulsets", "daemonsets", "jobs")
INPUTS = (*WORKLOADS, "pods", "nodes")


@dataclass
class WorkloadControllers:
    writer: Writer
    delete_pod: DeletePod

    # the last cycle wrote: the next one looks again (what it wrote is taken in by the pass that made it)
    wrote: bool = False

    def has_work(self, mirror: Mirror) -> bool:
        """Whether a cycle may have something to do: it wrote last time, or an input changed and there are
        workloads."""
        return self.wrote or any(mirror.changed_since_taken(r) for r in INPUTS) \
            and any(mirror.items(r) for r in WORKLOADS)

    def cycle(self, snap: Snapshot) -> bool:
        """One sync of every workload; True when it wrote anything."""
        objects = snap.objects
        pods_of = by_controller(objects["pods"])
        sets_of = by_controller(objects["replicasets"])
        changed = False

        def uid(obj: dict[str, object]) -> str:
            return str(meta(obj).get("uid"))

        for deploy in objects["deployments"]:
            changed |= sync_deployment(self.writer, snap, deploy, sets_of.get(uid(deploy), []), pods_of)
        for rs in objects["replicasets"]:
            changed |= sync_replica_set(self.writer, self.delete_pod, rs, pods_of.get(uid(rs), []))
        for sts in objects["statefulsets"]:
            changed |= sync_stateful_set(self.writer, self.delete_pod, snap, sts, pods_of.get(uid(sts), []))
        for ds in objects["daemonsets"]:
            changed |= sync_daemon_set(self.writer, self.delete_pod, snap, ds, pods_of.get(uid(ds), []))
        for job in objects["jobs"]:
            changed |= jobs.sync_job(self.writer, self.delete_pod, job, pods_of.get(uid(job), []))
        self.wrote = changed
        return changed

    @staticmethod
    def finish_job_pods(writer: Writer, snap: Snapshot) -> bool:
        """``--fake-kubelet``: the running pods of unfinished Jobs end successfully."""
        live = {str(meta(j).get("uid")) for j in snap.objects["jobs"]}
        return bool(live) and jobs.finish_pods(writer, snap, live)
