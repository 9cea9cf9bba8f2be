"""The pods the workload controllers would create, as pure functions of the workload (and the nodes).

* Deployment -> its new ReplicaSet ``<deployment>-<pod-template-hash>`` (label and selector
  ``pod-template-hash``, revision annotations) -> the ReplicaSet's pods.
* ReplicaSet -> ``spec.replicas`` pods named ``<replicaset>-`` + 5 random characters.
* StatefulSet -> pods ``<set>-<ordinal>`` for ordinals ``spec.ordinals.start`` onwards, labelled with
  their pod name, index and revision. Pods are created all at once (as ``Parallel`` does; ``OrderedReady``
  only spaces the same pods out in time).
* Job -> ``min(parallelism, completions)`` pods (``parallelism`` without completions; none when suspended):
  ``<job>-`` + 5 characters (NonIndexed) or ``<job>-<index>-`` + 5 characters for the lowest indexes
  (Indexed, with the completion-index annotation and label), carrying the job-tracking finalizer.
* DaemonSet -> one pod per node that should run it (``daemonset_should_run``), pinned to the node by
  replacing the required node-affinity terms with ``matchFields metadata.name In [<node>]``, with the
  automatic daemon tolerations.

A dump of a running cluster holds the controllers' objects too: each controller reconciles, as upstream's do,
against the pods (and a Deployment against the ReplicaSets) of the input that name it as their controller
(an ownerReference with ``controller: true``, same namespace, kind and name, and UID when both have one): a
ReplicaSet creates only ``replicas`` minus its active pods (not finished, not being deleted); a StatefulSet only
its missing ordinals; a DaemonSet only on nodes without its pod; a Job only up to ``parallelism`` active pods
(and no more than the completions left: ``completions`` minus ``status.succeeded``), Indexed Jobs their missing
indexes; a Deployment whose ReplicaSet for its current template exists creates none (with older ReplicaSets
still holding pods, a new one starts at ``replicas + maxSurge`` minus their replicas for RollingUpdate, and at
0 for Recreate until the old pods are gone).

Every pod gets the controller's namespace, an ownerReference to it (controller, blockOwnerDeletion), the
template's labels, annotations and finalizers, and a UID. Names and UIDs come from a NameGenerator, drawn
in the order the pods are made, so the same inputs and seed give the same pods.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from msgspec.structs import replace

from dralloc.allocator.nodes import NodeSelectorError, node_selector_matches
from dralloc.api import apps_v1, batch_v1, codec
from dralloc.api.core_v1 import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolumeClaimVolumeSource,
    Pod,
    PodSpec,
    PodTemplateSpec,
    Taint,
    Toleration,
    Volume,
)
from dralloc.api.core_v1_storage import PersistentVolumeClaim
from dralloc.api.meta import LabelSelector, ObjectMeta, OwnerReference
from dralloc.api.tolerations import tolerates
from dralloc.controllers.names import MAX_GENERATED_NAME_LENGTH, NameGenerator, pod_template_hash

__all__ = [
    "DAEMON_TOLERATIONS",
    "daemonset_pod",
    "daemonset_should_run",
    "expand_daemonset",
    "expand_deployment",
    "expand_job",
    "expand_replicaset",
    "expand_statefulset",
    "expand_workloads",
    "statefulset_claims",
    "Owned",
    "is_active",
    "replicaset_for_deployment",
    "with_uid",
]

POD_TEMPLATE_HASH = "pod-template-hash"
REVISION_HASH = "controller-revision-hash"
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
DS_TEMPLATE_GENERATION = "pod-template-generation"
DS_TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
# Deployment annotations the controller does not copy onto its ReplicaSets.
_NOT_COPIED = frozenset({
    "kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision",
    "deployment.kubernetes.io/revision-history", "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas", "deprecated.deployment.rollback.to",
})


# --- shared -----------------------------------------------------------------------------------------


def with_uid(obj: Any, names: NameGenerator) -> Any:
    """``obj`` with a UID: the one it has, or a new one as the API server would assign on create."""
    if obj.metadata.uid:
        return obj
    return replace(obj, metadata=replace(obj.metadata, uid=names.uid()))


def controller_ref(owner: Any) -> OwnerReference:
    return OwnerReference(api_version=owner.api_version, kind=owner.kind, name=owner.metadata.name or "",
                          uid=owner.metadata.uid or "", controller=True, block_owner_deletion=True)


def _pod_from_template(template: PodTemplateSpec, owner: Any, names: NameGenerator, *, name: str | None = None,
                       generate_name: str | None = None) -> Pod:
    """GetPodFromTemplate: the template's labels, annotations and finalizers, the owner's namespace and a
    controller reference; named ``name`` or by the API server from ``generate_name``."""
    meta = template.metadata or ObjectMeta()
    final_name = name if name is not None else names.generate(generate_name or "")
    return Pod(
        metadata=ObjectMeta(
            name=final_name, generate_name=generate_name, namespace=owner.metadata.namespace,
            uid=names.uid(), labels=dict(meta.labels) if meta.labels else None,
            annotations=dict(meta.annotations) if meta.annotations else None,
            finalizers=list(meta.finalizers) if meta.finalizers else None,
            owner_references=[controller_ref(owner)]),
        spec=template.spec,
    )


def _with_labels(template: PodTemplateSpec, labels: dict[str, str], annotations: dict[str, str] | None = None,
                 finalizer: str | None = None) -> PodTemplateSpec:
    meta = template.metadata or ObjectMeta()
    new_annotations = {**(meta.annotations or {}), **annotations} if annotations else meta.annotations
    finalizers = meta.finalizers
    if finalizer is not None and finalizer not in (finalizers or []):
        finalizers = [*(finalizers or []), finalizer]
    return replace(template, metadata=replace(meta, labels={**(meta.labels or {}), **labels},
                                              annotations=new_annotations, finalizers=finalizers))


def _replicas(value: int | None) -> int:
    return 1 if value is None else max(value, 0)


class Owned:
    """The input's objects by their controller: what each controller already has."""

    def __init__(self, objects: Iterable[Any] = ()) -> None:
        self._by_owner: dict[tuple[str, str, str], list[Any]] = {}
        for obj in objects:
            meta = obj.metadata
            for ref in meta.owner_references or ():
                if ref.controller:
                    key = (meta.namespace or "default", ref.kind, ref.name)
                    self._by_owner.setdefault(key, []).append((ref.uid, obj))

    def of(self, owner: Any) -> list[Any]:
        """The objects whose controller is ``owner`` (by namespace, kind and name; UIDs must agree when both
        are known)."""
        meta = owner.metadata
        found = self._by_owner.get((meta.namespace or "default", owner.kind, meta.name or ""), [])
        uid = meta.uid or ""
        return [obj for ref_uid, obj in found if not uid or not ref_uid or ref_uid == uid]


