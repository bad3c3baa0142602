"""A banner for an editor: "the server runs an older config – Reload / Show diff", shown when the config the
server runs for this model differs from the file. The comparison is between parsed messages (settings the
file makes that the server does not run), never the server's compact JSON against the file's text.

    banner = ConfigDriftBanner()
    banner.check(server_panel.runtime, "add_sub", file_text)     # off the UI thread; shows or hides itself
    banner.sig_reload.connect(...)      # the shell: presenter.reload(model, config=document)
    banner.sig_show_diff.connect(...)   # (model, served config as pbtxt): the shell opens its diff view

Observes: studio.runtime.models.config_drift, studio.runtime.client.TritonClient.resolved_config."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

from studio.ui.common.workers import run_in_background


def served_config_text(resolved: dict) -> str:
    """The server's resolved config as pbtxt, for a text diff against the file."""
    from google.protobuf import text_format

    from studio.runtime.models import _as_message

    return text_format.MessageToString(_as_message(resolved))


class ConfigDriftBanner(QFrame):
    sig_reload = Signal(str)
    """The user asked to reload this model on the server with the file's config."""
    sig_show_diff = Signal(str, str)
    """(model, the served config as pbtxt): the user asked for a diff against the file."""
    sig_checked = Signal(list)
    """After each check: the differences [(field path, file value, served value)] ([] when none)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        pal = self.palette()
        base = pal.color(QPalette.ColorRole.Window)
        tint = base.darker(112) if base.lightness() > 128 else base.lighter(140)
        tint.setRgb(min(255, tint.red() + 30), min(255, tint.green() + 20), tint.blue())
        pal.setColor(QPalette.ColorRole.Window, tint)
        self.setPalette(pal)
        self.text = QLabel("")
        self.text.setWordWrap(True)
        self.reload_button = QPushButton("Reload")
        self.diff_button = QPushButton("Show diff")
        lay = QHBoxLayout(self)
        lay.addWidget(self.text, 1)
        lay.addWidget(self.reload_button)
        lay.addWidget(self.diff_button)
        self.model: str | None = None
        self.differences: list = []
        self._served: dict | None = None
        self._token = 0
        self.reload_button.clicked.connect(lambda: self.model and self.sig_reload.emit(self.model))
        self.diff_button.clicked.connect(self._diff)
        self.hide()

    def check(self, runtime, model: str, file_text: str) -> None:
        """Compare the file with what the server runs for `model` (hidden when no server, not loaded, or equal)."""
        self._token += 1
        token = self._token
        if runtime is None or runtime.endpoints is None:
            self._show(token, model, None)
            return
        endpoints = runtime.endpoints

        def work():
            from studio.config import ConfigDocument
            from studio.runtime.client import TritonClient
            from studio.runtime.models import config_drift

            client = TritonClient(endpoints)
            try:
                if not client.model_ready(model):
                    return None
                served = client.resolved_config(model)
            finally:
                client.close()
            return served, config_drift(ConfigDocument.parse(file_text), served)

        run_in_background(work, on_done=lambda r: self._show(token, model, r),
                          on_failed=lambda _m: self._show(token, model, None))

    def _show(self, token: int, model: str, result) -> None:
        if token != self._token:
            return
        self.model = model
        if result is None:
            self.differences, self._served = [], None
            self.hide()
            self.sig_checked.emit([])
            return
        self._served, self.differences = result
        if not self.differences:
            self.hide()
        else:
            fields = ", ".join(p for p, _a, _b in self.differences[:3]) + (" …" if len(self.differences) > 3 else "")
            self.text.setText(f"The server runs an older config of {model} ({fields} differ from the file).")
            self.show()
        self.sig_checked.emit(list(self.differences))

    def _diff(self) -> None:
        if self.model and self._served is not None:
            self.sig_show_diff.emit(self.model, served_config_text(self._served))
