"""The LeaderWorkerSet controllers and pod webhook (kubernetes-sigs/lws, API leaderworkerset.x-k8s.io/v1).

* The LeaderWorkerSet controller makes the leader StatefulSet ``<lws>`` (owned by the set; ``replicas``
  pods, Parallel, service ``<lws>``, selector ``name`` and ``worker-index: 0``) from the leader template (or
  the worker template without one), its pods labelled ``worker-index: 0``, ``name`` and
  ``template-revision-hash`` and annotated ``size`` (and the exclusive-topology, sub-group and
  UniquePerReplica subdomain annotations when set). The StatefulSet controller names the leaders
  ``<lws>-<groupIndex>``.
* The pod controller makes, for each leader pod of a set with ``size`` above 1, the worker StatefulSet named
  after the leader (owned by the leader pod; ``size - 1`` pods from ordinal 1, so ``<lws>-<group>-<worker>``)
  from the worker template, labelled ``group-index``, ``name``, ``group-key`` and the revision hash, annotated
  ``size`` and ``leader-name``. Its service is ``<lws>``, or the leader's own (a headless Service named after
  it) with the UniquePerReplica subdomain policy.
* The pod webhook labels a leader ``group-index`` (its ordinal) and ``group-key`` (the SHA-1 hex digest of
  ``<namespace>/<leader pod name>``), a worker ``worker-index`` (its ordinal); with sub-groups, each pod gets
  ``subgroup-index`` and ``subgroup-key`` (SHA-1 of ``<leader name>/<subgroup index>``; the leader is in
  sub-group 0 unless the policy is LeaderExcluded). With ``leaderworkerset.sigs.k8s.io/exclusive-topology``
  on the set, the leader requires pod affinity to its group (``group-key In [<key>]``) and anti-affinity to
  other groups (``group-key Exists``, ``group-key NotIn [<key>]``) over that topology key; with
  ``subgroup-exclusive-topology`` every sub-group member does the same with ``subgroup-key``.
* Upstream creates an exclusive group's workers only once its leader is scheduled, with a nodeSelector for
  the leader's domain; a simulation creates every pod at once, so the workers instead require pod affinity
  to their leader (``group-key In [<key>]``, ``worker-index In [0]``) over the same key: they land in the
  leader's domain, and wait while the leader has none. ``startupPolicy: LeaderReady`` only delays the
  workers' creation in time; here they are made at once, as a StatefulSet's ordered start is.
* ``template-revision-hash`` is the set's revision key: FNV-32 (not 32a) over the revision patch of the
  leader-worker template and network config, its decimal digits safe-encoded. Upstream hashes the Go
  encoding of its types; dralloc hashes the canonical JSON of the manifest's, so the key has upstream's form
  and stability but not its exact value.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from msgspec.structs import replace

from dralloc.api import codec
from dralloc.api.apps_v1 import StatefulSet, StatefulSetOrdinals, StatefulSetSpec
from dralloc.api.core_v1 import Affinity, Pod, PodTemplateSpec, Service, ServiceSpec
from dralloc.api.leaderworkerset_v1 import (
    LEADER_EXCLUDED,
    SUBDOMAIN_SHARED,
    SUBDOMAIN_UNIQUE_PER_REPLICA,
    LeaderWorkerSet,
    defaulted,
)
from dralloc.api.meta import LabelSelector, ObjectMeta, OwnerReference
from dralloc.controllers.names import NameGenerator, fnv32, go_json, safe_encode
from dralloc.controllers.required_affinity import (
    has_required_term,
    required_term,
    requirement,
    with_required_terms,
)
from dralloc.controllers.workloads import Owned, controller_ref, expand_statefulset, is_active

__all__ = [
    "GROUP_KEY",
    "NAME_KEY",
    "LeaderWorkerSetObjects",
    "admit_lws_pod",
    "expand_leaderworkerset",
    "group_key",
    "leader_statefulset",
    "revision_key",
    "worker_statefulset",
]

NAME_KEY = "leaderworkerset.sigs.k8s.io/name"
GROUP_INDEX_KEY = "leaderworkerset.sigs.k8s.io/group-index"
WORKER_INDEX_KEY = "leaderworkerset.sigs.k8s.io/worker-index"
GROUP_KEY = "leaderworkerset.sigs.k8s.io/group-key"
REVISION_KEY = "leaderworkerset.sigs.k8s.io/template-revision-hash"
SIZE_KEY = "leaderworkerset.sigs.k8s.io/size"
REPLICAS_KEY = "leaderworkerset.sigs.k8s.io/replicas"
LEADER_NAME_KEY = "leaderworkerset.sigs.k8s.io/leader-name"
EXCLUSIVE_KEY = "leaderworkerset.sigs.k8s.io/exclusive-topology"
SUBGROUP_EXCLUSIVE_KEY = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
SUBGROUP_INDEX_KEY = "leaderworkerset.sigs.k8s.io/subgroup-index"
SUBGROUP_SIZE_KEY = "leaderworkerset.sigs.k8s.io/subgroup-size"
SUBGROUP_KEY = "leaderworkerset.sigs.k8s.io/subgroup-key"
SUBGROUP_POLICY_TYPE_KEY = "leaderworkerset.sigs.k8s.io/subgroup-policy-type"
SUBDOMAIN_POLICY_KEY = "leaderworkerset.sigs.k8s.io/subdomainPolicy"
STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def group_key(namespace: str, leader: str) -> str:
    """``genGroupUniqueKey``: the SHA-1 hex digest of ``<namespace>/<leader pod name>``."""
    return _sha1(f"{namespace}/{leader}")


def revision_key(lws: LeaderWorkerSet) -> str:
    """The ``template-revision-hash`` of a new set's first revision (see the module docstring)."""
    lws = defaulted(lws)
    spec = codec.to_dict(lws.spec)
    patch = {"spec": {"leaderWorkerTemplate": {**spec.get("leaderWorkerTemplate", {}), "$patch": "replace"},
                      "networkConfig": {**spec.get("networkConfig", {}), "$patch": "replace"}}}
    return safe_encode(str(fnv32(go_json(patch))))