def is_active(pod: Pod) -> bool:
    """controller.FilterActivePods: not finished and not being deleted."""
    phase = pod.status.phase if pod.status is not None else None
    return phase not in ("Succeeded", "Failed") and not pod.metadata.deletion_timestamp


# --- Deployment and ReplicaSet ----------------------------------------------------------------------


def _scaled(value: Any, total: int, round_up: bool) -> int:
    """intstr's GetScaledValueFromIntOrPercent for maxSurge/maxUnavailable (validation has made sure of the
    form: an integer, or digits and a percent sign)."""
    if isinstance(value, int):
        return value
    text = str(value)
    if not text.endswith("%"):
        return int(text) if text.isdigit() else 0
    scaled = int(text[:-1] or 0) * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def rollout_fenceposts(strategy: Mapping[str, Any] | None, replicas: int) -> tuple[int, int]:
    """A Deployment's (maxSurge, maxUnavailable) for ``replicas``, as the deployment controller resolves them
    (ResolveFenceposts and MaxUnavailable): surge rounded up, unavailable rounded down and at most the
    replicas, and when both come to 0, one pod may be unavailable; Recreate surges nothing and may stop all."""
    strategy = strategy or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return 0, replicas
    rolling = strategy.get("rollingUpdate") or {}
    surge = _scaled(rolling.get("maxSurge", "25%"), replicas, True)
    unavailable = _scaled(rolling.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, min(unavailable, replicas)


def _max_surge(deploy: apps_v1.Deployment, replicas: int) -> int:
    return rollout_fenceposts(deploy.spec.strategy, replicas)[0]


def replicaset_for_deployment(deploy: apps_v1.Deployment) -> apps_v1.ReplicaSet:
    """The new ReplicaSet the Deployment controller creates for a Deployment without one (revision 1).

    Its name is ``<deployment>-<pod-template-hash>``; the hash label is added to the template and the
    selector; it asks for all ``spec.replicas`` (a first rollout has no old pods to surge over)."""
    status = deploy.status
    template_hash = pod_template_hash(deploy.spec.template, status.collision_count if status else None)
    template = _with_labels(deploy.spec.template, {POD_TEMPLATE_HASH: template_hash})
    selector = deploy.spec.selector or LabelSelector()
    selector = replace(selector, match_labels={**(selector.match_labels or {}), POD_TEMPLATE_HASH: template_hash})
    replicas = _replicas(deploy.spec.replicas)
    annotations = {k: v for k, v in (deploy.metadata.annotations or {}).items() if k not in _NOT_COPIED}
    annotations.update({
        "deployment.kubernetes.io/revision": "1",
        "deployment.kubernetes.io/desired-replicas": str(replicas),
        "deployment.kubernetes.io/max-replicas": str(replicas + _max_surge(deploy, replicas)),
    })
    return apps_v1.ReplicaSet(
        metadata=ObjectMeta(name=f"{deploy.metadata.name}-{template_hash}", namespace=deploy.metadata.namespace,
                            labels=(template.metadata.labels if template.metadata else None),
                            annotations=annotations, owner_references=[controller_ref(deploy)]),
        spec=apps_v1.ReplicaSetSpec(replicas=replicas, min_ready_seconds=deploy.spec.min_ready_seconds,
                                    selector=selector, template=template),
    )


def _equal_ignore_hash(a: PodTemplateSpec | None, b: PodTemplateSpec | None) -> bool:
    """``EqualIgnoreHash``: two pod templates are the same once the pod-template-hash label is dropped (how the
    Deployment controller finds its current ReplicaSet; the hash a cluster wrote is not recomputed)."""
    def canonical(t: PodTemplateSpec | None) -> Any:
        data = codec.to_dict(t) if t is not None else {}
        labels = (data.get("metadata") or {}).get("labels")
        if labels:
            labels.pop(POD_TEMPLATE_HASH, None)
            if not labels:
                del data["metadata"]["labels"]
        if "metadata" in data and not data["metadata"]:
            del data["metadata"]
        return data
    return bool(canonical(a) == canonical(b))


def expand_replicaset(rs: apps_v1.ReplicaSet, names: NameGenerator, owned: Owned | None = None) -> list[Pod]:
    """The pods the ReplicaSet still needs (``spec.replicas`` minus its active pods in the input),
    ``<replicaset>-`` + 5 random characters each."""
    template = rs.spec.template or PodTemplateSpec()
    have = sum(1 for p in owned.of(rs) if is_active(p)) if owned is not None else 0
    return [_pod_from_template(template, rs, names, generate_name=f"{rs.metadata.name}-")
            for _ in range(max(_replicas(rs.spec.replicas) - have, 0))]


def expand_deployment(deploy: apps_v1.Deployment, names: NameGenerator, owned: Owned | None = None
                      ) -> tuple[apps_v1.ReplicaSet | None, list[Pod]]:
    """The Deployment's new ReplicaSet (with a UID) and its pods; (None, []) when the input already has the
    ReplicaSet for the current template (it reconciles as a ReplicaSet of the input)."""
    rs = replicaset_for_deployment(deploy)
    sets = [r for r in owned.of(deploy) if isinstance(r, apps_v1.ReplicaSet)] if owned is not None else []
    if any(_equal_ignore_hash(r.spec.template, deploy.spec.template) for r in sets):
        return None, []
    old = [r for r in sets if _replicas(r.spec.replicas) > 0]
    if old:
        replicas = _replicas(deploy.spec.replicas)
        strategy = (deploy.spec.strategy or {}).get("type", "RollingUpdate")
        old_total = sum(_replicas(r.spec.replicas) for r in old)
        start = 0 if strategy != "RollingUpdate" else \
            max(min(replicas + _max_surge(deploy, replicas) - old_total, replicas), 0)
        rs = replace(rs, spec=replace(rs.spec, replicas=start))
    rs = with_uid(rs, names)
    return rs, expand_replicaset(rs, names, owned)


# --- StatefulSet ------------------------------------------------------------------------------------


def expand_statefulset(sts: apps_v1.StatefulSet, names: NameGenerator, owned: Owned | None = None) -> list[Pod]:
    """Pods ``<set>-<ordinal>`` for the ``spec.replicas`` ordinals from ``spec.ordinals.start`` that the
    input does not already hold."""
    have = {p.metadata.name for p in owned.of(sts)} if owned is not None else set()
    start = sts.spec.ordinals.start if sts.spec.ordinals else 0
    status = sts.status
    revision = f"{sts.metadata.name}-{pod_template_hash(sts.spec.template, status.collision_count if status else None)}"
    pods = []
    for ordinal in range(start, start + _replicas(sts.spec.replicas)):
        name = f"{sts.metadata.name}-{ordinal}"
        if name in have:
            continue
        template = _with_labels(sts.spec.template, {
            "statefulset.kubernetes.io/pod-name": name, "apps.kubernetes.io/pod-index": str(ordinal),
            REVISION_HASH: revision})
        template = replace(template, spec=_with_claim_volumes(template.spec, sts, ordinal))
        pods.append(_pod_from_template(template, sts, names, name=name))
    return pods


def statefulset_claim_name(claim_template: str, sts: apps_v1.StatefulSet, ordinal: int) -> str:
    """``getPersistentVolumeClaimName``: ``<template>-<set>-<ordinal>``."""
    return f"{claim_template}-{sts.metadata.name}-{ordinal}"


def _with_claim_volumes(spec: PodSpec, sts: apps_v1.StatefulSet, ordinal: int) -> PodSpec:
    """``updateStorage``: each volumeClaimTemplate becomes the pod's volume of that name, on its own claim."""
    templates = [t.get("metadata", {}).get("name", "") for t in sts.spec.volume_claim_templates or ()]
    if not templates:
        return spec
    kept = [v for v in spec.volumes or () if v.name not in templates]
    claims = [Volume(name=t, persistent_volume_claim=PersistentVolumeClaimVolumeSource(
        claim_name=statefulset_claim_name(t, sts, ordinal))) for t in templates]
    return replace(spec, volumes=kept + claims)


def statefulset_claims(sts: apps_v1.StatefulSet, existing: set[tuple[str, str]]) -> list[PersistentVolumeClaim]:
    """The claims the StatefulSet controller creates for its ordinals (``getPersistentVolumeClaims``): each
    template's spec, named per ordinal, labelled with the template's labels and the set's selector labels;
    none that ``existing`` ((namespace, name)) already holds."""
    namespace = sts.metadata.namespace or "default"
    start = sts.spec.ordinals.start if sts.spec.ordinals else 0
    selector = (sts.spec.selector.match_labels or {}) if sts.spec.selector is not None else {}
    out: list[PersistentVolumeClaim] = []
    for ordinal in range(start, start + _replicas(sts.spec.replicas)):
        for raw in sts.spec.volume_claim_templates or ():
            meta = dict(raw.get("metadata") or {})
            name = statefulset_claim_name(meta.get("name", ""), sts, ordinal)
            if (namespace, name) in existing:
                continue
            labels = {**(meta.get("labels") or {}), **selector}
            doc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": name, "namespace": namespace, **({"labels": labels} if labels else {}),
                                **({"annotations": meta["annotations"]} if meta.get("annotations") else {})},
                   "spec": raw.get("spec") or {}}
            out.append(codec.decode(doc))
    return out


