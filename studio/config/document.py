"""ConfigDocument: a config.pbtxt that keeps its bytes, and edits it with the smallest text changes.

    doc = ConfigDocument.parse(text)          # ParseError(message, line, column) on bad input
    doc.text == text                          # until edited
    doc.set("dynamic_batching.max_queue_delay_microseconds", 500)
    doc.apply(message)                        # minimal edits that turn the document into `message`

Every edit works on the concrete syntax tree (studio.config.syntax): an existing scalar keeps its place and only
its token changes; new fields go next to their siblings (schema order where there are none) in the file's own
indentation and bracket style; removals take the element's own comments with it and leave the others.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Callable, Iterable

from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from tritonclient.grpc import model_config_pb2

from studio.config.descriptors import field_index, has_presence, is_map, is_message, is_repeated
from studio.config.render import (
    Style,
    detect_style,
    field_lines,
    format_scalar,
    message_block_lines,
    message_body_lines,
)
from studio.config.saving import FileStamp, changed_on_disk, read_file, safe_write
from studio.config.syntax import (
    Block,
    Field,
    ParseError,
    Parser,
    Scalar,
    Token,
    emit,
    invalidate,
    iter_tokens,
    position,
    suggest_enum,
)

ModelConfig = model_config_pb2.ModelConfig


class PathError(ValueError):
    """A field path that does not name a field of the schema, or an element that is not there."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message + (f" ({hint})" if hint else ""))
        self.message = message
        self.hint = hint


class EditError(ValueError):
    """A value that the field cannot hold (wrong type, out of range, unknown enum name)."""


# -- field paths -------------------------------------------------------------------------------------------
_PATH_TOKEN = re.compile(
    r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|\[\s*(?P<index>-?\d+)\s*\]"
    r"|\[\s*(?P<key>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')\s*\]|(?P<dot>\.))"
)


_KEY_ESCAPE = re.compile(r"\\(.)")
_KEY_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def parse_path(path: str) -> list[tuple[str, int | str | None]]:
    """`a.b[0].c`, `parameters["KEY"].string_value` -> [(name, selector)], selector: index, key or None."""
    segs: list[tuple[str, int | str | None]] = []
    pos = 0
    expect_name = True
    while pos < len(path):
        m = _PATH_TOKEN.match(path, pos)
        if m is None or m.end() == pos:
            raise PathError(f"bad field path {path!r} at character {pos + 1}")
        pos = m.end()
        if m.group("name") is not None:
            if not expect_name:
                raise PathError(f"bad field path {path!r}: missing '.' before {m.group('name')!r}")
            segs.append((m.group("name"), None))
            expect_name = False
        elif m.group("dot") is not None:
            if expect_name:
                raise PathError(f"bad field path {path!r}: empty name")
            expect_name = True
        else:
            if expect_name or segs[-1][1] is not None:
                raise PathError(f"bad field path {path!r}: '[' must follow a field name")
            if m.group("index") is not None:
                sel: int | str = int(m.group("index"))
            else:
                raw = m.group("key")
                sel = _KEY_ESCAPE.sub(lambda k: _KEY_ESCAPES.get(k.group(1), k.group(1)), raw[1:-1])
            segs[-1] = (segs[-1][0], sel)
    if not segs or expect_name:
        raise PathError(f"bad field path {path!r}")
    return segs


def _field(desc: Descriptor, name: str) -> FieldDescriptor:
    fd = desc.fields_by_name.get(name)
    if fd is None:
        close = difflib.get_close_matches(name, [f.name for f in desc.fields], n=1, cutoff=0.7)
        raise PathError(
            f'{desc.name} has no field "{name}"', f"did you mean {close[0]}?" if close else None
        )
    return fd


