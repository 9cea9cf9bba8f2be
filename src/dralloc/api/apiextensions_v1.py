"""apiextensions.k8s.io/v1 CustomResourceDefinition: the shape kube-apiserver decodes, so that a body whose
values have the wrong JSON types is refused as Go's decoder refuses it. An OpenAPI schema is kept as the JSON
it is (``dralloc.validation.structural`` reads it); the server stores the object as sent."""

from __future__ import annotations

from typing import Any

import msgspec

from dralloc.api.meta import Base, ObjectMeta

GROUP = "apiextensions.k8s.io"
API_VERSION = f"{GROUP}/v1"
KIND = "CustomResourceDefinition"


class Names(Base):
    plural: str = ""
    singular: str = ""
    short_names: list[str] | None = None
    kind: str = ""
    list_kind: str = ""
    categories: list[str] | None = None


class Validation(Base):
    open_apiv3_schema: dict[str, Any] | None = msgspec.field(default=None, name="openAPIV3Schema")


class Scale(Base):
    spec_replicas_path: str = ""
    status_replicas_path: str = ""
    label_selector_path: str | None = None


class Subresources(Base):
    status: dict[str, Any] | None = None
    scale: Scale | None = None


class PrinterColumn(Base):
    name: str = ""
    type: str = ""
    format: str = ""
    description: str = ""
    priority: int = 0
    json_path: str = msgspec.field(default="", name="jsonPath")


class SelectableField(Base):
    json_path: str = msgspec.field(default="", name="jsonPath")


class Version(Base):
    name: str = ""
    served: bool = False
    storage: bool = False
    deprecated: bool = False
    deprecation_warning: str | None = None
    schema: Validation | None = None
    subresources: Subresources | None = None
    additional_printer_columns: list[PrinterColumn] | None = None
    selectable_fields: list[SelectableField] | None = None


class Conversion(Base):
    strategy: str = ""
    webhook: dict[str, Any] | None = None


class Spec(Base):
    group: str = ""
    names: Names = msgspec.field(default_factory=Names)
    scope: str = ""
    versions: list[Version] | None = None
    conversion: Conversion | None = None
    preserve_unknown_fields: bool = False


class Status(Base):
    conditions: list[dict[str, Any]] | None = None
    accepted_names: Names | None = None
    stored_versions: list[str] | None = None


class CustomResourceDefinition(Base):
    api_version: str = API_VERSION
    kind: str = KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: Spec = msgspec.field(default_factory=Spec)
    status: Status | None = None


def decode(data: dict[str, Any]) -> CustomResourceDefinition:
    """The typed CRD; ``msgspec.ValidationError`` for a value of the wrong JSON type."""
    return msgspec.convert(data, CustomResourceDefinition, str_keys=True)
