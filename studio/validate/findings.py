"""What a validation reports: findings with a severity, a rule id, Triton's words, a place and a fix."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Edit:
    """A mechanical fix: one ConfigDocument operation (set, clear, remove, append) at a field path."""

    op: str
    path: str
    value: object = None

    @property
    def on_text(self) -> bool:
        """A text edit (op "replace_text"): it works on text that does not parse, where no document exists."""
        return self.op == "replace_text"

    def apply_to_text(self, text: str) -> str:
        """replace_text: value = (line, column, old, new), 1-based; the text must still hold `old` there."""
        line, column, old, new = self.value  # type: ignore[misc]
        lines = text.split("\n")
        row = lines[line - 1]
        if row[column - 1 : column - 1 + len(old)] != old:
            raise ValueError(f"line {line} no longer has {old!r} at column {column}")
        lines[line - 1] = row[: column - 1] + new + row[column - 1 + len(old) :]
        return "\n".join(lines)

    def apply(self, doc) -> None:
        if self.on_text:
            doc.set_text(self.apply_to_text(doc.text))
        elif self.op == "set":
            doc.set(self.path, self.value)
        elif self.op == "clear":
            doc.clear(self.path)
        elif self.op == "remove":
            doc.remove(self.path)
        elif self.op == "append":
            doc.append(self.path, self.value)
        else:  # pragma: no cover - programming error
            raise ValueError(f"unknown edit {self.op}")


@dataclass
class Finding:
    severity: str  # error | warning | info
    rule: str  # stable id, e.g. "io.dims-positive"
    message: str  # Triton's own wording where Triton has one, then our explanation
    path: str | None = None  # field path in the config ("input[0].dims"); None: the whole model
    hint: str | None = None
    file: str | None = None
    line: int | None = None
    column: int | None = None
    model: str | None = None
    edits: tuple[Edit, ...] = field(default_factory=tuple)

    @classmethod
    def from_parse_error(cls, e, file: str | None = None, model: str | None = None) -> Finding:
        """The finding for text that does not parse; a misspelt field name ("did you mean X?") gets its fix."""
        edits: tuple[Edit, ...] = ()
        m = re.match(r"did you mean (\w+)\?", e.hint or "")
        if m and e.source_line is not None and e.column:
            word = re.match(r"\w+", e.source_line[e.column - 1 :])
            if word and word.group(0) != m.group(1):
                edits = (Edit("replace_text", "", (e.line, e.column, word.group(0), m.group(1))),)
        return cls("error", "syntax", triton_parse_message(e), None, e.hint, file=file or e.filename, line=e.line,
                   column=e.column, model=model, edits=edits)

    def to_json(self) -> dict:
        d = asdict(self)
        d["edits"] = [asdict(e) for e in self.edits]
        return d

    def format(self) -> str:
        where = self.file or (self.model or "<config>")
        if self.line is not None:
            where += f":{self.line}:{self.column or 1}"
        text = f"{where}: {self.severity}: {self.message} [{self.rule}]"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


# -- Triton's wording of a parse error -----------------------------------------------------------------------
# Triton parses config.pbtxt with protobuf's C++ text-format parser; its load error says only "failed to read text
# proto from <file>", and the parser's reason goes to the server log as
#   Error parsing text-format inference.ModelConfig: 2:15: Message type "inference.ModelConfig" has no field ...
# The studio parses with protobuf's Python parser, which words several errors differently and places some at
# another token: triton_parse_message rewrites them to the C++ wording and position (recorded from Triton 2.51 in
# tests/validate/oracle/triton-2.51.json, "log").
_TOKEN = re.compile(r"""\s*(?:#.*)?(?P<tok>"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|[\w.+-]+|\S)?""")


def _token_at(line: str, col0: int) -> tuple[int, str] | None:
    """(0-based column, text) of the token at or after col0 on this line; None when the line ends first."""
    m = _TOKEN.match(line, col0)
    if m is None or m.group("tok") is None:
        return None
    return m.start("tok"), m.group("tok")


def _after_word(line: str, word: str, before: int | None = None) -> int | None:
    """0-based column just past the last whole `word` on the line that starts before `before` (all of it: None)."""
    hits = [m for m in re.finditer(rf"(?<![\w]){re.escape(word)}(?![\w])", line) if before is None or m.start() < before]
    return hits[-1].end() if hits else None


def triton_parse_message(e) -> str:
    """Triton's log line for a ParseError (`Error parsing text-format inference.ModelConfig: L:C: reason`); the
    Python parser's message where the C++ wording is not known."""
    msg, src = e.message, (e.source_line or "").rstrip("\r")
    line, col = e.line, e.column
    here = (col or 1) - 1

    def next_token_col(col0: int | None) -> int:
        if col0 is None:
            return col
        t = _token_at(src, col0)
        return t[0] + 1 if t else col

    text = None
    if m := re.fullmatch(r'Message type "([\w.]+)" has no field named "(\w+)"\.', msg):
        col = next_token_col(_after_word(src, m.group(2), here + len(m.group(2)) + 1))
        text = msg
    elif m := re.fullmatch(r'Enum type "[\w.]+" has no value named (\S+?)\.?', msg):
        value = m.group(1)
        field_m = re.search(r"(\w+)\s*:?\s*\[?\s*$", src[:here])
        if field_m:
            col = next_token_col(here + len(value))
            text = f'Unknown enumeration value of "{value}" for field "{field_m.group(1)}".'
    elif m := re.fullmatch(r"Couldn't parse (?:unsigned )?integer: (.*)", msg):
        text = f"Expected integer, got: {m.group(1)}"
    elif m := re.fullmatch(r"Couldn't parse (?:float|double): (.*)", msg):
        text = f"Expected double, got: {m.group(1)}"
    elif m := re.fullmatch(r'Message type "[\w.]+" should not have multiple "(\w+)" fields\.', msg):
        col = next_token_col(_after_word(src, m.group(1), here))
        text = f'Non-repeated field "{m.group(1)}" is specified multiple times.'
    elif m := re.fullmatch(r'Expected "(.+?)"\.', msg):
        t = _token_at(src, here)
        found = t[1] if t else ""
        text = f'Expected "{m.group(1)}", found "{found}".'
    elif m := re.fullmatch(r"Expected identifier or number, got (.+?)\.?", msg):
        text = f"Expected identifier, got: {m.group(1)}"
    if text is None:
        return msg
    return f"Error parsing text-format inference.ModelConfig: {line}:{col}: {text}"


def worst(findings: list[Finding]) -> str | None:
    for sev in SEVERITIES:
        if any(f.severity == sev for f in findings):
            return sev
    return None
