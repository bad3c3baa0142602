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
        return cls("error", "syntax", e.message, None, e.hint, file=file or e.filename, line=e.line, column=e.column,
                   model=model, edits=edits)

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


def worst(findings: list[Finding]) -> str | None:
    for sev in SEVERITIES:
        if any(f.severity == sev for f in findings):
            return sev
    return None
