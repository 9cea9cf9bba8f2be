"""The macros' loops at runtime (all, exists, exists_one, filter, map, the transform and sortBy macros,
optMap): comprehension variables bound in the activation and restored, runtime cost charged per iteration."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dralloc.cel import library
from dralloc.cel.closures import COST_KEY, MISSING, Fn, key_text
from dralloc.cel.errors import CELError
from dralloc.cel.values import NONE, Optional, map_get, no_overload, type_name


def _charge(act: dict[str, Any], amount: int) -> None:
    cost = act.get(COST_KEY)
    if cost is not None:
        cost[0] += amount
        if cost[0] > cost[1]:
            raise CELError("operation cancelled: actual cost limit exceeded")


def _iter_pairs(coll: Any) -> list[tuple[Any, Any]]:
    t = type(coll)
    if t is list or t is tuple:
        return list(enumerate(coll))
    if isinstance(coll, dict):
        return list(coll.items())
    raise CELError(f"got '{_GO_TYPE_NAMES.get(type_name(coll), type_name(coll))}', expected iterable type")


# cel-go's Go type names, which its runtime errors print
_GO_TYPE_NAMES = {"int": "types.Int", "uint": "types.Uint", "double": "types.Double", "string": "types.String",
                  "bool": "types.Bool", "bytes": "types.Bytes", "null_type": "types.Null",
                  "kubernetes.Quantity": "cel.Quantity", "kubernetes.Semver": "cel.Semver",
                  "optional_type": "*types.Optional", "type": "*types.Type"}


class _Bound:
    """Bind comprehension variables in the activation and restore them afterwards."""

    __slots__ = ("act", "names", "saved")

    def __init__(self, act: dict[str, Any], names: tuple[str, ...]) -> None:
        self.act = act
        self.names = names
        self.saved = [act.get(n, MISSING) for n in names]

    def restore(self) -> None:
        for n, old in zip(self.names, self.saved):
            if old is MISSING:
                self.act.pop(n, None)
            else:
                self.act[n] = old


def _loop(range_fn: Fn, v1: str, v2: str | None, weight: int,
          body: Callable[[dict[str, Any], Any, Any], Any]) -> Fn:
    names = (v1, v2) if v2 else (v1,)

    def run(act: dict[str, Any]) -> Any:
        coll = range_fn(act)
        pairs = _iter_pairs(coll)
        is_list = type(coll) in (list, tuple)
        bound = _Bound(act, names)
        try:
            return body(act, pairs, is_list)
        finally:
            bound.restore()

    return run


def _assign(act: dict[str, Any], v1: str, v2: str | None, key: Any, value: Any, is_list: bool) -> None:
    if v2:
        act[v1] = key
        act[v2] = value
    else:
        act[v1] = value if is_list else key


def _each(act: dict[str, Any], pairs: list[Any], is_list: bool, v1: str, v2: str | None, weight: int) -> Any:
    """Iterate a comprehension's range: charge the cost, bind the variables, yield (key, value)."""
    for k, v in pairs:
        _charge(act, weight)
        _assign(act, v1, v2, k, v, is_list)
        yield k, v


def _keep(pred: Fn | None, act: dict[str, Any]) -> bool:
    """A comprehension filter's verdict (no filter keeps everything)."""
    if pred is None:
        return True
    r = pred(act)
    if r is True or r is False:
        return r
    raise no_overload("_?_:_", r)


def _quantified(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int, decisive: bool,
                operator: str) -> Fn:
    """``all`` (decisive False, folded with ``&&``) and ``exists`` (decisive True, ``||``): a decisive
    element ends the loop whatever errors came before; otherwise the first error is raised."""
    pred = fns[0]
    settled = not decisive

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> bool:
        err = None
        for _k, _v in _each(act, pairs, is_list, v1, v2, weight):
            try:
                r = pred(act)
            except CELError as exc:
                err = err or exc
                continue
            if r is decisive:
                return decisive
            if r is not settled:
                err = err or no_overload(operator, r)
        if err is not None:
            raise err
        return settled

    return _loop(range_fn, v1, v2, weight, body)


