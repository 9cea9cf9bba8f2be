"""generateName on the server: the base cut to 58 characters, as the simulator's name generator cuts it."""

from __future__ import annotations

from dralloc.server.verbs.writes import generated_name


def test_generate_name_bases_are_cut_to_58_characters() -> None:
    name = generated_name("x" * 70)
    assert len(name) == 63 and name.startswith("x" * 58)
    assert len(generated_name("web-")) == 9
