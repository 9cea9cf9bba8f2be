"""metav1.LabelSelector against a label set (``LabelSelectorAsSelector``): every matchLabels pair and every
matchExpressions requirement must hold; an empty selector matches everything."""

from __future__ import annotations

from dralloc.api.meta import LabelSelector


def selector_matches(selector: LabelSelector, labels: dict[str, str]) -> bool:
    for key, value in (selector.match_labels or {}).items():
        if labels.get(key) != value:
            return False
    for req in selector.match_expressions or ():
        op, values = req.operator, req.values or []
        if op == "In":
            ok = req.key in labels and labels[req.key] in values
        elif op == "NotIn":
            ok = req.key not in labels or labels[req.key] not in values
        elif op == "Exists":
            ok = req.key in labels
        elif op == "DoesNotExist":
            ok = req.key not in labels
        else:
            ok = False
        if not ok:
            return False
    return True