def _same_scalar(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        fa, fb = float(a), float(b)
        if math.isnan(fa) and math.isnan(fb):
            return True
        return fa == fb and math.copysign(1.0, fa) == math.copysign(1.0, fb)
    return a == b


def _message_class(desc: Descriptor):
    return message_factory.GetMessageClass(desc)


def _map_value_fd(fd: FieldDescriptor) -> FieldDescriptor:
    return fd.message_type.fields_by_name["value"]


def _indent_of(tok: Token) -> str | None:
    """The indentation of a token that starts its line, else None."""
    k = tok.pre.rfind("\n")
    if k < 0:
        return None
    ws = tok.pre[k + 1 :]
    return ws[: len(ws) - len(ws.lstrip(" \t"))]


def _newline_split(pre: str) -> int:
    """Where the rest-of-previous-line part of a trivia ends (index of its first line break), or -1."""
    k = pre.find("\n")
    if k > 0 and pre[k - 1] == "\r":
        return k - 1
    return k


def pre_after_removal(removed_pre: str, next_pre: str) -> str:
    """The trivia left before the next token when an element (with `removed_pre` before it) is cut out.

    The element's own comments go with it: the comment lines right above it and the comment on its line.
    Blank lines and other comments above stay."""
    if "\n" not in removed_pre:
        return next_pre if "\n" in next_pre else removed_pre
    lines = removed_pre.split("\n")
    a = len(lines) - 1
    while a > 1 and lines[a - 1].lstrip().startswith("#"):
        a -= 1
    head = "\n".join(lines[:a])
    k = _newline_split(next_pre)
    if k >= 0:
        return head + next_pre[k:]
    return head + "\n" + lines[-1]  # a kept CRLF line still ends in "\r": the pair stays whole


class ConfigDocument:
    """One config.pbtxt: the text as written, the schema-checked tree, and edits by field path."""

    def __init__(self, root: Block, text: str, filename: str | None = None) -> None:
        self._root = root
        self._source = text  # the parsed text: unedited nodes are slices of it
        self._text: str | None = text
        self._message: Message | None = None
        self._style: Style | None = None
        self.filename = filename
        self.disk_stamp: FileStamp | None = None  # the file as read by load() or written by save(): see studio.config.saving
        self.revision = 0
        self._observers: list[Callable[[ConfigDocument], None]] = []

    # -- construction --------------------------------------------------------------------------------
    @classmethod
    def parse(
        cls, text: str, *, filename: str | None = None, message_type: Descriptor | None = None
    ) -> ConfigDocument:
        desc = message_type or ModelConfig.DESCRIPTOR
        try:
            root = Parser(text, spans=True).parse_document(desc)
        except ParseError as e:
            e.filename = filename
            raise
        return cls(root, text, filename)

    @classmethod
    def load(cls, path: str | os.PathLike) -> ConfigDocument:
        """Read a file (UTF-8) and parse it; errors carry the file name. `disk_stamp` remembers what was read, so
        save() refuses to overwrite changes made on disk since (FileChangedOnDisk) unless forced."""
        path = os.fspath(path)
        data, stamp = read_file(path)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line, col = position(data[: e.start].decode("utf-8", "replace"), e.start)
            raise ParseError(
                f"the file is not UTF-8 (byte 0x{data[e.start]:02x})",
                line,
                col,
                hint="Triton reads config.pbtxt as UTF-8: re-save the file in that encoding",
                filename=path,
            ) from None
        doc = cls.parse(text, filename=path)
        doc.disk_stamp = stamp
        return doc

    # -- reading -------------------------------------------------------------------------------------
    @property
    def text(self) -> str:
        if self._text is None:
            out: list[str] = []
            emit(self._root, out, self._source)
            self._text = "".join(out)
        return self._text

    @property
    def descriptor(self) -> Descriptor:
        return self._root.desc

    @property
    def style(self) -> Style:
        if self._style is None:
            self._style = detect_style(self._root)
        return self._style

    def _current_message(self) -> Message:
        if self._message is None:
            self._message = self._build(self._root)
        return self._message

    def to_message(self) -> Message:
        """A fresh message (a copy: changing it does not change the document)."""
        m = _message_class(self.descriptor)()
        m.CopyFrom(self._current_message())
        return m

    def get(self, path: str, default=None):
        """The value at a path as the message has it (enums by name, repeated as list, maps as dict)."""
        obj = self._current_message()
        segs = parse_path(path)
        for i, (name, sel) in enumerate(segs):
            fd = _field(obj.DESCRIPTOR, name)
            value = getattr(obj, name)
            if sel is not None:
                if is_map(fd):
                    key = self._map_key(fd, sel)
                    if key not in value:
                        return default
                    value = value[key]
                    fd = _map_value_fd(fd)
                elif is_repeated(fd):
                    if not isinstance(sel, int):
                        raise PathError(f"{name} is a list: index it with [number]")
                    if not -len(value) <= sel < len(value):
                        return default
                    value = value[sel]
                else:
                    raise PathError(f"{name} is not repeated: it takes no [..]")
            elif not is_repeated(fd) and has_presence(fd) and not obj.HasField(name):
                return default
            if i == len(segs) - 1:
                return self._export(fd, value, indexed=sel is not None)
            obj = value
        return default  # pragma: no cover

    def has(self, path: str) -> bool:
        """Whether the path is written in the text."""
        try:
            return self._locate(path) is not None
        except PathError:
            return False

    def _export(self, fd: FieldDescriptor, value, indexed: bool):
        if is_map(fd) and not indexed:
            vfd = _map_value_fd(fd)
            return {k: self._export(vfd, value[k], True) for k in value}
        if is_repeated(fd) and not indexed:
            return [self._export(fd, v, True) for v in value]
        if isinstance(value, Message):
            m = _message_class(value.DESCRIPTOR)()
            m.CopyFrom(value)
            return m
        if fd.type == FieldDescriptor.TYPE_ENUM:
            ev = fd.enum_type.values_by_number.get(value)
            return ev.name if ev is not None else value
        return value

    def value_text(self, path: str) -> str:
        """The value at a path written as pbtxt (what `triton-studio get` prints)."""
        fd, element = field_for_path(self.descriptor, path)
        value = self.get(path)
        if value is None:
            raise PathError(f"{path} is not set")
        if is_map(fd):
            if element:
                fd = _map_value_fd(fd)
            else:
                entry_cls = _message_class(fd.message_type)
                lines = []
                for k, v in self._current_map(path).items():
                    e = entry_cls()
                    e.key = k
                    if isinstance(v, Message):
                        e.value.CopyFrom(v)
                    else:
                        e.value = v
                    lines.append("{ " + _inline(e) + " }")
                return "\n".join(lines)
        if isinstance(value, Message):
            return "\n".join(message_body_lines(value, "", self.style)) or "{ }"
        if isinstance(value, list):
            if fd.message_type is not None:
                return "\n".join("{ " + _inline(v) + " }" for v in value)
            return "[" + ", ".join(format_scalar(fd, _enum_number(fd, v)) for v in value) + "]"
        return format_scalar(fd, _enum_number(fd, value))

    def _current_map(self, path: str):
        obj = self._current_message()
        for name, sel in parse_path(path):
            fd = obj.DESCRIPTOR.fields_by_name[name]
            obj = getattr(obj, name)
            if sel is not None:
                obj = obj[self._map_key(fd, sel)] if is_map(fd) else obj[sel]
        return obj

    def position(self, path: str) -> tuple[int, int] | None:
        """1-based line and column where the path's element starts in the text, or None if not written."""
        found = self._locate(path)
        if found is None:
            return None
        target = found.first()
        offset = 0
        for tok in iter_tokens(self._root):
            offset += len(tok.pre)
            if tok is target:
                return position(self.text, offset)
            offset += len(tok.text)
        return None  # pragma: no cover

    # -- observers -----------------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[ConfigDocument], None]) -> None:
        self._observers.append(callback)

    def unsubscribe(self, callback: Callable[[ConfigDocument], None]) -> None:
        if callback in self._observers:
            self._observers.remove(callback)

    def _changed(self) -> None:
        self._text = None
        self._message = None
        self.revision += 1
        for cb in list(self._observers):
            cb(self)

    # -- whole-text edits ----------------------------------------------------------------------------
    def set_text(self, text: str) -> None:
        """Replace the whole text (typing in a text view). On ParseError the document stays as it was."""
        root = Parser(text, spans=True).parse_document(self.descriptor)
        self._root = root
        self._source = text
        self._style = None
        self._changed()
        self._text = text

    def adopt(self, other: ConfigDocument) -> None:
        """Take over the state of another document parsed from new text (parsed off the UI thread), without
        parsing again. Observers of this document are told, as with set_text."""
        if other.descriptor is not self.descriptor:
            raise ValueError("a document of another message type")
        message = other._message
        self._root = other._root
        self._source = other._source
        self._style = None
        self._changed()
        self._text = other._source
        self._message = message  # built in the worker too, when it was

    # -- field edits ---------------------------------------------------------------------------------
    def set(self, path: str, value) -> None:
        """Set a field (scalar, list, message as Message or dict, map as dict) with minimal text changes."""
        segs = parse_path(path)
        block, k = self._deepest(segs)
        target = self._build(block)
        self._assign_path(target, segs[k:], value)
        self._apply_block(block, target)
        self._changed()

    def clear(self, path: str) -> None:
        """Remove a field (every occurrence of a repeated field; one element or map key with [..])."""
        found = self._container(path, create=False)
        if found is None:
            return
        block, fd, sel = found
        invalidate(block)
        if sel is None:
            self._remove_fields(block, fd)
        elif not is_map(fd):
            self._remove_element(block, fd, self._index(block, fd, sel))
        else:
            target = self._build(block)
            key = self._map_key(fd, sel)
            container = getattr(target, fd.name)
            if key in container:
                del container[key]
            self._apply_block(block, target)
        self._changed()

    def remove(self, path: str) -> None:
        """Remove one element of a repeated field (`input[1]`) or one map entry (`parameters["K"]`)."""
        segs = parse_path(path)
        if segs[-1][1] is None:
            raise PathError(f"{path}: remove takes an element, like {segs[-1][0]}[0]; use clear for a field")
        found = self._container(path, create=False)
        if found is None:
            raise PathError(f"{path} is not in the document")
        block, fd, sel = found
        invalidate(block)
        if is_map(fd):
            key = self._map_key(fd, sel)
            entries = [i for i, (_, k) in enumerate(self._map_entries(block, fd)) if k == key]
            if not entries:
                raise PathError(f"{path} is not in the document")
            for i in reversed(entries):
                self._remove_element(block, fd, i)
        else:
            self._remove_element(block, fd, self._index(block, fd, sel))
        self._changed()

    def append(self, path: str, value) -> None:
        """Add an element at the end of a repeated field (in a `[..]` list when the field is written so)."""
        self.insert(path, None, value)

    def insert(self, path: str, index: int | None, value) -> None:
        """Insert an element before `index` of a repeated field (None: at the end)."""
        segs = parse_path(path)
        if segs[-1][1] is not None:
            raise PathError(f"{path}: give the field without [..] and the position as index")
        found = self._container(path, create=False)
        if found is None:  # a parent is missing: write it with the element in it
            block, k = self._deepest(segs)
            target = self._build(block)
            self._assign_path(target, segs[k:], [value])
            self._apply_block(block, target)
            self._changed()
            return
        block, fd, _ = found
        if not is_repeated(fd) or is_map(fd):
            raise PathError(f"{fd.name} is not a list field")
        scratch = _message_class(block.desc)()
        self._assign(scratch, fd, None, [value])
        element = getattr(scratch, fd.name)[0]
        n = len(self._elements(block, fd))
        pos = n if index is None else max(0, min(n, index if index >= 0 else n + index))
        invalidate(block)
        self._insert_element(block, fd, pos, element)
        invalidate(block)
        self._changed()

    def apply(self, message: Message) -> None:
        """Make the smallest set of edits that turns the document into `message` (unchanged fields keep bytes)."""
        if message.DESCRIPTOR is not self.descriptor:
            raise EditError(f"apply needs a {self.descriptor.full_name}, got {message.DESCRIPTOR.full_name}")
        self._apply_block(self._root, message)
        self._changed()

    # -- saving --------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike | None = None, *, force: bool = False) -> FileStamp:
        """Write the text through the one safe save path (studio.config.saving): atomic, through symlinks,
        hard links kept, owner/mode/line endings kept. Saving to the file it was loaded from (or last saved to)
        refuses a file changed on disk since (FileChangedOnDisk) and a read-only file (ReadOnlyFile) unless
        force=True; other failures raise SaveError. All are OSErrors with a one-line str(). Returns the stamp."""
        target = os.fspath(path) if path is not None else self.filename
        if target is None:
            raise ValueError("no file name to save to")
        same = self.filename is not None and _same_file(target, self.filename)
        stamp = safe_write(target, self.text, expect=self.disk_stamp if same else None, force=force)
        self.filename = target
        self.disk_stamp = stamp
        return stamp

    def changed_on_disk(self) -> bool:
        """Whether the file this document was loaded from (or saved to) changed on disk since (gone counts)."""
        return self.filename is not None and changed_on_disk(self.filename, self.disk_stamp)

    # ================================================================================================
    # internals
    # ================================================================================================
    def _build(self, block: Block) -> Message:
        msg = _message_class(block.desc)()
        _fill(block, msg)
        return msg

    @staticmethod
    def _map_key(fd: FieldDescriptor, sel):
        kfd = fd.message_type.fields_by_name["key"]
        if kfd.cpp_type == FieldDescriptor.CPPTYPE_STRING:
            return str(sel)
        try:
            return int(sel)
        except ValueError:
            raise PathError(f"{fd.name} has integer keys, got {sel!r}") from None

    def _assign(self, target: Message, fd: FieldDescriptor, sel, value) -> None:
        """Put `value` into `target` at field fd (and selector) with protobuf's own type checks."""
        name = fd.name
        try:
            if is_map(fd):
                container = getattr(target, name)
                vfd = _map_value_fd(fd)
                if sel is None:
                    if not isinstance(value, dict):
                        raise EditError(f"{name} is a map: give a dict")
                    container.clear()
                    items = value.items()
                else:
                    items = [(self._map_key(fd, sel), value)]
                for k, v in items:
                    if is_message(vfd):
                        container[k].CopyFrom(_to_message(vfd.message_type, v))
                    else:
                        container[k] = _coerce(vfd, v)
            elif is_repeated(fd):
                container = getattr(target, name)
                if sel is None:
                    if isinstance(value, (str, bytes, dict, Message)) or not isinstance(value, Iterable):
                        raise EditError(f"{name} is a list: give a list")
                    del container[:]
                    for v in value:
                        if is_message(fd):
                            container.add().CopyFrom(_to_message(fd.message_type, v))
                        else:
                            container.append(_coerce(fd, v))
                else:
                    i = int(sel)
                    if not -len(container) <= i < len(container):
                        raise PathError(f"{name}[{i}] is out of range ({len(container)} elements)")
                    if is_message(fd):
                        container[i].CopyFrom(_to_message(fd.message_type, value))
                    else:
                        container[i] = _coerce(fd, value)
            elif is_message(fd):
                getattr(target, name).CopyFrom(_to_message(fd.message_type, value))
                getattr(target, name).SetInParent()
            else:
                setattr(target, name, _coerce(fd, value))
        except (TypeError, ValueError, json_format.ParseError) as e:
            if isinstance(e, (EditError, PathError)):
                raise
            raise EditError(f"{name}: {e}") from None

    # -- locating nodes ------------------------------------------------------------------------------
    def _elements(self, block: Block, fd: FieldDescriptor) -> list[tuple[Field, int]]:
        return [(f, j) for f in block.fields if f.fd is fd for j in range(len(f.items))]

    def _map_entries(self, block: Block, fd: FieldDescriptor) -> list[tuple[tuple[Field, int], object]]:
        out = []
        for f, j in self._elements(block, fd):
            entry = self._build(f.items[j])  # type: ignore[arg-type]
            out.append(((f, j), entry.key))
        return out

    def _index(self, block: Block, fd: FieldDescriptor, sel) -> int:
        n = len(self._elements(block, fd))
        i = int(sel)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise PathError(f"{fd.name}[{sel}] is not in the document ({n} elements)")
        return i

    def _element_block(self, block: Block, fd: FieldDescriptor, sel, create: bool = False) -> Block | None:
        """The written message block a middle path segment names, or None."""
        if is_map(fd):
            if sel is None:
                raise PathError(f"{fd.name} is a map: select an entry with [\"key\"]")
            key = self._map_key(fd, sel)
            entries = [e for e, k in self._map_entries(block, fd) if k == key]
            if not entries:
                return None
            f, j = entries[-1]
            entry_block = f.items[j]
            assert isinstance(entry_block, Block)
            if not is_message(_map_value_fd(fd)):
                raise PathError(f"{fd.name}[..] holds a scalar: nothing is below it")
            return self._child_block(entry_block, _map_value_fd(fd))
        if is_repeated(fd):
            if sel is None:
                raise PathError(f"{fd.name} is a list: select an element with [index]")
            if not isinstance(sel, int):
                raise PathError(f"{fd.name} is a list: select an element with [index]")
            elems = self._elements(block, fd)
            i = sel + len(elems) if sel < 0 else sel
            if not 0 <= i < len(elems):
                return None
            f, j = elems[i]
            return f.items[j]  # type: ignore[return-value]
        if sel is not None:
            raise PathError(f"{fd.name} is not repeated: it takes no [..]")
        return self._child_block(block, fd)

    @staticmethod
    def _child_block(block: Block, fd: FieldDescriptor) -> Block | None:
        nodes = block.field_nodes(fd.name)
        if not nodes:
            return None
        item = nodes[-1].items[-1]
        assert isinstance(item, Block)
        return item

    def _container(self, path: str, create: bool = False):
        """(block, field, selector) of the last path segment; None if a parent is not written."""
        segs = parse_path(path)
        block, k = self._deepest(segs)
        if k < len(segs) - 1:
            # validate the rest of the path against the schema, so typos are errors and not "missing"
            desc = block.desc
            for name, _ in segs[k:]:
                fd = _field(desc, name)
                desc = fd.message_type if fd.message_type is not None else desc
            return None
        name, sel = segs[-1]
        fd = _field(block.desc, name)
        if sel is not None and not is_repeated(fd):
            raise PathError(f"{name} is not repeated: it takes no [..]")
        return block, fd, sel

    def _deepest(self, segs: list) -> tuple[Block, int]:
        """The deepest written block along the path's parents, and how many segments led to it."""
        block = self._root
        for i, (name, sel) in enumerate(segs[:-1]):
            fd = _field(block.desc, name)
            if not is_message(fd):
                raise PathError(f"{name} is not a message: nothing is below it")
            nxt = self._element_block(block, fd, sel)
            if nxt is None:
                return block, i
            block = nxt
        return block, len(segs) - 1

    def _assign_path(self, msg: Message, segs: list, value) -> None:
        for name, sel in segs[:-1]:
            fd = _field(msg.DESCRIPTOR, name)
            if not is_message(fd):
                raise PathError(f"{name} is not a message: nothing is below it")
            container = getattr(msg, name)
            if is_map(fd):
                if sel is None:
                    raise PathError(f"{name} is a map: select an entry with [\"key\"]")
                key = self._map_key(fd, sel)
                if not is_message(_map_value_fd(fd)):
                    raise PathError(f"{name}[..] holds a scalar: nothing is below it")
                msg = container[key]
            elif is_repeated(fd):
                if not isinstance(sel, int):
                    raise PathError(f"{name} is a list: select an element with [index]")
                if not -len(container) <= sel < len(container):
                    raise PathError(f"{name}[{sel}] is not in the document ({len(container)} elements)")
                msg = container[sel]
            else:
                if sel is not None:
                    raise PathError(f"{name} is not repeated: it takes no [..]")
                msg = container
            msg.SetInParent()
        name, sel = segs[-1]
        fd = _field(msg.DESCRIPTOR, name)
        if sel is not None and not is_repeated(fd):
            raise PathError(f"{name} is not repeated: it takes no [..]")
        if sel is not None and is_repeated(fd) and not is_map(fd) and not isinstance(sel, int):
            raise PathError(f"{name} is a list: select an element with [index]")
        self._assign(msg, fd, sel, value)

    def _locate(self, path: str):
        """The node (Field, Scalar or Block) a path names in the text, or None."""
        found = self._container(path, create=False)
        if found is None:
            return None
        block, fd, sel = found
        if sel is None:
            nodes = block.field_nodes(fd.name)
            return nodes[-1] if nodes else None
        if is_map(fd):
            key = self._map_key(fd, sel)
            hits = [e for e, k in self._map_entries(block, fd) if k == key]
            if not hits:
                return None
            f, j = hits[-1]
            return f.items[j]
        elems = self._elements(block, fd)
        i = int(sel)
        if not -len(elems) <= i < len(elems):
            return None
        f, j = elems[i]
        return f.items[j]

    # -- the edit engine -----------------------------------------------------------------------------
    def _apply_block(self, block: Block, target: Message) -> None:
        current = self._build(block)
        if current == target:
            return
        self._apply_fields(block, current, target)
        invalidate(block)

    def _apply_fields(self, block: Block, current: Message, target: Message) -> None:
        for fd in block.desc.fields:
            name = fd.name
            if is_map(fd):
                self._apply_map(block, fd, current, target)
            elif is_repeated(fd):
                self._apply_repeated(block, fd, list(getattr(current, name)), list(getattr(target, name)))
            elif is_message(fd):
                t_has, c_has = target.HasField(name), current.HasField(name)
                if t_has and c_has:
                    child = block.field_nodes(name)[-1].items[-1]
                    assert isinstance(child, Block)
                    self._apply_block(child, getattr(target, name))
                elif t_has:
                    self._insert_field(block, fd, getattr(target, name))
                elif c_has:
                    self._remove_fields(block, fd)
            else:
                tv = getattr(target, name)
                nodes = block.field_nodes(name)
                if has_presence(fd):
                    if not target.HasField(name):
                        if nodes:
                            self._remove_fields(block, fd)
                        continue
                    if nodes and current.HasField(name) and _same_scalar(getattr(current, name), tv):
                        continue
                elif _same_scalar(getattr(current, name), tv):
                    continue
                if nodes:
                    self._replace_scalar(nodes[-1].items[-1], fd, tv)  # type: ignore[arg-type]
                else:
                    self._insert_field(block, fd, tv)

    def _apply_map(self, block: Block, fd: FieldDescriptor, current: Message, target: Message) -> None:
        cur_map, tgt_map = getattr(current, fd.name), getattr(target, fd.name)
        vfd = _map_value_fd(fd)
        entries = self._map_entries(block, fd)
        for i in reversed(range(len(entries))):
            if entries[i][1] not in tgt_map:
                self._remove_element(block, fd, i)
        entry_cls = _message_class(fd.message_type)
        for key in tgt_map:
            want = entry_cls()
            want.key = key
            if is_message(vfd):
                want.value.CopyFrom(tgt_map[key])
            else:
                want.value = tgt_map[key]
            if key in cur_map:
                if is_message(vfd):
                    if cur_map[key] == tgt_map[key]:
                        continue
                elif _same_scalar(cur_map[key], tgt_map[key]):
                    continue
                (f, j), _ = [e for e in self._map_entries(block, fd) if e[1] == key][-1]
                self._apply_block(f.items[j], want)  # type: ignore[arg-type]
            else:
                self._insert_element(block, fd, len(self._elements(block, fd)), want)

    def _apply_repeated(self, block: Block, fd: FieldDescriptor, cur: list, tgt: list) -> None:
        if is_message(fd):
            a = [m.SerializeToString(deterministic=True) for m in cur]
            b = [m.SerializeToString(deterministic=True) for m in tgt]
        else:
            a = [format_scalar(fd, v) for v in cur]
            b = [format_scalar(fd, v) for v in tgt]
        if a == b:
            return
        ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        for tag, i1, i2, j1, j2 in reversed(ops):
            if tag == "equal":
                continue
            n = min(i2 - i1, j2 - j1) if tag == "replace" else 0
            for i in reversed(range(i1 + n, i2)):
                self._remove_element(block, fd, i)
            for j in reversed(range(j1 + n, j2)):
                self._insert_element(block, fd, i1 + n, tgt[j])
            for k in range(n):
                f, jj = self._elements(block, fd)[i1 + k]
                item = f.items[jj]
                if isinstance(item, Block):
                    self._apply_block(item, tgt[j1 + k])
                else:
                    self._replace_scalar(item, fd, tgt[j1 + k])

    # -- primitive text edits ------------------------------------------------------------------------
    def _replace_scalar(self, scalar: Scalar, fd: FieldDescriptor, value) -> None:
        text = format_scalar(fd, value)
        scalar.toks = [Token(scalar.toks[0].pre, text)]
        scalar.value = value

    def _line_indent(self, block: Block) -> str:
        """Indentation of the line where a block opens."""
        if block.open is None:
            return ""
        ind = _indent_of(block.open)
        if ind is not None:
            return ind
        owner = block.owner
        if owner is None:
            return ""
        ind = _indent_of(owner.name)
        if ind is not None:
            return ind
        return self._line_indent(owner.parent) if owner.parent is not None else ""

    def _child_indent(self, block: Block) -> str:
        for f in block.fields:
            ind = _indent_of(f.name)
            if ind is not None:
                return ind
        if block.open is None:
            return ""
        return self._line_indent(block) + self.style.unit

    def _snippet_fields(self, block: Block, lines: list[str], indent: str) -> list[Field]:
        nl = self.style.newline
        text = nl.join(lines)[len(indent) :]
        snippet = Parser(text).parse_document(block.desc)
        for f in snippet.fields:
            f.parent = block
        return snippet.fields

    def _insert_field(self, block: Block, fd: FieldDescriptor, value) -> None:
        """Write a field that is not in the block yet, where a reader expects it."""
        if is_repeated(fd) and not isinstance(value, (list, tuple)):
            value = [value]
        order = field_index(block.desc)
        rank = order[fd.name]
        siblings = [k for k, f in enumerate(block.fields) if f.fd is fd]
        if siblings:
            pos = siblings[-1] + 1
        else:
            pos = 0
            for k, f in enumerate(block.fields):
                if order[f.fd.name] < rank:
                    pos = k + 1
        indent = self._child_indent(block)
        style = self.style
        if is_map(fd):
            style = Style(style.unit, style.message_colon, style.list_padding, False, style.newline)
        nodes = self._snippet_fields(block, field_lines(fd, value, indent, style), indent)
        self._insert_nodes(block, pos, nodes, indent)

    def _insert_nodes(self, block: Block, pos: int, nodes: list[Field], indent: str) -> None:
        first = nodes[0].name
        nl = self.style.newline
        nxt = block.fields[pos].name if pos < len(block.fields) else block.close
        assert nxt is not None
        if block.open is None and pos == 0:
            if block.fields:  # top of the file: after the header comments
                first.pre = nxt.pre
                nxt.pre = nl + (_indent_of(nxt) or "")
            else:
                trailing = nxt.pre
                first.pre = trailing if not trailing or trailing.endswith("\n") else trailing + nl
                nxt.pre = nl
        else:
            k = _newline_split(nxt.pre)
            if k >= 0:
                first.pre = nxt.pre[:k] + nl + indent
                nxt.pre = nxt.pre[k:]
            elif block.open is None or self._is_multiline(block):
                first.pre = nl + indent
            else:
                first.pre = " "
                if nxt.pre == "":
                    nxt.pre = " "
        block.fields[pos:pos] = nodes

    def _is_multiline(self, block: Block) -> bool:
        out: list[str] = []
        emit(block, out)
        return "\n" in "".join(out)

    def _remove_fields(self, block: Block, fd: FieldDescriptor) -> None:
        for node in [f for f in block.fields if f.fd is fd]:
            self._remove_node(block, node)

    def _remove_node(self, block: Block, node: Field) -> None:
        i = block.fields.index(node)
        nxt = block.fields[i + 1].name if i + 1 < len(block.fields) else block.close
        assert nxt is not None
        nxt.pre = pre_after_removal(node.name.pre, nxt.pre)
        del block.fields[i]

    def _remove_element(self, block: Block, fd: FieldDescriptor, index: int) -> None:
        node, j = self._elements(block, fd)[index]
        items = node.items
        if len(items) == 1:
            self._remove_node(block, node)
            return
        if j < len(items) - 1:
            nxt = items[j + 1].first()
            nxt.pre = pre_after_removal(items[j].first().pre, nxt.pre)
            del items[j]
            del node.commas[j]
        else:
            comma = node.commas[j - 1]
            assert comma is not None and node.rbrack is not None
            node.rbrack.pre = pre_after_removal(comma.pre, node.rbrack.pre)
            del items[j]
            del node.commas[j]
            node.commas[j - 1] = None

    def _insert_element(self, block: Block, fd: FieldDescriptor, pos: int, value) -> None:
        elems = self._elements(block, fd)
        if not elems:
            self._insert_field(block, fd, [value])
            return
        if pos >= len(elems):
            node, j = elems[-1]
            before = False
        else:
            node, j = elems[pos]
            before = True
        if node.lbrack is None:
            indent = _indent_of(node.name)
            if indent is None:
                indent = self._child_indent(block)
            style = self.style
            style = Style(style.unit, style.message_colon, style.list_padding, False, style.newline)
            new = self._snippet_fields(block, field_lines(fd, [value], indent, style), indent)
            k = block.fields.index(node)
            self._insert_nodes(block, k if before else k + 1, new, indent)
            return
        self._list_insert(block, node, j if before else len(node.items), value)

    def _list_insert(self, block: Block, node: Field, j: int, value) -> None:
        items = node.items
        fd = node.fd
        anchor = items[min(j, len(items) - 1)].first()
        if isinstance(items[0], Block):
            indent = _indent_of(anchor)
            if indent is None:
                indent = self._line_indent(block) + self.style.unit
            lines = message_block_lines(value, indent, self.style)
            text = f"{fd.name} " + self.style.newline.join(lines)[len(indent) :]
        else:
            text = f"{fd.name}: {format_scalar(fd, value)}"
        item = Parser(text).parse_document(block.desc).fields[0].items[0]
        if isinstance(item, Block):
            item.owner = node
        spacing = items[1].first().pre if len(items) > 1 else None
        if spacing is None:
            spacing = items[0].first().pre if "\n" in items[0].first().pre else " "
        if j >= len(items):
            last = items[-1].first().pre
            item.first().pre = last if "\n" in last else spacing
            node.commas[-1] = Token("", ",")
            items.append(item)
            node.commas.append(None)
        else:
            item.first().pre = items[j].first().pre
            if j == 0:
                items[0].first().pre = spacing
            items.insert(j, item)
            node.commas.insert(j, Token("", ","))


# -- helpers ---------------------------------------------------------------------------------------------
def _fill(block: Block, msg: Message) -> None:
    for f in block.fields:
        fd = f.fd
        name = fd.name
        if fd.message_type is not None:
            if is_map(fd):
                container = getattr(msg, name)
                value_is_message = is_message(_map_value_fd(fd))
                for item in f.items:
                    entry = container.GetEntryClass()()
                    _fill(item, entry)  # type: ignore[arg-type]
                    if value_is_message:
                        container[entry.key].CopyFrom(entry.value)
                    else:
                        container[entry.key] = entry.value
            elif is_repeated(fd):
                container = getattr(msg, name)
                for item in f.items:
                    _fill(item, container.add())  # type: ignore[arg-type]
            else:
                sub = getattr(msg, name)
                sub.SetInParent()
                _fill(f.items[0], sub)  # type: ignore[arg-type]
        elif is_repeated(fd):
            getattr(msg, name).extend([item.value for item in f.items])  # type: ignore[union-attr]
        else:
            setattr(msg, name, f.items[0].value)  # type: ignore[union-attr]


def _enum_number(fd: FieldDescriptor, value):
    if fd.type == FieldDescriptor.TYPE_ENUM and isinstance(value, str):
        return fd.enum_type.values_by_name[value].number
    return value


def _coerce(fd: FieldDescriptor, value):
    if fd.type == FieldDescriptor.TYPE_ENUM:
        if isinstance(value, str):
            ev = fd.enum_type.values_by_name.get(value)
            if ev is None:
                names = [v.name for v in fd.enum_type.values]
                guess = suggest_enum(fd, value)
                lead = f"did you mean {guess}? " if guess else ""
                raise EditError(f"{fd.name}: no value named {value!r}; {lead}valid: {', '.join(names)}")
            return ev.number
        if isinstance(value, bool) or not isinstance(value, int):
            raise EditError(f"{fd.name} takes an enum name or number, got {value!r}")
        return value
    if fd.type == FieldDescriptor.TYPE_BOOL and not isinstance(value, bool):
        raise EditError(f"{fd.name} takes true or false, got {value!r}")
    if fd.cpp_type in (
        FieldDescriptor.CPPTYPE_INT32,
        FieldDescriptor.CPPTYPE_INT64,
        FieldDescriptor.CPPTYPE_UINT32,
        FieldDescriptor.CPPTYPE_UINT64,
    ) and (isinstance(value, bool) or not isinstance(value, int)):
        raise EditError(f"{fd.name} takes an integer, got {value!r}")
    return value


def _to_message(desc: Descriptor, value) -> Message:
    cls = _message_class(desc)
    if isinstance(value, Message):
        if value.DESCRIPTOR is not desc:
            raise EditError(f"expected a {desc.full_name}, got a {value.DESCRIPTOR.full_name}")
        m = cls()
        m.CopyFrom(value)
        return m
    if isinstance(value, dict):
        return json_format.ParseDict(value, cls(), ignore_unknown_fields=False)
    raise EditError(f"{desc.name} is a message: give a dict or a {desc.name}")


def _inline(msg: Message) -> str:
    from google.protobuf import text_format

    return text_format.MessageToString(msg, as_one_line=True)


def field_for_path(desc: Descriptor, path: str) -> tuple[FieldDescriptor, bool]:
    """The field a path ends on and whether the path selects one element ([i] or [key])."""
    segs = parse_path(path)
    fd = None
    for i, (name, _sel) in enumerate(segs):
        fd = _field(desc, name)
        if i < len(segs) - 1:
            if not is_message(fd):
                raise PathError(f"{name} is not a message: nothing is below it")
            if is_map(fd):
                vfd = _map_value_fd(fd)
                if vfd.message_type is None:
                    raise PathError(f"{name}[..] holds a scalar: nothing is below it")
                desc = vfd.message_type
            else:
                desc = fd.message_type
    assert fd is not None
    return fd, segs[-1][1] is not None


def atomic_write(
    path: str | os.PathLike, text: str, *, expect: FileStamp | None = None, force: bool = False
) -> FileStamp:
    """Write text to path through the one safe save path (studio.config.saving.safe_write): temp file in the
    target's folder and a rename, through symlinks, owner/mode/line endings kept, read-only refused unless force,
    a change since `expect` refused unless force. Raises SaveError (an OSError) with a one-line message."""
    return safe_write(path, text, expect=expect, force=force)


def _same_file(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)
