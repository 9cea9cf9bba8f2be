"""kube-apiserver's validation of resource.k8s.io objects (pkg/apis/resource/validation), rule by rule, one
module per object part.

Every function returns the complete list of field errors of its part, in upstream's order, so one call
reports everything wrong with an object. Maps are walked in sorted key order (upstream walks Go maps in
random order; sorting keeps our output deterministic).
"""

from __future__ import annotations

from dralloc.validation.resource.claim import RequestNames, validate_claim_spec
from dralloc.validation.resource.claim_status import validate_claim_status
from dralloc.validation.resource.device_class import validate_device_class_spec
from dralloc.validation.resource.limits import RESERVED_FOR_MAX
from dralloc.validation.resource.lists import validate_set
from dralloc.validation.resource.slice import validate_slice_spec
from dralloc.validation.resource.taint_rule import validate_taint_rule_spec, validate_taint_rule_status

__all__ = [
    "RESERVED_FOR_MAX",
    "RequestNames",
    "validate_claim_spec",
    "validate_claim_status",
    "validate_device_class_spec",
    "validate_set",
    "validate_slice_spec",
    "validate_taint_rule_spec",
    "validate_taint_rule_status",
]
