"""The dashboard's scripted mode: STEPS.json (a timeline of config and load changes) and OUT.json (the record).

STEPS.json is a JSON list of steps, each with `at_s` (seconds since load started) and one action:
    {"at_s": 10, "set": {"dynamic_batching.max_queue_delay_microseconds": 2000}}
    {"at_s": 0,  "remove": "dynamic_batching"}                    (batching off; a list of paths works too)
    {"at_s": 20, "load": {"concurrency": 64}}                      (or {"rate": 500, "poisson": true}, {"pause": true},
                                                                    {"resume": true})
A bad file raises ScriptError whose message starts with `file:line:col:` (the step's position).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

LOAD_KEYS = {"concurrency": int, "rate": (int, float), "poisson": bool, "pause": bool, "resume": bool}


class ScriptError(ValueError):
    pass


@dataclass
class ScriptStep:
    at_s: float
    kind: str  # set | remove | load
    payload: object
    line: int = 0
    column: int = 0

    def edits(self) -> dict:
        """Config edits of a set/remove step (path -> value; None removes)."""
        if self.kind == "set":
            return dict(self.payload)
        if self.kind == "remove":
            return {p: None for p in self.payload}
        return {}

    def describe(self) -> str:
        if self.kind == "load":
            return "load " + ", ".join(f"{k}={v}" for k, v in self.payload.items())
        if self.kind == "remove":
            return "remove " + ", ".join(self.payload)
        return "set " + ", ".join(f"{k}={v}" for k, v in self.payload.items())


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _element_positions(text: str) -> list[int]:
    """Start offsets of the top-level array's elements (the text is known to be a valid JSON array)."""
    dec = json.JSONDecoder()
    i = text.index("[") + 1
    out = []
    ws = " \t\r\n"
    while True:
        while i < len(text) and text[i] in ws:
            i += 1
        if i >= len(text) or text[i] == "]":
            return out
        out.append(i)
        _, i = dec.raw_decode(text, i)
        while i < len(text) and text[i] in ws:
            i += 1
        if i < len(text) and text[i] == ",":
            i += 1


def _check_path(path: str) -> None:
    from studio.config.document import parse_path
    from studio.config.schema import find_spec

    parse_path(path)
    find_spec(path)


def parse_script(text: str, filename: str = "<script>") -> list[ScriptStep]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScriptError(f"{filename}:{e.lineno}:{e.colno}: {e.msg}") from None
    if not isinstance(data, list):
        raise ScriptError(f"{filename}:1:1: expected a list of steps: [{{\"at_s\": 0, \"set\": {{...}}}}, ...]")
    positions = _element_positions(text)
    steps = []
    for k, item in enumerate(data):
        line, col = _line_col(text, positions[k]) if k < len(positions) else (1, 1)

        def bad(msg, line=line, col=col, k=k):
            return ScriptError(f"{filename}:{line}:{col}: step {k + 1}: {msg}")

        if not isinstance(item, dict):
            raise bad("expected an object like {\"at_s\": 10, \"set\": {...}}")
        at = item.get("at_s")
        if isinstance(at, bool) or not isinstance(at, (int, float)) or at < 0:
            raise bad("\"at_s\" must be a number of seconds >= 0")
        actions = [a for a in ("set", "remove", "load") if a in item]
        unknown = sorted(set(item) - {"at_s", "set", "remove", "load", "comment"})
        if unknown:
            raise bad(f"unknown key {unknown[0]!r} (expected at_s and one of set, remove, load)")
        if len(actions) != 1:
            raise bad("needs exactly one of \"set\", \"remove\", \"load\"")
        kind = actions[0]
        payload = item[kind]
        if kind == "set":
            if not isinstance(payload, dict) or not payload:
                raise bad("\"set\" takes an object of field path -> value")
            for path in payload:
                try:
                    _check_path(path)
                except Exception as e:  # noqa: BLE001 - unknown field, bad path syntax
                    raise bad(f"unknown field path {path!r}: {e}") from None
        elif kind == "remove":
            payload = [payload] if isinstance(payload, str) else payload
            if not isinstance(payload, list) or not payload or not all(isinstance(p, str) for p in payload):
                raise bad("\"remove\" takes a field path or a list of them")
            for path in payload:
                try:
                    _check_path(path)
                except Exception as e:  # noqa: BLE001
                    raise bad(f"unknown field path {path!r}: {e}") from None
        else:
            if not isinstance(payload, dict) or not payload:
                raise bad("\"load\" takes an object, e.g. {\"concurrency\": 64} or {\"rate\": 500}")
            for key, value in payload.items():
                if key not in LOAD_KEYS:
                    raise bad(f"unknown load setting {key!r} (one of {', '.join(LOAD_KEYS)})")
                want = LOAD_KEYS[key]
                if (isinstance(value, bool) and want is not bool) or not isinstance(value, want):
                    raise bad(f"load {key!r} must be {'true/false' if want is bool else 'a number'}")
                if key in ("concurrency", "rate") and value <= 0:
                    raise bad(f"load {key!r} must be > 0")
            if "concurrency" in payload and "rate" in payload:
                raise bad("load takes either concurrency or rate, not both")
        steps.append(ScriptStep(float(at), kind, payload, line, col))
    return sorted(steps, key=lambda s: s.at_s)


def load_script(path: str | Path) -> list[ScriptStep]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ScriptError(f"{path}: cannot read: {e.strerror or e}") from None
    return parse_script(text, str(path))


@dataclass
class Recording:
    """What OUT.json holds: samples, changes, the longest UI stall, and the context."""

    model: str
    server: str
    samples: list[dict] = field(default_factory=list)
    changes: list[dict] = field(default_factory=list)
    ui_max_stall_ms: float = 0.0
    load: dict = field(default_factory=dict)
    errors_total: int = 0
    perf_analyzer: str | None = None

    def to_json(self) -> dict:
        return {"model": self.model, "server": self.server, "load": self.load, "samples": self.samples,
                "changes": self.changes, "ui_max_stall_ms": round(self.ui_max_stall_ms, 1),
                "errors_total": self.errors_total, "perf_analyzer": self.perf_analyzer}

    def write(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1), encoding="utf-8")
