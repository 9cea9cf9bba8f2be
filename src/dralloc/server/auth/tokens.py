"""Service account tokens as kube-apiserver issues and checks them: JWTs signed with the server's service account
key, carrying upstream's claims (pkg/serviceaccount/claims.go), and the authenticator that turns one back into
a user (pkg/serviceaccount/jwt.go, and the claims' Validate).

The key is an ECDSA P-256 key (tokens are ES256), ``pki/sa.key`` in the data directory: made on the first
start, mode 0600, reused after (replicas sharing a database need the same one). A server without a data
directory keeps one in memory, and its tokens end with it. Signing and verifying are PyJWT's, on cryptography.

A token authenticates while its signature, issuer, audience and times hold (go-jose's minute of leeway) and
the objects it names are still the ones it was issued for: the service account (same uid) and, when bound,
the pod, secret or node (same uid, not deleted more than a minute ago). Each failure has upstream's text.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from calendar import timegm
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from dralloc.server.auth.users import AUTHENTICATED, User
from dralloc.server.types import Obj
from dralloc.server.uids import new_uid
from dralloc.store import NotFound, SQLStore

# kube-apiserver's --service-account-issuer as kubeadm and kind set it; --api-audiences defaults to the issuer
ISSUER = "https://kubernetes.default.svc.cluster.local"
API_AUDIENCES = (ISSUER,)
ALGORITHM = "ES256"
LEEWAY = 60  # go-jose's DefaultLeeway, seconds: for exp, nbf and iat, and for bound objects being deleted
# A pod-bound token asked for with kubelet's 3607 s and the API server's audiences is valid a year, and
# says from when on it is stale (kube-apiserver's --service-account-extend-token-expiration, on by default)
WARN_ONLY_SECONDS = 60 * 60 + 7
EXTENDED_SECONDS = 365 * 24 * 60 * 60

PREFIX = "system:serviceaccount:"
ALL_ACCOUNTS = "system:serviceaccounts"
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"
POD_NAME = "authentication.kubernetes.io/pod-name"
POD_UID = "authentication.kubernetes.io/pod-uid"
NODE_NAME = "authentication.kubernetes.io/node-name"
NODE_UID = "authentication.kubernetes.io/node-uid"

INVALID_TOKEN = "invalid bearer token"  # what kube-apiserver's bearer token authenticator adds to every refusal
CRYPTO_FAILURE = "go-jose/go-jose: error in cryptographic primitive"
NO_KEYS = "invalid signature, no keys found"
EXPIRED = "service account token has expired"
NOT_YET = "service account token is not valid yet"
FUTURE = "service account token is issued in the future"
INVALIDATED = "service account token has been invalidated"
UNEXPECTED = "service account token claims could not be validated due to unexpected validation error"



class TokenRefused(Exception):
    """A token of this server's issuer that does not authenticate; the message is upstream's reason."""


def username(namespace: str, name: str) -> str:
    return f"{PREFIX}{namespace}:{name}"


def groups(namespace: str) -> tuple[str, ...]:
    """A service account's groups, and system:authenticated as every authenticated user has."""
    return ALL_ACCOUNTS, f"{ALL_ACCOUNTS}:{namespace}", AUTHENTICATED


def key_id(public: ec.EllipticCurvePublicKey) -> str:
    """The ``kid`` of a key, as kube-apiserver derives it: the unpadded base64url SHA-256 of its DER
    SubjectPublicKeyInfo (so the key cannot be recovered from it)."""
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