def _with_metadata(template: PodTemplateSpec, labels: dict[str, str], annotations: dict[str, str]) -> PodTemplateSpec:
    meta = template.metadata or ObjectMeta()
    return replace(template, metadata=replace(meta, labels={**(meta.labels or {}), **labels},
                                              annotations={**(meta.annotations or {}), **annotations}))


def _sub_group_annotations(lws: LeaderWorkerSet) -> dict[str, str]:
    policy = lws.spec.leader_worker_template.sub_group_policy
    if policy is None:
        return {}
    out = {SUBGROUP_POLICY_TYPE_KEY: policy.sub_group_policy_type or "",
           SUBGROUP_SIZE_KEY: str(policy.sub_group_size or 0)}
    exclusive = (lws.metadata.annotations or {}).get(SUBGROUP_EXCLUSIVE_KEY)
    if exclusive:
        out[SUBGROUP_EXCLUSIVE_KEY] = exclusive
    return out


def _exclusive(lws: LeaderWorkerSet) -> str:
    return (lws.metadata.annotations or {}).get(EXCLUSIVE_KEY, "")


def leader_statefulset(lws: LeaderWorkerSet, revision: str) -> StatefulSet:
    """``constructLeaderStatefulSetApplyConfiguration`` for a new set (``lws`` defaulted, with its UID)."""
    name = lws.metadata.name or ""
    template_spec = lws.spec.leader_worker_template
    annotations = {SIZE_KEY: str(template_spec.size)}
    if _exclusive(lws):
        annotations[EXCLUSIVE_KEY] = _exclusive(lws)
    annotations.update(_sub_group_annotations(lws))
    network = lws.spec.network_config
    if network is not None and network.subdomain_policy == SUBDOMAIN_UNIQUE_PER_REPLICA:
        annotations[SUBDOMAIN_POLICY_KEY] = SUBDOMAIN_UNIQUE_PER_REPLICA
    template = _with_metadata(template_spec.leader_template or template_spec.worker_template,
                              {WORKER_INDEX_KEY: "0", NAME_KEY: name, REVISION_KEY: revision}, annotations)
    return StatefulSet(
        metadata=ObjectMeta(name=name, namespace=lws.metadata.namespace,
                            labels={**(lws.metadata.labels or {}), NAME_KEY: name, REVISION_KEY: revision},
                            annotations={**(lws.metadata.annotations or {}), REPLICAS_KEY: str(lws.spec.replicas)},
                            owner_references=[controller_ref(lws)]),
        spec=StatefulSetSpec(replicas=lws.spec.replicas, service_name=name, pod_management_policy="Parallel",
                             selector=LabelSelector(match_labels={NAME_KEY: name, WORKER_INDEX_KEY: "0"}),
                             template=template, volume_claim_templates=template_spec.volume_claim_templates),
    )


def _follow_leader(affinity: Affinity | None, key: str, topology: str) -> Affinity:
    """The stand-in for the leader's-domain nodeSelector (see the module docstring)."""
    term = required_term(topology, requirement(GROUP_KEY, "In", [key]), requirement(WORKER_INDEX_KEY, "In", ["0"]))
    return with_required_terms(affinity, term, None)


