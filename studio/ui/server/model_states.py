"""Model states on the connected server: a presenter that polls the repository index (every 1.5 s and at once
after each action) off the UI thread and emits `sig_model_states`, and a table view with load / unload /
reload per model and load all / unload all. The browser can show the same states by connecting to the
presenter's signal (the shell wires it; this folder never imports the browser)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.runtime import models as core
from studio.ui.common.workers import run_in_background

POLL_MS = 1500


class ModelStatePresenter(QObject):
    sig_model_states = Signal(dict)
    """{model name: studio.runtime.models.ModelStatus} after each refresh ({} when no server is connected)."""
    sig_action_failed = Signal(str)
    """A load / unload failed: one message for the user (Triton's reason included)."""
    sig_action_done = Signal(str)
    """A load / unload finished: what was done."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.runtime = None
        self.repository_models: list[str] = []
        self.states: dict[str, core.ModelStatus] = {}
        self._client = None
        self._in_flight = False
        self._again = False
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self.refresh)

    def set_runtime(self, runtime) -> None:
        """Follow this server (None: none connected)."""
        if self._client is not None:
            client, self._client = self._client, None
            run_in_background(client.close)
        self.runtime = runtime
        if runtime is None or runtime.endpoints is None:
            self._timer.stop()
            self.states = {}
            self.sig_model_states.emit({})
            return
        from studio.runtime.client import TritonClient

        self._client = TritonClient(runtime.endpoints, logs=runtime.logs)
        self._timer.start()
        self.refresh()

    def refresh(self) -> None:
        client = self._client
        if client is None:
            return
        if self._in_flight:
            self._again = True
            return
        self._in_flight = True
        names = list(self.repository_models)
        run_in_background(lambda: core.fetch_states(client, names), on_done=self._got, on_failed=self._poll_failed)

    def _got(self, states) -> None:
        self._in_flight = False
        if self._client is None:
            return
        self.states = states
        self.sig_model_states.emit(states)
        if self._again:
            self._again = False
            self.refresh()

    def _poll_failed(self, _message: str) -> None:
        # the health watchdog reports a dead server; a failed poll only leaves the last states
        self._in_flight = False

    # -- actions ------------------------------------------------------------------------------------------------
    def _act(self, what: str, fn) -> None:
        client = self._client
        if client is None:
            self.sig_action_failed.emit("no server is connected")
            return

        def done(result) -> None:
            if isinstance(result, dict) and result:
                self.sig_action_failed.emit("; ".join(f"{k}: {v}" for k, v in result.items()))
            else:
                self.sig_action_done.emit(what)
            self.refresh()

        def failed(message: str) -> None:
            self.sig_action_failed.emit(f"{what}: {message}")
            self.refresh()

        run_in_background(lambda: fn(client), on_done=done, on_failed=failed)
        QTimer.singleShot(150, self.refresh)  # LOADING shows while the call runs

    def load(self, name: str, config=None) -> None:
        self._act(f"load {name}", lambda c: core.load(c, name, config))

    def unload(self, name: str) -> None:
        self._act(f"unload {name}", lambda c: core.unload(c, name))

    def reload(self, name: str, config=None) -> None:
        self.load(name, config)

    def load_all(self) -> None:
        names = self.repository_models or list(self.states)
        self._act("load all", lambda c: core.load_all(c, names))

    def unload_all(self) -> None:
        names = [n for n, s in self.states.items() if s.state != core.NOT_LOADED]
        self._act("unload all", lambda c: core.unload_all(c, names))

    def stop(self) -> None:
        self.set_runtime(None)


def state_colour(state: str, palette: QPalette) -> QColor:
    dark = palette.color(QPalette.ColorRole.Base).lightness() < 128
    return QColor({
        core.READY: "#66bb6a" if dark else "#2e7d32",
        core.LOADING: "#64b5f6" if dark else "#1565c0",
        core.UNLOADING: "#64b5f6" if dark else "#1565c0",
        core.UNAVAILABLE: "#ff6b6b" if dark else "#c62828",
    }.get(state, palette.color(QPalette.ColorRole.PlaceholderText).name()))


class ModelStatesView(QWidget):
    """A table of models: versions, state, reason; right-click for load / unload / reload."""

    sig_open_model = Signal(str)
    """The user double-clicked a model."""

    def __init__(self, presenter: ModelStatePresenter, parent=None) -> None:
        super().__init__(parent)
        self.presenter = presenter
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["model", "versions", "state", "reason"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.header().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._menu)
        self.tree.itemDoubleClicked.connect(lambda item, _c: self.sig_open_model.emit(item.text(0)))
        self.load_all_button = QPushButton("Load all")
        self.unload_all_button = QPushButton("Unload all")
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.load_all_button)
        row.addWidget(self.unload_all_button)
        row.addWidget(self.message, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(row)
        lay.addWidget(self.tree, 1)
        self.load_all_button.clicked.connect(presenter.load_all)
        self.unload_all_button.clicked.connect(presenter.unload_all)
        presenter.sig_model_states.connect(self.show_states)
        presenter.sig_action_failed.connect(self.message.setText)
        presenter.sig_action_done.connect(lambda what: self.message.setText(f"{what}: done"))
        self.show_states({})

    def show_states(self, states: dict) -> None:
        if not states:
            self.message.setText("")
        self.load_all_button.setEnabled(bool(states))
        self.unload_all_button.setEnabled(any(s.state != core.NOT_LOADED for s in states.values()))
        selected = {i.text(0) for i in self.tree.selectedItems()}
        self.tree.clear()
        for name, st in states.items():
            versions = ", ".join(f"{v.version}:{v.state}" for v in st.versions if v.version) or "-"
            shown = "not loaded" if st.state == core.NOT_LOADED else st.state
            item = QTreeWidgetItem([name, versions, shown, st.reason])
            item.setForeground(2, state_colour(st.state, self.palette()))
            item.setToolTip(3, st.reason)
            self.tree.addTopLevelItem(item)
            item.setSelected(name in selected)
        for c in range(3):
            self.tree.resizeColumnToContents(c)

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.PaletteChange:
            self.show_states(self.presenter.states)  # state colours follow light / dark
        super().changeEvent(event)

    def row(self, name: str) -> list[str] | None:
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item.text(0) == name:
                return [item.text(c) for c in range(4)]
        return None

    def actions_for(self, name: str) -> list[QAction]:
        st = self.presenter.states.get(name)
        loaded = st is not None and st.state in (core.READY, core.UNAVAILABLE)
        out = []
        for text, fn, enabled in (("Load", self.presenter.load, not loaded),
                                  ("Unload", self.presenter.unload, loaded),
                                  ("Reload", self.presenter.reload, loaded)):
            a = QAction(f"{text} {name}", self)
            a.setEnabled(enabled)
            a.triggered.connect(lambda _c=False, f=fn, n=name: f(n))
            out.append(a)
        return out

    def _menu(self, pos) -> None:
        item = self.tree.itemAt(pos)
        if item is None:
            return
        menu = QMenu(self)
        for a in self.actions_for(item.text(0)):
            menu.addAction(a)
        menu.popup(self.tree.viewport().mapToGlobal(pos))
