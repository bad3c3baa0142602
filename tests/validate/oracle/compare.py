"""Compare the studio's validator with a recorded Triton verdict on every oracle case (no Triton needed).

    .venv/bin/python -m tests.validate.oracle.compare            # the numbers and every disagreement
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from studio.repository import Repository
from studio.validate import Options, validate_model
from tests.validate.oracle.cases import Case, generate, write_repository

HERE = Path(__file__).parent
RECORDED = HERE / "triton-2.51.json"
# Verdicts that depend on the machine Triton ran on (a CPU-only server), not on the config: our finding for them
# is informational (a GPU server takes the model), so any finding with these rules counts as the refusal.
# The same for what the server has installed: an unknown backend or runtime library is a warning (only the
# server knows), and this server has only the python backend.
MACHINE_RULES = {"instance-group.no-gpu-here", "instance-group.gpu-absent-here", "backend.unknown",
                 "backend.runtime-unknown", "backend.runtime-path"}


@dataclass
class Row:
    case: Case
    triton: str  # loaded | refused
    triton_message: str
    ours: str  # loaded | refused
    errors: list[str]
    message_match: bool = False


@dataclass
class Result:
    rows: list[Row] = field(default_factory=list)

    def _n(self, t, o):
        return [r for r in self.rows if r.triton == t and r.ours == o]

    @property
    def rejections_agreed(self):
        return self._n("refused", "refused")

    @property
    def missed(self):
        return self._n("refused", "loaded")

    @property
    def acceptances_agreed(self):
        return self._n("loaded", "loaded")

    @property
    def false_errors(self):
        return self._n("loaded", "refused")

    @property
    def message_share(self) -> float:
        agreed = self.rejections_agreed
        return sum(r.message_match for r in agreed) / len(agreed) if agreed else 1.0

    def summary(self) -> str:
        ra, mi, aa, fe = self.rejections_agreed, self.missed, self.acceptances_agreed, self.false_errors
        lines = [
            f"{len(self.rows)} cases: rejections agreed {len(ra)} / missed {len(mi)} (of {len(ra) + len(mi)}); "
            f"acceptances agreed {len(aa)} / false errors {len(fe)} (of {len(aa) + len(fe)}); "
            f"Triton's message in {sum(r.message_match for r in ra)} of {len(ra)} agreed rejections "
            f"({100 * self.message_share:.0f}%)",
            "missed by category: " + ", ".join(f"{k} {v}" for k, v in Counter(r.case.category for r in mi).most_common()),
        ]
        return "\n".join(lines)

    def details(self) -> str:
        out = []
        for title, rows in (("FALSE ERRORS", self.false_errors), ("MISSED", self.missed),
                            ("AGREED, OTHER MESSAGE", [r for r in self.rejections_agreed if not r.message_match])):
            out.append(f"== {title} ({len(rows)})")
            for r in rows:
                out.append(f"  {r.case.id} [{r.case.category}] triton: {r.triton_message[:200]!r}")
                for e in r.errors[:3]:
                    out.append(f"      ours: {e[:200]}")
        return "\n".join(out)


def core_message(text: str) -> str:
    """Triton's reason without the wrappers instance creation adds around it."""
    text = text.replace('\\"', '"')  # the log escapes quotes inside a message
    text = re.sub(r"^ERROR: Failed to create instance: ", "", text)
    text = re.sub(r"^failed to load model '[^']*': ", "", text)
    text = re.sub(r"^\[request id: <id_unknown>\] ", "", text)
    return re.sub(r", searched: .*$", "", text)  # the server's own backend folders


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(".").lower()


def triton_verdict(rec: dict) -> str:
    msg = rec["message"]
    # a platform whose backend this server lacks: Triton stopped before its IO and backend checks, so the
    # verdict on the rest of the config is unknown (the case is left out)
    if rec["verdict"] == "refused" and re.search(r"unable to find backend library for backend '(onnxruntime|tensorrt|pytorch|tensorflow)'", msg):
        return "undecided"
    return rec["verdict"]


def triton_message(rec: dict) -> str:
    """Triton's reason: the load error, or for a config that does not parse, protobuf's line from the server log
    (the load error says only "failed to read text proto from ...")."""
    for line in rec.get("log", []):
        if line.startswith("Error parsing text-format "):
            return line
    return rec["message"]


def compare(recorded: dict | None = None, options: Options | None = None) -> Result:
    recorded = recorded or json.loads(RECORDED.read_text())
    cases = [c for c in generate() if c.id in recorded["cases"]]
    result = Result()
    with tempfile.TemporaryDirectory(prefix="oracle-") as tmp:
        root = Path(tmp)
        write_repository(cases, root)
        repo = Repository(root)
        repo.scan()
        for case in cases:
            rec = recorded["cases"][case.id]
            if triton_verdict(rec) == "undecided":
                continue
            findings = validate_model(repo, case.name, options=options)
            errors = [f.message for f in findings if f.severity == "error"]
            machine = [f.message for f in findings if f.rule in MACHINE_RULES]
            ours = "refused" if errors or machine else "loaded"
            row = Row(case, triton_verdict(rec), triton_message(rec), ours, errors + machine)
            want = _norm(core_message(triton_message(rec)))
            if want.startswith("still loading after"):
                # Triton gives no message (the load never ends: the python backend's stub waits for a model file
                # that is not there): ours matches when it says so
                want = "the model stays loading"
            elif want.startswith("the server crashed"):
                want = "crashes (segmentation fault)"
            # ours contains Triton's, or Triton's starts with ours (Triton appends notes and repeats per instance)
            row.message_match = bool(want) and any(
                want in _norm(e).replace(f"{root}/", "") or (len(_norm(e)) >= 30 and want.startswith(_norm(e))) for e in row.errors)
            result.rows.append(row)
    return result


def main() -> int:
    r = compare()
    print(r.details())
    print(r.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
