"""The fast answers of the name checks a ResourceSlice (and every object's metadata) goes through: a DNS
subdomain matched first, a pool name's parts matched at once, a driver name's errors worked out once per name.
Each answers exactly as the check it shortcuts (kept here as the reference): the same messages, in order."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.validation import field as f
from dralloc.validation.formats import is_dns1123_subdomain, max_len_error, regex_error
from dralloc.validation.resource import lists
from dralloc.validation.resource.names import validate_driver_name, validate_pool_name

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + "(\\." + _LABEL + ")*"
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character")


def _reference_subdomain(value: str) -> list[str]:
    errs = []
    if len(value.encode("utf-8")) > 253:
        errs.append(max_len_error(253))
    if not re.fullmatch(_SUBDOMAIN, value):
        errs.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN, "example.com"))
    return errs


def _reference_pool_name(name: str, path: str) -> list[f.FieldError]:
    if not name:
        return [f.required(path)]
    errs = [f.too_long(path, 253)] if len(name) > 253 else []
    for part in name.split("/"):
        errs.extend(f.invalid(path, part, m) for m in _reference_subdomain(part))
    return errs


def _reference_driver_name(name: str, path: str) -> list[f.FieldError]:
    if not name:
        return [f.required(path)]
    errs = [f.too_long(path, 63)] if len(name) > 63 else []
    errs.extend(f.invalid(path, name, m) for m in _reference_subdomain(name.lower()))
    return errs


# Valid and invalid names, around the length limits (63, 253 and past them), with slashes, capitals,
# characters of several UTF-8 bytes (a name of 253 characters that is more than 253 bytes).
_NAMES = st.one_of(
    st.text(alphabet="ab0-./Aé", max_size=20),
    st.builds(lambda part, n, sep: sep.join([part] * n), st.from_regex(_SUBDOMAIN, fullmatch=True),
              st.integers(1, 70), st.sampled_from([".", "/", "-"])),
    st.builds(lambda n, tail: "a" * n + tail, st.integers(60, 260), st.sampled_from(["", "é", "/b", ".", "A"])),
)


@settings(max_examples=400, deadline=None)
@given(_NAMES)
def test_names_answer_as_the_checks_they_shortcut(name: str) -> None:
    assert is_dns1123_subdomain(name) == _reference_subdomain(name)
    assert validate_pool_name(name, "spec.pool.name") == _reference_pool_name(name, "spec.pool.name")
    for path in ("spec.driver", "spec.devices[0].opaque.driver"):  # (the second answer is the remembered one)
        assert validate_driver_name(name, path) == _reference_driver_name(name, path)


def test_a_driver_name_is_checked_once() -> None:
    lists._key_problems.cache_clear()
    assert validate_driver_name("Bad_Driver", "a") == [f.FieldError(e.type, "a", e.bad_value, e.detail)
                                                       for e in _reference_driver_name("Bad_Driver", "b")]
    assert validate_driver_name("Bad_Driver", "b")[0].field == "b"
    assert lists._key_problems.cache_info().hits == 1