def _comp_all(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    return _quantified(range_fn, v1, v2, fns, weight, False, "_&&_")


def _comp_exists(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    return _quantified(range_fn, v1, v2, fns, weight, True, "_||_")


def _comp_exists_one(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    pred = fns[0]

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> bool:
        count = 0
        for _k, _v in _each(act, pairs, is_list, v1, v2, weight):
            r = pred(act)
            if r is True:
                count += 1
            elif r is not False:
                raise no_overload("_?_:_", r)
        return count == 1

    return _loop(range_fn, v1, v2, weight, body)


def _comp_filter(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    pred = fns[0]

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> list[Any]:
        out = []
        for k, v in _each(act, pairs, is_list, v1, v2, weight):
            if _keep(pred, act):
                out.append(v if is_list else k)
        return out

    return _loop(range_fn, v1, v2, weight, body)


def _comp_map(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    if len(fns) == 2:
        pred, expr = fns
    else:
        pred, expr = None, fns[0]

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> list[Any]:
        out = []
        for _k, _v in _each(act, pairs, is_list, v1, v2, weight):
            if not _keep(pred, act):
                continue
            out.append(expr(act))
        return out

    return _loop(range_fn, v1, v2, weight, body)


def _comp_transform_map(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    pred, expr = (fns[0], fns[1]) if len(fns) == 2 else (None, fns[0])

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for k, _v in _each(act, pairs, is_list, v1, v2, weight):
            if not _keep(pred, act):
                continue
            out[k] = expr(act)
        return out

    return _loop(range_fn, v1, v2, weight, body)


def _comp_transform_entry(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    pred, expr = (fns[0], fns[1]) if len(fns) == 2 else (None, fns[0])

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for _k, _v in _each(act, pairs, is_list, v1, v2, weight):
            if not _keep(pred, act):
                continue
            entry = expr(act)
            if not isinstance(entry, dict):
                raise no_overload("transformMapEntry", entry)
            for ek, ev in entry.items():
                if map_get(out, ek)[0]:
                    raise CELError(f"insert failed: key {key_text(ek)} already exists")
                out[ek] = ev
        return out

    return _loop(range_fn, v1, v2, weight, body)


def _comp_sort_by(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int) -> Fn:
    key_fn = fns[0]

    def body(act: dict[str, Any], pairs: list[Any], is_list: bool) -> list[Any]:
        if not is_list:
            raise no_overload("sortBy", dict(pairs))
        keyed = []
        for _, v in pairs:
            _charge(act, weight)
            act[v1] = v
            keyed.append((key_fn(act), v))
        keys = [k for k, _ in keyed]
        library.sort_key_check(keys, "sortBy")
        return [v for _, v in sorted(keyed, key=lambda kv: kv[0])]

    return _loop(range_fn, v1, v2, weight, body)


def _comp_opt_map(range_fn: Fn, v1: str, v2: str | None, fns: list[Fn], weight: int, flat: bool = False) -> Fn:
    expr = fns[0]

    def run(act: dict[str, Any]) -> Any:
        opt = range_fn(act)
        if type(opt) is not Optional:
            raise no_overload("optMap", opt)
        if not opt.present:
            return NONE
        bound = _Bound(act, (v1,))
        try:
            act[v1] = opt.value
            r = expr(act)
        finally:
            bound.restore()
        if flat:
            if type(r) is not Optional:
                raise no_overload("optFlatMap", r)
            return r
        return Optional(r, True)

    return run


BUILDERS: dict[str, Callable[..., Fn]] = {
    "all": _comp_all,
    "exists": _comp_exists,
    "exists_one": _comp_exists_one,
    "filter": _comp_filter,
    "map": _comp_map,
    "transformList": _comp_map,
    "transformMap": _comp_transform_map,
    "transformMapEntry": _comp_transform_entry,
    "sortBy": _comp_sort_by,
    "optMap": _comp_opt_map,
    "optFlatMap": lambda r, v1, v2, f, w: _comp_opt_map(r, v1, v2, f, w, flat=True),
}
