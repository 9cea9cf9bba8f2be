"""A managedFields entry's manager (ValidateFieldManager): at most 128 bytes, every character printable, a bad one
reported at its index in bytes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dralloc.validation.meta import validate_managed_fields


def _manager_errors(manager: str) -> list[str]:
    entries = [{"manager": manager, "operation": "Update", "fieldsType": "FieldsV1"}]
    return [str(e) for e in validate_managed_fields(entries, "metadata.managedFields")]


def test_a_manager_with_characters_that_are_not_printable_is_refused_at_their_byte_index() -> None:
    at = "metadata.managedFields[0].manager"
    assert _manager_errors("kubectl-client-side-apply") == []
    assert _manager_errors("é\tb\n") == [
        f'{at}: Invalid value: "é\\tb\\n": invalid characters at index 2, only printable characters are accepted',
        f'{at}: Invalid value: "é\\tb\\n": invalid characters at index 4, only printable characters are accepted']
    assert _manager_errors("x" * 129) == [f"{at}: Too long: may not be more than 128 bytes"]


@given(st.text(max_size=140))
def test_each_character_that_is_not_printable_is_one_error(manager: str) -> None:
    bad = sum(1 for ch in manager if not ch.isprintable())
    too_long = len(manager.encode()) > 128
    assert len(_manager_errors(manager)) == bad + too_long
