"""What-if changes to a simulation's cluster: add nodes like an existing one, remove a node."""

from __future__ import annotations

from msgspec.structs import replace

from dralloc.api.core_v1 import Node, Pod
from dralloc.api.resource_v1 import ResourceSlice
from dralloc.errors import InputError
from dralloc.scheduler.snapshot import rebuild
from dralloc.simulator.result import PodResult
from dralloc.simulator.view import SimulationView

HOSTNAME_LABEL = "kubernetes.io/hostname"


def _rename(text: str, old: str, new: str, fallback_suffix: bool = True) -> str:
    if old and old in text:
        return text.replace(old, new)
    return f"{text}-{new}" if fallback_suffix else text


def clone_node(node: Node, slices: list[ResourceSlice], new_name: str) -> tuple[Node, list[ResourceSlice]]:
    """A copy of ``node`` named ``new_name`` with its node-local slices as a driver would publish them on
    it: node name, pool name and slice name rewritten (the old node name replaced, else suffixed)."""
    old = node.metadata.name or ""
    labels = dict(node.metadata.labels or {})
    if labels.get(HOSTNAME_LABEL) == old:
        labels[HOSTNAME_LABEL] = new_name
    clone = replace(node, metadata=replace(node.metadata, name=new_name, uid=None, resource_version=None,
                                           creation_timestamp=None, labels=labels or None))
    out = []
    for s in slices:
        spec = s.spec
        pool = replace(spec.pool, name=_rename(spec.pool.name, old, new_name))
        meta = replace(s.metadata, name=_rename(s.metadata.name or "", old, new_name), uid=None,
                       resource_version=None, creation_timestamp=None)
        out.append(replace(s, metadata=meta, spec=replace(spec, node_name=new_name, pool=pool)))
    return clone, out


def clone_nodes(sched: SimulationView, count: int, like: str) -> list[str]:
    snap = sched.snapshot
    if like not in snap.by_name:
        raise InputError(f"--like: node {like!r} is not in the input")
    if count < 0:
        raise InputError("--add-nodes: must be at least 0")
    template = snap.by_name[like].node
    local = [s for s in snap.raw_slices if s.spec.node_name == like]
    nodes = list(snap.node_list)
    slices = list(snap.raw_slices)
    taken = set(snap.by_name)
    names: list[str] = []
    i = 0
    while len(names) < count:
        i += 1
        name = f"{like}-whatif-{i}"
        if name in taken:
            continue
        node, node_slices = clone_node(template, local, name)
        nodes.append(node)
        slices.extend(node_slices)
        names.append(name)
    rebuild(snap, nodes, slices)
    return names


def remove_node(sched: SimulationView, name: str) -> list[str]:
    return remove_nodes(sched, [name])


def remove_nodes(sched: SimulationView, names: list[str]) -> list[str]:
    """Remove nodes and their node-local slices at once (one rebuild of the DRA state); their pods become
    pending again with their claims deallocated. Returns the keys of the pods that became pending."""
    snap = sched.snapshot
    moved = []
    for name in names:
        info = snap.by_name.get(name)
        if info is None:
            raise InputError(f"--remove-node: node {name!r} is not in the input")
        for pod in list(info.pods):
            sched.cache.remove_pod(pod, info)
            sched.release_claims(pod.pod, pod_deleted=False)
            pod.pod = replace(pod.pod, spec=replace(pod.pod.spec, node_name=None))
            pod.claim_footprint = {}
            result = sched.results[pod.key]
            result.pod, result.node, result.status = pod.pod, None, "pending"
            result.message = f"was on node {name}, which was removed"
            sched.pending.append(pod)
            moved.append(pod.key)
    gone = set(names)
    nodes = [n for n in snap.node_list if n.metadata.name not in gone]
    slices = [s for s in snap.raw_slices if s.spec.node_name not in gone]
    rebuild(snap, nodes, slices)
    return moved


def max_copies(sched: SimulationView, target: str, limit: int = 10_000) -> tuple[int, dict[str, int], str]:
    """How many more copies of a pod fit after the simulation: (count, copies per node, the message that
    stopped the next copy). ``target`` is ``namespace/name`` or a pod name; copies get names
    ``<name>-max-<i>`` and their own claims from the pod's templates."""
    from dralloc.api.core_v1 import PodStatus

    result = _find_pod(sched, target)
    if result is None:
        raise InputError(f"--max: no pod or workload {target!r} in the input")
    base = result.pod
    spec = replace(base.spec, node_name=None)
    per_node: dict[str, int] = {}
    message = ""
    for i in range(1, limit + 1):
        meta = replace(base.metadata, name=f"{base.metadata.name}-max-{i}", uid=None, resource_version=None)
        status = PodStatus(resource_claim_statuses=[s for s in (base.status.resource_claim_statuses or ())
                                                    if not _from_template(base, s.name)]
                           if base.status is not None else None)
        copy = replace(base, metadata=meta, spec=spec, status=status)
        outcome = sched.schedule_pod(copy)
        if outcome.node is None:
            message = outcome.message
            return i - 1, per_node, message
        per_node[outcome.node] = per_node.get(outcome.node, 0) + 1
    return limit, per_node, f"stopped after {limit} copies"


def _find_pod(sched: SimulationView, target: str) -> PodResult | None:
    """A pod by ``namespace/name`` or name, else the first pod a workload of that name created (``name``,
    ``Kind/name`` or ``namespace/name``; a Deployment's pods belong to its ReplicaSet ``<name>-<hash>``)."""
    if target in sched.results:
        return sched.results[target]
    kind, _, rest = target.rpartition("/") if target.count("/") == 1 and target[0].isupper() else ("", "", target)
    ns, _, name = rest.rpartition("/")
    for key, result in sched.results.items():
        if key.split("/", 1)[1] == name and (not ns or key.split("/", 1)[0] == ns):
            return result
    for result in sched.results.values():
        if ns and result.namespace != ns:
            continue
        for owner in result.pod.metadata.owner_references or ():
            via_rs = owner.kind == "ReplicaSet" and owner.name.rpartition("-")[0] == name and kind in ("", "Deployment")
            if (owner.name == name and (not kind or owner.kind == kind)) or via_rs:
                return result
    return None


def _from_template(pod: Pod, claim_name: str) -> bool:
    spec = pod.spec
    return any(pc.name == claim_name and pc.resource_claim_template_name for pc in spec.resource_claims or ())
