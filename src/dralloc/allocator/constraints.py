"""Claim constraints with upstream's exact (quirky) semantics.

* The constraint covers a request when its ``requests`` list is empty, or names the request, or names
  ``"req/sub"`` for a subrequest.
* Attribute lookup for ``domain/id``: the full name first, then ``id`` alone when ``domain`` is the
  device's driver. A device without the attribute is rejected.
* matchAttribute: the first device fixes a *set* of values (a scalar is a one-element set); later devices
  must share at least one element of the same type and narrow the set to the intersection. Removing a
  device only decrements a counter (the set is not widened again); at zero the next device starts anew.
* distinctAttribute: remembers one value per request name (the last device accepted for that request) and
  rejects a device whose values intersect any remembered value. So with values [0,0,1,0] and count 3 the
  request gets devices 0, 2 and 3. Removing a device forgets its request's entry.
"""

from __future__ import annotations

from typing import Any


def attribute_set(info: Any, name: str) -> Any:
    """(type tag, frozenset of values) of a device attribute for constraints, or None if missing/unknown.

    Cached per device. Lists win over scalars, as upstream checks them first.
    """
    cache = info.attr_cache
    if name in cache:
        return cache[name]
    attrs = info.device.attributes or {}
    attr = attrs.get(name)
    if attr is None:
        slash = name.find("/")
        if slash >= 0 and name[:slash] == info.driver:
            attr = attrs.get(name[slash + 1:])
    out: tuple[str, frozenset[Any]] | bool | None = None
    if attr is not None:
        if attr.ints:
            out = ("int", frozenset(attr.ints))
        elif attr.bools:
            out = ("bool", frozenset(attr.bools))
        elif attr.strings:
            out = ("string", frozenset(attr.strings))
        elif attr.versions:
            out = ("version", frozenset(attr.versions))
        elif attr.int_ is not None:
            out = ("int", frozenset((attr.int_,)))
        elif attr.bool_ is not None:
            out = ("bool", frozenset((attr.bool_,)))
        elif attr.string is not None:
            out = ("string", frozenset((attr.string,)))
        elif attr.version is not None:
            out = ("version", frozenset((attr.version,)))
        else:
            out = False  # present but of unknown type
    cache[name] = out
    return out


class _Constraint:
    __slots__ = ("names", "attribute", "index")

    def __init__(self, index: int, names: list[str] | None, attribute: str) -> None:
        self.index = index
        self.names = frozenset(names or ())
        self.attribute = attribute

    def applies(self, base: str, full: str) -> bool:
        names = self.names
        return not names or base in names or full in names


class MatchAttribute(_Constraint):
    __slots__ = ("current", "count")

    def __init__(self, index: int, names: list[str] | None, attribute: str) -> None:
        super().__init__(index, names, attribute)
        self.current: Any = None
        self.count = 0

    def add(self, base: str, full: str, info: Any) -> bool:
        if self.names and base not in self.names and full not in self.names:
            return True
        value = attribute_set(info, self.attribute)
        if not value:
            return False
        if self.count == 0:
            self.current = value
            self.count = 1
            return True
        cur = self.current
        if cur[0] != value[0]:
            return False
        both = cur[1] & value[1]
        if not both:
            return False
        if len(both) != len(cur[1]):
            self.current = (cur[0], both)
        self.count += 1
        return True

    def remove(self, base: str, full: str, info: Any) -> None:
        if self.names and base not in self.names and full not in self.names:
            return
        self.count -= 1

    def state(self) -> Any:
        """What later additions depend on (removals only undo later additions)."""
        return self.current if self.count > 0 else None


class DistinctAttribute(_Constraint):
    __slots__ = ("values", "count")

    def __init__(self, index: int, names: list[str] | None, attribute: str) -> None:
        super().__init__(index, names, attribute)
        self.values: dict[str, Any] = {}
        self.count = 0

    def add(self, base: str, full: str, info: Any) -> bool:
        if self.names and base not in self.names and full not in self.names:
            return True
        value = attribute_set(info, self.attribute)
        if value is None:
            return False
        if self.count == 0:
            self.values[base] = value
            self.count = 1
            return True
        if value is False:
            return False
        for other in self.values.values():
            if other and other[0] == value[0] and other[1] & value[1]:
                return False
        self.values[base] = value
        self.count += 1
        return True

    def remove(self, base: str, full: str, info: Any) -> None:
        if self.names and base not in self.names and full not in self.names:
            return
        self.values.pop(base, None)
        self.count -= 1

    def state(self) -> Any:
        """What later additions depend on (removals only undo later additions)."""
        return (self.count > 0, frozenset(self.values.items()))


def runs_side_by_side(values: list[Any]) -> bool:
    """Whether each value's items follow each other in the list (no value comes back after another): picks
    in that order under distinctAttribute, which upstream compares with the last value only, then never
    return to a value they left."""
    seen: set[Any] = set()
    previous: Any = object()
    for value in values:
        if value != previous:
            if value in seen:
                return False
            seen.add(value)
            previous = value
    return True
