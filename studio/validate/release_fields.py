"""Which ModelConfig fields (and enum values) each Triton release knows, from model_config.proto's history.

The table (resources/validate/triton-fields.json) maps "Message.field" / "Enum.VALUE" to the first Triton release
whose model_config.proto has it. A config validated for an older release (`validate --triton-version 2.40`,
Options.triton_version) that sets a newer field gets Triton's own parse error for it: that release's protobuf
parser does not know the field.

Regenerate from a clone of github.com/triton-inference-server/common (release branches rYY.MM):

    .venv/bin/python -m studio.validate.release_fields COMMON_GIT_DIR CORE_GIT_DIR > resources/validate/triton-fields.json

The core's history (src/model_config_utils.cc) adds "rules_added": its message literals by the release that added
them, so a check Triton gained later (response cache with sequence batching: 2.38) is not reported for older ones.
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


def _branches(git_dir: str) -> list[str]:
    refs = subprocess.run(["git", "--git-dir", git_dir, "for-each-ref", "--format=%(refname:short)", "refs/heads"],
                          capture_output=True, text=True, check=True).stdout.split()
    # from 23.01 (Triton 2.30): the months-since mapping holds from there on
    return sorted((b for b in refs if re.fullmatch(r"r(2[3-9]|[3-9]\d)\.\d\d", b)),
                  key=lambda b: tuple(map(int, b[1:].split("."))))


def rule_messages(source: str) -> set[str]:
    """The string literals of model_config_utils.cc that read as messages (a space, 12+ characters)."""
    return {m for m in re.findall(r'"((?:[^"\\\n]|\\.)*)"', source) if " " in m.strip() and len(m.strip()) >= 12}


def build_rules(core_git_dir: str) -> dict[str, str]:
    """Message fragments of Triton core's src/model_config_utils.cc (its config checks) -> the release that added
    them, for fragments newer than 2.30."""
    first: dict[str, str] = {}
    oldest = None
    for b in _branches(core_git_dir):
        show = subprocess.run(["git", "--git-dir", core_git_dir, "show", f"{b}:src/model_config_utils.cc"],
                              capture_output=True, text=True)
        if show.returncode != 0:
            continue
        rel = release_of_branch(b)
        oldest = oldest or rel
        for msg in rule_messages(show.stdout):
            first.setdefault(msg, rel)
    return {k: v for k, v in sorted(first.items()) if v != oldest}


def build(git_dir: str, core_git_dir: str | None = None) -> dict:
    branches = _branches(git_dir)
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
    out = {
        "source": "github.com/triton-inference-server/common protobuf/model_config.proto, release branches "
                  f"{branches[0]}..{branches[-1]} (rYY.MM = Triton 2.(30 + months since 23.01))",
        "releases": releases,
        "added": {k: v for k, v in sorted(first.items()) if v != oldest},
        "oldest": oldest,
    }
    if core_git_dir:
        out["rules_source"] = ("github.com/triton-inference-server/core src/model_config_utils.cc, the same release "
                               "branches: its message literals, by the release that added them")
        out["rules_added"] = build_rules(core_git_dir)
    return out


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


def rule_added_in(fragment: str) -> str | None:
    """The release whose model_config_utils.cc first has a message containing `fragment` (None: 2.30 or older)."""
    hits = [rel for msg, rel in table().get("rules_added", {}).items() if fragment in msg]
    return min(hits, key=_key) if hits else None


def rule_known_to(version: str, fragment: str) -> bool:
    """Whether Triton `version` has the config check whose message contains `fragment`."""
    rel = rule_added_in(fragment)
    return rel is None or _key(version) >= _key(rel)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print("usage: python -m studio.validate.release_fields COMMON_GIT_DIR [CORE_GIT_DIR]  "
              "(clones of github.com/triton-inference-server/common and .../core)", file=sys.stderr)
        return 2
    print(json.dumps(build(argv[1], argv[2] if len(argv) == 3 else None), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