# --- Job --------------------------------------------------------------------------------------------


def job_pod_generate_name(job_name: str, index: int) -> str:
    """``<job>-<index>-``, cutting the job name (not the index) to fit the generated-name limit."""
    append = f"-{index}-"
    base = job_name + append
    if len(base) > MAX_GENERATED_NAME_LENGTH:
        base = base[:MAX_GENERATED_NAME_LENGTH - len(append)] + append
    return base


def _job_template(job: batch_v1.Job) -> PodTemplateSpec:
    """The template as the API server stores it: job-name and controller-uid labels added on create
    (unless the job selects its pods itself)."""
    if job.spec.manual_selector:
        return job.spec.template
    labels = dict((job.spec.template.metadata.labels if job.spec.template.metadata else None) or {})
    name, uid = job.metadata.name or "", job.metadata.uid or ""
    for key, value in (("job-name", name), ("batch.kubernetes.io/job-name", name),
                       ("controller-uid", uid), ("batch.kubernetes.io/controller-uid", uid)):
        labels.setdefault(key, value)
    return _with_labels(job.spec.template, labels)


def expand_job(job: batch_v1.Job, names: NameGenerator, owned: Owned | None = None) -> list[Pod]:
    """The pods the Job starts (see the module docstring)."""
    if job.spec.suspend:
        return []
    mine = owned.of(job) if owned is not None else []
    running = [p for p in mine if is_active(p)]
    succeeded = job.status.succeeded if job.status is not None and job.status.succeeded is not None else \
        sum(1 for p in mine if p.status is not None and p.status.phase == "Succeeded")
    parallelism = _replicas(job.spec.parallelism)
    completions = job.spec.completions
    want = parallelism if completions is None else min(parallelism, max(completions - succeeded, 0))
    active = max(want - len(running), 0)
    template = _with_labels(_job_template(job), {}, finalizer=JOB_TRACKING_FINALIZER)
    name = job.metadata.name or ""
    if job.spec.completion_mode == "Indexed" and completions is not None:
        taken = {(p.metadata.annotations or {}).get(JOB_COMPLETION_INDEX) for p in mine
                 if is_active(p) or (p.status is not None and p.status.phase == "Succeeded")}
        free = [i for i in range(max(completions, 0)) if str(i) not in taken]
        pods = []
        for index in free[:active]:
            indexed = _with_labels(template, {JOB_COMPLETION_INDEX: str(index)}, {JOB_COMPLETION_INDEX: str(index)})
            pods.append(_pod_from_template(indexed, job, names, generate_name=job_pod_generate_name(name, index)))
        return pods
    return [_pod_from_template(template, job, names, generate_name=f"{name}-") for _ in range(active)]


