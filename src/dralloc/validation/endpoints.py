"""core/v1 Endpoints rules of kube-apiserver (pkg/apis/core/validation ValidateEndpoints) that decide what a
client-written Endpoints object means: addresses that are IPs, ports in range with known protocols and names,
unique when several."""

from __future__ import annotations

from dralloc.api.core_v1_network import Endpoints
from dralloc.validation import field as f
from dralloc.validation import ips
from dralloc.validation.formats import is_dns1123_label
from dralloc.validation.service import PORT_RANGE, PROTOCOLS


def endpoints_errors(endpoints: Endpoints) -> list[f.FieldError]:
    """ValidateEndpoints' rules of the subsets."""
    errs: list[f.FieldError] = []
    for i, subset in enumerate(endpoints.subsets or []):
        path = f.index("subsets", i)
        if not subset.addresses and not subset.not_ready_addresses:
            errs.append(f.required(path, "must specify `addresses` or `notReadyAddresses`"))
        for part, addresses in (("addresses", subset.addresses), ("notReadyAddresses", subset.not_ready_addresses)):
            for j, address in enumerate(addresses or []):
                at = f.index(f.child(path, part), j)
                errs += ips.legacy_ip_errors(f.child(at, "ip"), address.ip)
                if address.hostname:
                    errs += [f.invalid(f.child(at, "hostname"), address.hostname, m)
                             for m in is_dns1123_label(address.hostname)]
        ports = subset.ports or []
        names: set[str] = set()
        for j, port in enumerate(ports):
            at = f.index(f.child(path, "ports"), j)
            if len(ports) > 1 and not port.name:
                errs.append(f.required(f.child(at, "name")))
            elif port.name:
                errs += [f.invalid(f.child(at, "name"), port.name, m) for m in is_dns1123_label(port.name)]
                if port.name in names:
                    errs.append(f.duplicate(f.child(at, "name"), port.name))
                names.add(port.name)
            if not 1 <= port.port <= 65535:
                errs.append(f.invalid(f.child(at, "port"), port.port, PORT_RANGE))
            if not port.protocol:
                errs.append(f.required(f.child(at, "protocol")))
            elif port.protocol not in PROTOCOLS:
                errs.append(f.not_supported(f.child(at, "protocol"), port.protocol, PROTOCOLS))
    return errs
