"""The C walk of a create's managedFields (_fastfields.c), built when the package is installed with a C compiler."""

from collections.abc import Callable, Mapping
from typing import Any

from dralloc.server.apply.fieldtypes import FieldType

ListFields = Callable[..., dict[str, Any] | None]

def created_new(default_struct: FieldType, list_fields: ListFields, value: Any, node: FieldType, /) -> dict[str, Any]: ...
def created_fields(default_struct: FieldType, list_fields: ListFields, obj: dict[str, Any], node: FieldType,
                   before: dict[str, Any], skip: Mapping[str, Any], /) -> dict[str, Any]: ...
