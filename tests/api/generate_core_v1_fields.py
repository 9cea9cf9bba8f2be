"""Writes ``src/dralloc/api/core_v1_fields.py``, the field names of the core/v1 kinds the API server stores
(Pod, Node, Namespace, Event, ConfigMap, Secret, ServiceAccount, Service, ReplicationController) and the
simulator reads (PersistentVolume, PersistentVolumeClaim), of the apps/v1 and batch/v1 workload kinds, whose
pod templates hold core/v1 types, and of every type below them, from lightkube-models
(a test dependency,
generated from Kubernetes' OpenAPI document)::

    .venv/bin/python tests/api/generate_core_v1_fields.py > src/dralloc/api/core_v1_fields.py

Each field's Go type (``GO_TYPES``: what Go's decoder checks a value against, and names in its errors) is the
default its lightkube type implies, or what ``core_v1_go_types.py`` records for it (ints, maps, named types).

``tests/api/test_core_v1_fields.py`` fails when the committed table and the installed models differ.
"""

from __future__ import annotations

import datetime
import typing
from typing import Any

ROOTS = ("Pod", "Node", "Namespace", "Event", "ConfigMap", "Secret", "ServiceAccount", "Service",
         "ReplicationController", "PersistentVolume", "PersistentVolumeClaim")
