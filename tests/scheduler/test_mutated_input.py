"""Mutated manifests through the commands that read a cluster: every one ends with an exit code and a message,
never an exception out of the command (each bug this found is a rule elsewhere: typed pod affinity and spread
constraints, non-string kinds, repeated objects)."""

from __future__ import annotations

import contextlib
import copy
import io
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralloc.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ODD_VALUES: list[Any] = [None, -1, 0, 2**63, 1.5, "", "x" * 300, "-4", "abc", [], {}, [1], {"a": 1}, True,
                         "Ki", "a/b/c"]


def _documents() -> list[tuple[str, list[Any]]]:
    out = []
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        if "invalid" not in path.parts:
            out.append((str(path.relative_to(EXAMPLES)), [d for d in yaml.safe_load_all(path.read_text()) if d]))
    return out


DOCUMENTS = _documents()


def _places(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path] if path else []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        out += _places(value, (*path, key))
    return out


def _mutate(doc: Any, rnd: random.Random) -> Any:
    """One field deleted, repeated or given a value of another type."""
    places = _places(doc)
    if not places:
        return doc
    *parents, last = rnd.choice(places)
    target = doc
    for step in parents:
        target = target[step]
    roll = rnd.random()
    if roll < 0.3 and isinstance(target, dict):
        del target[last]
    elif roll < 0.4 and isinstance(target, list):
        target.append(copy.deepcopy(target[last]))
    else:
        target[last] = copy.deepcopy(rnd.choice(ODD_VALUES))
    return doc


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, len(DOCUMENTS) - 1), seed=st.integers(0, 2**32 - 1),
       command=st.sampled_from(["validate", "simulate", "allocate", "plan"]))
def test_mutated_examples_end_with_an_exit_code_never_an_exception(tmp_path_factory, which: int, seed: int,
                                                                    command: str) -> None:
    rnd = random.Random(seed)
    _, docs = DOCUMENTS[which]
    docs = copy.deepcopy(docs)
    for _ in range(rnd.randint(1, 6)):
        i = rnd.randrange(len(docs))
        docs[i] = _mutate(docs[i], rnd)
    path = tmp_path_factory.mktemp("mutated") / "input.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = main([command, "-f", str(path)])
        except SystemExit as exc:  # (argparse and the commands' own exits)
            code = exc.code
    assert code in (0, 1, 2)
