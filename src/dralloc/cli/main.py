"""The ``dralloc`` command: parse arguments, dispatch to a subcommand, map errors to exit codes.

Each subcommand lives in its own module of this package and exposes ``register(subparsers)``, which adds
its parser and sets ``func`` (called with the parsed namespace, returns the exit code).

Exit codes shared by all commands: 0 success, 1 a negative answer (e.g. unschedulable, not valid is 2),
2 invalid input or usage, 3 an allocation error. Bad input never prints a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn

from dralloc import __version__
from dralloc.errors import AllocationError, InputError

# Order is the order of `dralloc --help`.
COMMAND_MODULES = (
    "validate",
    "convert",
    "cel",
    "compare",
    "fit",
    "allocate",
    "simulate",
    "plan",
    "replay",
    "sweep",
    "generate",
    "bench",
    "serve",
    "kubeconfig",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's default exits 2 too; keep the message short
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dralloc", description="Kubernetes Dynamic Resource Allocation without a cluster.")
    parser.add_argument("--version", action="version", version=f"dralloc {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"dralloc.cli.{name}")
        except ModuleNotFoundError as exc:  # a command not built yet
            if exc.name == f"dralloc.cli.{name}":
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except AllocationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