def worker_statefulset(lws: LeaderWorkerSet, leader: Pod, revision: str) -> StatefulSet:
    """``constructWorkerStatefulSetApplyConfiguration`` for a leader pod (``lws`` defaulted)."""
    name, leader_name = lws.metadata.name or "", leader.metadata.name or ""
    leader_labels = leader.metadata.labels or {}
    selector = {GROUP_INDEX_KEY: leader_labels.get(GROUP_INDEX_KEY, ""), NAME_KEY: name,
                GROUP_KEY: leader_labels.get(GROUP_KEY, "")}
    labels = {**selector, REVISION_KEY: leader_labels.get(REVISION_KEY, revision)}
    template_spec = lws.spec.leader_worker_template
    annotations = {SIZE_KEY: str(template_spec.size), LEADER_NAME_KEY: leader_name}
    if _exclusive(lws):
        annotations[EXCLUSIVE_KEY] = _exclusive(lws)
    annotations.update(_sub_group_annotations(lws))
    template = _with_metadata(template_spec.worker_template, labels, annotations)
    if _exclusive(lws):
        template = replace(template, spec=replace(template.spec, affinity=_follow_leader(
            template.spec.affinity, leader_labels.get(GROUP_KEY, ""), _exclusive(lws))))
    network = lws.spec.network_config
    shared = network is None or network.subdomain_policy == SUBDOMAIN_SHARED
    owner = OwnerReference(api_version="v1", kind="Pod", name=leader_name, uid=leader.metadata.uid or "",
                           controller=True, block_owner_deletion=True)
    return StatefulSet(
        metadata=ObjectMeta(name=leader_name, namespace=leader.metadata.namespace,
                            labels={**(lws.metadata.labels or {}), **labels},
                            annotations=dict(lws.metadata.annotations) if lws.metadata.annotations else None,
                            owner_references=[owner]),
        spec=StatefulSetSpec(replicas=(template_spec.size or 1) - 1, service_name=name if shared else leader_name,
                             pod_management_policy="Parallel", ordinals=StatefulSetOrdinals(start=1),
                             selector=LabelSelector(match_labels=selector), template=template,
                             volume_claim_templates=template_spec.volume_claim_templates),
    )


def _service(name: str, namespace: str | None, selector: dict[str, str], owner: OwnerReference) -> Service:
    return Service(metadata=ObjectMeta(name=name, namespace=namespace, owner_references=[owner]),
                   spec=ServiceSpec(selector=selector))


# --- the pod webhook -----------------------------------------------------------------------------------


def _exclusive_applied(affinity: Affinity | None, topology: str) -> bool:
    """``exclusiveAffinityApplied``: both a required affinity and anti-affinity term over ``topology``."""
    if affinity is None:
        return False
    return has_required_term(affinity.pod_affinity, topology) and has_required_term(affinity.pod_anti_affinity,
                                                                                  topology)


def _set_exclusive(pod: Pod, key: str, topology: str, label: str) -> Pod:
    """``SetExclusiveAffinities``: with pods of the same ``label`` value over ``topology``, away from others."""
    if _exclusive_applied(pod.spec.affinity, topology):
        return pod
    together = required_term(topology, requirement(label, "In", [key]))
    apart = required_term(topology, requirement(label, "Exists"), requirement(label, "NotIn", [key]))
    return replace(pod, spec=replace(pod.spec, affinity=with_required_terms(pod.spec.affinity, together, apart)))


def _ordinal(name: str) -> int:
    """``GetParentNameAndOrdinal``: the number after the last dash (-1 when there is none)."""
    head, _, tail = name.rpartition("-")
    return int(tail) if head and tail.isdigit() else -1


