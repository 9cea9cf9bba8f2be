"""YAML mapping keys as JSON object keys, the way sigs.k8s.io/yaml turns a YAML document into JSON for kubectl
and kube-apiserver: a string stays itself, an integer is written in decimal, a boolean as ``true`` or
``false``, a float as Go's ``strconv.FormatFloat(key, 'g', -1, 32)`` (the shortest text of the float32 nearest
to it: ``1.5``, ``1e+06``, ``.inf``); any other key (null, a list, a map) is refused."""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import yaml

__all__ = ["UnsupportedKey", "float_key", "key_text", "unsupported_key"]

_FLOAT32 = struct.Struct("f")


class UnsupportedKey(yaml.constructor.ConstructorError):
    """A mapping key JSON has no form for (null, a collection): sigs.k8s.io/yaml's refusal."""


def _as_float32(value: float) -> float:
    try:
        rounded: float = _FLOAT32.unpack(_FLOAT32.pack(value))[0]
    except OverflowError:  # beyond float32's range: Go's conversion gives an infinity
        return math.copysign(math.inf, value)
    return rounded


def float_key(value: float) -> str:
    """Go's ``strconv.FormatFloat(value, 'g', -1, 32)``, with YAML's names of the infinities and NaN."""
    if math.isnan(value):
        return ".nan"
    single = _as_float32(value)
    if math.isinf(single):
        return ".inf" if single > 0 else "-.inf"
    if single == 0:
        return "-0" if math.copysign(1.0, single) < 0 else "0"
    for precision in range(9):  # the fewest significant digits that read back as the same float32
        text = f"{single:.{precision}e}"
        if _as_float32(float(text)) == single:
            break
    mantissa, exponent_text = text.split("e")
    sign = "-" if mantissa.startswith("-") else ""
    digits = mantissa.lstrip("-").replace(".", "").rstrip("0") or "0"
    exponent = int(exponent_text)
    if exponent < -4 or exponent >= 6:  # (Go's shortest 'g' switches to the exponent form there)
        fraction = f".{digits[1:]}" if len(digits) > 1 else ""
        return f"{sign}{digits[0]}{fraction}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    point = exponent + 1  # digits before the decimal point
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def key_text(key: Any) -> str | None:
    """A decoded scalar key as text (a float as :func:`float_key`); None for a key JSON cannot have."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return float_key(key)
    return None


def _go_value(value: Any) -> str:
    """A value as Go's ``%+#v`` shows what the YAML decoder made of it."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_go_value(v) for v in value) + "}"
    if isinstance(value, dict):
        return "map[interface {}]interface {}{" + ", ".join(f"{_go_value(k)}:{_go_value(v)}"
                                                            for k, v in value.items()) + "}"
    return str(value)


def _go_type(value: Any) -> str:
    if value is None:
        return "%!s(<nil>)"  # (Go's reflect.TypeOf(nil) printed with %s)
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, dict):
        return "map[interface {}]interface {}"
    return type(value).__name__


def unsupported_key(key: Any, value: Any, mark: Any = None) -> UnsupportedKey:
    """sigs.k8s.io/yaml's error for a key JSON has no form for."""
    return UnsupportedKey(None, None, f"unsupported map key of type: {_go_type(key)}, key: {_go_value(key)}, "
                                      f"value: {_go_value(value)}", mark)
