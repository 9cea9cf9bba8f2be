"""The patch types a custom resource takes: kube-apiserver has no Go struct for it, so no strategic merge patch."""

from __future__ import annotations

from dralloc.server.http.errors import ApiError

PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")


def check_patch_type(content_type: str) -> None:
    """415 for a patch of a type a custom resource does not take, in kube-apiserver's words."""
    media = content_type.split(";")[0].strip().lower()
    if media not in PATCH_TYPES and media != "application/apply-patch+cbor":
        raise ApiError(415, "the body of the request was in an unknown format - accepted media types include: "
                            + ", ".join(PATCH_TYPES))
