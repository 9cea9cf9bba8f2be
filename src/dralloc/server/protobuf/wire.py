"""The protobuf wire format: varints, fields and their values as bytes carry them, the scalars they become
(a string, bytes, a bool, an int32, an int64), and the one error a body that cannot be decoded raises
(:class:`ProtobufError`). Everything above (the walk, the single pass, the messages with JSON forms of their
own, the envelope) reads bytes through these."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

_UINT64 = (1 << 64) - 1


class ProtobufError(ValueError):
    """A body that cannot be decoded: what is wrong and, below the envelope, in which field."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = ""  # JSON path of the field, e.g. "spec.devices.requests[0].name"

    def within(self, segment: str) -> ProtobufError:
        """The same error, one field further out (``segment``: a name, "[3]" or "[key]")."""
        if segment:
            joined = "" if not self.path or self.path.startswith("[") else "."
            self.path = segment + joined + self.path
        return self

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufError("truncated varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value & _UINT64, pos  # (Go keeps the low 64 bits of a tenth byte)
        shift += 7
        if shift >= 70:
            raise ProtobufError("a varint longer than ten bytes")


def scan(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each field: an int for a varint, bytes otherwise."""
    pos, end = 0, len(buf)
    while pos < end:
        key = buf[pos]  # one byte for the fields numbered up to 15, two up to 2047 (fast paths: most keys are)
        if key < 0x80:
            pos += 1
        elif pos + 1 < end and buf[pos + 1] < 0x80:
            key, pos = key & 0x7F | buf[pos + 1] << 7, pos + 2
        else:
            key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtobufError(f"illegal field number 0 (wire type {wire})")
        value: int | bytes
        if wire == 2:
            size = buf[pos] if pos < end else 0x80
            size, pos = (size, pos + 1) if size < 0x80 else _varint(buf, pos)
        elif wire == 0:
            value = buf[pos] if pos < end else 0x80  # (one byte: a small int or a bool)
            value, pos = (value, pos + 1) if value < 0x80 else _varint(buf, pos)
            yield number, 0, value
            continue
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
        else:
            raise ProtobufError(f"field {number} has the unsupported wire type {wire}")
        if size > end - pos:
            raise ProtobufError(f"field {number} is truncated ({size} bytes announced, {end - pos} left)")
        yield number, wire, buf[pos:pos + size]
        pos += size


def fields(buf: bytes) -> list[tuple[int, Any]]:
    """(field number, value) pairs: an int for varints, bytes for the other wire types."""
    if not isinstance(buf, bytes):
        raise ProtobufError("expected a message")
    return [(number, value) for number, _, value in scan(buf)]


def _last_values(buf: bytes) -> dict[int, tuple[int, int | bytes]]:
    """The last (wire type, value) of each field number."""
    return {number: (wire, value) for number, wire, value in scan(buf)}


def _length_delimited(found: tuple[int, int | bytes], what: str) -> bytes:
    wire, value = found
    if wire != 2 or not isinstance(value, bytes):
        raise ProtobufError(f"{what} has wire type {wire}, not 2 (length-delimited)")
    return value


def _packed(kind: str, run: bytes) -> list[Any]:
    out: list[Any] = []
    pos = 0
    while pos < len(run):
        value, pos = _varint(run, pos)
        out.append(_scalar(kind, value))
    return out


def _scalar(kind: str, value: int | bytes) -> Any:
    if kind == "string":
        return _text(_as_bytes(value))
    if kind == "bytes":
        return base64.b64encode(_as_bytes(value)).decode()
    if not isinstance(value, int):
        raise ProtobufError(f"a {kind} must be a varint")
    if kind == "bool":
        return value != 0
    if kind == "int32":  # Go keeps the low 32 bits (a negative int32 is sent as ten bytes)
        value &= 0xFFFF_FFFF
        return value - (1 << 32) if value >= 1 << 31 else value
    return value - (1 << 64) if value >= 1 << 63 else value  # int64


def _as_bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a length-delimited value, found a varint")
    return value


def _wire2(wire: int, value: int | bytes, what: str) -> bytes:
    if wire != 2:
        raise ProtobufError(f"wrong wire type {wire} for {what}")
    return _as_bytes(value)


def _text(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtobufError("invalid UTF-8 in a string") from None


# --- writing: what the encoder and the CRD schema writer write -------------------------------------------

_ONE_BYTE = [bytes((value,)) for value in range(0x80)]


def _varint_bytes(value: int) -> bytes:
    value &= _UINT64  # a negative number is its 64-bit two's complement: ten bytes, as Go writes it
    if value < 0x80:
        return _ONE_BYTE[value]
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _delimited(number: int, payload: bytes) -> bytes:
    return _varint_bytes(number << 3 | 2) + _varint_bytes(len(payload)) + payload
