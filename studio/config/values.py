"""Values written as pbtxt text (the command line's VALUE), read with the document's own parser."""

from __future__ import annotations

import unicodedata

from google.protobuf import message_factory, text_encoding
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from studio.config.descriptors import is_map, is_message, is_repeated
from studio.config.document import EditError, PathError, _fill, field_for_path
from studio.config.syntax import Block, ParseError, Parser


def parse_value_text(desc: Descriptor, path: str, text: str):
    """Turn VALUE text into the Python value `ConfigDocument.set(path, value)` takes."""
    fd, element = field_for_path(desc, path)
    if is_map(fd):
        if not element:
            raise PathError(f"{fd.name} is a map: set one entry, like {fd.name}[\"KEY\"]")
        fd = fd.message_type.fields_by_name["value"]
        element = False
    holder = fd.containing_type
    stripped = text.strip()
    if is_message(fd):
        body = stripped if stripped.startswith(("{", "<")) else "{ " + stripped + " }"
        if is_repeated(fd) and not element:
            snippet = f"{fd.name} [ {body} ]" if not stripped.startswith("[") else f"{fd.name} {stripped}"
        else:
            snippet = f"{fd.name} {body}"
    else:
        if fd.cpp_type == FieldDescriptor.CPPTYPE_STRING and not stripped.startswith(("'", '"', "[")):
            stripped = '"' + text_encoding.CEscape(text, as_utf8=True) + '"'
        snippet = f"{fd.name}: {stripped}"
    try:
        block = Parser(snippet).parse_document(holder)
    except ParseError as e:
        e.column = max(1, e.column - (len(snippet) - len(stripped)))
        raise
    items = [item for f in block.fields for item in f.items]
    if not items:
        return []
    if is_message(fd):
        cls = message_factory.GetMessageClass(fd.message_type)
        msgs = []
        for item in items:
            m = cls()
            assert isinstance(item, Block)
            _fill(item, m)
            msgs.append(m)
        return msgs if is_repeated(fd) and not element else msgs[0]
    values = [item.value for item in items]  # type: ignore[union-attr]
    if is_repeated(fd) and not element:
        return values
    if len(values) != 1:
        raise PathError(f"{fd.name} takes one value")
    return values[0]


def _control_chars(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) == "Cc"]


def check_value(path: str, value) -> None:
    """Refuse what the schema's types let through but no one means: control characters in a string (a name with
    a newline or NUL in it). EditError says which field and which character."""
    def walk(where: str, v) -> None:
        if isinstance(v, str):
            bad = _control_chars(v)
            if bad:
                raise EditError(f"{where} contains a control character ({bad[0]!r}): names and values must be printable")
        elif isinstance(v, (list, tuple)):
            for i, item in enumerate(v):
                walk(f"{where}[{i}]", item)
        elif isinstance(v, dict):
            for k, item in v.items():
                walk(f"{where}[{k!r}]", k)
                walk(f"{where}[{k!r}]", item)
        elif isinstance(v, Message):
            for fd, item in v.ListFields():
                walk(f"{where}.{fd.name}", item)
        elif hasattr(v, "items") and callable(v.items):  # a protobuf map
            walk(where, dict(v.items()))
    walk(path, value)
