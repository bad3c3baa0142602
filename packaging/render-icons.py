"""Render resources/icons/triton-config-studio.svg to PNGs (16..256 px) with Qt's QSvgRenderer.

Run after editing the SVG:  QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/render-icons.py
The PNGs are committed (the desktop entry and the window use them; nothing renders at install time).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SIZES = (16, 22, 24, 32, 48, 64, 128, 256)
ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
NAME = "triton-config-studio"


def render(svg: Path = ICONS / f"{NAME}.svg", out_dir: Path = ICONS) -> list[Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg}: not a valid SVG")
    written = []
    for size in SIZES:
        img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(Qt.GlobalColor.transparent)
        p = QPainter(img)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        renderer.render(p)
        p.end()
        out = out_dir / f"{NAME}-{size}.png"
        if not img.save(str(out)):
            raise SystemExit(f"could not write {out}")
        written.append(out)
    return written


if __name__ == "__main__":
    for path in render():
        print(path)
