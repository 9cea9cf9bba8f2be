"""String formats of k8s.io/apimachinery (pkg/api/validate/content) with upstream's messages.

Each ``is_*`` function returns the list of problems (empty when the value is fine), worded as
apimachinery words them, so that callers can wrap each one into a field error.
"""

from __future__ import annotations

import re
import uuid
from functools import lru_cache

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
LABEL_VALUE_MAX = 63
LABEL_KEY_NAME_MAX = 63

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
              "and must start and end with an alphanumeric character")
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character")
_CIDENT_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_CIDENT_MSG = ("a valid C identifier must start with alphabetic character or '_', followed by a string of "
               "alphanumeric characters or '_'")
_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_KEY_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_VALUE_FMT = "(" + _KEY_FMT + ")?"
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
              "and must start and end with an alphanumeric character")

# Go's regexp `$` on MatchString means end of text; Python's fullmatch gives the same.
_label_re = re.compile(_LABEL_FMT)
_subdomain_re = re.compile(_SUBDOMAIN_FMT)
_subdomain_match = _subdomain_re.fullmatch
_subdomain_path_match = re.compile(_SUBDOMAIN_FMT + "(/" + _SUBDOMAIN_FMT + ")*").fullmatch
_cident_re = re.compile(_CIDENT_FMT)
_key_re = re.compile(_KEY_FMT)
_value_re = re.compile(_VALUE_FMT)

_SEMVER_NUM = r"(0|[1-9]\d*)"
_SEMVER_PRE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_SEMVER_BUILD = r"[0-9a-zA-Z-]+"
_semver_re = re.compile(
    _SEMVER_NUM + r"\." + _SEMVER_NUM + r"\." + _SEMVER_NUM
    + r"(-" + _SEMVER_PRE + r"(\." + _SEMVER_PRE + r")*)?"
    + r"(\+" + _SEMVER_BUILD + r"(\." + _SEMVER_BUILD + r")*)?",
    re.ASCII,
)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    # apimachinery joins "'a', " + " or " + "'b', ": the doubled space is upstream's.
    text = msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples)
    return text + f"regex used for validation is '{fmt}')"


def max_len_error(n: int) -> str:
    return f"must be no more than {n} bytes"


def _blen(value: str) -> int:
    return len(value.encode("utf-8")) if not value.isascii() else len(value)


def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if _blen(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX))
    if not _label_re.fullmatch(value):
        if _subdomain_re.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    if len(value) <= DNS1123_SUBDOMAIN_MAX and _subdomain_match(value) is not None:
        return []  # (the common answer, first: a matching value is ASCII, so its length is its bytes)
    errs = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _subdomain_re.fullmatch(value):
        errs.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errs


def are_dns1123_subdomains(value: str, max_len: int) -> bool:
    """Whether ``value`` is at most ``max_len`` (at most 253) characters of DNS-1123 subdomains joined by
    ``/``: then :func:`is_dns1123_subdomain` finds nothing wrong with any of its parts."""
    return len(value) <= max_len and _subdomain_path_match(value) is not None


def is_c_identifier(value: str) -> list[str]:
    if not _cident_re.fullmatch(value):
        return [regex_error(_CIDENT_MSG, _CIDENT_FMT, "my_name", "MY_NAME", "MyName")]
    return []


def is_qualified_name(value: str) -> list[str]:
    """IsQualifiedName / IsLabelKey: an optional DNS-subdomain prefix, '/', and a name part."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return ["a valid label key " + regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif _blen(name) > LABEL_KEY_NAME_MAX:
        errs.append("name part " + max_len_error(LABEL_KEY_NAME_MAX))
    if not _key_re.fullmatch(name):
        errs.append("name part " + regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_label_value(value: str) -> list[str]:
    errs = []
    if _blen(value) > LABEL_VALUE_MAX:
        errs.append(max_len_error(LABEL_VALUE_MAX))
    if not _value_re.fullmatch(value):
        errs.append(regex_error(_VALUE_MSG, _VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


@lru_cache(maxsize=4096)
def is_semver(value: str) -> bool:
    return _semver_re.fullmatch(value) is not None


def uuid_problem(value: str) -> str | None:
    """What github.com/google/uuid's Validate says of a UID, or None when it parses."""
    n = len(value)
    if n not in (32, 36, 36 + 2, 36 + 9):
        return f"invalid UUID length: {n}"
    try:
        uuid.UUID(value)
    except ValueError:
        return "invalid UUID format"
    if n == 36 and (value[8] != "-" or value[13] != "-" or value[18] != "-" or value[23] != "-"):
        return "invalid UUID format"
    return None


# Resource names that count against node allocatable (core helper IsNodeAllocatableResourceName).
def is_node_allocatable_resource_name(name: str) -> bool:
    return name in ("cpu", "memory", "ephemeral-storage") or name.startswith("hugepages-")


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: domain-prefixed, not kubernetes.io, valid as a quota key."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)
