"""A small YAML writer for the manifests (block style, deterministic; PyYAML is not a dependency of the studio).

Strings that YAML would read as something else (numbers, booleans, null, text with ': ' or ' #', leading
symbols) are written double-quoted with JSON escapes, which YAML reads back unchanged.
"""

from __future__ import annotations

import json
import re

_PLAIN = re.compile(r"^[A-Za-z0-9_/.][A-Za-z0-9_/.:@=+\-]*$")
_SPECIAL = re.compile(
    r"^(?:[-+]?(?:\d[\d_]*)?\.?\d[\d_.eE+\-]*|0x[0-9a-fA-F_]+|0o[0-7_]+|\.inf|\.nan|"
    r"y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~)$"
)


def scalar(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    s = str(v)
    if s and _PLAIN.match(s) and not _SPECIAL.match(s) and not s.endswith(":") and not (s[0].isdigit() and ":" in s):
        return s
    return json.dumps(s, ensure_ascii=False)


def dump(data, comment: str | None = None) -> str:
    """YAML text of nested dicts/lists/scalars; `comment` lines go first as # comments."""
    lines: list[str] = []
    if comment:
        lines += [f"# {c}".rstrip() for c in comment.splitlines()]
    _emit(data, 0, lines)
    return "\n".join(lines) + "\n"


def _emit(v, indent: int, lines: list[str]) -> None:
    pad = " " * indent
    if isinstance(v, dict):
        if not v:
            lines.append(pad + "{}")
        for k, item in v.items():
            key = scalar(str(k))
            if isinstance(item, dict) and item:
                lines.append(f"{pad}{key}:")
                _emit(item, indent + 2, lines)
            elif isinstance(item, list) and item:
                lines.append(f"{pad}{key}:")
                _emit(item, indent + 2, lines)
            else:
                lines.append(f"{pad}{key}: {_inline(item)}")
    elif isinstance(v, list):
        for item in v:
            if isinstance(item, (dict, list)) and item:
                sub: list[str] = []
                _emit(item, indent + 2, sub)
                first = sub[0][indent + 2:]
                lines.append(f"{pad}- {first}")
                lines.extend(sub[1:])
            else:
                lines.append(f"{pad}- {_inline(item)}")
    else:
        lines.append(pad + _inline(v))


def _inline(v) -> str:
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, list):
        return "[]"
    return scalar(v)
