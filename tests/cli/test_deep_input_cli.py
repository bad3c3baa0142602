"""Deep and huge input to the real CLI (issue 14): `validate`, `fmt`, `get` end in a short error at file:line:col
and exit 1, never a RecursionError or traceback, and do not dump a 100,000-character source line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from studio.config.syntax import MAX_TOKENS
from tests.conftest import scaled_s

EXE = [sys.executable, "-m", "studio.cli"]

CASES = {
    "braces": ("{" * 100_000, "1:1", "Expected identifier or number, got {."),
    "nested": ("input {" * 100_000, "1:8", 'Message type "inference.ModelInput" has no field named "input".'),
    "tokens": ("input { dims: [" + "1," * 4_000_000 + "1] }", f"1:{16 + MAX_TOKENS - 5}",
               f"The text has more than {MAX_TOKENS:,} tokens."),
}


@pytest.mark.parametrize("command", [["fmt"], ["get", "{file}", "max_batch_size"], ["validate"]],
                         ids=["fmt", "get", "validate"])
@pytest.mark.parametrize("case", CASES)
def test_deep_or_huge_config_is_one_error_at_file_line_col(tmp_path, command, case):
    text, where, message = CASES[case]
    f = tmp_path / "m" / "config.pbtxt"
    f.parent.mkdir()
    f.write_text(text)
    args = [str(f) if a == "{file}" else a for a in command]
    if args == ["fmt"] or args == ["validate"]:
        args.append(str(f))
    r = subprocess.run([*EXE, *args], capture_output=True, text=True, timeout=scaled_s(120))
    assert "Traceback" not in r.stderr and "RecursionError" not in r.stderr + r.stdout, r.stderr[-2000:]
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    assert f"{f}:{where}" in r.stdout + r.stderr, (r.stdout + r.stderr)[:2000]
    if command != ["validate"]:  # validate words syntax errors as Triton does
        assert message in r.stdout + r.stderr
    assert len(r.stdout) + len(r.stderr) < 2000, "the error must show a window of the line, not all of it"
    assert f.read_text() == text, "the file must be left as it was"
