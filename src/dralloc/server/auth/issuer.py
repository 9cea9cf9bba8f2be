"""The service account issuer's discovery documents, as kube-apiserver serves them to authenticated clients:
``/.well-known/openid-configuration`` (the OIDC provider metadata: issuer, where the keys are, what it signs
with) and ``/openid/v1/jwks`` (the public key that verifies the tokens ``kubectl create token`` issues), so
that a relying party (workload identity tooling, a token's verifier outside the cluster) can check them."""

from __future__ import annotations

import base64
import ipaddress
import json

from starlette.responses import Response

from dralloc.server.auth import tokens

CONFIG_PATH = "/.well-known/openid-configuration"
JWKS_PATH = "/openid/v1/jwks"
PATHS = (CONFIG_PATH, JWKS_PATH)
CACHE_CONTROL = "public, max-age=3600"  # kube-apiserver's, overriding its usual private, no-cache
JWKS_TYPE = "application/jwk-set+json"


def jwks_uri(address: str, port: int) -> str:
    """The keys' URL kube-apiserver derives from its external address when no --service-account-jwks-uri
    is given: https, the address and port, the JWKS path."""
    try:
        host = f"[{address}]" if ipaddress.ip_address(address).version == 6 else address
    except ValueError:
        host = address
    return f"https://{host}:{port}{JWKS_PATH}"


def _b64(number: int) -> str:
    return base64.urlsafe_b64encode(number.to_bytes(32, "big")).rstrip(b"=").decode()


def keyset(key: tokens.ServiceAccountKey) -> dict[str, list[dict[str, str]]]:
    """The JWKS of the signing key, its members in go-jose's order."""
    numbers = key.public.public_numbers()
    return {"keys": [{"use": "sig", "kty": "EC", "kid": key.kid, "crv": "P-256", "alg": tokens.ALGORITHM,
                      "x": _b64(numbers.x), "y": _b64(numbers.y)}]}


def configuration(uri: str) -> dict[str, object]:
    return {"issuer": tokens.ISSUER, "jwks_uri": uri, "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": [tokens.ALGORITHM]}


def answer(path: str, key: tokens.ServiceAccountKey, uri: str) -> Response:
    """The document at ``path`` (one of :data:`PATHS`), compact JSON as Go marshals it."""
    body, media = (configuration(uri), "application/json") if path == CONFIG_PATH else (keyset(key), JWKS_TYPE)
    return Response(json.dumps(body, separators=(",", ":")).encode(), 200, media_type=media,
                    headers={"Cache-Control": CACHE_CONTROL})