# --- DaemonSet --------------------------------------------------------------------------------------

DAEMON_TOLERATIONS = (
    Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/unreachable", operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/disk-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/memory-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/pid-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"),
)
_HOST_NETWORK_TOLERATION = Toleration(key="node.kubernetes.io/network-unavailable", operator="Exists",
                                      effect="NoSchedule")


def _add_or_update_toleration(tolerations: list[Toleration], toleration: Toleration) -> list[Toleration]:
    """AddOrUpdateTolerationInPodSpec: a toleration with the same key, operator, value and effect is
    replaced by the new one; otherwise the new one is appended."""
    out, updated = [], False
    for existing in tolerations:
        if (existing.key, existing.operator, existing.value, existing.effect) == \
                (toleration.key, toleration.operator, toleration.value, toleration.effect):
            out.append(toleration)
            updated = True
        else:
            out.append(existing)
    return out if updated else [*out, toleration]


def daemon_pod_spec(spec: PodSpec) -> PodSpec:
    """The pod spec with the tolerations every daemon pod gets (and, with hostNetwork,
    network-unavailable too)."""
    tolerations = list(spec.tolerations or [])
    for toleration in DAEMON_TOLERATIONS + ((_HOST_NETWORK_TOLERATION,) if spec.host_network else ()):
        tolerations = _add_or_update_toleration(tolerations, toleration)
    return replace(spec, tolerations=tolerations)


