"""The functions of the Kubernetes DRA CEL environment, one module per library as cel-go and Kubernetes keep
them.

cel-go: :mod:`.standard` (conversions, size, string predicates, matches, time), :mod:`.strings` (strings v2),
:mod:`.sets`, :mod:`.lists` (lists v3) and :mod:`.optionals`. Kubernetes (k8s.io/apiserver/pkg/cel/library):
:mod:`.k8s_lists` (with DRA's ``includes()``), :mod:`.k8s_regex`, :mod:`.quantity`, :mod:`.semver`,
:mod:`.ip`, :mod:`.cidr`, :mod:`.urls`, :mod:`.k8s_format` and :mod:`.authz`. :mod:`.patterns` compiles
regular expressions as Go's regexp does (RE2) for matches, find and findAll.

Each function takes evaluated argument values and raises :class:`~dralloc.cel.errors.CELError` for a wrong
type (``no such overload``) or a failure. ``GLOBALS`` maps a (possibly qualified) global function name to its
implementation; ``MEMBERS`` maps a member function name to an implementation taking the receiver first.
``RESULT_TYPES`` gives static result types for the generator ("dyn" when unknown). What each Kubernetes
version declares is :mod:`dralloc.cel.decls`.
"""

from __future__ import annotations

# Importing a library module registers its functions; the order is the one the tables were built in.
from dralloc.cel.library import (  # noqa: F401
    authz,
    cidr,
    ip,
    k8s_format,
    k8s_lists,
    k8s_regex,
    lists,
    optionals,
    quantity,
    semver,
    sets,
    standard,
    strings,
    urls,
)
from dralloc.cel.library.lists import sort_key_check
from dralloc.cel.library.patterns import constant_pattern, regex
from dralloc.cel.library.registry import GLOBALS, MEMBERS, RESULT_TYPES

__all__ = ["GLOBALS", "MEMBERS", "RESULT_TYPES", "constant_pattern", "regex", "sort_key_check"]
