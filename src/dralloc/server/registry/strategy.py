"""A served kind's strategy, as kube-apiserver's registry keeps one per resource: what a create and an update
prepare, the kind's admission, its validation, its status subresource, and what a delete does.

The generic verbs (``verbs/writes.py``, ``verbs/deletes.py``) call these hooks and nothing else that depends on
the kind: a kind's rules live in its strategy module, and a kind without one gets :class:`Strategy` (a typed
kind, stored in its model's defaulted v1 form) or :class:`CoreStrategy` (a core kind, stored as the client sent
it). A strategy module must not import the resource table nor the HTTP layer (the table names the strategies).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol

from dralloc.api.codec import decode
from dralloc.server.apply.fieldtypes import KindSchema
from dralloc.server.clock import now
from dralloc.server.types import Obj
from dralloc.store import Outcome, SQLStore
from dralloc.validation import validate, validate_status_update, validate_update
from dralloc.validation.field import FieldError
from dralloc.validation.meta import finalizers_added_while_deleting, validate_managed_fields


class Server(Protocol):
    """What a strategy's hooks may use of the server: its store, its background tasks."""

    @property
    def store(self) -> SQLStore: ...

    def background(self, work: Awaitable[Any]) -> None: ...


class Strategy:
    """The generic strategy of a typed kind (the modelled API groups): stored in its defaulted v1 form, with the
    model's create, update and status-update validation. ``metadata.generation`` is kept only by the kinds whose
    kube-apiserver strategy keeps it (resource.k8s.io, pods), not by Leases nor PriorityClasses."""

    # Stored as the client sent it (a core kind) rather than in the model's defaulted form.
    stored_as_sent = False
    # metadata.generation is 1 on create and goes up by one when the spec changes.
    tracks_generation = False
    # field selector labels that name another field of the stored object (a view's renamed fields)
    field_labels: dict[str, str] | None = None

    # --- create ---------------------------------------------------------------------------------------

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        """What kube-apiserver's decoding of a write's body fills in (the SetDefaults_* of its kind, a core
        kind's conversion), in place: the writer's managedFields entry is recorded on the object as decoded,
        so the writer owns these fields (``sub``: the subresource written, "" for the main endpoint)."""

    def decode_known_defaults(self, obj: Obj) -> None:
        """:meth:`decode_defaults` of a create whose body is known to have no field its kind's schema lacks
        (its typed decoding found none): a strategy that drops such fields here need not look for them."""
        self.decode_defaults(obj, "")

    def admit(self, store: SQLStore, sent: Obj, namespace: str) -> Obj:
        """Mutating admission of a create (a new dict when it changes). It runs after the writer's
        managedFields entry is recorded, as kube-apiserver's create handler runs it: nobody owns what it adds.
        A stored-as-sent kind is admitted once its body has decoded; a typed kind before its decoding."""
        return sent

    def prepare_for_create(self, stored: Obj) -> None:
        """What a create resets or fills in after admission (PrepareForCreate: a status, a namespace's
        finalizer), owned by nobody."""

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        """The validation of a create: ``typed`` is the decoded object, ``stored`` the form it is stored in
        (None for a typed kind, which is stored once it is valid)."""
        return validate(typed, require_namespace=namespaced)

    def with_system_fields(self, created: Obj) -> Obj:
        """What a create fills in once the object has its uid (a Job's generated selector names it)."""
        return created

    def create_admission_errors(self, store: SQLStore, namespace: str, name: str,
                                stored: Obj) -> list[FieldError]:
        """Validating admission of a create, which may read other objects."""
        return []

    def create_warnings(self, created: Obj) -> list[str]:
        """The warnings of a create's response."""
        return []

    def after_create(self, server: Server, created: Obj) -> Awaitable[None] | None:
        """What follows a create at once (a namespace's default service account): work for the verb to await,
        or None (most kinds: no coroutine made on every create)."""
        return None

    # --- update ---------------------------------------------------------------------------------------

    def after_update(self, server: Server, written: Obj, sub: str) -> Awaitable[None] | None:
        """What follows an update at once (a CRD's naming): work for the verb to await, or None."""
        return None

    def admit_update(self, store: SQLStore, sent: Obj, name: str) -> None:
        """Admission of an update, before the stored object is read."""

    def merge_status(self, sent: Obj, meta: Obj, old: Obj) -> Obj:
        """A write of the status subresource: only ``status`` is taken from the request; spec and metadata
        (labels, annotations and finalizers included) are the stored object's."""
        merged = {**old, "status": sent.get("status")}
        if merged["status"] is None:
            merged.pop("status")
        merged["metadata"] = dict(old["metadata"])
        if "managedFields" in meta:  # not reset for status writes: an apply's ownership, or the client's
            merged["metadata"]["managedFields"] = meta["managedFields"]
        return merged

    def prepare_for_update(self, merged: Obj, old: Obj, sub: str) -> None:
        """The mutating admission of an update and what the update resets or fills in, once the new generation
        is known and the writer's managedFields entry is recorded (owned by nobody)."""

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        """The validation of an update (``sub``: "", "status" or another subresource; ``typed_meta``: the
        metadata as sent, decoded): the model's rules, then the metadata ones."""
        errors = finalizers_added_while_deleting(merged["metadata"], old["metadata"])
        new_typed, old_typed = decode(merged), decode(old)
        if sub == "status":
            errors += managed_field_errors(merged)
            return validate_status_update(new_typed, old_typed) + errors
        return validate_update(new_typed, old_typed) + errors

    def update_admission_errors(self, store: SQLStore, namespace: str, merged: Obj, old: Obj,
                                sub: str) -> list[FieldError]:
        """Validating admission of an update, once it is valid."""
        return []

    def update_warnings(self, written: Obj, sub: str) -> list[str]:
        """The warnings of an update's response."""
        return []

    def deletion_held(self, obj: Obj) -> bool:
        """Whether an object being deleted that has no finalizers left must stay (a namespace's
        ``spec.finalizers``)."""
        return False

    # --- a view of another resource (the table's ``stored_as``) -----------------------------------------

    def to_storage(self, sent: Obj) -> Obj:
        """An object of this view in the stored resource's form."""
        return sent

    def to_view(self, stored: Obj) -> Obj:
        """A stored object as this view shows it."""
        return stored

    def view_create_errors(self, stored: Obj) -> list[FieldError]:
        """The view's own rules of a create (``stored``: in the stored resource's form)."""
        return []

    # --- a kind without a model (server/crds/: CustomResourceDefinitions, custom resources) -----------------

    def decode(self, data: Obj) -> Any | None:
        """A body of this kind decoded (what the verbs read of it: its metadata), or None: by its model. An
        InputError for a value of the wrong type."""
        return None

    def unknown_fields(self, data: Obj) -> list[str] | None:
        """The paths (``spec.foo``) of the fields of ``data`` its kind's own schema lacks, or None: the model's
        (strict decoding)."""
        return None

    def apply_schema(self, obj: Obj) -> KindSchema | None:
        """The schema server-side apply and managedFields follow for a kind with its own (a custom resource's
        version, from its CRD); None: the built-in kinds' table (``fieldtypes``)."""
        return None

    def present(self, obj: Obj, api_version: str) -> Obj | None:
        """A stored object as ``api_version`` shows it, for a kind that converts its own versions; None: the
        resource table's conversion."""
        return None

    def printer_columns(self, api_version: str) -> list[dict[str, Any]] | None:
        """The Table columns of ``kubectl get`` in ``api_version`` when the kind defines its own (a custom
        resource's additionalPrinterColumns), None: the resource table's; the cells: :meth:`printer_cells`."""
        return None

    def printer_cells(self, obj: Obj) -> list[Any]:
        return []

    def scale_of(self, obj: Obj) -> Obj | None:
        """The autoscaling/v1 Scale of an object whose kind says where its replicas are (a custom resource's
        scale subresource); None: the workloads' ``spec.replicas``."""
        return None

    def scaled(self, obj: Obj, replicas: int) -> tuple[Obj, list[FieldError]] | None:
        """``obj`` with ``replicas`` written where :meth:`scale_of` reads them, and its validation errors; None:
        the workloads' way."""
        return None

    # --- delete ---------------------------------------------------------------------------------------

    def check_delete(self, name: str) -> None:
        """Refuse the delete of an object that may not be deleted (an ApiError)."""

    def mark_deleted(self, old: Obj, options: Obj, query: Any, collection: bool) -> Outcome | None:
        """What a delete of ``old`` writes (``collection``: one of a deletecollection); None: remove it now."""
        return mark_deleting(old)

    def after_delete(self, server: Server, result: Obj, collection: bool) -> None:
        """What follows a delete that was not a dry run."""

    def delete_answers_with_object(self, result: Obj, dry: bool) -> bool:
        """A delete answered 200 with the object as it now is (a pod terminating, a namespace marked),
        rather than 202 or 200 by its finalizers."""
        return False


