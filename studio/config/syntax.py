"""A concrete syntax tree for protobuf text format, bound to a message schema.

The tree keeps every byte of the input: each token carries the whitespace and comments before it (`pre`), so
joining `pre + text` of all tokens in order gives the input back unchanged.  The parser follows
`google.protobuf.text_format` token by token (same tokenizer rules, same value conversions, same duplicate and
oneof checks, same error positions), so a text parses here exactly when `text_format.Parse` accepts it.
"""

from __future__ import annotations

import difflib
import math
import re
import warnings
import weakref
from dataclasses import dataclass

from google.protobuf import text_encoding, text_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from studio.config.descriptors import (
    default_value,
    has_presence,
    is_map_entry_type,
    is_message,
    is_repeated,
)

_QUOTES = ("'", '"')
# text_format's tokenizer, applied to the whole text at once: trivia (whitespace and `#` comments) or a token
# (identifier, number, quoted string) or any other single character.  `$` with re.M is text_format's
# end-of-line (it tokenizes line by line, lines split on "\n").
# Possessive repeats (`*+`, `++`): the same matches (the character classes never overlap what follows them), but
# without one backtracking entry per repetition: a 16 MiB comment block or string took 170x its size in memory.
_LEX = re.compile(
    r"(?P<ws>(?:\s|#[^\n]*)++)"
    r"|[a-zA-Z_][0-9a-zA-Z_+-]*"
    r"|(?:[0-9+-]|\.[0-9])[0-9a-zA-Z_.+-]*"
    r"|\"[^\"\n\\]*+(?:(?:\\.)++[^\"\n\\]*+)*+(?:\"|\\?$)"
    r"|'[^'\n\\]*+(?:(?:\\.)++[^'\n\\]*+)*+(?:'|\\?$)"
    r"|.",
    re.M,
)
MAX_DEPTH = 100
"""Nested messages deeper than this are refused, as protobuf's C++ TextFormat::Parser does by default (Python's
`text_format` has no limit: it ends in RecursionError). ModelConfig itself nests at most a few levels."""
MAX_TOKENS = 250_000
"""Texts with more tokens are refused (the largest real config in the corpus has a few hundred); this bounds the
tree's memory (200-400 bytes a token: at most about 100 MiB) within the 16 MiB file cap."""
_IDENTIFIER = re.compile(r"[^\d\W]\w*")
_IDENTIFIER_OR_NUMBER = re.compile(r"\w+")

_INT_KINDS = {
    FieldDescriptor.TYPE_INT32: (True, False),
    FieldDescriptor.TYPE_SINT32: (True, False),
    FieldDescriptor.TYPE_SFIXED32: (True, False),
    FieldDescriptor.TYPE_INT64: (True, True),
    FieldDescriptor.TYPE_SINT64: (True, True),
    FieldDescriptor.TYPE_SFIXED64: (True, True),
    FieldDescriptor.TYPE_UINT32: (False, False),
    FieldDescriptor.TYPE_FIXED32: (False, False),
    FieldDescriptor.TYPE_UINT64: (False, True),
    FieldDescriptor.TYPE_FIXED64: (False, True),
}
_FLOAT_TYPES = (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE)


_SHOWN_LINE = 120  # characters of the source line an error shows at most


