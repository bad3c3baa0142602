"""The setup scripts: the Debian mirror is found in both apt source formats, and setup.sh installs every package
that owns a library PySide6's loaded parts link (the list is derived from ldd, and this test re-derives it)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.conftest import REPO

MIRROR = REPO / "scripts" / "debian-mirror.sh"


def _mirror(etc: Path) -> str:
    out = subprocess.run(["bash", str(MIRROR)], env={"APT_ETC": str(etc), "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_mirror_from_deb822_sources(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\n# a comment\nURIs: http://ftp.example.org/debian/\nSuites: bookworm\nComponents: main\n\n"
        "Types: deb\nURIs: http://security.debian.org/debian-security\nSuites: bookworm-security\n")
    assert _mirror(tmp_path) == "http://ftp.example.org/debian"


def test_mirror_from_one_line_sources_list_with_options(tmp_path):
    (tmp_path / "sources.list").write_text(
        "# deb cdrom:[Debian GNU/Linux 12]/ bookworm main\n"
        "deb http://security.debian.org/debian-security bookworm-security main\n"
        "deb [arch=amd64 signed-by=/x.gpg] http://mirror.example.net/debian bookworm main contrib\n")
    assert _mirror(tmp_path) == "http://mirror.example.net/debian"


def test_mirror_falls_back_to_the_official_one(tmp_path):
    assert _mirror(tmp_path) == "http://deb.debian.org/debian"


def _setup_packages() -> set[str]:
    text = (REPO / "scripts" / "setup.sh").read_text()
    body = text[text.index("apt_packages=(") + len("apt_packages=("):]
    body = body[: body.index("\n)")]
    names: set[str] = set()
    for token in re.findall(r'"[^"]+"|\S+', body):
        names.update(token.strip('"').split("|"))
    return names


def test_setup_installs_what_pyside6_links():
    import PySide6

    base = Path(PySide6.__file__).parent
    parts = [base / "QtCore.abi3.so", base / "QtGui.abi3.so", base / "QtWidgets.abi3.so", base / "QtSvg.abi3.so",
             base / "QtTest.abi3.so", base / "Qt" / "plugins" / "platforms" / "libqxcb.so",
             base / "Qt" / "plugins" / "platforms" / "libqoffscreen.so",
             *sorted((base / "Qt" / "plugins" / "xcbglintegrations").glob("*.so")),
             *sorted(p for p in (base / "Qt" / "plugins" / "imageformats").glob("*.so") if p.name != "libqpdf.so")]
    libs: set[str] = set()
    for part in parts:
        assert part.exists(), part
        out = subprocess.run(["ldd", str(part)], capture_output=True, text=True).stdout
        missing = [line.strip() for line in out.splitlines() if "not found" in line]
        assert not missing, f"{part.name}: {missing}"
        libs |= {m for m in re.findall(r"=> (/\S+)", out) if "PySide6" not in m and "shiboken6" not in m}
    owners: set[str] = set()
    for lib in libs:
        real = str(Path(lib).resolve())
        for cand in (real, real.removeprefix("/usr"), lib):
            r = subprocess.run(["dpkg-query", "-S", cand], capture_output=True, text=True)
            hit = [ln.split(":")[0] for ln in r.stdout.splitlines() if ln.endswith(": " + cand)]
            if hit:
                owners.add(hit[0])
                break
        else:
            raise AssertionError(f"no Debian package owns {lib}")
    listed = _setup_packages()
    deps = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--installed", "--no-recommends", "--no-suggests", "--no-conflicts",
         "--no-breaks", "--no-replaces", "--no-enhances", *sorted(listed & _installed())],
        capture_output=True, text=True).stdout
    closure = {ln.strip() for ln in deps.splitlines() if not ln.startswith(" ")} | listed
    essential = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"}  # in every Debian system (minbase)
    uncovered = sorted(owners - closure - essential)
    assert not uncovered, f"packages owning libraries PySide6 links, missing from scripts/setup.sh: {uncovered}"


def _installed() -> set[str]:
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Status}\\n"], capture_output=True, text=True).stdout
    return {ln.split()[0] for ln in out.splitlines() if ln.endswith("install ok installed")}