def sub_group_index(size: int, sub_group_size: int, worker_index: int) -> str:
    """``getSubGroupIndex``: the leader counts as an extra pod of the first sub-group when ``size - 1`` (and
    not ``size``) divides into sub-groups."""
    if (size - 1) % sub_group_size == 0 and size % sub_group_size != 0:
        return str((worker_index - 1) // sub_group_size)
    return str(worker_index // sub_group_size)


def admit_lws_pod(pod: Pod) -> Pod:
    """The LeaderWorkerSet pod webhook on a new pod (see the module docstring)."""
    meta = pod.metadata
    labels = dict(meta.labels or {})
    if NAME_KEY not in labels:
        return pod
    annotations = meta.annotations or {}
    size = int(annotations.get(SIZE_KEY, "1"))
    name = meta.name or ""
    exclusive: list[tuple[str, str, str]] = []  # (key, topology, label)
    has_sub_groups = SUBGROUP_SIZE_KEY in annotations and not labels.get(SUBGROUP_INDEX_KEY)
    sub_topology = annotations.get(SUBGROUP_EXCLUSIVE_KEY)
    if labels.get(WORKER_INDEX_KEY) == "0":
        labels.setdefault(GROUP_INDEX_KEY, str(_ordinal(name)))
        key = labels.setdefault(GROUP_KEY, group_key(meta.namespace or "default", name))
        if EXCLUSIVE_KEY in annotations:
            exclusive.append((key, annotations[EXCLUSIVE_KEY], GROUP_KEY))
        if has_sub_groups and annotations.get(SUBGROUP_POLICY_TYPE_KEY) != LEADER_EXCLUDED:
            labels[SUBGROUP_INDEX_KEY] = "0"
            labels[SUBGROUP_KEY] = _sha1(f"{name}/0")
            if sub_topology is not None:
                exclusive.append((labels[SUBGROUP_KEY], sub_topology, SUBGROUP_KEY))
    else:
        worker = _ordinal(name)
        labels[WORKER_INDEX_KEY] = str(worker)
        if has_sub_groups:
            index = sub_group_index(size, int(annotations[SUBGROUP_SIZE_KEY]), worker)
            labels[SUBGROUP_INDEX_KEY] = index
            labels[SUBGROUP_KEY] = _sha1(f"{annotations.get(LEADER_NAME_KEY, '')}/{index}")
            if sub_topology is not None:
                exclusive.append((labels[SUBGROUP_KEY], sub_topology, SUBGROUP_KEY))
    pod = replace(pod, metadata=replace(meta, labels=labels))
    for key, topology, label in exclusive:
        pod = _set_exclusive(pod, key, topology, label)
    return pod


# --- the whole set -------------------------------------------------------------------------------------


class LeaderWorkerSetObjects:
    """What the controllers make for one set: StatefulSets, Services and pods (in creation order)."""

    def __init__(self) -> None:
        self.statefulsets: list[StatefulSet] = []
        self.services: list[Service] = []
        self.pods: list[Pod] = []


def expand_leaderworkerset(lws: LeaderWorkerSet, names: NameGenerator, owned: Owned,
                           existing: Callable[[str, str, str], bool]) -> LeaderWorkerSetObjects:
    """The leader StatefulSet, each leader's worker StatefulSet, the headless Services and the pods, for what
    the input lacks: ``existing(kind, namespace, name)`` says whether the input holds an object, ``owned``
    finds the input's pods (and the leader StatefulSet's) by their controller. ``lws`` must have its UID."""
    lws = defaulted(lws)
    out = LeaderWorkerSetObjects()
    namespace = lws.metadata.namespace or "default"
    name = lws.metadata.name or ""
    revision = revision_key(lws)
    network = lws.spec.network_config
    unique = network is not None and network.subdomain_policy == SUBDOMAIN_UNIQUE_PER_REPLICA
    if not unique and not existing("Service", namespace, name):
        out.services.append(_service(name, lws.metadata.namespace, {NAME_KEY: name}, controller_ref(lws)))
    leader_set = next((s for s in owned.of(lws) if isinstance(s, StatefulSet) and s.metadata.name == name), None)
    leaders = [p for p in owned.of(leader_set) if is_active(p)] if leader_set is not None else []
    if leader_set is None:
        leader_set = leader_statefulset(lws, revision)
        leader_set = replace(leader_set, metadata=replace(leader_set.metadata, uid=names.uid()))
        out.statefulsets.append(leader_set)
        made = [admit_lws_pod(p) for p in expand_statefulset(leader_set, names, owned)]
        out.pods.extend(made)
        leaders += made
    size = lws.spec.leader_worker_template.size or 1
    for leader in sorted(leaders, key=lambda p: _ordinal(p.metadata.name or "")):
        leader_name = leader.metadata.name or ""
        if unique and not existing("Service", namespace, leader_name):
            out.services.append(_service(leader_name, lws.metadata.namespace, {
                NAME_KEY: name, GROUP_INDEX_KEY: (leader.metadata.labels or {}).get(GROUP_INDEX_KEY, "")},
                OwnerReference(api_version="v1", kind="Pod", name=leader_name, uid=leader.metadata.uid or "",
                               controller=True, block_owner_deletion=True)))
        if size == 1 or existing("StatefulSet", namespace, leader_name):
            continue
        workers = worker_statefulset(lws, leader, revision)
        workers = replace(workers, metadata=replace(workers.metadata, uid=names.uid()))
        out.statefulsets.append(workers)
        out.pods.extend(admit_lws_pod(p) for p in expand_statefulset(workers, names, owned))
    return out
