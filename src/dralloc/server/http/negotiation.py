"""The response's media type, negotiated from the Accept header as kube-apiserver negotiates it for a resource:
the clauses ordered by quality (Go's goautoneg), a clause with ``q=0`` rejecting its type, the transforms a
clause asks for (``as=Table;g=meta.k8s.io;v=v1``), ``stream=watch`` for watches, ``pretty=1``; 406 Not
Acceptable, with the media types served, when no clause can be served.

Protobuf is negotiated as kube-apiserver negotiates it but answered as JSON: client-go (which asks for
``application/vnd.kubernetes.protobuf, */*``) decodes a response by its Content-Type.
"""

from __future__ import annotations

from dataclasses import dataclass

from dralloc.server.http.errors import ApiError

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
SERVED = (JSON, YAML, PROTOBUF)  # kube-apiserver's order for a built-in resource (JSON first: the default)
STREAMED = (JSON, PROTOBUF)  # the types with a watch framing (YAML has none)
META_GROUP = "meta.k8s.io"
SCOPE_KEY = "dralloc.output"  # where a request's negotiated Output is kept
TRANSFORMS = ("Table", "PartialObjectMetadata", "PartialObjectMetadataList")


@dataclass(frozen=True)
class Clause:
    """One media range of an Accept header."""

    type: str
    subtype: str
    q: float
    params: tuple[tuple[str, str], ...]

    def specificity(self, media: str) -> int:
        """2 for the exact type, 1 for ``type/*``, 0 for ``*/*``, -1 when it does not match."""
        kind, _, sub = media.partition("/")
        if self.type == kind and self.subtype == sub:
            return 2
        if self.type == kind and self.subtype == "*":
            return 1
        return 0 if self.type == "*" and self.subtype == "*" else -1


@dataclass(frozen=True)
class Output:
    media: str  # the negotiated type (JSON, YAML or protobuf; protobuf is written as JSON)
    convert: str | None = None  # a meta.k8s.io transform: "Table", "PartialObjectMetadata(List)"
    pretty: bool = False
    convert_version: str = "v1"  # the meta.k8s.io version of the transform

    @property
    def yaml(self) -> bool:
        return self.media == YAML


DEFAULT = Output(JSON)


def _go_float(text: str) -> float:
    """Go's strconv.ParseFloat with its error dropped (goautoneg keeps 0 for a quality it cannot read): no
    surrounding spaces, no digit separators."""
    if "_" in text or text != text.strip():
        return 0.0
    try:
        return float(text)
    except ValueError:
        return 0.0


def parse_accept(header: str) -> list[Clause]:
    """goautoneg's ParseAccept: the comma-separated media ranges, ``q`` apart from the other parameters,
    ordered by its comparison (higher quality, then a concrete type, then a concrete subtype first)."""
    clauses: list[Clause] = []
    for part in header.split(","):
        media, *raw_params = part.split(";")
        pieces = media.split("/")
        kind = pieces[0].strip(" ")
        if len(pieces) == 1 and kind == "*":
            kind, sub = "*", "*"
        elif len(pieces) == 2:
            sub = pieces[1].strip(" ")
        else:
            continue
        q = 1.0
        params: dict[str, str] = {}
        for param in raw_params:
            name, eq, value = param.partition("=")
            if not eq:
                continue
            token = name.strip(" ")
            if token == "q":
                q = _go_float(value)
            else:
                params[token] = value.strip(" ")
        clauses.append(Clause(kind, sub, q, tuple(params.items())))
    # Go's sort.Sort on a short slice is an insertion sort with this (not quite consistent) comparison
    for i in range(1, len(clauses)):
        j = i
        while j > 0 and _before(clauses[j], clauses[j - 1]):
            clauses[j], clauses[j - 1] = clauses[j - 1], clauses[j]
            j -= 1
    return clauses


def _before(a: Clause, b: Clause) -> bool:
    if a.q > b.q:
        return True
    if a.type != "*" and b.type == "*":
        return True
    return a.subtype != "*" and b.subtype == "*"


def _options(clause: Clause, media: str) -> Output | None:
    """What the clause asks of this media type, or None when a resource endpoint cannot serve it."""
    convert: dict[str, str] = {}
    pretty = False
    for name, value in clause.params:
        if name in ("as", "g", "v"):
            convert[name] = value
        elif name == "stream":
            if value and (media not in STREAMED or value != "watch"):
                return None
        elif name == "sv":
            if value and value != "v1":
                return None
        elif name == "pretty":
            pretty = value == "1"
    kind = None
    if convert:
        kind = convert.get("as", "")
        if convert.get("g", "") != META_GROUP or convert.get("v", "") not in ("v1", "v1beta1") \
                or kind not in TRANSFORMS or (kind == "Table" and media not in (JSON, YAML)):
            return None
    return Output(media, kind, pretty, convert.get("v", "v1") if kind else "v1")


def negotiate(header: str, watch: bool = False) -> Output:
    """The response's media type and transform for ``header``; 406 when nothing can be served (a watch: nothing
    with a watch framing)."""
    if header in ("", JSON, "*/*"):
        return DEFAULT
    clauses = parse_accept(header)
    rejected = set()
    for media in SERVED:
        best = -1
        for clause in clauses:
            spec = clause.specificity(media)
            if spec > best:
                best = spec
                if clause.q <= 0:
                    rejected.add(media)
                else:
                    rejected.discard(media)
    chosen = next((output for clause in clauses if clause.q > 0 for media in SERVED
                   if media not in rejected and clause.specificity(media) >= 0
                   and (output := _options(clause, media)) is not None), None)
    if chosen is None:
        raise ApiError(406, f"only the following media types are accepted: {', '.join(SERVED)}")
    if watch and chosen.media not in STREAMED:  # the chosen type has no watch framing: the watch is refused
        raise ApiError(406, "only the following media types are accepted: "
                            + ", ".join(f"{m};stream=watch" for m in STREAMED))
    return chosen
