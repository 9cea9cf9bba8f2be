"""Kubernetes ``Status`` failures as an exception the handlers raise and the app turns into a response."""

from __future__ import annotations

from typing import Any

REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
           406: "NotAcceptable", 409: "Conflict", 410: "Expired", 413: "RequestEntityTooLarge",
           415: "UnsupportedMediaType", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError", 504: "Timeout"}


class ApiError(Exception):
    def __init__(self, code: int, message: str, reason: str | None = None, details: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = REASONS.get(code, "Unknown") if reason is None else reason  # "": Unknown, left out
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                "message": self.message, "reason": self.reason, "code": self.code}
        if not self.reason:
            del body["reason"]
        if self.details is not None:  # an empty one is sent as {}, as Go sends a non-nil *StatusDetails
            body["details"] = self.details
        return body


def no_such_path() -> ApiError:
    """The 404 of a path no route serves. kube-apiserver's router answers it with a generic server response,
    whose details are present but empty; kubectl relies on that (``kubectl debug`` tells an unserved
    subresource from a missing pod by the empty name in the details, and dereferences them)."""
    return ApiError(404, "the server could not find the requested resource", details={})


def method_not_allowed() -> ApiError:
    """The 405 of a method a route does not serve, as the router's generic server response (empty details)."""
    return ApiError(405, "the server does not allow this method on the requested resource", details={})


def not_found(resource: Any, name: str) -> ApiError:
    return ApiError(404, f'{resource.group_resource} "{name}" not found',
                    details={"name": name, "group": resource.group, "kind": resource.name})


def already_exists(resource: Any, name: str) -> ApiError:
    return ApiError(409, f'{resource.group_resource} "{name}" already exists', "AlreadyExists",
                    details={"name": name, "group": resource.group, "kind": resource.name})


def conflict(resource: Any, name: str, why: str = "the object has been modified; please apply your changes "
                                                  "to the latest version and try again") -> ApiError:
    return ApiError(409, f'Operation cannot be fulfilled on {resource.group_resource} "{name}": {why}', "Conflict",
                    details={"name": name, "group": resource.group, "kind": resource.name})


def invalid(resource: Any, name: str, errors: list[Any]) -> ApiError:
    from dralloc.validation.field import aggregate_message

    causes = [{"reason": e.type, "message": e.body(), "field": e.field} for e in errors]
    qualified = f"{resource.kind}.{resource.group}" if resource.group else resource.kind
    return ApiError(422, f'{qualified} "{name}" is invalid: {aggregate_message(errors)}',
                    details={"name": name, "group": resource.group, "kind": resource.kind, "causes": causes})


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)