class ParseError(ValueError):
    """Bad input, with a 1-based line and column, the offending source line and a hint where we have one."""

    def __init__(
        self,
        message: str,
        line: int,
        column: int,
        *,
        hint: str | None = None,
        source_line: str | None = None,
        filename: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.hint = hint
        self.source_line = source_line
        self.filename = filename

    def __str__(self) -> str:
        return self.format()

    def format(self, filename: str | None = None) -> str:
        """Compiler-style text: `file:line:col: error: message`, the source line with a caret, the hint."""
        where = filename or self.filename
        head = f"{where}:{self.line}:{self.column}" if where else f"{self.line}:{self.column}"
        out = [f"{head}: error: {self.message}"]
        if self.source_line is not None:
            src = self.source_line.rstrip("\r").expandtabs(1)
            caret = max(0, self.column - 1)
            if len(src) > _SHOWN_LINE:  # a window around the column, not a 16 MiB line
                start = max(0, min(caret - _SHOWN_LINE // 2, len(src) - _SHOWN_LINE))
                end = start + _SHOWN_LINE
                src = ("…" if start else "") + src[start:end] + ("…" if end < len(src) else "")
                caret = caret - start + (1 if start else 0)
            out.append("    " + src)
            out.append("    " + " " * caret + "^")
        if self.hint:
            out.append(f"  hint: {self.hint}")
        return "\n".join(out)


class Token:
    """One token and the trivia (whitespace, comments) written before it."""

    __slots__ = ("pre", "text", "start")

    def __init__(self, pre: str, text: str, start: int = -1) -> None:
        self.pre = pre
        self.text = text
        self.start = start

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Token({self.pre!r}, {self.text!r})"


class Scalar:
    """A scalar value: one token, or several adjacent string tokens; `value` is the converted Python value."""

    __slots__ = ("toks", "value")

    def __init__(self, toks: list[Token], value) -> None:
        self.toks = toks
        self.value = value

    def first(self) -> Token:
        return self.toks[0]

    def last(self) -> Token:
        return self.toks[-1]


class Block:
    """A message body: `{ fields }` or `< fields >`; the document root has no `open` and closes on EOF."""

    # parents are weak references: the tree has no reference cycles, so a dropped document is freed by
    # reference counting alone (also after gc.freeze, which scans use)
    __slots__ = ("desc", "open", "fields", "close", "_owner", "cache", "span", "__weakref__")

    def __init__(self, desc: Descriptor, open_: Token | None, owner: Field | None = None) -> None:
        self.cache: str | None = None  # the node's text, kept until an edit inside it clears it
        self.span: tuple[int, int] | None = None  # where an unedited node lies in the parsed source
        self.desc = desc
        self.open = open_
        self.fields: list[Field] = []
        self.close: Token | None = None
        self._owner = weakref.ref(owner) if owner is not None else None

    @property
    def owner(self) -> Field | None:
        """The field this block is the value of (None for the document root)."""
        return self._owner() if self._owner is not None else None

    @owner.setter
    def owner(self, field: Field | None) -> None:
        self._owner = weakref.ref(field) if field is not None else None

    def first(self) -> Token:
        if self.open is not None:
            return self.open
        return self.fields[0].first() if self.fields else self.close  # type: ignore[return-value]

    def last(self) -> Token:
        return self.close  # type: ignore[return-value]

    def field_nodes(self, name: str) -> list[Field]:
        return [f for f in self.fields if f.fd.name == name]


class Field:
    """One occurrence of a field: `name: value`, `name { }`, or `name: [a, b]` (list syntax)."""

    __slots__ = ("fd", "name", "colon", "lbrack", "items", "commas", "rbrack", "sep", "_parent", "cache", "span",
                 "__weakref__")

    def __init__(self, fd: FieldDescriptor, name: Token, parent: Block | None) -> None:
        self.cache: str | None = None
        self.span: tuple[int, int] | None = None
        self.fd = fd
        self.name = name
        self.colon: Token | None = None
        self.lbrack: Token | None = None
        self.items: list[Scalar | Block] = []
        self.commas: list[Token | None] = []  # commas[i] follows items[i] inside a list
        self.rbrack: Token | None = None
        self.sep: Token | None = None
        self._parent = weakref.ref(parent) if parent is not None else None

    @property
    def parent(self) -> Block | None:
        """The block this field is written in."""
        return self._parent() if self._parent is not None else None

    @parent.setter
    def parent(self, block: Block | None) -> None:
        self._parent = weakref.ref(block) if block is not None else None

    def first(self) -> Token:
        return self.name

    def last(self) -> Token:
        if self.sep is not None:
            return self.sep
        if self.rbrack is not None:
            return self.rbrack
        return self.items[-1].last()


def emit(node, out: list[str], source: str | None = None) -> None:
    """Append the text of a node (Block, Field, Scalar) to `out`, reusing the text of unedited nodes:
    their cached text, or their slice of the parsed `source`."""
    if isinstance(node, Scalar):
        for t in node.toks:
            out.append(t.pre)
            out.append(t.text)
        return
    if node.cache is not None:
        out.append(node.cache)
        return
    if source is not None and node.span is not None:
        s, e = node.span
        out.append(source[s:e])
        return
    start = len(out)
    if isinstance(node, Block):
        if node.open is not None:
            out.append(node.open.pre)
            out.append(node.open.text)
        for f in node.fields:
            emit(f, out, source)
        if node.close is not None:
            out.append(node.close.pre)
            out.append(node.close.text)
    else:
        out.append(node.name.pre)
        out.append(node.name.text)
        if node.colon is not None:
            out.append(node.colon.pre)
            out.append(node.colon.text)
        if node.lbrack is not None:
            out.append(node.lbrack.pre)
            out.append(node.lbrack.text)
        for item, comma in zip(node.items, node.commas, strict=False):
            emit(item, out, source)
            if comma is not None:
                out.append(comma.pre)
                out.append(comma.text)
        if node.rbrack is not None:
            out.append(node.rbrack.pre)
            out.append(node.rbrack.text)
        if node.sep is not None:
            out.append(node.sep.pre)
            out.append(node.sep.text)
    text = "".join(out[start:])
    del out[start:]
    out.append(text)
    node.cache = text


def invalidate(block: Block) -> None:
    """Forget the cached text of a block that was edited: the block, its fields and their element blocks
    (whose first tokens edits may touch), and every ancestor."""
    for f in block.fields:
        f.cache = f.span = None
        for item in f.items:
            if isinstance(item, Block):
                item.cache = item.span = None
    b: Block | None = block
    while b is not None:
        b.cache = b.span = None
        owner = b.owner
        if owner is None:
            break
        owner.cache = owner.span = None
        b = owner.parent


def iter_tokens(node):
    """Every token of a node, in text order."""
    if isinstance(node, Block):
        if node.open is not None:
            yield node.open
        for f in node.fields:
            yield from iter_tokens(f)
        if node.close is not None:
            yield node.close
    elif isinstance(node, Field):
        yield node.name
        if node.colon is not None:
            yield node.colon
        if node.lbrack is not None:
            yield node.lbrack
        for item, comma in zip(node.items, node.commas, strict=False):
            yield from iter_tokens(item)
            if comma is not None:
                yield comma
        if node.rbrack is not None:
            yield node.rbrack
        if node.sep is not None:
            yield node.sep
    else:
        yield from node.toks


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column (in code points) of an offset; lines split on "\\n" as text_format does."""
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def line_at(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text[start:] if end < 0 else text[start:end]


def tokenize(text: str) -> tuple[list[Token], Token]:
    """Tokens (each with its leading trivia) and the end-of-file token that holds the trailing trivia."""
    toks: list[Token] = []
    append = toks.append
    pre_start = 0
    for m in _LEX.finditer(text):
        if m.lastgroup is None:
            s = m.start()
            append(Token(text[pre_start:s], m.group(), s))
            pre_start = m.end()
    return toks, Token(text[pre_start:], "", len(text))


def is_default_scalar(value) -> bool:
    """protobuf's rule for "was this implicit-presence field set": non-default, and -0.0 counts as set."""
    if isinstance(value, float) and math.copysign(1.0, value) < 0:
        return False
    return not value


@dataclass
class _MessageState:
    """What text_format's target message would know while parsing: set fields and the active oneof members."""

    values: dict
    oneofs: dict

    @classmethod
    def new(cls) -> _MessageState:
        return cls({}, {})


class Parser:
    """Recursive descent over the token list, mirroring text_format._Parser._MergeField."""

    def __init__(self, text: str, spans: bool = False) -> None:
        self.spans = spans  # record where each node lies in `text` (for the document, not for snippets)
        self.text = text
        # tokens are made as the parser reaches them: an error near the start costs nothing for the rest
        self._lex = _LEX.finditer(text)
        self._pre_start = 0
        self.toks: list[Token] = []
        self.eof = Token("", "", len(text))
        self.i = 0
        self.depth = 0
        self.prev: Token | None = None

    def _fill(self) -> None:
        """Tokenize the next few tokens (at least one; the end-of-file token last)."""
        toks = self.toks
        if toks and toks[-1] is self.eof:
            return
        text = self.text
        append = toks.append
        want = len(toks) + 64
        for m in self._lex:
            if m.lastgroup is None:
                s = m.start()
                append(Token(text[self._pre_start:s], m.group(), s))
                self._pre_start = m.end()
                if len(toks) >= want:
                    break
        else:
            self.eof.pre = text[self._pre_start:]
            append(self.eof)
        if len(toks) > MAX_TOKENS and toks[-1] is not self.eof:
            raise self._error_at(
                toks[MAX_TOKENS].start, f"The text has more than {MAX_TOKENS:,} tokens.",
                "this is not a Triton model config (real ones have at most a few thousand tokens)")

    # -- token helpers ---------------------------------------------------------------------------------
    def _cur(self) -> Token:
        if self.i >= len(self.toks):
            self._fill()
        return self.toks[self.i]

    def _advance(self) -> Token:
        if self.i >= len(self.toks):
            self._fill()
        t = self.toks[self.i]
        self.prev = t
        if t is not self.eof:
            self.i += 1
        return t

    def _try(self, s: str) -> Token | None:
        if self.i >= len(self.toks):
            self._fill()
        t = self.toks[self.i]
        if t.text == s and t is not self.eof:
            self.prev = t
            self.i += 1
            return t
        return None

    def _error_at(self, offset: int, message: str, hint: str | None = None) -> ParseError:
        line, col = position(self.text, offset)
        return ParseError(message, line, col, hint=hint, source_line=line_at(self.text, offset))

    def error_cur(self, message: str, hint: str | None = None) -> ParseError:
        return self._error_at(self._cur().start, message, hint)

    def error_prev(self, message: str, hint: str | None = None) -> ParseError:
        offset = self.prev.start if self.prev is not None else 0
        return self._error_at(offset, message, hint)

    def _consume(self, s: str, hint: str | None = None) -> Token:
        t = self._try(s)
        if t is None:
            raise self.error_cur(f'Expected "{s}".', hint)
        return t

    # -- grammar ---------------------------------------------------------------------------------------
    def parse_document(self, desc: Descriptor) -> Block:
        root = Block(desc, None)
        state = _MessageState.new()
        while self._cur() is not self.eof:
            root.fields.append(self._field(root, state))
        root.close = self.eof
        return root

    def _field(self, block: Block, state: _MessageState) -> Field:
        desc = block.desc
        t = self._cur()
        if t.text == "[" and t is not self.eof:
            self._advance()
            while True:
                if not _IDENTIFIER.match(self._cur().text):
                    raise self.error_cur("Expected identifier.")
                self._advance()
                if self._try(".") is None:
                    break
            raise self.error_prev(f'Message type "{desc.full_name}" does not have extensions.')
        if not _IDENTIFIER_OR_NUMBER.match(t.text):
            raise self.error_cur(
                f"Expected identifier or number, got {t.text}.",
                "a field name was expected here"
                if t.text
                else "the text ends where a field name was expected",
            )
        name = self._advance()
        fd = desc.fields_by_name.get(name.text)
        if fd is None:
            raise self.error_prev(
                f'Message type "{desc.full_name}" has no field named "{name.text}".',
                unknown_field_hint(desc, name.text),
            )
        oneof = fd.containing_oneof
        if oneof is not None:
            which = state.oneofs.get(oneof.name)
            if which is not None and which != fd.name:
                raise self.error_prev(
                    f'Field "{fd.name}" is specified along with field "{which}", another member of oneof '
                    f'"{oneof.name}" for message type "{desc.full_name}".',
                    f"{fd.name} and {which} exclude each other: keep one of them",
                )
        node = Field(fd, name, block)
        repeated = is_repeated(fd)
        if is_message(fd):
            node.colon = self._try(":")
            value = self._message_value
        else:
            node.colon = self._consume(":", f"a scalar field needs a colon: {fd.name}: <value>")
            value = self._scalar_value
        if repeated and (lb := self._try("[")) is not None:
            node.lbrack = lb
            rb = self._try("]")
            if rb is None:
                while True:
                    node.items.append(value(node, state))
                    rb = self._try("]")
                    if rb is not None:
                        node.commas.append(None)
                        break
                    t = self._cur()
                    if t is self.eof:
                        raise self.error_cur(
                            'Expected ",".', f"the '[' opened at {self._where(lb)} is never closed"
                        )
                    node.commas.append(self._consume(","))
            node.rbrack = rb
        else:
            node.items.append(value(node, state))
            node.commas.append(None)
        node.sep = self._try(",") or self._try(";")
        if self.spans:
            last = node.last()
            node.span = (name.start - len(name.pre), last.start + len(last.text))
        return node

    def _where(self, tok: Token) -> str:
        line, col = position(self.text, tok.start)
        return f"line {line}, column {col}"

    def _message_value(self, node: Field, state: _MessageState) -> Block:
        fd = node.fd
        open_ = self._try("<")
        end = ">"
        if open_ is None:
            open_ = self._consume("{", f"{fd.name} is a message: write {fd.name} {{ ... }}")
            end = "}"
        if not is_repeated(fd):
            if fd.name in state.values:
                raise self.error_prev(
                    f'Message type "{fd.containing_type.full_name}" should not have multiple "{fd.name}" '
                    "fields.",
                    f"merge the two {fd.name} blocks into one",
                )
            state.values[fd.name] = True
            if fd.containing_oneof is not None:
                state.oneofs[fd.containing_oneof.name] = fd.name
        if self.depth >= MAX_DEPTH:
            raise self.error_prev(
                f"Message is too deep, the parser exceeded the configured recursion limit of {MAX_DEPTH}.",
                f"messages nest at most {MAX_DEPTH} levels deep (Triton's configs nest a few)")
        block = Block(fd.message_type, open_, node)
        child = _MessageState.new()
        self.depth += 1
        while True:
            t = self._try(end)
            if t is not None:
                block.close = t
                self.depth -= 1
                if self.spans:
                    block.span = (open_.start - len(open_.pre), t.start + 1)
                return block
            if self._cur() is self.eof:
                raise self.error_prev(
                    f'Expected "{end}".', f"the '{open_.text}' opened at {self._where(open_)} is never closed"
                )
            block.fields.append(self._field(block, child))

    def _scalar_value(self, node: Field, state: _MessageState) -> Scalar:
        fd = node.fd
        t = self._cur()
        ftype = fd.type
        try:
            if ftype in _INT_KINDS:
                signed, long_ = _INT_KINDS[ftype]
                value = text_format.ParseInteger(t.text, is_signed=signed, is_long=long_)
                toks = [self._advance()]
            elif ftype in _FLOAT_TYPES:
                value = text_format.ParseFloat(t.text)
                toks = [self._advance()]
            elif ftype == FieldDescriptor.TYPE_BOOL:
                value = text_format.ParseBool(t.text)
                toks = [self._advance()]
            elif ftype == FieldDescriptor.TYPE_ENUM:
                value = text_format.ParseEnum(fd, t.text)
                toks = [self._advance()]
            else:
                toks, value = self._strings(fd)
        except ValueError as e:
            raise self.error_cur(str(e), value_hint(fd, t.text)) from None
        if not is_repeated(fd):
            seen = state.values
            if has_presence(fd):
                dup = fd.name in seen
            else:
                dup = fd.name in seen and not is_default_scalar(seen[fd.name])
            if dup:
                raise self.error_prev(
                    f'Message type "{fd.containing_type.full_name}" should not have multiple "{fd.name}" '
                    "fields.",
                    f"{fd.name} is set twice: keep one",
                )
            seen[fd.name] = value
            if fd.containing_oneof is not None:
                state.oneofs[fd.containing_oneof.name] = fd.name
        return Scalar(toks, value)

    def _strings(self, fd: FieldDescriptor) -> tuple[list[Token], str | bytes]:
        toks: list[Token] = []
        parts: list[bytes] = []
        while True:
            t = self._cur()
            text = t.text
            if not toks:
                if len(text) < 1 or text[0] not in _QUOTES:
                    raise ValueError(f"Expected string but found: {text!r}")
            elif not text or text[0] not in _QUOTES:
                break
            if len(text) < 2 or text[-1] != text[0]:
                raise ValueError(f"String missing ending quote: {text!r}")
            body = text[1:-1]
            if "\\" in body:
                with warnings.catch_warnings():  # protobuf warns on escapes Python does not know
                    warnings.simplefilter("ignore", DeprecationWarning)
                    parts.append(text_encoding.CUnescape(body))
            else:
                parts.append(body.encode("utf-8"))
            toks.append(self._advance())
        raw = b"".join(parts)
        if fd.type == FieldDescriptor.TYPE_BYTES:
            return toks, raw
        try:
            return toks, raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"Couldn't parse string: {e}") from None


def parse_fields(text: str, desc: Descriptor) -> Block:
    """Parse `text` as the body of a `desc` message (used for snippets inserted by edits)."""
    return Parser(text).parse_document(desc)


# -- hints ---------------------------------------------------------------------------------------------------
def unknown_field_hint(desc: Descriptor, name: str) -> str | None:
    names = [f.name for f in desc.fields]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
    if close:
        return f"did you mean {close[0]}?"
    lower = name.lower()
    for f in desc.fields:
        if f.name == lower:
            return f"did you mean {f.name}? (field names are lower case)"
    homes = _field_homes(desc, name)
    if homes:
        return f"{name} belongs inside {' or '.join(homes)}, not in {desc.name}"
    return f"{desc.name} has the fields: {', '.join(names)}"


def _field_homes(desc: Descriptor, name: str) -> list[str]:
    """Field paths (from the file's ModelConfig) of other messages that have a field of this name."""
    root = desc.file.message_types_by_name.get("ModelConfig")
    if root is None:
        return []
    homes = []
    for path, mdesc in _message_paths(root):
        if mdesc is not desc and name in mdesc.fields_by_name:
            homes.append(path)
    return homes[:3]


def _message_paths(root: Descriptor):
    """(field path, message type) for each message type reachable from root, shortest path first."""
    seen = {root.full_name}
    queue = [("", root)]
    while queue:
        path, d = queue.pop(0)
        if path:
            yield path, d
        for f in d.fields:
            sub = f.message_type
            if sub is None:
                continue
            if is_map_entry_type(sub):
                vf = sub.fields_by_name["value"]
                if vf.message_type is None:
                    continue
                sub, step = vf.message_type, f'{f.name}["..."]'
            else:
                step = f.name
            if sub.full_name not in seen:
                seen.add(sub.full_name)
                queue.append((f"{path}.{step}" if path else step, sub))


# Names people write for Triton's data types (numpy, PyTorch, TensorFlow spellings).
_DATA_TYPE_ALIASES = {
    "FLOAT": "FP32",
    "FLOAT32": "FP32",
    "SINGLE": "FP32",
    "HALF": "FP16",
    "FLOAT16": "FP16",
    "DOUBLE": "FP64",
    "FLOAT64": "FP64",
    "BFLOAT16": "BF16",
    "STR": "STRING",
    "BYTES": "STRING",
    "OBJECT": "STRING",
    "INT": "INT32",
    "LONG": "INT64",
    "BOOLEAN": "BOOL",
    "CHAR": "INT8",
    "BYTE": "UINT8",
    "SHORT": "INT16",
}


def suggest_enum(fd: FieldDescriptor, text: str) -> str | None:
    """The enum name a user most likely meant by `text`."""
    names = [v.name for v in fd.enum_type.values]
    upper = text.upper()
    if upper in names:
        return upper
    if fd.enum_type.name == "DataType":
        bare = upper.removeprefix("TYPE_").removeprefix("TORCH.").removeprefix("TF.").removeprefix("NP.")
        alias = _DATA_TYPE_ALIASES.get(bare, bare)
        if "TYPE_" + alias in names:
            return "TYPE_" + alias
    close = difflib.get_close_matches(upper, names, n=1, cutoff=0.6)
    return close[0] if close else None


def value_hint(fd: FieldDescriptor, text: str) -> str | None:
    if fd.type == FieldDescriptor.TYPE_ENUM:
        names = [v.name for v in fd.enum_type.values]
        guess = suggest_enum(fd, text)
        lead = f"did you mean {guess}? " if guess else ""
        return f"{lead}{fd.name} takes one of: {', '.join(names)}"
    if fd.type == FieldDescriptor.TYPE_BOOL:
        return f"{fd.name} takes true or false"
    if fd.type in _INT_KINDS:
        signed, long_ = _INT_KINDS[fd.type]
        bits = 64 if long_ else 32
        kind = f"{'signed' if signed else 'unsigned'} {bits}-bit integer"
        if text.startswith(("'", '"')):
            return f"{fd.name} takes a {kind}, without quotes"
        return f"{fd.name} takes a {kind}"
    if fd.type in _FLOAT_TYPES:
        return f"{fd.name} takes a number"
    if fd.cpp_type == FieldDescriptor.CPPTYPE_STRING:
        return f'{fd.name} takes a quoted string: {fd.name}: "..."'
    return None


__all__ = [
    "Block",
    "Field",
    "ParseError",
    "Parser",
    "Scalar",
    "Token",
    "default_value",
    "emit",
    "iter_tokens",
    "parse_fields",
    "position",
    "tokenize",
]
