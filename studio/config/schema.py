"""A tree of field specs made from Triton's ModelConfig descriptor: what the forms render.

    spec = schema_tree()                      # the ModelConfig root
    spec.child("dynamic_batching").child("max_queue_delay_microseconds").kind == "int"
    find_spec("input[*].dims")                # by schema path; [*] stands for any element or map key

Every field reachable from ModelConfig is in the tree (a test walks the descriptor to check it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache, lru_cache

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from tritonclient.grpc import model_config_pb2

from studio.config.descriptors import default_value, is_map, is_message, is_repeated, oneof_name
from studio.resources import resource

F = FieldDescriptor
_INT_RANGES = {
    F.CPPTYPE_INT32: (-(2**31), 2**31 - 1),
    F.CPPTYPE_INT64: (-(2**63), 2**63 - 1),
    F.CPPTYPE_UINT32: (0, 2**32 - 1),
    F.CPPTYPE_UINT64: (0, 2**64 - 1),
}


def scalar_kind(fd: FieldDescriptor) -> str:
    c = fd.cpp_type
    if c in _INT_RANGES:
        return "int"
    if c in (F.CPPTYPE_FLOAT, F.CPPTYPE_DOUBLE):
        return "float"
    if c == F.CPPTYPE_BOOL:
        return "bool"
    if c == F.CPPTYPE_ENUM:
        return "enum"
    if fd.type == F.TYPE_BYTES:
        return "bytes"
    if c == F.CPPTYPE_STRING:
        return "string"
    return "message"


@dataclass(frozen=True)
class FieldSpec:
    """One field of the schema, as a form needs it."""

    name: str
    path: str  # schema path: dotted names, [*] for any list element or map entry
    kind: str  # int | float | bool | enum | string | bytes | message | map
    repeated: bool = False
    type_name: str = ""  # protobuf type: int32, uint64, float, DataType, ModelInput, ...
    enum_values: tuple[str, ...] = ()
    oneof: str | None = None
    map_key_kind: str | None = None
    map_value_kind: str | None = None
    message: str | None = None  # full name of the message (message fields, map values that are messages)
    default: object = None
    int_range: tuple[int, int] | None = None
    help: str | None = None
    children: tuple[FieldSpec, ...] = field(default=(), repr=False)

    def child(self, name: str) -> FieldSpec:
        for c in self.children:
            if c.name == name:
                return c
        raise KeyError(f"{self.path or 'ModelConfig'} has no field {name!r}")

    def walk(self):
        """This spec and every spec below it, depth first."""
        yield self
        for c in self.children:
            yield from c.walk()

    @property
    def oneof_members(self) -> dict[str, list[str]]:
        """oneof group -> member names, for a message spec."""
        groups: dict[str, list[str]] = {}
        for c in self.children:
            if c.oneof:
                groups.setdefault(c.oneof, []).append(c.name)
        return groups


def _type_name(fd: FieldDescriptor) -> str:
    if fd.message_type is not None:
        return fd.message_type.name
    if fd.enum_type is not None:
        return fd.enum_type.name
    names = {
        F.TYPE_INT32: "int32", F.TYPE_INT64: "int64", F.TYPE_UINT32: "uint32", F.TYPE_UINT64: "uint64",
        F.TYPE_FLOAT: "float", F.TYPE_DOUBLE: "double", F.TYPE_BOOL: "bool", F.TYPE_STRING: "string",
        F.TYPE_BYTES: "bytes", F.TYPE_SINT32: "sint32", F.TYPE_SINT64: "sint64",
        F.TYPE_FIXED32: "fixed32", F.TYPE_FIXED64: "fixed64",
    }
    return names.get(fd.type, str(fd.type))


def _spec(fd: FieldDescriptor, prefix: str, help_text: dict[str, str], stack: tuple[str, ...]) -> FieldSpec:
    path = f"{prefix}{fd.name}"
    common = dict(
        name=fd.name,
        path=path,
        repeated=is_repeated(fd),
        type_name=_type_name(fd),
        oneof=oneof_name(fd),
        help=help_text.get(path),
    )
    if is_map(fd):
        kfd = fd.message_type.fields_by_name["key"]
        vfd = fd.message_type.fields_by_name["value"]
        children: tuple[FieldSpec, ...] = ()
        if is_message(vfd):
            children = _children(vfd.message_type, f"{path}[*].", help_text, stack)
        return FieldSpec(
            kind="map",
            map_key_kind=scalar_kind(kfd),
            map_value_kind=scalar_kind(vfd),
            message=vfd.message_type.full_name if vfd.message_type is not None else None,
            enum_values=tuple(v.name for v in vfd.enum_type.values) if vfd.enum_type else (),
            children=children,
            **common,
        )
    if is_message(fd):
        sub = f"{path}[*]." if is_repeated(fd) else f"{path}."
        return FieldSpec(
            kind="message",
            message=fd.message_type.full_name,
            children=_children(fd.message_type, sub, help_text, stack),
            **common,
        )
    kind = scalar_kind(fd)
    return FieldSpec(
        kind=kind,
        enum_values=tuple(v.name for v in fd.enum_type.values) if fd.enum_type else (),
        default=default_value(fd) if kind != "enum" else fd.enum_type.values[0].name,
        int_range=_INT_RANGES.get(fd.cpp_type),
        **common,
    )


def _children(desc: Descriptor, prefix: str, help_text: dict[str, str], stack: tuple[str, ...]):
    if desc.full_name in stack:  # ModelConfig has no recursive types; guard anyway
        return ()
    inner = (*stack, desc.full_name)
    return tuple(_spec(f, prefix, help_text, inner) for f in desc.fields)


@lru_cache(maxsize=1)
def field_help() -> dict[str, str]:
    with open(resource("field_help.json"), encoding="utf-8") as f:
        return json.load(f)


@cache
def schema_tree(desc: Descriptor | None = None) -> FieldSpec:
    """The spec tree of a message type (default: Triton's ModelConfig)."""
    desc = desc or model_config_pb2.ModelConfig.DESCRIPTOR
    help_text = field_help() if desc is model_config_pb2.ModelConfig.DESCRIPTOR else {}
    return FieldSpec(
        name=desc.name,
        path="",
        kind="message",
        type_name=desc.name,
        message=desc.full_name,
        children=_children(desc, "", help_text, ()),
    )


def find_spec(path: str, root: FieldSpec | None = None) -> FieldSpec:
    """The spec at a schema path (`input[*].dims`) or a document path (`input[0].dims`)."""
    import re

    norm = re.sub(r"\[[^\]]*\]", "[*]", path)
    spec = root or schema_tree()
    for part in norm.split("."):
        name = part.removesuffix("[*]")
        spec = spec.child(name)
    return spec
