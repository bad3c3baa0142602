"""Text for new values and fields, written in a document's own style (indent unit, colons, brackets)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from google.protobuf import text_encoding
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.internal import type_checkers
from google.protobuf.message import Message

from studio.config.descriptors import is_map, is_message, is_repeated
from studio.config.syntax import Block, iter_tokens


@dataclass(frozen=True)
class Style:
    """How a file writes things, detected from the file (defaults follow Triton's documentation)."""

    unit: str = "  "  # one level of indentation
    message_colon: bool = False  # `dynamic_batching: {` rather than `dynamic_batching {`
    list_padding: bool = True  # `dims: [ 16 ]` rather than `dims: [16]`
    message_lists: bool = True  # `input [ { ... } ]` rather than repeated `input { ... }` blocks
    newline: str = "\n"


def detect_style(root: Block) -> Style:
    indents: list[int] = []
    tab = False
    colon_yes = colon_no = 0
    pad_yes = pad_no = 0
    list_yes = list_no = 0
    crlf = lf = 0
    stack = [root]
    seen = 0
    while stack and seen < 2000:
        seen += 1
        block = stack.pop()
        for f in block.fields:
            if is_message(f.fd):
                if f.colon is not None:
                    colon_yes += 1
                else:
                    colon_no += 1
                if is_repeated(f.fd) and not is_map(f.fd):
                    if f.lbrack is not None:
                        list_yes += 1
                    else:
                        list_no += 1
                stack.extend(i for i in f.items if isinstance(i, Block))
            elif f.lbrack is not None and f.items:
                first = f.items[0].toks[0]
                if first.pre.startswith((" ", "\t")):
                    pad_yes += 1
                elif "\n" not in first.pre:
                    pad_no += 1
    for n, tok in enumerate(iter_tokens(root)):
        if n > 5000:  # the style shows long before that; keep the first edit of a huge file fast
            break
        pre = tok.pre
        k = pre.rfind("\n")
        if k >= 0:
            if pre[k - 1 : k] == "\r":
                crlf += 1
            else:
                lf += 1
            ws = pre[k + 1 :]
            if ws.startswith("\t"):
                tab = True
            n = len(ws) - len(ws.lstrip(" "))
            if n:
                indents.append(n)
    if tab:
        unit = "\t"
    elif indents:
        unit = " " * min(indents)
        if len(unit) > 8:
            unit = "  "
    else:
        unit = "  "
    return Style(
        unit=unit,
        message_colon=colon_yes > colon_no,
        list_padding=pad_yes >= pad_no,
        message_lists=list_yes >= list_no,
        newline="\r\n" if crlf > lf else "\n",
    )


def format_scalar(fd: FieldDescriptor, value) -> str:
    """The text of a scalar value as written in pbtxt."""
    t = fd.type
    if fd.cpp_type == FieldDescriptor.CPPTYPE_STRING:
        if t == FieldDescriptor.TYPE_BYTES:
            return '"' + text_encoding.CEscape(value, as_utf8=False) + '"'
        return '"' + text_encoding.CEscape(value, as_utf8=True) + '"'
    if t == FieldDescriptor.TYPE_BOOL:
        return "true" if value else "false"
    if t == FieldDescriptor.TYPE_ENUM:
        ev = fd.enum_type.values_by_number.get(int(value))
        return ev.name if ev is not None else str(int(value))
    if fd.cpp_type in (FieldDescriptor.CPPTYPE_FLOAT, FieldDescriptor.CPPTYPE_DOUBLE):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if t == FieldDescriptor.TYPE_FLOAT:
            v = type_checkers.ToShortestFloat(v)
        s = repr(v)
        return s
    return str(int(value))


def field_lines(fd: FieldDescriptor, value, indent: str, style: Style) -> list[str]:
    """Lines (each with its absolute indentation) that write `value` for field `fd`.

    `value`: a scalar, a list of scalars, a message, or a list of messages (repeated message fields)."""
    name = fd.name
    if is_message(fd):
        msgs = list(value) if is_repeated(fd) and not isinstance(value, Message) else [value]
        if is_repeated(fd) and style.message_lists and not is_map(fd) and len(msgs) > 0:
            lines = [f"{indent}{name} ["]
            for i, m in enumerate(msgs):
                body = message_block_lines(m, indent + style.unit, style)
                if i < len(msgs) - 1:
                    body[-1] += ","
                lines.extend(body)
            lines.append(f"{indent}]")
            return lines
        lines = []
        colon = ":" if style.message_colon else ""
        for m in msgs:
            body = message_body_lines(m, indent + style.unit, style)
            if body:
                lines.append(f"{indent}{name}{colon} {{")
                lines.extend(body)
                lines.append(f"{indent}}}")
            else:
                lines.append(f"{indent}{name}{colon} {{ }}")
        return lines
    if is_repeated(fd):
        items = ", ".join(format_scalar(fd, v) for v in value)
        pad = " " if style.list_padding and items else ""
        return [f"{indent}{name}: [{pad}{items}{pad}]"]
    return [f"{indent}{name}: {format_scalar(fd, value)}"]


def message_block_lines(msg: Message, indent: str, style: Style) -> list[str]:
    """`{ ... }` for one element of a message list, starting at `indent`."""
    body = message_body_lines(msg, indent + style.unit, style)
    if not body:
        return [f"{indent}{{ }}"]
    return [f"{indent}{{", *body, f"{indent}}}"]


def message_body_lines(msg: Message, indent: str, style: Style) -> list[str]:
    """The set fields of a message in schema order."""
    lines: list[str] = []
    for fd in msg.DESCRIPTOR.fields:
        v = getattr(msg, fd.name)
        if is_map(fd):
            if not len(v):
                continue
            entry_cls = v.GetEntryClass()
            entries = []
            for key in v:
                e = entry_cls()
                e.key = key
                if is_message(fd.message_type.fields_by_name["value"]):
                    e.value.CopyFrom(v[key])
                else:
                    e.value = v[key]
                entries.append(e)
            lines.extend(field_lines(fd, entries, indent, _no_lists(style)))
        elif is_repeated(fd):
            if len(v):
                lines.extend(field_lines(fd, list(v), indent, style))
        elif is_message(fd) or fd.containing_oneof is not None:
            if msg.HasField(fd.name):
                lines.extend(field_lines(fd, v, indent, style))
        elif v != type(v)() or (isinstance(v, float) and math.copysign(1.0, v) < 0):
            lines.append(field_lines(fd, v, indent, style)[0])
    return lines


def _no_lists(style: Style) -> Style:
    if not style.message_lists:
        return style
    return Style(style.unit, style.message_colon, style.list_padding, False, style.newline)
