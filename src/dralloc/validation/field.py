"""Field errors shaped like k8s.io/apimachinery/pkg/util/validation/field.

An error is a field path, an error type and a detail; its text is what
kube-apiserver prints (``spec.devices[3].name: Invalid value: "GPU_0": ...``).
Paths are plain strings built with :func:`child` / :func:`index` / :func:`key`
because validation builds thousands of them per cluster dump and strings are
the cheapest thing Python has.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# Upstream's ErrorType strings.
REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
DUPLICATE = "FieldValueDuplicate"
NOT_SUPPORTED = "FieldValueNotSupported"
TOO_MANY = "FieldValueTooMany"
TOO_LONG = "FieldValueTooLong"
FORBIDDEN = "FieldValueForbidden"
NOT_FOUND = "FieldValueNotFound"
INTERNAL = "InternalError"
TYPE_INVALID = "FieldValueTypeInvalid"

_TYPE_TEXT = {
    REQUIRED: "Required value",
    INVALID: "Invalid value",
    DUPLICATE: "Duplicate value",
    NOT_SUPPORTED: "Unsupported value",
    TOO_MANY: "Too many",
    TOO_LONG: "Too long",
    FORBIDDEN: "Forbidden",
    NOT_FOUND: "Not found",
    INTERNAL: "Internal error",
    TYPE_INVALID: "Invalid value",
}

# Types whose text never shows the bad value (as upstream's ErrorBody).
_VALUELESS = {REQUIRED, FORBIDDEN, TOO_LONG, INTERNAL}


class _Omitted:
    def __repr__(self) -> str:
        return "<omitted>"


OMIT = _Omitted()


def go_quote(text: str) -> str:
    # strconv.Quote for the characters validation meets: JSON escaping is the
    # same for printable ASCII, quotes and backslashes.
    return json.dumps(text, ensure_ascii=False)


def format_value(value: Any) -> str:
    """A bad value as upstream's ErrorBody prints it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    # Anything else is printed as its JSON (upstream json.Marshals complex bad values).
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_json_default)
    except (TypeError, ValueError):
        return str(value)


def _json_default(value: Any) -> Any:
    from dralloc.api.codec import to_dict

    return to_dict(value)


@dataclass(frozen=True, slots=True)
class FieldError:
    type: str
    field: str
    bad_value: Any = OMIT
    detail: str = ""

    @property
    def reason(self) -> str:
        """The ``reason`` of a Status cause (upstream's CauseType)."""
        return self.type

    def body(self) -> str:
        text = _TYPE_TEXT.get(self.type, self.type)
        if self.type not in _VALUELESS and self.bad_value is not OMIT:
            text = f"{text}: {format_value(self.bad_value)}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}" if self.field else self.body()

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "field": self.field, "detail": self.detail, "message": str(self)}


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    return f"{path}[{k}]"


# Constructors named as upstream's, so rules read like their reference.
def required(path: str, detail: str = "") -> FieldError:
    return FieldError(REQUIRED, path, OMIT, detail)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(INVALID, path, value, detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(DUPLICATE, path, value, "")


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(FORBIDDEN, path, OMIT, detail)


def not_supported(path: str, value: Any, valid: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else ""
    return FieldError(NOT_SUPPORTED, path, value, detail)


def too_many(path: str, actual: int, limit: int) -> FieldError:
    detail = f"must have at most {limit} items" if limit >= 0 else "has too many items"
    return FieldError(TOO_MANY, path, actual if actual >= 0 else OMIT, detail)


def too_long(path: str, limit: int) -> FieldError:
    detail = f"may not be more than {limit} bytes" if limit >= 0 else "value is too long"
    return FieldError(TOO_LONG, path, OMIT, detail)


def internal(path: str, detail: str) -> FieldError:
    return FieldError(INTERNAL, path, OMIT, detail)


def aggregate_message(errors: list[FieldError]) -> str:
    """upstream's ErrorList.ToAggregate().Error(): one error bare, many in brackets."""
    texts: list[str] = []
    for e in errors:
        t = str(e)
        if t not in texts:
            texts.append(t)
    if len(texts) == 1:
        return texts[0]
    return "[" + ", ".join(texts) + "]"
