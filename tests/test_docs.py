"""The documentation site (architecture and the API reference generated from docstrings) builds in strict
mode, so a broken reference or docstring fails the tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_docs_build_without_warnings(tmp_path: Path) -> None:
    pytest.importorskip("mkdocstrings", reason="mkdocs and mkdocstrings come with the test extra")
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert (tmp_path / "site" / "reference" / "index.html").exists()
