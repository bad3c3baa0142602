"""Hostile input to every subcommand (issue 14): the real CLI as a subprocess ends in one clear line and the right
exit code (1 failure, 2 usage, 130 Ctrl-C), never a traceback, and leaves the user's file as it was."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import CORPUS, scaled_s

EXE = [sys.executable, "-m", "studio.cli"]
SAMPLE = CORPUS / "real-configs" / "server" / "docs" / "examples" / "model_repository" / "densenet_onnx" / "config.pbtxt"


def run(*args, timeout: float = 60):
    r = subprocess.run([*EXE, *map(os.fsdecode, args)], capture_output=True, timeout=scaled_s(timeout))
    r.out = r.stdout.decode("utf-8", "replace")  # type: ignore[attr-defined]
    r.err = r.stderr.decode("utf-8", "replace")  # type: ignore[attr-defined]
    return r


def no_traceback(r) -> None:
    assert "Traceback" not in r.err, r.err
    assert r.err.strip(), "a failure says why"


# -- what a config path can be ----------------------------------------------------------------------------------
def _missing(tmp: Path) -> Path:
    return tmp / "nope" / "config.pbtxt"


def _folder(tmp: Path) -> Path:
    (tmp / "dir.pbtxt").mkdir()
    return tmp / "dir.pbtxt"


def _fifo(tmp: Path) -> Path:
    os.mkfifo(tmp / "fifo.pbtxt")
    return tmp / "fifo.pbtxt"


def _binary(tmp: Path) -> Path:
    (tmp / "bin.pbtxt").write_bytes(bytes(range(256)) * 4)
    return tmp / "bin.pbtxt"


def _latin1(tmp: Path) -> Path:
    (tmp / "latin1.pbtxt").write_bytes('name: "caf\xe9"\n'.encode("latin-1"))
    return tmp / "latin1.pbtxt"


def _huge(tmp: Path) -> Path:
    p = tmp / "huge.pbtxt"
    with open(p, "wb") as f:
        f.truncate(64 * 1024 * 1024)  # sparse: costs no disk
    return p


def _device(tmp: Path) -> Path:
    return Path("/dev/zero")


BAD_FILES = {
    "missing": (_missing, "No such file"),
    "folder": (_folder, "Is a directory"),
    "fifo": (_fifo, "not a regular file"),
    "binary": (_binary, "not UTF-8"),
    "latin1": (_latin1, "not UTF-8"),
    "huge": (_huge, "MiB are refused"),
    "device": (_device, "not a regular file"),
}


@pytest.mark.parametrize("kind", list(BAD_FILES))
@pytest.mark.parametrize("command", ["get", "set", "fmt", "diff"])
def test_bad_config_paths_end_in_one_line(tmp_path, kind, command):
    make, expect = BAD_FILES[kind]
    p = make(tmp_path)
    args = {"get": ["get", p, "name"], "set": ["set", p, "max_batch_size", "4"], "fmt": ["fmt", p],
            "diff": ["diff", SAMPLE, p]}[command]
    r = run(*args, timeout=30)
    no_traceback(r)
    assert r.returncode == 1
    if kind == "folder" and command == "fmt":  # fmt searches a folder for config.pbtxt files
        assert r.err == "fmt: no config.pbtxt found\n"
        return
    if kind == "folder" and command == "diff":  # diff reads a model folder's config.pbtxt
        expect, p = "No such file", p / "config.pbtxt"
    assert expect in r.err and r.err.splitlines()[0].startswith(str(p))


def test_non_utf8_file_names_print_escaped(tmp_path):
    """A folder name that is not UTF-8: fmt finds the config in it, rewrites it, and prints the name escaped."""
    d = os.path.join(os.fsencode(tmp_path), b"mod\xffel")
    os.mkdir(d)
    cfg = os.path.join(d, b"config.pbtxt")
    with open(cfg, "wb") as f:
        f.write(b"name:'m'\n")
    r = run("fmt", tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.err
    assert "mod\\udcffel" in r.out or "mod\\xffel" in r.out
    r = run("get", cfg, "name")
    assert r.returncode == 0 and r.out == '"m"\n'


# -- values set refuses -----------------------------------------------------------------------------------------
BAD_VALUES = {
    "negative max_batch_size": ("max_batch_size", "-1", "must be non-negative"),
    "control character in name": ("name", "den\x01senet", "control character"),
    "newline in name": ("name", "a\nb", "control character"),
    "int32 overflow": ("max_batch_size", "99999999999999999999", "out of range"),
    "unknown enum": ("input[0].data_type", "TYPE_FLOAT", "did you mean TYPE_FP32?"),
    "string for an int": ("max_batch_size", "eight", "bad value"),
    "bad field path": ("max_batch_size[", "1", "bad field path"),
    "zero dims": ("input[0].dims", "[0]", "bad value"),
}


@pytest.mark.parametrize("case", list(BAD_VALUES))
def test_set_refuses_bad_values_and_leaves_the_file(tmp_path, case):
    field, value, expect = BAD_VALUES[case]
    p = tmp_path / "config.pbtxt"
    shutil.copyfile(SAMPLE, p)
    before = p.read_bytes()
    r = run("set", p, field, value)
    no_traceback(r)
    assert r.returncode == 2 and expect in r.err
    assert len(r.err.strip().splitlines()) == 1
    assert p.read_bytes() == before


def test_set_force_writes_a_refused_value(tmp_path):
    p = tmp_path / "config.pbtxt"
    shutil.copyfile(SAMPLE, p)
    r = run("set", "--force", p, "max_batch_size", "-1")
    assert r.returncode == 0, r.err
    assert "max_batch_size : -1" in p.read_text()


# -- the file system refuses ------------------------------------------------------------------------------------
def _chattr(flag: str, path: Path) -> bool:
    try:
        return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0
    except OSError:
        return False


@pytest.mark.parametrize("command", ["set", "fmt"])
def test_read_only_file_exit_1_then_force(tmp_path, command):
    p = tmp_path / "config.pbtxt"
    p.write_text("name:'m'\nmax_batch_size: 8\n")
    p.chmod(0o444)
    args = ["set", p, "max_batch_size", "4"] if command == "set" else ["fmt", p]
    r = run(*args)
    no_traceback(r)
    assert r.returncode == 1
    assert r.err.strip() == f"{p}: not saved: the file is read-only (mode 0444); force to overwrite"
    assert p.read_text() == "name:'m'\nmax_batch_size: 8\n"
    r = run(args[0], "--force", *args[1:])
    assert r.returncode == 0, r.err
    assert p.read_text() != "name:'m'\nmax_batch_size: 8\n" and p.stat().st_mode & 0o777 == 0o444


@pytest.mark.parametrize("command", ["set", "fmt"])
def test_unwritable_folder_exit_1_one_line(tmp_path, command):
    d = tmp_path / "m"
    d.mkdir()
    p = d / "config.pbtxt"
    p.write_text("name:'m'\nmax_batch_size: 8\n")
    assert _chattr("+i", d), "chattr +i is needed to make a folder refuse root (e2fsprogs)"
    try:
        r = run(*(["set", p, "max_batch_size", "4"] if command == "set" else ["fmt", p]))
    finally:
        _chattr("-i", d)
    no_traceback(r)
    assert r.returncode == 1
    assert r.err.strip() == f"{p}: cannot create a file in {d}: Operation not permitted"
    assert p.read_text() == "name:'m'\nmax_batch_size: 8\n"


def test_symlinked_config_is_written_through_by_set(tmp_path):
    real = tmp_path / "shared.pbtxt"
    shutil.copyfile(SAMPLE, real)
    link = tmp_path / "config.pbtxt"
    link.symlink_to(real)
    r = run("set", link, "max_batch_size", "4")
    assert r.returncode == 0, r.err
    assert link.is_symlink() and "max_batch_size : 4" in real.read_text()


# -- bad arguments to every command -----------------------------------------------------------------------------
URL = "grpc://127.0.0.1:1"
BAD_ARGS = {
    "bench concurrency 0": ["bench", "--url", URL, "--model", "m", "--concurrency", "0"],
    "bench concurrency -1": ["bench", "--url", URL, "--model", "m", "--concurrency", "-1"],
    "bench concurrency 100000": ["bench", "--url", URL, "--model", "m", "--concurrency", "100000"],
    "bench duration 0": ["bench", "--url", URL, "--model", "m", "--duration", "0"],
    "bench duration -5": ["bench", "--url", URL, "--model", "m", "--duration", "-5"],
    "bench duration nan": ["bench", "--url", URL, "--model", "m", "--duration", "nan"],
    "bench rate -1": ["bench", "--url", URL, "--model", "m", "--rate", "-1"],
    "bench rate 0": ["bench", "--url", URL, "--model", "m", "--rate", "0"],
    "bench rate inf": ["bench", "--url", URL, "--model", "m", "--rate", "inf"],
    "bench requests 0": ["bench", "--url", URL, "--model", "m", "--requests", "0"],
    "bench shape wrong": ["bench", "--url", URL, "--model", "m", "--shape", "INPUT0:a,b"],
    "bench shape no dims": ["bench", "--url", URL, "--model", "m", "--shape", "WRONG"],
    "bench input data missing": ["bench", "--url", URL, "--model", "m", "--input-data", "/nonexistent/data.json"],
    "bench url port": ["bench", "--url", "grpc://localhost:99999", "--model", "m"],
    "bench url scheme": ["bench", "--url", "ftp://localhost:8001", "--model", "m"],
    "tune p99 0": ["tune", "--url", URL, "--model", "m", "--p99-ms", "0"],
    "tune p99 nan": ["tune", "--url", URL, "--model", "m", "--p99-ms", "nan"],
    "tune budget -1": ["tune", "--url", URL, "--model", "m", "--p99-ms", "5", "--budget-s", "-1"],
    "serve port 70000": ["serve", "/tmp", "--http-port", "70000"],
    "serve port -1": ["serve", "/tmp", "--grpc-port", "-1"],
    "serve timeout nan": ["serve", "/tmp", "--timeout", "nan"],
    "status bad url": ["status", "--models", "--url", "http://"],
    "deploy timeout -1": ["deploy", "/tmp", "--model", "m", "--timeout", "-1"],
    "deploy no repo": ["deploy", "/nonexistent", "--model", "m"],
    "unknown command option": ["get", "--frobnicate"],
    "gui missing file": ["/nonexistent/config.pbtxt"],
    "gui bad option": ["--frobnicate"],
}


@pytest.mark.parametrize("case", list(BAD_ARGS))
def test_bad_arguments_exit_2_with_one_clear_line(case):
    r = run(*BAD_ARGS[case], timeout=30)
    no_traceback(r)
    assert r.returncode == 2, (r.returncode, r.err)
    last = r.err.strip().splitlines()[-1]
    assert "error:" in last or last.startswith(("triton-studio:", "deploy:", "status:", "bench:")), last


def test_ctrl_c_ends_in_one_line(tmp_path):
    """Ctrl-C while waiting on a server that never answers: 'interrupted', exit 130, no traceback."""
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)  # accepts connections, never speaks: the client waits
    port = srv.getsockname()[1]
    try:
        proc = subprocess.Popen([*EXE, "bench", "--url", f"grpc://127.0.0.1:{port}", "--model", "m"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(scaled_s(3))
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=scaled_s(30))
    finally:
        srv.close()
    text = err.decode("utf-8", "replace")
    assert "Traceback" not in text, text
    assert proc.returncode in (130, 1), (proc.returncode, text)
    assert text.strip(), "says what happened"
