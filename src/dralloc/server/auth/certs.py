"""The server's own certificate authority and serving certificate, as kube-apiserver makes them in its
``--cert-dir`` when it is given none: made on first start, reused on every later one.

Layout under a data directory's ``pki/``: ``ca.crt``/``ca.key`` (a self-signed CA, ten years) and
``apiserver.crt``/``apiserver.key`` (signed by that CA, one year, with SANs for every name clients may use).
The serving certificate is reissued from the same CA when a name is missing from it or it is about to expire,
so kubeconfigs that embed the CA keep working. Keys are ECDSA P-256 (fast to make, accepted by Go's TLS).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_DAYS = 3650
SERVING_DAYS = 365
RENEW_BEFORE = dt.timedelta(days=30)


@dataclass(frozen=True)
class ServingFiles:
    ca_cert: Path
    cert: Path
    key: Path


def default_names(advertise: str | None = None, address: str | None = None) -> list[str]:
    """The names a local client may dial: loopback in all its forms, this host's name, and the addresses
    the server listens on or advertises (a wildcard listen address names nothing)."""
    names = ["localhost", "127.0.0.1", "::1", socket.gethostname()]
    for extra in (address, advertise):
        if extra and extra not in ("0.0.0.0", "::", ""):
            names.append(extra)
    return list(dict.fromkeys(names))


def ensure_serving_cert(pki: Path, names: list[str]) -> ServingFiles:
    """The CA and a serving certificate valid for ``names`` under ``pki``, made or reissued as needed."""
    pki.mkdir(parents=True, exist_ok=True)
    os.chmod(pki, 0o700)
    files = ServingFiles(pki / "ca.crt", pki / "apiserver.crt", pki / "apiserver.key")
    ca_key_path = pki / "ca.key"
    if files.ca_cert.exists() and ca_key_path.exists():
        ca_cert = x509.load_pem_x509_certificate(files.ca_cert.read_bytes())
        ca_key = serialization.load_pem_private_key(ca_key_path.read_bytes(), password=None)
        if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{ca_key_path}: expected an ECDSA key")
    else:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_cert = _ca_certificate(ca_key)
        _write_key(ca_key_path, ca_key)
        files.ca_cert.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    if not _serving_cert_fits(files, ca_cert, names):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _serving_certificate(key, ca_key, ca_cert, names)
        _write_key(files.key, key)
        files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM)
                               + ca_cert.public_bytes(serialization.Encoding.PEM))
    return files


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _ca_certificate(key: ec.EllipticCurvePrivateKey) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"dralloc-ca@{int(_now().timestamp())}")])
    now = _now()
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))


def _san(names: list[str]) -> x509.SubjectAlternativeName:
    entries: list[x509.GeneralName] = []
    for name in names:
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            entries.append(x509.DNSName(name))
    return x509.SubjectAlternativeName(entries)


def _serving_certificate(key: ec.EllipticCurvePrivateKey, ca_key: ec.EllipticCurvePrivateKey,
                         ca_cert: x509.Certificate, names: list[str]) -> x509.Certificate:
    now = _now()
    return (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dralloc-apiserver")]))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=SERVING_DAYS))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, content_commitment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(_san(names), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))


def _serving_cert_fits(files: ServingFiles, ca_cert: x509.Certificate, names: list[str]) -> bool:
    """The stored serving certificate is signed by the CA, covers every name and is not about to expire."""
    if not (files.cert.exists() and files.key.exists()):
        return False
    try:
        cert = x509.load_pem_x509_certificate(files.cert.read_bytes())
        cert.verify_directly_issued_by(ca_cert)
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (ValueError, TypeError, x509.ExtensionNotFound, InvalidSignature):
        return False
    if cert.not_valid_after_utc - _now() < RENEW_BEFORE:
        return False
    have = {str(ip) for ip in san.get_values_for_type(x509.IPAddress)} | set(san.get_values_for_type(x509.DNSName))
    wanted = set()
    for name in names:
        try:
            wanted.add(str(ipaddress.ip_address(name)))
        except ValueError:
            wanted.add(name)
    return wanted <= have


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    data = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
