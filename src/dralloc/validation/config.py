"""ConfigMap and Secret rules of kube-apiserver: config keys, the 1 MiB limit, the required keys of the typed
Secrets, ``immutable``; the base64 values are decoded as Go's decoder decodes them (a 400 when they are not)."""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from dralloc.errors import InputError
from dralloc.validation import field as f
from dralloc.validation.formats import regex_error
from dralloc.validation.meta import name_is_dns_subdomain, validate_object_meta

MAX_SIZE = 1024 * 1024  # MaxSecretSize, for ConfigMaps too
_KEY_FORMAT = "[-._a-zA-Z0-9]+"
_KEY = re.compile(_KEY_FORMAT)
_KEY_MESSAGE = regex_error("a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                           _KEY_FORMAT, "key.name", "KEY_NAME", "key-name")
IMMUTABLE = "field is immutable when `immutable` is set"


def _key_errors(key: str) -> list[str]:
    """``IsConfigMapKey``."""
    out = []
    if len(key) > 253:
        out.append("must be no more than 253 characters")
    if not _KEY.fullmatch(key):
        out.append(_KEY_MESSAGE)
    if key == ".":
        out.append("must not be '.'")
    elif key == "..":
        out.append("must not be '..'")
    elif key.startswith(".."):
        out.append("must not start with '..'")
    return out


def _decoded(values: Any, kind: str) -> dict[str, bytes]:
    """The bytes of a map of base64 values, or the 400 Go's decoder gives (``illegal base64 data at input
    byte N``)."""
    out = {}
    for key, value in (values or {}).items():
        try:
            if not isinstance(value, str):
                raise ValueError
            out[key] = base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)  # Go skips both
        except (binascii.Error, ValueError):
            good = len(re.match(r"[A-Za-z0-9+/]*", value).group(0)) if isinstance(value, str) else 0  # type: ignore[union-attr]
            raise InputError(f'{kind} in version "v1" cannot be handled as a {kind}: illegal base64 data at '
                             f"input byte {good}") from None
    return out


def _keys_and_size(values: Any, path: str, kind: str) -> tuple[list[f.FieldError], int, dict[str, bytes]]:
    """The key errors of one map, the size of its values (bytes once decoded) and, for a map of base64 values,
    the decoded bytes."""
    binary = path.endswith("binaryData") or kind == "Secret"
    decoded = _decoded(values, kind) if binary else {}
    errors = [f.invalid(f"{path}[{key}]", key, msg) for key in sorted(values or {}) for msg in _key_errors(key)]
    size = sum(len(v) for v in decoded.values()) if binary else sum(len(str(v).encode()) for v in (values or {}).values())
    return errors, size, decoded


def config_errors(stored: dict[str, Any], meta: Any) -> list[f.FieldError]:
    """A ConfigMap's or Secret's metadata and content (a Secret's ``stringData`` already folded into ``data``)."""
    found = validate_object_meta(meta, True, name_is_dns_subdomain, require_namespace=True)
    return found + (secret_errors(stored) if stored.get("kind") == "Secret" else configmap_errors(stored))


def configmap_errors(cm: dict[str, Any]) -> list[f.FieldError]:
    """``ValidateConfigMap`` after the metadata."""
    data, binary = cm.get("data") or {}, cm.get("binaryData") or {}
    errors, size, _ = _keys_and_size(data, "data", "ConfigMap")
    errors += [f.invalid(f"data[{key}]", key, "duplicate of key present in binaryData")
               for key in sorted(data) if key in binary]
    more, binary_size, _ = _keys_and_size(binary, "binaryData", "ConfigMap")
    errors += more
    if size + binary_size > MAX_SIZE:
        errors.append(f.too_long("", MAX_SIZE))
    return errors


_REQUIRED_KEYS = {"kubernetes.io/dockercfg": (".dockercfg",), "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
                  "kubernetes.io/tls": ("tls.crt", "tls.key"), "kubernetes.io/ssh-auth": ("ssh-privatekey",)}


def secret_errors(secret: dict[str, Any]) -> list[f.FieldError]:
    """``ValidateSecret`` after the metadata: keys, size, and what each built-in type requires."""
    data = secret.get("data") or {}
    errors, size, decoded = _keys_and_size(data, "data", "Secret")
    if size > MAX_SIZE:
        errors.append(f.too_long("data", MAX_SIZE))
    kind = secret.get("type") or "Opaque"
    if kind == "kubernetes.io/service-account-token":
        if not ((secret.get("metadata") or {}).get("annotations") or {}).get("kubernetes.io/service-account.name"):
            errors.append(f.required("metadata.annotations[kubernetes.io/service-account.name]"))
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in decoded and "password" not in decoded:
            errors += [f.required("data[username]"), f.required("data[password]")]
    elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        (key,) = _REQUIRED_KEYS[kind]
        if key not in decoded:
            errors.append(f.required(f"data[{key}]"))
        else:
            try:
                parsed = json.loads(decoded[key])
                if not isinstance(parsed, dict):
                    raise ValueError("json: cannot unmarshal into Go value of type map[string]interface {}")
            except ValueError as exc:
                errors.append(f.invalid(f"data[{key}]", "<secret contents redacted>", str(exc)))
    elif kind == "kubernetes.io/ssh-auth":
        if not decoded.get("ssh-privatekey"):
            errors.append(f.required("data[ssh-privatekey]"))
    elif kind == "kubernetes.io/tls":
        errors += [f.required(f"data[{key}]") for key in ("tls.crt", "tls.key") if key not in decoded]
    return errors


def config_update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[f.FieldError]:
    """What ``ValidateConfigMapUpdate`` / ``ValidateSecretUpdate`` add: a Secret's type never changes, and an
    immutable object's data (and the flag itself) stay as they are."""
    errors = []
    if new.get("kind") == "Secret" and (new.get("type") or "Opaque") != (old.get("type") or "Opaque"):
        errors.append(f.invalid("type", new.get("type"), "field is immutable"))
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errors.append(f.forbidden("immutable", IMMUTABLE))
        for key in ("data", "binaryData") if new.get("kind") == "ConfigMap" else ("data",):
            if (new.get(key) or None) != (old.get(key) or None):
                errors.append(f.forbidden(key, IMMUTABLE))
    return errors