# the workload kinds the API server stores, whose pod templates hold core/v1 types: their values are checked
# as Go decodes them too (lightkube-models module -> group version and kinds)
GROUP_ROOTS = {"apps_v1": ("apps/v1", ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ControllerRevision")),
               "batch_v1": ("batch/v1", ("Job", "CronJob")),
               "events_v1": ("events.k8s.io/v1", ("Event",))}
# fields lightkube-models carries that kube-apiserver 1.36 lacks (1.37's: JobSpec's scheduling.k8s.io/v1alpha3
# settings, a pod's eviction responders and volume health, volumes' default users, ...; none is in 1.36's
# k8s.io/api types.go): left out, so such a field is an unknown one, reported and dropped as 1.36 does
_LATER = {"JobSpec.scheduling", "ClusterTrustBundleProjection.user", "ConfigMapVolumeSource.defaultUser",
          "DownwardAPIVolumeFile.user", "DownwardAPIVolumeSource.defaultUser", "EmptyDirVolumeSource.mode",
          "GRPCAction.mode", "HTTPGetAction.protocol", "KeyToPath.user", "NodeAllocatableResourceClaimStatus.mapping",
          "NodeAllocatableResourceClaimStatus.overhead", "NodeSpec.podPreemptionPolicy",
          "NodeSystemInfo.runningInUserNamespace", "PersistentVolumeClaimStatus.healthStatus",
          "PodCertificateProjection.user", "PodSpec.evictionResponders", "PodStatus.volumeHealth",
          "ProjectedVolumeSource.defaultUser", "SecretVolumeSource.defaultUser", "ServiceAccountTokenProjection.user",
          "VolumeMount.bindMountOptions"}
# fields kube-apiserver 1.36 has that lightkube-models (1.37) lacks: their kind of value ("" a value) and Go type
_EARLIER = {"NodeAllocatableResourceClaimStatus.resources": ("", "map[v1.ResourceName]resource.Quantity")}


def _fields(model: type) -> list[str]:
    return [f for f in model.__annotations__ if f"{model.__name__}.{f}" not in _LATER]


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and tp.__module__.startswith("lightkube.models.") and bool(
        getattr(tp, "__annotations__", None))


def _strip_optional(tp: Any) -> Any:
    if typing.get_origin(tp) is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else Any
    return tp


def _ref(tp: Any, pending: list[type]) -> str:
    """"" for a leaf, "@time" for a time, "Name" for a struct, "[Name]" / "{Name}" for a list / map of them."""
    tp = _strip_optional(tp)
    origin = typing.get_origin(tp)
    if origin in (list, dict):
        args = typing.get_args(tp)
        inner = _ref(args[-1], pending) if args else ""
        return "" if not inner else ("[" + inner + "]" if origin is list else "{" + inner + "}")
    if _is_model(tp):
        pending.append(tp)
        return tp.__name__
    if tp is datetime.datetime:
        return "@time"
    return ""


def _models() -> dict[str, type]:
    """Every model below the roots, by name; a group's root named as a core/v1 root (events.k8s.io/v1's
    Event) by its group version and name (``events.k8s.io/v1.Event``). Another type of the same name as one
    seen must have the same fields (events.k8s.io/v1's EventSeries is core/v1's)."""
    import importlib

    from lightkube.models import core_v1

    seen: dict[str, type] = {}
    pending: list[type] = [getattr(core_v1, name) for name in ROOTS]
    for module_name, (group_version, kinds) in GROUP_ROOTS.items():
        module = importlib.import_module(f"lightkube.models.{module_name}")
        for kind in kinds:
            if kind in ROOTS:
                seen[f"{group_version}.{kind}"] = getattr(module, kind)
                _ref_fields(getattr(module, kind), pending)
            else:
                pending.append(getattr(module, kind))
    while pending:
        model = pending.pop()
        if model.__name__ in seen:
            assert seen[model.__name__] is model or _rows(seen[model.__name__]) == _rows(model), \
                f"two types named {model.__name__}"
            continue
        seen[model.__name__] = model
        _ref_fields(model, pending)
    return dict(sorted(seen.items()))


def _ref_fields(model: type, pending: list[type]) -> None:
    hints = typing.get_type_hints(model)
    for name in _fields(model):
        _ref(hints[name], pending)


def _rows(model: type) -> dict[str, str]:
    hints = typing.get_type_hints(model)
    rows = {field: _ref(hints[field], []) for field in _fields(model)}
    rows.update({name.split(".")[1]: ref for name, (ref, _) in _EARLIER.items()
                 if name.split(".")[0] == model.__name__})
    return rows


def table() -> dict[str, dict[str, str]]:
    return {name: _rows(model) for name, model in _models().items()}


def _default_go_type(tp: Any) -> str | None:
    """The Go type a lightkube type implies (None: it does not say, e.g. an int's width or a map's values)."""
    tp = _strip_optional(tp)
    if typing.get_origin(tp) is list and typing.get_args(tp):
        item = _default_go_type(typing.get_args(tp)[0])
        return None if item is None else "[]" + item
    if tp is str:
        return "string"
    if tp is bool:
        return "bool"
    if tp is datetime.datetime:
        return "v1.Time"
    return "v1." + tp.__name__ if _is_model(tp) else None


def go_types() -> dict[str, dict[str, str]]:
    """Each field's Go type: the recorded one, else its lightkube type's default; an int or a map (or any
    other type whose Go type lightkube cannot tell) that core_v1_go_types.py does not record is an error."""
    from core_v1_go_types import GO_TYPES

    out: dict[str, dict[str, str]] = {}
    for name, model in _models().items():
        hints = typing.get_type_hints(model)
        members = out[name] = {}
        for field in _fields(model):
            go_type = GO_TYPES.get(f"{name}.{field}") or _default_go_type(hints[field])
            if go_type is None:
                raise ValueError(f"{name}.{field} ({hints[field]}): record its Go type in core_v1_go_types.py")
            members[field] = go_type
        members.update({field_name.split(".")[1]: go_type for field_name, (_, go_type) in _EARLIER.items()
                        if field_name.split(".")[0] == name})
    return out


def named_types() -> dict[str, str]:
    from core_v1_go_types import NAMED

    return dict(sorted(NAMED.items()))


def _render_table(name: str, note: str, table_: dict[str, dict[str, str]]) -> list[str]:
    lines = [note, f"{name}: dict[str, dict[str, str]] = {{"]
    for struct, members in table_.items():
        line = f'    "{struct}": {{'
        for i, (field, ref) in enumerate(members.items()):
            item = f'"{field}": "{ref}"' + (", " if i < len(members) - 1 else "},")
            if len(line) + len(item.rstrip()) > 110:
                lines.append(line.rstrip())
                line = "        "
            line += item
        lines.append(line)
    lines.append("}")
    return lines


def render(fields: dict[str, dict[str, str]], types: dict[str, dict[str, str]] | None = None,
           named: dict[str, str] | None = None) -> str:
    from importlib.metadata import version

    lines = [
        '"""The field names of the core/v1 kinds the API server stores (Pod, Node, Namespace, Event, ConfigMap,',
        "Secret, ServiceAccount, Service and ReplicationController) and the simulator reads (PersistentVolume,",
        "PersistentVolumeClaim), of the apps/v1 and batch/v1 workload kinds (GROUP_ROOTS), whose pod templates hold",
        "core/v1 types, and of every type below them, as the Kubernetes OpenAPI document declares them,",
        "for strict decoding (unknown fields and the JSON types of values) of kinds whose models dralloc keeps",
        'partial. Per type, each JSON field maps to "" (a value: scalar, free-form, or a map of scalars), "@time"',
        '(a metav1.Time or MicroTime), "T" (an object of type T), "[T]" (a list of them) or "{T}" (a map of',
        "them); GO_TYPES gives each field's Go type, which Go's decoder checks a value against.",
        "",
        f"Generated by tests/api/generate_core_v1_fields.py from lightkube-models {version('lightkube-models')};",
        'do not edit."""',
        "",
        "ROOTS = (" + ", ".join(f'"{r}"' for r in ROOTS[:7]) + ",",
        "         " + ", ".join(f'"{r}"' for r in ROOTS[7:]) + ")",
        "# the workload kinds (their pod templates hold the core/v1 types above) and events.k8s.io/v1's Event:",
        "# group version -> kinds (a kind named as a core/v1 root is keyed \"<group version>.<kind>\" below)",
        "GROUP_ROOTS: dict[str, tuple[str, ...]] = {",
        *(f'    "{gv}": (' + ", ".join(f'"{k}"' for k in kinds) + ("," if len(kinds) == 1 else "") + "),"
          for gv, kinds in GROUP_ROOTS.values()),
        "}",
        "",
    ]
    lines += _render_table("FIELDS", "# struct -> JSON field -> its kind of value (see above)", fields)[1:]
    lines += ["", *_render_table(
        "GO_TYPES", "# struct -> JSON field -> its Go type, as Go's reflect prints it (pointers elided: the decoder"
        "\n# reports the type pointed to)", go_types() if types is None else types)]
    lines += ["", "# each named Go type of GO_TYPES that is no struct -> its underlying type", "NAMED: dict[str, str] = {"]
    for go_type, underlying in (named_types() if named is None else named).items():
        lines.append(f'    "{go_type}": "{underlying}",')
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(table()), end="")