def _untolerated(taints: Iterable[Taint], tolerations: list[Toleration], effects: tuple[str, ...]) -> bool:
    return any(t.effect in effects and not any(tolerates(tol, t) for tol in tolerations) for t in taints)


def _required_affinity_matches(spec: PodSpec, node: Node) -> bool:
    """nodeSelector and required node affinity (a malformed selector matches nothing)."""
    labels = node.metadata.labels or {}
    if any(labels.get(k) != v for k, v in (spec.node_selector or {}).items()):
        return False
    affinity = spec.affinity.node_affinity if spec.affinity else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
    if required is None:
        return True
    try:
        return node_selector_matches(required, node.metadata.name or "", labels)
    except NodeSelectorError:
        return False


def daemonset_should_run(ds: apps_v1.DaemonSet, node: Node) -> tuple[bool, bool]:
    """NodeShouldRunDaemonPod: (should a new pod be created here, may an existing one keep running).

    The template's nodeName (when set) must be the node; nodeSelector and required node affinity must
    match; no NoSchedule or NoExecute taint may be untolerated once the daemon tolerations are added. With
    only untolerated NoSchedule taints an existing pod keeps running."""
    spec = daemon_pod_spec(ds.spec.template.spec)
    if spec.node_name and spec.node_name != node.metadata.name:
        return False, False
    if not _required_affinity_matches(spec, node):
        return False, False
    taints = (node.spec.taints if node.spec else None) or []
    if _untolerated(taints, spec.tolerations or [], ("NoSchedule", "NoExecute")):
        return False, not _untolerated(taints, spec.tolerations or [], ("NoExecute",))
    return True, True


