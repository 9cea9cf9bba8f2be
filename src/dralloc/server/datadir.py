"""A server's data directory: its database, certificates, admin token and the address it last served at.

``dralloc serve --data-dir DIR`` fills it; ``dralloc kubeconfig --data-dir DIR`` reads it to write a kubeconfig
for that server. The default is ``$XDG_DATA_HOME/dralloc`` (``~/.local/share/dralloc``). Secrets are readable
by their owner only.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "dralloc"


class DataDir:
    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path).expanduser() if path else default_data_dir()

    @property
    def db(self) -> Path:
        return self.path / "dralloc.db"

    @property
    def token_file(self) -> Path:
        return self.path / "token"

    @property
    def pki(self) -> Path:
        return self.path / "pki"

    @property
    def ca_cert(self) -> Path:
        return self.pki / "ca.crt"

    @property
    def server_record(self) -> Path:
        return self.path / "server.json"

    def create(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        os.chmod(self.path, 0o700)

    def admin_token(self, create: bool) -> str | None:
        """The admin token (made on first use when ``create``, mode 0600); None if there is none."""
        try:
            token = self.token_file.read_text(encoding="utf-8").strip()
            if token:
                return token
        except OSError:
            pass
        if not create:
            return None
        self.create()
        token = secrets.token_urlsafe(32)
        fd = os.open(self.token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(token + "\n")
        return token

    def record_server(self, url: str, ca_file: Path | None) -> None:
        """Remember where the server listens (and which CA signs its certificate) for ``dralloc kubeconfig``."""
        record = {"server": url, "certificateAuthority": str(ca_file) if ca_file else None}
        tmp = self.server_record.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.server_record)

    def write_kubeconfig(self, url: str, token: str | None, ca_file: Path | None) -> Path:
        """``kubeconfig`` in the data directory (mode 0600: it holds the token), for kubectl right away."""
        import yaml

        ca_data = ca_file.read_bytes() if ca_file is not None and url.startswith("https://") else None
        text = yaml.safe_dump(kubeconfig(url, token, False, ca_data), sort_keys=False)
        path = self.path / "kubeconfig"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        return path

    def recorded_server(self) -> dict[str, str | None] | None:
        try:
            data = json.loads(self.server_record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None


def kubeconfig(server: str, token: str | None = None, insecure: bool = False,
               ca_data: bytes | None = None) -> dict[str, object]:
    """A kubeconfig with one cluster, user and context named ``dralloc`` (namespace ``default``)."""
    import base64

    cluster: dict[str, object] = {"server": server}
    if insecure:
        cluster["insecure-skip-tls-verify"] = True
    elif ca_data and server.startswith("https://"):
        cluster["certificate-authority-data"] = base64.b64encode(ca_data).decode()
    # Without a token (an --anonymous server) kubectl would prompt for a password on an HTTPS server whose
    # user it cannot identify; a user name (sent as basic auth, which the server ignores) stops the prompt.
    user: dict[str, object] = {"token": token} if token else {"username": "anonymous"}
    return {"apiVersion": "v1", "kind": "Config", "current-context": "dralloc",
            "clusters": [{"name": "dralloc", "cluster": cluster}],
            "users": [{"name": "dralloc", "user": user}],
            "contexts": [{"name": "dralloc", "context": {"cluster": "dralloc", "user": "dralloc",
                                                         "namespace": "default"}}]}