class ServiceAccountKey:
    """The key that signs and verifies the server's service account tokens."""

    def __init__(self, key: ec.EllipticCurvePrivateKey) -> None:
        if not isinstance(key.curve, ec.SECP256R1):
            raise ValueError(f"expected an ECDSA P-256 key, not {key.curve.name}")
        self.key = key
        self.public = key.public_key()
        self.kid = key_id(self.public)

    @classmethod
    def generate(cls) -> ServiceAccountKey:
        return cls(ec.generate_private_key(ec.SECP256R1()))

    @classmethod
    def load_or_create(cls, path: Path) -> ServiceAccountKey:
        """The key in ``path`` (PEM), made there (mode 0600, its directory 0700) if there is none yet."""
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            os.chmod(path.parent, 0o700)
            made = cls.generate()
            pem = made.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption())
            tmp = path.with_name(f".{path.name}.{os.getpid()}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(pem)
            try:
                os.link(tmp, path)  # whole or not at all; a server starting alongside keeps the first one made
            except FileExistsError:
                pass
            finally:
                tmp.unlink()
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{path}: expected an ECDSA P-256 private key")
        return cls(key)

    def sign(self, claims: Obj) -> str:
        """The compact JWS of ``claims``; the header has the algorithm and the key id, as go-jose writes it."""
        return jwt.encode(claims, self.key, algorithm=ALGORITHM, headers={"kid": self.kid, "typ": None})

    def verified(self, token: str) -> Obj:
        """The claims of a token this key signed; TokenRefused otherwise."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenRefused(CRYPTO_FAILURE) from None
        kid = header.get("kid")
        if kid and kid != self.kid:  # a key id names the key to check with, and none of ours has it
            raise TokenRefused(NO_KEYS)
        try:
            claims = jwt.decode(token, self.public, algorithms=[ALGORITHM], options={
                "verify_signature": True, "verify_exp": False, "verify_nbf": False, "verify_iat": False,
                "verify_aud": False, "verify_iss": False, "verify_sub": False, "verify_jti": False})
        except jwt.PyJWTError:
            raise TokenRefused(CRYPTO_FAILURE) from None
        if not isinstance(claims, dict):
            raise TokenRefused(UNEXPECTED)
        return claims


# --- issuing ----------------------------------------------------------------------------------------------

def _ref(obj: Obj | None) -> Obj | None:
    if obj is None:
        return None
    meta = obj.get("metadata") or {}
    return {k: v for k, v in (("name", meta.get("name") or ""), ("uid", meta.get("uid") or "")) if v}


def claims(account: Obj, audiences: Iterable[str], expiration: int, now: int, *, pod: Obj | None = None,
           secret: Obj | None = None, node: Obj | None = None, warn_after: int = 0) -> Obj:
    """A token's claims, as upstream's Claims makes them: the registered ones and the private ``kubernetes.io``
    claim (the namespace, the account, and the object it is bound to: a pod, with its node when it has one, a
    secret or a node), keys in the order go-jose writes them (sorted)."""
    meta = account.get("metadata") or {}
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""
    private: Obj = {"namespace": namespace}
    if node is not None:
        private["node"] = _ref(node)
    if pod is not None:
        private["pod"] = _ref(pod)
    if secret is not None:
        private["secret"] = _ref(secret)
    private["serviceaccount"] = _ref(account)
    if warn_after:
        private["warnafter"] = now + warn_after
    return {"aud": list(audiences), "exp": now + expiration, "iat": now, "iss": ISSUER, "jti": new_uid(),
            "kubernetes.io": {k: v for k, v in private.items() if v}, "nbf": now,
            "sub": username(namespace, name)}


# --- authenticating ---------------------------------------------------------------------------------------

def is_ours(token: str) -> bool:
    """Whether a bearer token is a JWT of this server's issuer (read without verifying, as upstream's first
    look): only those are judged here; any other token is for the other authenticators."""
    if token.lstrip().startswith("{"):
        return False
    parts = token.split(".")
    if len(parts) != 3:
        return False
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, TypeError):
        return False
    return isinstance(payload, dict) and payload.get("iss") == ISSUER


def go_quote_list(items: Iterable[str]) -> str:
    """A []string as Go's %q prints it: ``["a" "b"]``."""
    return "[" + " ".join(json.dumps(i, ensure_ascii=False) for i in items) + "]"


def authenticate(key: ServiceAccountKey, store: SQLStore, token: str,
                 audiences: Iterable[str] = API_AUDIENCES, now: float | None = None) -> tuple[User, list[str]]:
    """The user a service account token of this server authenticates, and the audiences of ``audiences`` it
    is good for; TokenRefused with upstream's reason when it does not authenticate."""
    claims = key.verified(token)
    if claims.get("iss") != ISSUER:
        raise TokenRefused(f"token issuer {json.dumps(claims.get('iss'))} is invalid")
    wanted = list(audiences) or list(API_AUDIENCES)
    token_audiences = _audiences(claims.get("aud")) or list(API_AUDIENCES)  # none: a legacy token's, the API's
    usable = [a for a in token_audiences if a in wanted]
    if not usable:
        raise TokenRefused(f"token audiences {go_quote_list(token_audiences)} is invalid for the target "
                           f"audiences {go_quote_list(wanted)}")
    when = time.time() if now is None else now
    _check_times(claims, when)
    return _validated(store, claims, when), usable


def _audiences(aud: Any) -> list[str]:
    if isinstance(aud, str):
        return [aud]
    if isinstance(aud, list) and all(isinstance(a, str) for a in aud):
        return aud
    if aud is None:
        return []
    raise TokenRefused(UNEXPECTED)


