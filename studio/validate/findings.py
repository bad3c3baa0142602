"""What a validation reports: findings with a severity, a rule id, Triton's words, a place and a fix."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Edit:
    """A mechanical fix: one ConfigDocument operation (set, clear, remove, append) at a field path."""

    op: str
    path: str
    value: object = None

    def apply(self, doc) -> None:
        if self.op == "set":
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
