"""The CEL language conformance suite (google/cel-spec simple tests, as JSON in ../shared/cel-spec)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conformance import load_cases, run_case

SPEC = Path(__file__).resolve().parents[3] / "shared" / "cel-spec"

# Tests that do not apply to the Kubernetes DRA environment, or that dralloc does not pass, with the reason.
# The check phase is on for every test that does not set disable_check.
NOT_APPLICABLE = {
    "string_ext/reverse/empty": "string reverse() is strings v3; Kubernetes enables strings v2",
    "string_ext/reverse/single_character": "string reverse() is strings v3; Kubernetes enables strings v2",
    "string_ext/reverse/multiple": "string reverse() is strings v3; Kubernetes enables strings v2",
    **{f"string_ext/format/{name}": "strings v2's format validator (Kubernetes) rejects at compile time what "
                                     "the v4 formatter accepts (%d of a double, %f/%e of an int or uint)"
       for name in ("default precision for fixed-point clause with int",
                    "default precision for fixed-point clause with uint",
                    "default precision for scientific notation with int",
                    "default precision for scientific notation with uint",
                    "NaN support for decimal", "positive infinity support for decimal",
                    "negative infinity support for decimal")},
}
KNOWN_FAILURES = {
    "string_ext/format/map support (all key types)":
        "Python dicts cannot hold both 1 and true as distinct keys",
}
SKIPS = {**NOT_APPLICABLE, **KNOWN_FAILURES}

CASES = load_cases(SPEC) if SPEC.is_dir() else []


@pytest.mark.skipif(not CASES, reason="../shared/cel-spec is not next to the checkout")
@pytest.mark.parametrize(("name", "test"), CASES, ids=[n for n, _ in CASES])
def test_cel_spec_conformance(name, test):
    if name in SKIPS:
        pytest.skip(SKIPS[name])
    ok, detail = run_case(test)
    assert ok, f"{test['expr']!r}: {detail}"


@pytest.mark.skipif(not CASES, reason="../shared/cel-spec is not next to the checkout")
def test_the_applicable_pass_rate_is_at_least_99_percent():
    applicable = [(name, test) for name, test in CASES if name not in NOT_APPLICABLE]
    passed = sum(1 for name, test in applicable if run_case(test)[0])
    assert passed / len(applicable) >= 0.99, f"{passed}/{len(applicable)}"
