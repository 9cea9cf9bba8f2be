"""``dralloc simulate --config FILE``: a ``kubescheduler.config.k8s.io/v1`` KubeSchedulerConfiguration read as
kube-scheduler reads it — strict decoding, v1 defaulting, validation with its field paths and texts, and the
framework's expansion of MultiPoint plugins into each extension point.

    cfg = load_config("sched.yaml", gates)       # SchedulerConfig, or InputError with kube-scheduler's text
    profile = cfg.profile("default-scheduler")   # ProfileConfig: plugins per point, score weights, args
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from dralloc.errors import InputError
from dralloc.scheduler.config import types as t
from dralloc.scheduler.config.defaults import (
    DEFAULT_SCHEDULER_NAME,
    ProfileError,
    ProfilePlugins,
    default_args,
    expand,
    merged_plugins,
)
from dralloc.scheduler.config.plugins import IMPLEMENTS
from dralloc.scheduler.config.validation import DurationError, validate_args, validate_configuration
from dralloc.scheduler.features import FeatureGates
from dralloc.validation import field as f

__all__ = ["ProfileConfig", "SchedulerConfig", "config_from_dict", "default_config", "load_config"]


@dataclass
class ProfileConfig:
    """One profile as the framework instantiates it."""

    scheduler_name: str
    plugins: ProfilePlugins
    args: dict[str, t.ArgsBase] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None


@dataclass
class SchedulerConfig:
    profiles: list[ProfileConfig]
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10

    def profile(self, scheduler_name: str) -> ProfileConfig | None:
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)

    def percentage_for(self, profile: ProfileConfig) -> int:
        """A profile's percentageOfNodesToScore overrides the global one; 0 is adaptive."""
        if profile.percentage_of_nodes_to_score is not None:
            return profile.percentage_of_nodes_to_score
        return self.percentage_of_nodes_to_score or 0


def _unknown_field_error(exc: msgspec.ValidationError, where: str) -> InputError:
    """msgspec's "Object contains unknown field `x` - at `$.profiles[0]`" as kube-scheduler's strict decoding
    error: ``strict decoding error: unknown field "profiles[0].x"``."""
    text = str(exc)
    if text.startswith("Object contains unknown field"):
        name = text.split("`")[1]
        at = text.rsplit("at `$", 1)[1].rstrip("`") if "at `$" in text else ""
        path = (at.lstrip(".") + "." + name) if at else name
        return InputError(f'{where}: strict decoding error: unknown field "{path}"')
    return InputError(f"{where}: {text.replace('$.', '').replace('`$`', 'the document')}")


def config_from_dict(doc: Any, gates: FeatureGates | None = None, where: str = "--config") -> SchedulerConfig:
    """Decode, default, validate and expand a configuration document."""
    gates = gates or FeatureGates()
    if not isinstance(doc, dict):
        raise InputError(f"{where}: not a KubeSchedulerConfiguration object")
    kind, version = doc.get("kind"), doc.get("apiVersion")
    if kind != "KubeSchedulerConfiguration" or version != t.API_VERSION:
        raise InputError(f'{where}: no kind "{kind}" is registered for version "{version}" in scheme '
                         f'"pkg/scheduler/apis/config/scheme/scheme.go:30"' if version and kind else
                         f"{where}: Object 'Kind' is missing in the file" if not kind else
                         f"{where}: Object 'apiVersion' is missing in the file")
    try:
        cfg = msgspec.convert(doc, t.KubeSchedulerConfiguration)
    except msgspec.ValidationError as exc:
        raise _unknown_field_error(exc, where) from None
    profiles = list(cfg.profiles or ()) or [t.Profile()]
    if len(profiles) == 1 and profiles[0].scheduler_name is None:
        profiles[0] = msgspec.structs.replace(profiles[0], scheduler_name=DEFAULT_SCHEDULER_NAME)
    cfg = msgspec.structs.replace(cfg, profiles=profiles)
    errors = validate_configuration(cfg)
    out: list[ProfileConfig] = []
    for i, profile in enumerate(profiles):
        path = f.index("profiles", i)
        args: dict[str, t.ArgsBase] = {}
        for j, pc in enumerate(profile.plugin_config or ()):
            args_type = t.ARGS_TYPES.get(pc.name)
            if args_type is None:
                continue
            args_path = f.child(f.index(f.child(path, "pluginConfig"), j), "args")
            try:
                decoded = msgspec.convert(pc.args or {}, args_type)
            except msgspec.ValidationError as exc:
                raise _unknown_field_error(exc, f"{where}: {args_path}") from None
            if decoded.kind not in (None, pc.name + "Args"):
                errors.append(f.invalid(args_path, decoded.kind, "has to match plugin args"))
                continue
            defaulted = default_args(pc.name, decoded)
            assert defaulted is not None
            try:
                errors.extend(validate_args(args_path, defaulted, gates))
            except DurationError as exc:
                raise InputError(f"{where}: {exc}") from None
            args[pc.name] = defaulted
        try:
            plugins = expand(merged_plugins(profile.plugins), set(IMPLEMENTS))
        except ProfileError as exc:
            if errors:
                break
            raise InputError(f"{where}: initializing profiles: creating profile for scheduler name "
                             f"{profile.scheduler_name}: {exc}") from None
        for name in sorted(plugins.enabled()):
            if name not in args:
                filled = default_args(name, None)
                if filled is not None:
                    args[name] = filled
        out.append(ProfileConfig(profile.scheduler_name or "", plugins, args, profile.percentage_of_nodes_to_score))
    if errors:
        raise InputError(f"{where}: invalid configuration: {f.aggregate_message(errors)}")
    return SchedulerConfig(out, cfg.percentage_of_nodes_to_score,
                           cfg.pod_initial_backoff_seconds if cfg.pod_initial_backoff_seconds is not None else 1,
                           cfg.pod_max_backoff_seconds if cfg.pod_max_backoff_seconds is not None else 10)


def default_config(gates: FeatureGates | None = None) -> SchedulerConfig:
    """kube-scheduler 1.36 with no --config: one default-scheduler profile."""
    return config_from_dict({"apiVersion": t.API_VERSION, "kind": "KubeSchedulerConfiguration"}, gates)


def load_config(path: str, gates: FeatureGates | None = None) -> SchedulerConfig:
    """Read a configuration file (YAML or JSON) with the strict reader the cluster inputs use: a repeated key
    is an error, as kube-scheduler's strict decoding."""
    from dralloc.api.codec import read_documents

    docs = read_documents(path, check_duplicates=True)
    where = f"--config {path}"
    if len(docs) != 1:
        raise InputError(f"{where}: expected one KubeSchedulerConfiguration document, found {len(docs)}")
    if docs[0].duplicates:
        raise InputError(f'{where}: strict decoding error: key "{docs[0].duplicates[0]}" already set in map')
    return config_from_dict(docs[0].data, gates, where=where)
