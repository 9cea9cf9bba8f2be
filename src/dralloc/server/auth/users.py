"""Bearer tokens from a kube-apiserver static token file, and an optional per-user allow list.

Token file records: ``token,user,uid,"group1,group2"`` (groups optional), read as kube-apiserver reads them. The allow-list file (YAML) maps a
user or ``group:<name>`` to rules ``{verbs: [...], resources: [...]}`` where ``*`` matches anything; without
an allow-list every authenticated user may do everything.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

AUTHENTICATED = "system:authenticated"  # the group kube-apiserver adds to every authenticated user


@dataclass(frozen=True)
class User:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = field(default_factory=tuple)
    # what the authenticator says besides (a service account token's credential id, pod and node), sorted
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def info(self) -> dict[str, Any]:
        """authentication/v1 UserInfo (what a review's status and an admission request say of the user)."""
        out: dict[str, Any] = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {key: list(values) for key, values in self.extra}
        return out


def load_tokens(path: str | Path) -> dict[str, User]:
    """kube-apiserver's --token-file: CSV records ``token,user,uid[,"group1,group2"]`` (more columns ignored),
    values taken as written; a record with an empty token is skipped, a later duplicate wins."""
    tokens: dict[str, User] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.reader(fh):
            if not row:  # blank lines, which Go's CSV reader skips too
                continue
            if len(row) < 3:
                raise ValueError(f"token file '{path}' must have at least 3 columns (token, user name, user uid), "
                                 f"found {len(row)}")
            if row[0] == "":
                continue
            groups = tuple(row[3].split(",")) if len(row) > 3 else ()
            tokens[row[0]] = User(row[1], row[2], groups)
    return tokens


class Authorizer:
    def __init__(self, rules: dict[str, list[dict[str, Any]]] | None = None) -> None:
        self.rules = rules

    @classmethod
    def from_file(cls, path: str | Path) -> Authorizer:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping of user → rules")
        return cls({str(k): list(v or []) for k, v in data.items()})

    def rules_for(self, user: User) -> list[dict[str, Any]] | None:
        """The rules that apply to ``user`` (its own and its groups'); None: everything is allowed."""
        if self.rules is None:
            return None
        subjects = [user.name] + [f"group:{g}" for g in user.groups]
        return [rule for subject in subjects for rule in self.rules.get(subject, [])]

    def allowed(self, user: User, verb: str, resource: str) -> bool:
        rules = self.rules_for(user)
        if rules is None:
            return True
        for rule in rules:
            verbs = rule.get("verbs") or []
            resources = rule.get("resources") or []
            if ("*" in verbs or verb in verbs) and ("*" in resources or resource in resources):
                return True
        return False

    def request_allowed(self, user: User, verb: str, resource: str, subresource: str = "") -> bool:
        """What the server enforces on a request: the verb on the resource (its status included); a pod's
        binding and eviction also need the verb on pods/binding, pods/eviction; a service account's token
        needs the verb on serviceaccounts/token alone (as RBAC: it is not a write of the account)."""
        if (resource, subresource) == ("serviceaccounts", "token"):
            return self.allowed(user, verb, "serviceaccounts/token")
        if not self.allowed(user, verb, resource):
            return False
        return subresource not in ("binding", "eviction") or self.allowed(user, verb, f"{resource}/{subresource}")
