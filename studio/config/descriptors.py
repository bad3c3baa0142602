"""The one place that knows how protobuf's descriptor API differs across releases.

`FieldDescriptor.label` is deprecated in protobuf 5/6 and gone in 7; `is_repeated` exists from 5.x on.
Everything else in the studio asks these helpers instead of touching those attributes.
"""

from __future__ import annotations

from functools import cache

from google.protobuf.descriptor import Descriptor, FieldDescriptor


def is_repeated(fd: FieldDescriptor) -> bool:
    rep = getattr(fd, "is_repeated", None)
    if rep is not None:
        return bool(rep)
    return fd.label == FieldDescriptor.LABEL_REPEATED  # protobuf < 5


def is_message(fd: FieldDescriptor) -> bool:
    return fd.cpp_type == FieldDescriptor.CPPTYPE_MESSAGE


@cache
def is_map_entry_type(desc: Descriptor) -> bool:
    return bool(desc.GetOptions().map_entry)


def is_map(fd: FieldDescriptor) -> bool:
    return fd.message_type is not None and is_map_entry_type(fd.message_type) and is_repeated(fd)


def has_presence(fd: FieldDescriptor) -> bool:
    hp = getattr(fd, "has_presence", None)
    if hp is not None:
        return bool(hp)
    return is_message(fd) or fd.containing_oneof is not None  # proto3 without `optional`


def enum_is_closed(fd: FieldDescriptor) -> bool:
    return bool(getattr(fd.enum_type, "is_closed", False))


def oneof_name(fd: FieldDescriptor) -> str | None:
    return fd.containing_oneof.name if fd.containing_oneof is not None else None


def default_value(fd: FieldDescriptor):
    """The value a proto3 field reads as when it is not set (scalars only)."""
    if fd.cpp_type == FieldDescriptor.CPPTYPE_STRING:
        return b"" if fd.type == FieldDescriptor.TYPE_BYTES else ""
    if fd.cpp_type == FieldDescriptor.CPPTYPE_BOOL:
        return False
    if fd.cpp_type in (FieldDescriptor.CPPTYPE_FLOAT, FieldDescriptor.CPPTYPE_DOUBLE):
        return 0.0
    if fd.cpp_type == FieldDescriptor.CPPTYPE_ENUM:
        return fd.enum_type.values[0].number if fd.enum_type.values else 0
    return 0


def field_index(desc: Descriptor) -> dict[str, int]:
    """Schema order of a message's fields (declaration order)."""
    return _field_index(desc)


@cache
def _field_index(desc: Descriptor) -> dict[str, int]:
    return {f.name: i for i, f in enumerate(desc.fields)}
