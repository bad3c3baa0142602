"""Stale backends folders without an owner pid in their name (made by studios before issue 14): removed when
older than 10 minutes and named by no running process; kept otherwise."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from studio.runtime.localhost import BACKENDS_PREFIX, clean_stale_backends_dirs


def test_unnamed_folders_go_only_when_old_and_unreferenced(tmp_path):
    old = tmp_path / f"{BACKENDS_PREFIX}abcd1234"
    used = tmp_path / f"{BACKENDS_PREFIX}efgh5678"
    young = tmp_path / f"{BACKENDS_PREFIX}ijkl9012"
    for d in (old, used, young):
        (d / "python").mkdir(parents=True)
    hour_ago = time.time() - 3600
    for d in (old, used):
        os.utime(d, (hour_ago, hour_ago))
    # a process that names the folder on its command line, as a server's --backend-directory does
    # (not `sh -c "sleep 60" PATH`: dash execs sleep in place and PATH leaves the command line, a race)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(used)])
    try:
        # Popen returns once exec has closed the CLOEXEC pipe, but the kernel sets the new command line a
        # moment later (create_elf_tables): until then /proc/<pid>/cmdline reads empty (failed in CI so)
        deadline = time.monotonic() + 10
        while os.fsencode(str(used)) not in Path(f"/proc/{holder.pid}/cmdline").read_bytes():
            assert time.monotonic() < deadline, "the holder's command line never showed up"
            time.sleep(0.01)
        removed = clean_stale_backends_dirs(str(tmp_path))
    finally:
        holder.kill()
        holder.wait()
    assert removed == [old] and not old.exists()
    assert used.is_dir() and young.is_dir()


def test_named_folder_of_a_dead_pid_goes_and_of_a_live_one_stays(tmp_path):
    dead = subprocess.Popen(["/bin/true"])
    dead.wait()
    gone = tmp_path / f"{BACKENDS_PREFIX}{dead.pid}-x1"
    mine = tmp_path / f"{BACKENDS_PREFIX}{os.getpid()}-x2"
    for d in (gone, mine):
        d.mkdir()
    assert clean_stale_backends_dirs(str(tmp_path)) == [gone]
    assert mine.is_dir()