def pin_to_node(affinity: Affinity | None, node_name: str) -> Affinity:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: required node affinity becomes the single term
    ``matchFields metadata.name In [<node>]``; preferred terms and pod (anti-)affinity stay."""
    term = NodeSelectorTerm(match_fields=[NodeSelectorRequirement(key="metadata.name", operator="In",
                                                                  values=[node_name])])
    required = NodeSelector(node_selector_terms=[term])
    if affinity is None:
        return Affinity(node_affinity=NodeAffinity(required_during_scheduling_ignored_during_execution=required))
    node_affinity = affinity.node_affinity or NodeAffinity()
    return replace(affinity, node_affinity=replace(node_affinity,
                                                   required_during_scheduling_ignored_during_execution=required))


def daemonset_pod(ds: apps_v1.DaemonSet, node_name: str, names: NameGenerator) -> Pod:
    """The DaemonSet's pod for one node: revision and template-generation labels, daemon tolerations,
    pinned to the node through node affinity (the scheduler still places it)."""
    status = ds.status
    generation = (ds.metadata.annotations or {}).get(DS_TEMPLATE_GENERATION_ANNOTATION, "1")
    template = _with_labels(ds.spec.template, {
        DS_TEMPLATE_GENERATION: generation,
        REVISION_HASH: pod_template_hash(ds.spec.template, status.collision_count if status else None)})
    spec = daemon_pod_spec(template.spec)
    template = replace(template, spec=replace(spec, affinity=pin_to_node(spec.affinity, node_name)))
    return _pod_from_template(template, ds, names, generate_name=f"{ds.metadata.name}-")


def _pinned_node(pod: Pod) -> str | None:
    """The node a daemon pod is bound or pinned to (nodeName, else its matchFields metadata.name term)."""
    if pod.spec.node_name:
        return pod.spec.node_name
    affinity = pod.spec.affinity.node_affinity if pod.spec.affinity is not None else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity is not None else None
    for term in required.node_selector_terms if required is not None else ():
        for req in term.match_fields or ():
            if req.key == "metadata.name" and req.operator == "In" and len(req.values or ()) == 1:
                return (req.values or [""])[0]
    return None


def expand_daemonset(ds: apps_v1.DaemonSet, nodes: Iterable[Node], names: NameGenerator,
                     owned: Owned | None = None) -> list[Pod]:
    """One pod per node (in the given order) that should run the DaemonSet and has none of its pods."""
    covered = {_pinned_node(p) for p in owned.of(ds) if is_active(p)} if owned is not None else set()
    return [daemonset_pod(ds, node.metadata.name or "", names) for node in nodes
            if node.metadata.name not in covered and daemonset_should_run(ds, node)[0]]


# --- all of them ------------------------------------------------------------------------------------

WORKLOAD_KINDS = (apps_v1.Deployment, apps_v1.ReplicaSet, apps_v1.StatefulSet, apps_v1.DaemonSet, batch_v1.Job)


def expand_workloads(objects: Iterable[Any], nodes: Iterable[Node], names: NameGenerator,
                     existing: Iterable[Pod] = ()) -> tuple[list[Any], list[Pod]]:
    """Expand every workload of ``objects`` in input order, reconciling with the ``existing`` pods (and the
    ReplicaSets among ``objects``) that name it as their controller.

    Returns the workloads as created (with UIDs, plus each Deployment's new ReplicaSet after it) and the
    pods they make. Objects of other kinds are ignored."""
    node_list = list(nodes)
    objects = list(objects)
    owned = Owned([*existing, *(o for o in objects if isinstance(o, apps_v1.ReplicaSet))])
    created: list[Any] = []
    pods: list[Pod] = []
    for obj in objects:
        if not isinstance(obj, WORKLOAD_KINDS):
            continue
        obj = with_uid(obj, names)
        created.append(obj)
        if isinstance(obj, apps_v1.Deployment):
            rs, rs_pods = expand_deployment(obj, names, owned)
            if rs is not None:
                created.append(rs)
            pods.extend(rs_pods)
        elif isinstance(obj, apps_v1.ReplicaSet):
            pods.extend(expand_replicaset(obj, names, owned))
        elif isinstance(obj, apps_v1.StatefulSet):
            pods.extend(expand_statefulset(obj, names, owned))
        elif isinstance(obj, apps_v1.DaemonSet):
            pods.extend(expand_daemonset(obj, node_list, names, owned))
        else:
            pods.extend(expand_job(obj, names, owned))
    return created, pods
