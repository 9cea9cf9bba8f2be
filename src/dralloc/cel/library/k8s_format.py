"""The Kubernetes format library (library/format.go): format.<name>(), format.named() and validate()."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dralloc.cel.library.registry import GLOBALS, RESULT_TYPES, function, member, want
from dralloc.cel.library.urls import is_url
from dralloc.cel.values import NONE, Optional


class FormatValue:
    cel_type = "kubernetes.NamedFormat"
    __slots__ = ("name", "check")

    def __init__(self, name: str, check: Callable[[str], list[str]]) -> None:
        self.name = name
        self.check = check


def _regex_format(name: str, pattern: str, max_len: int, what: str) -> FormatValue:
    compiled = re.compile(pattern)

    def check(s: str) -> list[str]:
        errs = []
        if len(s) > max_len:
            errs.append(f"must be no more than {max_len} characters")
        if not compiled.fullmatch(s):
            errs.append(what)
        return errs

    return FormatValue(name, check)


_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
FORMATS = {
    "dns1123Label": _regex_format("dns1123Label", _DNS_LABEL, 63,
                                  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"),
    "dns1123Subdomain": _regex_format("dns1123Subdomain", rf"{_DNS_LABEL}(\.{_DNS_LABEL})*", 253,
                                      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"),
    "dns1035Label": _regex_format("dns1035Label", r"[a-z]([-a-z0-9]*[a-z0-9])?", 63,
                                  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"),
    "qualifiedName": _regex_format("qualifiedName", r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", 63,
                                   "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"),
    "labelValue": _regex_format("labelValue", r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", 63,
                                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"),
    "uri": FormatValue("uri", lambda s: [] if is_url(s) else ["invalid URI"]),
    "uuid": _regex_format("uuid", r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", 36, "invalid UUID"),
    "byte": FormatValue("byte", lambda s: []),
    "date": _regex_format("date", r"\d{4}-\d{2}-\d{2}", 10, "invalid date"),
    "datetime": _regex_format("datetime", r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", 64, "invalid datetime"),
}


def _prefix_format(name: str, base: FormatValue) -> FormatValue:
    """A format for a name prefix (generateName): a trailing dash is allowed, as apimachinery's
    maskTrailingDash does before validating."""

    def check(s: str) -> list[str]:
        return base.check(s[:-1] + "a" if len(s) > 1 and s.endswith("-") else s)

    return FormatValue(name, check)


for _base in ("dns1123Label", "dns1123Subdomain", "dns1035Label"):
    FORMATS[f"{_base}Prefix"] = _prefix_format(f"{_base}Prefix", FORMATS[_base])

for _name, _fmt in FORMATS.items():
    GLOBALS[f"format.{_name}"] = (lambda f: (lambda: f))(_fmt)
    RESULT_TYPES[f"format.{_name}"] = "kubernetes.NamedFormat"


@function("format.named", "optional_type")
def _format_named(name: Any) -> Optional:
    want("format.named", type(name) is str, name)
    f = FORMATS.get(name)
    return Optional(f, True) if f else NONE


@member("validate", "optional_type")
def _validate(f: Any, s: Any) -> Optional:
    want("validate", type(f) is FormatValue and type(s) is str, f, s)
    errs = f.check(s)
    return Optional(errs, True) if errs else NONE
