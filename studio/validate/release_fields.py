"""Which ModelConfig fields (and enum values) each Triton release knows, from model_config.proto's history.

The table (resources/validate/triton-fields.json) maps "Message.field" / "Enum.VALUE" to the first Triton release
whose model_config.proto has it. A config validated for an older release (`validate --triton-version 2.40`,
Options.triton_version) that sets a newer field gets Triton's own parse error for it: that release's protobuf
parser does not know the field.

Regenerate from a clone of github.com/triton-inference-server/common (release branches rYY.MM):

    .venv/bin/python -m studio.validate.release_fields /path/to/common/.git > resources/validate/triton-fields.json
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import lru_cache

from studio.resources import resource

TABLE = resource("validate/triton-fields.json")
_FIELD = re.compile(r"^\s*(?:repeated\s+|optional\s+)?(?:map\s*<[^>]+>|[\w.]+)\s+(\w+)\s*=\s*\d+")
_ENUM_VALUE = re.compile(r"^\s*(\w+)\s*=\s*-?\d+\s*[;\[]")


def release_of_branch(branch: str) -> str:
    """rYY.MM -> Triton's server version (23.01 is 2.30, one release a month)."""
    yy, mm = (int(x) for x in re.findall(r"\d+", branch)[:2])
    return f"2.{30 + (yy - 23) * 12 + mm - 1}"


def names_in_proto(text: str) -> set[str]:
    """'inference.ModelConfig.model_metrics', 'inference.DataType.TYPE_BF16' ... for one model_config.proto."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"([{;])", r"\1\n", text).replace("}", "\n}\n")  # one statement or brace a line
    out: set[str] = set()
    stack: list[tuple[str, str]] = []  # (kind, name); kind: message | enum | oneof | other
    pending: tuple[str, str] | None = None  # "message X" whose "{" is on a later line (Triton's style)
    for raw in text.splitlines():
        line = raw.strip()
        m = re.match(r"^(message|enum|oneof)\s+(\w+)\s*(\{)?", line)
        if m:
            if m.group(3) is None:
                pending = (m.group(1), m.group(2))
                continue
            stack.append((m.group(1), m.group(2)))
            if line.endswith("}") and line.count("{") == line.count("}"):  # message All {}
                stack.pop()
            continue
        if pending is not None and line.startswith("{"):
            stack.append(pending)
            pending = None
            line = line[1:].strip()
            if not line:
                continue
        scope = [n for k, n in stack if k in ("message", "enum")]
        if stack and stack[-1][0] == "enum":
            v = _ENUM_VALUE.match(line)
            if v:
                out.add("inference." + ".".join(scope) + "." + v.group(1))
        elif stack:
            f = _FIELD.match(line)
            if f:
                out.add("inference." + ".".join(scope) + "." + f.group(1))
        for _ in range(line.count("}") - line.count("{")):
            if stack:
                stack.pop()
    return out


def build(git_dir: str) -> dict:
    refs = subprocess.run(["git", "--git-dir", git_dir, "for-each-ref", "--format=%(refname:short)", "refs/heads"],
                          capture_output=True, text=True, check=True).stdout.split()
    # from 23.01 (Triton 2.30): the months-since mapping holds from there on
    branches = sorted((b for b in refs if re.fullmatch(r"r(2[3-9]|[3-9]\d)\.\d\d", b)), key=lambda b: tuple(map(int, b[1:].split("."))))
    first: dict[str, str] = {}
    releases = []
    for b in branches:
        show = subprocess.run(["git", "--git-dir", git_dir, "show", f"{b}:protobuf/model_config.proto"],
                              capture_output=True, text=True)
        if show.returncode != 0:
            continue
        rel = release_of_branch(b)
        releases.append(rel)
        for name in names_in_proto(show.stdout):
            first.setdefault(name, rel)
    oldest = releases[0]
    return {
        "source": "github.com/triton-inference-server/common protobuf/model_config.proto, release branches "
                  f"{branches[0]}..{branches[-1]} (rYY.MM = Triton 2.(30 + months since 23.01))",
        "releases": releases,
        "added": {k: v for k, v in sorted(first.items()) if v != oldest},
        "oldest": oldest,
    }


@lru_cache(maxsize=1)
def table() -> dict:
    return json.loads(TABLE.read_text())


def _key(v: str) -> tuple[int, ...]:
    parts = [int(x) for x in re.findall(r"\d+", v)[:2]] or [0]
    if parts[0] >= 20:
        parts = [2, 30 + (parts[0] - 23) * 12 + (parts[1] if len(parts) > 1 else 1) - 1]
    return tuple(parts + [0] * (2 - len(parts)))


def added_in(full_name: str) -> str | None:
    """The release that added this field or enum value; None: known to every release in the table."""
    return table()["added"].get(full_name)


def unknown_to(version: str, full_name: str) -> str | None:
    """The release that added full_name when `version` predates it (the field is unknown there), else None."""
    rel = added_in(full_name)
    if rel is None or _key(version) >= _key(rel):
        return None
    return rel


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m studio.validate.release_fields GIT_DIR_OF_triton-inference-server/common", file=sys.stderr)
        return 2
    print(json.dumps(build(argv[1]), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