class CoreStrategy(Strategy):
    """The generic strategy of a core/v1 kind: stored as the client sent it, no generation, the model's
    create validation, and on update the rules of every kind (finalizers, managed fields)."""

    stored_as_sent = True

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        return finalizers_added_while_deleting(merged["metadata"], old["metadata"]) + managed_field_errors(merged)


def managed_field_errors(merged: Obj) -> list[FieldError]:
    """The managedFields a client sent, checked on updates that do not validate the whole ObjectMeta (core
    kinds, status writes), as kube-apiserver's update validation checks them for every kind."""
    return validate_managed_fields(merged["metadata"].get("managedFields"), "metadata.managedFields")


def mark_deleting(old: Obj) -> Outcome | None:
    """A delete of an object with finalizers only marks it (deletionTimestamp, grace period 0, generation
    bumped, as kube-apiserver does); None: remove it now."""
    meta = old.get("metadata") or {}
    if not meta.get("finalizers"):
        return None
    if meta.get("deletionTimestamp"):
        return Outcome(old, "MODIFIED")  # already being deleted: nothing to write
    meta = {**meta, "deletionTimestamp": now(), "deletionGracePeriodSeconds": 0}
    if meta.get("generation"):
        meta["generation"] += 1
    return Outcome({**old, "metadata": meta}, "MODIFIED")


TYPED = Strategy()
CORE = CoreStrategy()
