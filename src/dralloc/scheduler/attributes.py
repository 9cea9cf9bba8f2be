"""Which device attributes can change an allocation: those the CEL selectors and the claims' constraints name.

Nodes that publish the same devices are interchangeable for the scheduler, but real drivers give every device
its own identity attributes (a GPU's ``uuid``, a PCI address). When no selector of any DeviceClass, claim or
template and no ``matchAttribute``/``distinctAttribute`` names such an attribute, it cannot change an answer,
and nodes that differ only in it can share work. The analysis is conservative: an expression that touches
``device.attributes`` in any other way than ``device.attributes["domain"].name`` or
``device.attributes["domain"]["name"]`` (``has(...)`` of those included) makes every attribute count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dralloc.api.resource_v1 import DeviceClass, DeviceSelector, ResourceClaimSpec

AttributeKey = tuple[str, str]  # (domain, name)

_STRING = r'(?:"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\')'
_LITERAL = re.compile(r'device\.attributes\[\s*' + _STRING + r'\s*\](?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*' + _STRING
                      + r'\s*\])')


def expression_attributes(expression: str) -> set[AttributeKey] | None:
    """The attributes an expression names, or None when it may read others."""
    found: set[AttributeKey] = set()
    covered: list[tuple[int, int]] = []
    for m in _LITERAL.finditer(expression):
        if m.group(3) is not None and expression[m.end():].lstrip().startswith("("):
            return None  # a method or macro on the domain's map (exists, all, size, ...)
        domain = m.group(1) if m.group(1) is not None else m.group(2)
        name = m.group(3) or (m.group(4) if m.group(4) is not None else m.group(5))
        if domain is None or name is None or "\\" in domain or "\\" in name:
            return None
        found.add((domain, name))
        covered.append(m.span())
    for m in re.finditer(r"attributes", expression):
        if not any(a <= m.start() < b for a, b in covered):
            return None
    return found


def _selector_expressions(selectors: Iterable[DeviceSelector] | None) -> Iterable[str]:
    for sel in selectors or ():
        if sel.cel is not None:
            yield sel.cel.expression


def _constraint_key(qualified: str) -> AttributeKey | None:
    domain, sep, name = qualified.rpartition("/")
    return (domain, name) if sep else None


def referenced_attributes(classes: Iterable[DeviceClass], specs: Iterable[ResourceClaimSpec]
                          ) -> frozenset[AttributeKey] | None:
    """Every attribute the classes' and claim specs' selectors and constraints name; None when any of them
    may read attributes it does not name."""
    found: set[AttributeKey] = set()
    expressions: list[str] = []
    for c in classes:
        expressions.extend(_selector_expressions(c.spec.selectors if c.spec is not None else None))
    for spec in specs:
        devices = spec.devices
        if devices is None:
            continue
        for req in devices.requests or ():
            if req.exactly is not None:
                expressions.extend(_selector_expressions(req.exactly.selectors))
            for sub in req.first_available or ():
                expressions.extend(_selector_expressions(sub.selectors))
        for con in devices.constraints or ():
            for qualified in (con.match_attribute, con.distinct_attribute):
                if qualified:
                    key = _constraint_key(qualified)
                    if key is None:
                        return None
                    found.add(key)
    for expression in expressions:
        names = expression_attributes(expression)
        if names is None:
            return None
        found |= names
    return frozenset(found)


def attribute_key(key: str, driver: str) -> AttributeKey:
    """A device attribute's (domain, name): an unqualified name belongs to the driver's domain."""
    domain, sep, name = key.rpartition("/")
    return (domain, name) if sep else (driver, key)
