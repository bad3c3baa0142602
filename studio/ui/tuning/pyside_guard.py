"""A guard against a refcount bug of PySide6 6.12.0 on CPython 3.11: every call of a method that returns void
(QPointF.setX, QTransform.setMatrix, ...) takes one reference from None without giving one. A live plot makes
thousands of such calls a second (pyqtgraph's pixelVectors alone), so None's count reaches zero within
seconds and the interpreter aborts with "Fatal Python error: none_dealloc" (True and False follow, through
Python overrides of virtual methods: "bool_dealloc").

guard() measures the leak; when there is one, it raises None's reference count far out of reach (CPython 3.12
makes None immortal the same way). The real fix is a PySide6 release without the bug: see the report.
"""

from __future__ import annotations

import ctypes
import sys

_FLOOR = 1 << 40
_checked = False
leaks = False


def guard() -> bool:
    """Detect the leak once and neutralise it; True when the bug is present."""
    global _checked, leaks
    if _checked:
        return leaks
    _checked = True
    if sys.version_info >= (3, 12):
        return False  # None is immortal there
    from PySide6.QtCore import QPointF

    p = QPointF(0, 0)
    before = sys.getrefcount(None)
    for _ in range(100):
        p.setX(1.0)
    leaks = sys.getrefcount(None) < before - 50
    if leaks:
        # True and False go the same way through Python overrides of virtual methods (sceneEvent, ...)
        for obj in (None, True, False):
            refcnt = ctypes.c_ssize_t.from_address(id(obj))
            if refcnt.value < _FLOOR:
                refcnt.value += _FLOOR
    return leaks
