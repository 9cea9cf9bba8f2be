"""The C reader of protobuf bodies (_fastwire.c), built when the package is installed with a C compiler."""

from collections.abc import Callable
from typing import Any

class Tables:
    """The messages of one schema table, compiled for reading (accelerated.py builds them)."""

    def __init__(self, messages: tuple[tuple[tuple[Any, ...], ...], ...], raw_json: Callable[[bytes, str], Any],
                 max_depth: int) -> None: ...
    def message(self, index: int, body: bytes, start: int, end: int, depth: int, /) -> dict[str, Any] | None: ...
    def object(self, index: int, metadata: bool, body: bytes, start: int, end: int, api_version: str, kind: str,
               /) -> dict[str, Any] | None: ...

def read_envelope(kinds: dict[bytes, tuple[Tables, int, bool, str, str]], body: bytes, /) -> dict[str, Any] | None: ...