def _check_times(claims: Obj, now: float) -> None:
    """go-jose's checks of exp, nbf and iat, each with a minute of leeway."""
    times = {}
    for name in ("nbf", "exp", "iat"):
        value = claims.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise TokenRefused(UNEXPECTED)
        times[name] = value
    if times["nbf"] is not None and now + LEEWAY < times["nbf"]:
        raise TokenRefused(NOT_YET)
    if times["exp"] is not None and now - LEEWAY > times["exp"]:
        raise TokenRefused(EXPIRED)
    if times["iat"] is not None and now + LEEWAY < times["iat"]:
        raise TokenRefused(FUTURE)


def _named(private: Obj, field: str) -> tuple[str, str] | None:
    ref = private.get(field)
    if ref is None:
        return None
    if not isinstance(ref, dict):
        raise TokenRefused(UNEXPECTED)
    name, uid = ref.get("name", ""), ref.get("uid", "")
    if not isinstance(name, str) or not isinstance(uid, str):
        raise TokenRefused(UNEXPECTED)
    return name, uid


def _get(store: SQLStore, resource: str, namespace: str, name: str) -> Obj | None:
    if not name:
        return None
    try:
        return store.get(resource, namespace, name)
    except NotFound:
        return None


def _uid(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _check_bound(store: SQLStore, kind: str, namespace: str, ref: tuple[str, str], gone_before: float) -> None:
    """The object a token is bound to (a secret, pod or node) is still the one it names: there, with the same
    uid, not deleted before ``gone_before``; else upstream's refusal."""
    obj = _get(store, f"{kind}s", namespace, ref[0])
    if obj is None:
        raise TokenRefused(INVALIDATED)
    if _uid(obj) != ref[1]:  # (the uid first, then the deletion, as upstream checks them)
        raise TokenRefused(f"{kind} UID ({_uid(obj)}) does not match service account {kind} ref claim ({ref[1]})")
    if _deleted_before(obj, gone_before):
        raise TokenRefused(INVALIDATED)


def _deleted_before(obj: Obj, when: float) -> bool:
    """Whether the object is being deleted since before ``when`` (its deletionTimestamp is earlier)."""
    stamp = (obj.get("metadata") or {}).get("deletionTimestamp")
    if not isinstance(stamp, str):
        return False
    try:
        return timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")) < when
    except ValueError:
        return False


def _validated(store: SQLStore, claims: Obj, now: float) -> User:
    """Upstream's Validate: the objects the claims name must still be those the token was issued for."""
    private = claims.get("kubernetes.io")
    if not isinstance(private, dict):
        raise TokenRefused(UNEXPECTED)
    namespace = private.get("namespace", "")
    if not isinstance(namespace, str):
        raise TokenRefused(UNEXPECTED)
    account_ref = _named(private, "serviceaccount") or ("", "")
    pod_ref, secret_ref, node_ref = (_named(private, f) for f in ("pod", "secret", "node"))
    gone_before = now - LEEWAY
    name, uid = account_ref
    account = _get(store, "serviceaccounts", namespace, name)
    if account is None:
        raise TokenRefused(f'serviceaccounts "{name}" not found')
    if _uid(account) != uid:
        raise TokenRefused(f"service account UID ({_uid(account)}) does not match claim ({uid})")
    if _deleted_before(account, gone_before):
        raise TokenRefused(f"service account {namespace}/{name} has been deleted")
    if secret_ref is not None:
        _check_bound(store, "secret", namespace, secret_ref, gone_before)
    extra: list[tuple[str, tuple[str, ...]]] = []
    if pod_ref is not None:
        _check_bound(store, "pod", namespace, pod_ref, gone_before)
        if pod_ref[0] and pod_ref[1]:
            extra += [(POD_NAME, (pod_ref[0],)), (POD_UID, (pod_ref[1],))]
    if node_ref is not None and pod_ref is None:  # a node-bound token: the node must still be there
        _check_bound(store, "node", "", node_ref, gone_before)
    jti = claims.get("jti")
    if isinstance(jti, str) and jti:
        extra.append((CREDENTIAL_ID, (f"JTI={jti}",)))
    if node_ref is not None and node_ref[0]:  # (a pod's node is as the token says: it is not checked)
        extra.append((NODE_NAME, (node_ref[0],)))
        if node_ref[1]:
            extra.append((NODE_UID, (node_ref[1],)))
    return User(username(namespace, name), uid, groups(namespace), tuple(sorted(extra)))
