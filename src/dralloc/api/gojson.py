"""How Go's ``encoding/json`` names a JSON value in its errors (``json: cannot unmarshal <type> into ...``), for
the messages kube-apiserver and kubectl print when a value has the wrong type."""

from __future__ import annotations

from decimal import Decimal


def go_json_type(value: object) -> str:
    """``bool``, ``number``, ``string``, ``array``, ``object`` or ``null``, as Go's decoder names the value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


# Go's encoder writes a float64 in plain notation from 1e-6 up to (not including) 1e21, in exponent notation
# outside that range (zero is plain)
_PLAIN_LOW, _PLAIN_HIGH = 1e-6, 1e21


def go_float_text(value: float) -> str:
    """A float64 as Go's ``json.Marshal`` writes it: the shortest digits that read back as ``value``, plain
    (``0.00001``, ``1.5``, ``100``) or, outside [1e-6, 1e21), with an exponent of at least one digit
    (``1e+21``, ``1.5e-7``). kube-apiserver's YAML-to-JSON step writes a YAML body's numbers so, and its error
    texts quote them so."""
    shortest = Decimal(repr(value)).normalize()  # (repr: Python's shortest round-tripping digits, as Go's)
    magnitude = abs(value)
    if magnitude == 0 or _PLAIN_LOW <= magnitude < _PLAIN_HIGH:
        return format(shortest, "f")
    sign, digits, exponent = shortest.as_tuple()
    assert isinstance(exponent, int)  # (a finite float)
    point = exponent + len(digits) - 1
    mantissa = str(digits[0]) + ("." + "".join(map(str, digits[1:])) if len(digits) > 1 else "")
    # (strconv writes two exponent digits at least; the encoder then drops the 0 of "e-07")
    exponent_text = f"+{point:02d}" if point >= 0 else f"-{-point}"
    return f"{'-' if sign else ''}{mantissa}e{exponent_text}"
