"""A DeviceClass's spec."""

from __future__ import annotations

from dralloc.api.resource_v1 import DeviceClassSpec
from dralloc.validation import field as f
from dralloc.validation.formats import is_extended_resource_name
from dralloc.validation.resource.common import validate_device_configuration
from dralloc.validation.resource.limits import CONFIG_MAX
from dralloc.validation.resource.lists import E, validate_slice
from dralloc.validation.resource.names import validate_selectors


def validate_device_class_spec(spec: DeviceClassSpec, old_spec: DeviceClassSpec | None, path: str = "spec") -> E:
    errs: E = []
    if spec.selectors:  # (the lists looked at, and their paths made, only when the class has them)
        stored = old_spec is not None and spec.selectors == old_spec.selectors
        errs.extend(validate_selectors(spec.selectors, f.child(path, "selectors"), stored))
    if spec.config:
        stored_config = old_spec is not None and spec.config == old_spec.config
        errs.extend(validate_slice(spec.config, CONFIG_MAX,
                                   lambda c, p: validate_device_configuration(c, p, stored_config),
                                   f.child(path, "config")))
    name = spec.extended_resource_name
    if name is not None and not is_extended_resource_name(name):
        errs.append(f.invalid(f.child(path, "extendedResourceName"), name, "must be a valid extended resource name"))
    return errs
