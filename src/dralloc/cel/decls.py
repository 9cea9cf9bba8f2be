"""What the Kubernetes DRA CEL environment declares, per Kubernetes version: the one table the checker, the
cost estimator and the runtime read.

Each library lists overload signatures in a small notation: ``name(arg, ...) -> result`` for a global
function and ``receiver::name(arg, ...) -> result`` for a member function. Single upper-case letters are type
parameters. A library is enabled from the Kubernetes version that added it to the base environment
(k8s.io/apiserver/pkg/cel/environment) or to the DRA environment (k8s.io/dynamic-resource-allocation/cel),
and, for the few that were replaced, until the version that removed it.

    env = environment("1.35")
    env.functions["quantity"]      # [Overload(...)]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from dralloc.cel.types import Type, parse_type

DEFAULT_VERSION = "1.36"
VERSIONS = ("1.31", "1.32", "1.33", "1.34", "1.35", "1.36")

# Types whose values are ordered by the list library functions (cel-go ext/lists, k8s library/lists).
COMPARABLE = ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")


@dataclass(frozen=True, slots=True)
class Overload:
    id: str
    function: str
    args: tuple[Type, ...]  # the receiver first for a member function
    result: Type
    member: bool
    type_params: frozenset[str]


def _overload(spec: str) -> Overload:
    head, _, result = spec.partition("->")
    head, result = head.strip(), result.strip()
    member = "::" in head
    receiver = ""
    if member:
        receiver, head = head.split("::", 1)
    name, _, rest = head.partition("(")
    arg_text = rest[:-1].strip()
    arg_specs = _split_args(arg_text) if arg_text else []
    if member:
        arg_specs.insert(0, receiver)
    args = tuple(parse_type(a) for a in arg_specs)
    res = parse_type(result)
    params = frozenset(p for t in (*args, res) for p in _params(t))
    ident = "_".join([name.replace(".", "_").strip("@_")] + [_slug(a) for a in arg_specs])
    return Overload(ident if not member else f"{_slug(receiver)}_{ident}", name, args, res, member, params)


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    out.append(cur.strip())
    return out


def _slug(t: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in t).strip("_")


def _params(t: Type) -> list[str]:
    if t.kind == "param":
        return [t.name]
    return [p for q in t.params for p in _params(q)]


@dataclass(frozen=True)
class Library:
    name: str
    since: str
    until: str | None
    overloads: tuple[str, ...]
    macros: tuple[str, ...] = ()
    types: tuple[str, ...] = ()  # object types the library registers (usable as identifiers: type(T))


def _v(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


def _templated(template: str, types: tuple[str, ...] = COMPARABLE) -> tuple[str, ...]:
    return tuple(template.replace("T", t) for t in types)


_ORDERED = ("bool", "int", "uint", "double", "string", "bytes", "timestamp", "duration")
_CROSS_NUMERIC = (("int", "double"), ("int", "uint"), ("uint", "double"), ("uint", "int"), ("double", "int"),
                  ("double", "uint"))
_TIMESTAMP_GETTERS = ("getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours",
                      "getMilliseconds", "getMinutes", "getMonth", "getSeconds")

STANDARD = Library("standard", "1.0", None, (
    "_?_:_(bool, A, A) -> A",
    "_&&_(bool, bool) -> bool",
    "_||_(bool, bool) -> bool",
    "!_(bool) -> bool",
    "@not_strictly_false(bool) -> bool",
    "_==_(A, A) -> bool",
    "_!=_(A, A) -> bool",
    "_+_(bytes, bytes) -> bytes", "_+_(double, double) -> double", "_+_(duration, duration) -> duration",
    "_+_(duration, timestamp) -> timestamp", "_+_(timestamp, duration) -> timestamp", "_+_(int, int) -> int",
    "_+_(list(A), list(A)) -> list(A)", "_+_(string, string) -> string", "_+_(uint, uint) -> uint",
    "_-_(double, double) -> double", "_-_(duration, duration) -> duration", "_-_(int, int) -> int",
    "_-_(timestamp, duration) -> timestamp", "_-_(timestamp, timestamp) -> duration", "_-_(uint, uint) -> uint",
    "_*_(double, double) -> double", "_*_(int, int) -> int", "_*_(uint, uint) -> uint",
    "_/_(double, double) -> double", "_/_(int, int) -> int", "_/_(uint, uint) -> uint",
    "_%_(int, int) -> int", "_%_(uint, uint) -> uint",
    "-_(double) -> double", "-_(int) -> int",
    *(f"{op}({t}, {t}) -> bool" for op in ("_<_", "_<=_", "_>_", "_>=_") for t in _ORDERED),
    "_[_](list(A), int) -> A", "_[_](map(A, B), A) -> B",
    "@in(A, list(A)) -> bool", "@in(A, map(A, B)) -> bool",
    "size(bytes) -> int", "bytes::size() -> int", "size(list(A)) -> int", "list(A)::size() -> int",
    "size(map(A, B)) -> int", "map(A, B)::size() -> int", "size(string) -> int", "string::size() -> int",
    "type(A) -> type(A)",
    "bool(bool) -> bool", "bool(string) -> bool",
    "bytes(bytes) -> bytes", "bytes(string) -> bytes",
    "double(double) -> double", "double(int) -> double", "double(string) -> double", "double(uint) -> double",
    "duration(duration) -> duration", "duration(string) -> duration",
    "dyn(A) -> dyn",
    "int(int) -> int", "int(double) -> int", "int(duration) -> int", "int(string) -> int",
    "int(timestamp) -> int", "int(uint) -> int",
    "string(string) -> string", "string(bool) -> string", "string(bytes) -> string", "string(double) -> string",
    "string(duration) -> string", "string(int) -> string", "string(timestamp) -> string",
    "string(uint) -> string",
    "timestamp(timestamp) -> timestamp", "timestamp(string) -> timestamp", "timestamp(int) -> timestamp",
    "uint(uint) -> uint", "uint(double) -> uint", "uint(int) -> uint", "uint(string) -> uint",
    "string::contains(string) -> bool", "string::endsWith(string) -> bool", "string::startsWith(string) -> bool",
    "matches(string, string) -> bool", "string::matches(string) -> bool",
    *(f"timestamp::{g}() -> int" for g in _TIMESTAMP_GETTERS),
    *(f"timestamp::{g}(string) -> int" for g in _TIMESTAMP_GETTERS),
    *(f"duration::{g}() -> int" for g in ("getHours", "getMilliseconds", "getMinutes", "getSeconds")),
), macros=("has", "all", "exists", "exists_one", "map", "filter"))

CROSS_TYPE_NUMERIC = Library("cross-type numeric comparisons", "1.28", None, tuple(
    f"{op}({a}, {b}) -> bool" for op in ("_<_", "_<=_", "_>_", "_>=_") for a, b in _CROSS_NUMERIC))

OPTIONALS = Library("optional types", "1.28", None, (
    "optional.of(A) -> optional_type(A)",
    "optional.ofNonZeroValue(A) -> optional_type(A)",
    "optional.none() -> optional_type(A)",
    "optional_type(A)::value() -> A",
    "optional_type(A)::hasValue() -> bool",
    "optional_type(A)::or(optional_type(A)) -> optional_type(A)",
    "optional_type(A)::orValue(A) -> A",
    "_[?_](map(K, V), K) -> optional_type(V)",
    "_[?_](list(V), int) -> optional_type(V)",
    "_[?_](optional_type(map(K, V)), K) -> optional_type(V)",
    "_[?_](optional_type(list(V)), int) -> optional_type(V)",
    "_[_](optional_type(list(V)), int) -> optional_type(V)",
    "_[_](optional_type(map(K, V)), K) -> optional_type(V)",
    "list(A)::first() -> optional_type(A)",
    "list(A)::last() -> optional_type(A)",
    "optional.unwrap(list(optional_type(V))) -> list(V)",
    "list(optional_type(V))::unwrapOpt() -> list(V)",
), macros=("optMap", "optFlatMap"))

K8S_URLS = Library("kubernetes urls", "1.0", None, (
    "url(string) -> kubernetes.URL", "isURL(string) -> bool",
    *(f"kubernetes.URL::{g}() -> string" for g in ("getScheme", "getHost", "getHostname", "getPort",
                                                   "getEscapedPath")),
    "kubernetes.URL::getQuery() -> map(string, list(string))",
), types=("kubernetes.URL",))

K8S_REGEX = Library("kubernetes regex", "1.0", None, (
    "string::find(string) -> string",
    "string::findAll(string) -> list(string)",
    "string::findAll(string, int) -> list(string)",
))

K8S_LISTS = Library("kubernetes lists", "1.0", None, (
    *_templated("list(T)::isSorted() -> bool"),
    *_templated("list(T)::sum() -> T", ("int", "uint", "double", "duration")),
    *_templated("list(T)::min() -> T"),
    *_templated("list(T)::max() -> T"),
    "list(A)::indexOf(A) -> int",
    "list(A)::lastIndexOf(A) -> int",
))

K8S_AUTHZ = Library("kubernetes authz", "1.27", None, (
    "kubernetes.authorization.Authorizer::path(string) -> kubernetes.authorization.PathCheck",
    "kubernetes.authorization.Authorizer::group(string) -> kubernetes.authorization.GroupCheck",
    "kubernetes.authorization.Authorizer::serviceAccount(string, string) -> kubernetes.authorization.Authorizer",
    "kubernetes.authorization.GroupCheck::resource(string) -> kubernetes.authorization.ResourceCheck",
    "kubernetes.authorization.ResourceCheck::subresource(string) -> kubernetes.authorization.ResourceCheck",
    "kubernetes.authorization.ResourceCheck::namespace(string) -> kubernetes.authorization.ResourceCheck",
    "kubernetes.authorization.ResourceCheck::name(string) -> kubernetes.authorization.ResourceCheck",
    "kubernetes.authorization.PathCheck::check(string) -> kubernetes.authorization.Decision",
    "kubernetes.authorization.ResourceCheck::check(string) -> kubernetes.authorization.Decision",
    "kubernetes.authorization.Decision::errored() -> bool",
    "kubernetes.authorization.Decision::error() -> string",
    "kubernetes.authorization.Decision::allowed() -> bool",
    "kubernetes.authorization.Decision::reason() -> string",
))

# the selector functions of the authorization library (AuthorizeWithSelectors, on by default from 1.32)
K8S_AUTHZ_SELECTORS = Library("kubernetes authz selectors", "1.32", None, (
    "kubernetes.authorization.ResourceCheck::fieldSelector(string) -> kubernetes.authorization.ResourceCheck",
    "kubernetes.authorization.ResourceCheck::labelSelector(string) -> kubernetes.authorization.ResourceCheck",
))

K8S_QUANTITY = Library("kubernetes quantity", "1.28", None, (
    "quantity(string) -> kubernetes.Quantity", "isQuantity(string) -> bool",
    # sign is declared as a global function (sign(q)), although the library's documentation shows q.sign()
    "sign(kubernetes.Quantity) -> int", "kubernetes.Quantity::isInteger() -> bool",
    "kubernetes.Quantity::asInteger() -> int", "kubernetes.Quantity::asApproximateFloat() -> double",
    "kubernetes.Quantity::add(kubernetes.Quantity) -> kubernetes.Quantity",
    "kubernetes.Quantity::add(int) -> kubernetes.Quantity",
    "kubernetes.Quantity::sub(kubernetes.Quantity) -> kubernetes.Quantity",
    "kubernetes.Quantity::sub(int) -> kubernetes.Quantity",
    "kubernetes.Quantity::isLessThan(kubernetes.Quantity) -> bool",
    "kubernetes.Quantity::isGreaterThan(kubernetes.Quantity) -> bool",
    "kubernetes.Quantity::compareTo(kubernetes.Quantity) -> int",
), types=("kubernetes.Quantity",))

_STRINGS_V0 = (
    "string::charAt(int) -> string", "string::indexOf(string) -> int", "string::indexOf(string, int) -> int",
    "string::lastIndexOf(string) -> int", "string::lastIndexOf(string, int) -> int",
    "string::lowerAscii() -> string", "string::upperAscii() -> string",
    "string::replace(string, string) -> string", "string::replace(string, string, int) -> string",
    "string::split(string) -> list(string)", "string::split(string, int) -> list(string)",
    "string::substring(int) -> string", "string::substring(int, int) -> string", "string::trim() -> string",
    "list(string)::join() -> string", "list(string)::join(string) -> string",
)
STRINGS_V0 = Library("cel-go strings v0", "1.0", "1.29", _STRINGS_V0)
STRINGS_V2 = Library("cel-go strings v2", "1.29", None, (
    *_STRINGS_V0, "strings.quote(string) -> string", "string::format(list(dyn)) -> string"))

SETS = Library("cel-go sets", "1.29", None, (
    "sets.contains(list(A), list(A)) -> bool",
    "sets.equivalent(list(A), list(A)) -> bool",
    "sets.intersects(list(A), list(A)) -> bool",
))

K8S_IP_CIDR = Library("kubernetes ip and cidr", "1.30", None, (
    "ip(string) -> net.IP", "isIP(string) -> bool", "ip.isCanonical(string) -> bool",
    "net.IP::family() -> int", "net.IP::isUnspecified() -> bool", "net.IP::isLoopback() -> bool",
    "net.IP::isLinkLocalMulticast() -> bool", "net.IP::isLinkLocalUnicast() -> bool",
    "net.IP::isGlobalUnicast() -> bool", "string(net.IP) -> string",
    "cidr(string) -> net.CIDR", "isCIDR(string) -> bool",
    "net.CIDR::containsIP(string) -> bool", "net.CIDR::containsIP(net.IP) -> bool",
    "net.CIDR::containsCIDR(string) -> bool", "net.CIDR::containsCIDR(net.CIDR) -> bool",
    "net.CIDR::ip() -> net.IP", "net.CIDR::masked() -> net.CIDR", "net.CIDR::prefixLength() -> int",
    "string(net.CIDR) -> string",
), types=("net.IP", "net.CIDR"))

_NAMED_FORMATS = ("dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName", "dns1123LabelPrefix",
                  "dns1123SubdomainPrefix", "dns1035LabelPrefix", "labelValue", "uri", "uuid", "byte", "date",
                  "datetime")
K8S_FORMAT = Library("kubernetes format", "1.31", None, (
    *(f"format.{n}() -> kubernetes.NamedFormat" for n in _NAMED_FORMATS),
    "format.named(string) -> optional_type(kubernetes.NamedFormat)",
    "kubernetes.NamedFormat::validate(string) -> optional_type(list(string))",
), types=("kubernetes.NamedFormat",))

TWO_VAR_COMPREHENSIONS = Library("cel-go two-variable comprehensions", "1.32", None, (
    "cel.@mapInsert(map(K, V), K, V) -> map(K, V)",
    "cel.@mapInsert(map(K, V), map(K, V)) -> map(K, V)",
), macros=("all2", "exists2", "exists_one2", "transformList", "transformMap", "transformMapEntry"))

SEMVER_V0 = Library("kubernetes semver v0", "1.31", "1.33", (
    "semver(string) -> kubernetes.Semver", "isSemver(string) -> bool",
    "kubernetes.Semver::major() -> int", "kubernetes.Semver::minor() -> int", "kubernetes.Semver::patch() -> int",
    "kubernetes.Semver::isLessThan(kubernetes.Semver) -> bool",
    "kubernetes.Semver::isGreaterThan(kubernetes.Semver) -> bool",
    "kubernetes.Semver::compareTo(kubernetes.Semver) -> int",
), types=("kubernetes.Semver",))
SEMVER_V1 = Library("kubernetes semver v1", "1.33", None, (
    *SEMVER_V0.overloads, "semver(string, bool) -> kubernetes.Semver", "isSemver(string, bool) -> bool"),
    types=("kubernetes.Semver",))

LISTS_V3 = Library("cel-go lists v3", "1.34", None, (
    "list(A)::slice(int, int) -> list(A)",
    "list(list(A))::flatten() -> list(A)",
    "list(dyn)::flatten(int) -> list(dyn)",
    *_templated("list(T)::sort() -> list(T)"),
    *_templated("list(A)::@sortByAssociatedKeys(list(T)) -> list(A)"),
    "lists.range(int) -> list(int)",
    "list(A)::reverse() -> list(A)",
    "list(A)::distinct() -> list(A)",
), macros=("sortBy",))

BINDINGS = Library("cel-go bindings", "1.31", None, (), macros=("cel.bind",))

DRA_INCLUDES = Library("DRA list attributes", "1.36", None, ("dyn::includes(dyn) -> bool",))

LIBRARIES = (STANDARD, CROSS_TYPE_NUMERIC, OPTIONALS, K8S_URLS, K8S_REGEX, K8S_LISTS, K8S_AUTHZ,
             K8S_AUTHZ_SELECTORS, K8S_QUANTITY,
             STRINGS_V0, STRINGS_V2, SETS, K8S_IP_CIDR, K8S_FORMAT, TWO_VAR_COMPREHENSIONS, SEMVER_V0, SEMVER_V1,
             LISTS_V3, BINDINGS, DRA_INCLUDES)

# The DRA `device` variable (kubernetes.DRADevice) and, for the cost estimator, the largest size of each
# value reachable from it (resourceapi limits: domain 63, identifier 32, driver 63 characters, 32 attributes
# and capacities per device, attribute values 64 characters).
DEVICE_TYPE_NAME = "kubernetes.DRADevice"
DEVICE_FIELDS_BY_VERSION: tuple[tuple[str, str, str], ...] = (
    ("1.31", "driver", "string"),
    ("1.31", "attributes", "map(string, map(string, dyn))"),
    ("1.31", "capacity", "map(string, map(string, kubernetes.Quantity))"),
    ("1.34", "allowMultipleAllocations", "bool"),
)


@dataclass
class Environment:
    """The declarations in force at one Kubernetes version."""

    version: str
    functions: dict[str, list[Overload]] = field(default_factory=dict)
    macros: frozenset[str] = frozenset()
    struct_fields: dict[str, dict[str, Type]] = field(default_factory=dict)
    type_names: frozenset[str] = frozenset()  # registered object types, resolvable as identifiers

    def has_macro(self, name: str) -> bool:
        return name in self.macros

    def extended(self, overloads: list[str]) -> Environment:
        """This environment plus extra overloads (in the table's notation), e.g. a caller's own functions."""
        functions = {name: list(os) for name, os in self.functions.items()}
        for spec in overloads:
            o = _overload(spec)
            functions.setdefault(o.function, []).append(o)
        return Environment(self.version, functions, self.macros, dict(self.struct_fields), self.type_names)


def check_version(version: str) -> str:
    if version not in VERSIONS:
        raise ValueError(f"unsupported Kubernetes version {version!r} for CEL (supported: {', '.join(VERSIONS)})")
    return version


@cache
def environment(version: str = DEFAULT_VERSION) -> Environment:
    """The DRA selector environment at a Kubernetes version ("1.31" … "1.36")."""
    v = _v(check_version(version))
    env = Environment(version)
    macros: set[str] = set()
    type_names: set[str] = {DEVICE_TYPE_NAME, "google.protobuf.Duration", "google.protobuf.Timestamp"}
    for lib in LIBRARIES:
        if _v(lib.since) > v or (lib.until is not None and _v(lib.until) <= v):
            continue
        for spec in lib.overloads:
            o = _overload(spec)
            env.functions.setdefault(o.function, []).append(o)
        macros.update(lib.macros)
        type_names.update(lib.types)
    env.macros = frozenset(macros)
    env.type_names = frozenset(type_names)
    env.struct_fields[DEVICE_TYPE_NAME] = {name: parse_type(t) for since, name, t in DEVICE_FIELDS_BY_VERSION
                                           if _v(since) <= v}
    return env


@cache
def conformance_environment() -> Environment:
    """The full language environment of the newest version, without DRA's ``device`` (for the cel-spec
    conformance suite and ``compile_expression``)."""
    return environment(DEFAULT_VERSION)
