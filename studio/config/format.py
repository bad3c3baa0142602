"""`triton-studio fmt`: a canonical layout that keeps every comment.

Canonical: one field per line, `name: value` for scalars, `name {` blocks, `name [` lists of blocks, `[ a, b ]`
for scalar lists, the document's indent unit (2 spaces when it has none), `{}` instead of `<>`, no field
separators, at most one blank line between fields. Comments stay where they were: above a field, or at the
end of its line. Values keep their spelling (quotes, number formats).
"""

from __future__ import annotations

from studio.config.descriptors import is_message
from studio.config.document import ConfigDocument
from studio.config.syntax import Block, Field, Scalar, Token


class _Printer:
    def __init__(self, unit: str) -> None:
        self.unit = unit
        self.lines: list[str] = []
        self.cur: str | None = None
        self.cont = 0  # indent level for a token that must start a new line mid-field

    # -- low level -------------------------------------------------------------------------------------
    def flush(self) -> None:
        if self.cur is not None:
            self.lines.append(self.cur.rstrip())
            self.cur = None

    def start(self, level: int, text: str) -> None:
        self.flush()
        self.cur = self.unit * level + text

    def put(self, text: str, level: int) -> None:
        if self.cur is None:
            self.cur = self.unit * (level + 1) + text.lstrip()
        else:
            self.cur += text

    def trivia(self, pre: str, level: int, blank_ok: bool) -> None:
        """Write the comments (and one blank line where there were some) found in a token's trivia."""
        parts = pre.split("\n")
        head = parts[0].strip()
        if head.startswith("#"):
            if self.cur is not None:
                self.cur = self.cur.rstrip() + "  " + head
            else:
                self.lines.append(self.unit * level + head)
            self.flush()
        if len(parts) == 1:
            return
        if self.cur is not None and any(p.strip() for p in parts[1:-1]):
            self.flush()
        for line in parts[1:-1]:
            s = line.strip()
            if s.startswith("#"):
                self.flush()
                self.lines.append(self.unit * level + s)
            elif not s and blank_ok and self.lines and self.cur is None:
                last = self.lines[-1]
                if last.strip() and not last.rstrip().endswith(("{", "[")):
                    self.lines.append("")
            elif not s and blank_ok and self.cur is not None:
                self.flush()
                self.lines.append("")

    # -- grammar ---------------------------------------------------------------------------------------
    def fields(self, block: Block, level: int) -> None:
        for f in block.fields:
            self.field(f, level)

    def field(self, f: Field, level: int) -> None:
        self.trivia(f.name.pre, level, blank_ok=True)
        self.start(level, f.name.text)
        if f.colon is not None:
            self.trivia(f.colon.pre, level + 1, blank_ok=False)
        if is_message(f.fd):
            if f.lbrack is not None:
                self.trivia(f.lbrack.pre, level + 1, blank_ok=False)
                self.put(" [", level)
                for item, comma in zip(f.items, f.commas, strict=False):
                    assert isinstance(item, Block)
                    self.block(item, level + 1, own_line=True)
                    if comma is not None:
                        self.trivia(comma.pre, level + 1, blank_ok=False)
                        self.put(",", level)
                if f.rbrack is not None:
                    self.trivia(f.rbrack.pre, level + 1, blank_ok=False)
                self.start(level, "]")
            else:
                for item in f.items:
                    assert isinstance(item, Block)
                    self.block(item, level, own_line=False)
        else:
            if f.lbrack is not None:
                self.trivia(f.lbrack.pre, level + 1, blank_ok=False)
                self.put(": [", level)
                for k, (item, comma) in enumerate(zip(f.items, f.commas, strict=False)):
                    assert isinstance(item, Scalar)
                    self.scalar(item, level, " " if k == 0 else "")
                    if comma is not None:
                        self.trivia(comma.pre, level + 1, blank_ok=False)
                        self.put(",", level)
                assert f.rbrack is not None
                self.trivia(f.rbrack.pre, level + 1, blank_ok=False)
                self.put(" ]" if f.items else "]", level)
            else:
                self.put(":", level)
                item = f.items[0]
                assert isinstance(item, Scalar)
                self.scalar(item, level, " ")
        if f.sep is not None:
            self.trivia(f.sep.pre, level + 1, blank_ok=False)

    def scalar(self, item: Scalar, level: int, lead: str) -> None:
        for k, tok in enumerate(item.toks):
            self.trivia(tok.pre, level + 1, blank_ok=False)
            gap = lead if k == 0 else " "
            if self.cur is not None and self.cur.endswith(","):
                gap = " "
            self.put(gap + tok.text, level)

    def block(self, block: Block, level: int, own_line: bool) -> None:
        assert block.open is not None and block.close is not None
        self.trivia(block.open.pre, level, blank_ok=False)
        if own_line:
            self.start(level, "{")
        else:
            self.put(" {", level)
        inner_comments = "#" in block.close.pre or any(_has_comment(f) for f in block.fields)
        if not block.fields and not inner_comments:
            self.put(" }", level)
            return
        self.fields(block, level + 1)
        self.trivia(block.close.pre, level + 1, blank_ok=False)
        self.start(level, "}")


def _has_comment(f: Field) -> bool:
    from studio.config.syntax import iter_tokens

    return any("#" in t.pre for t in iter_tokens(f))


def canonical_text(doc: ConfigDocument) -> str:
    """The document in canonical layout, every comment kept (see module docs)."""
    root = doc._root  # noqa: SLF001 - the formatter is part of the config package
    unit = doc.style.unit if doc.style.unit.strip() == "" and doc.style.unit else "  "
    p = _Printer(unit)
    p.fields(root, 0)
    close: Token = root.close  # type: ignore[assignment]
    p.trivia(close.pre, 0, blank_ok=True)
    p.flush()
    while p.lines and not p.lines[-1].strip():
        p.lines.pop()
    while p.lines and not p.lines[0].strip():
        p.lines.pop(0)
    nl = doc.style.newline
    return nl.join(p.lines) + nl if p.lines else ""


def format_text(text: str) -> str:
    return canonical_text(ConfigDocument.parse(text))
