"""The server dock: start, stop and restart a Triton (embedded CPU, a Docker container, or an existing server by
URL) off the UI thread; its health, honestly (a watchdog notices a dead server within about a second and the
panel says so with the exit code and the last log lines; it never claims "ready" for a server that is gone);
its endpoints, the models on it (ModelStatesView) and its log (LogView). Docker: local Triton images, an
image by name with NGC's current tag as the suggestion, GPUs only when the engine has the NVIDIA runtime, shm
size, extra server arguments; a missing image is pulled only after the user confirms, with per-layer progress
and a Cancel; a studio-owned container still running from an earlier launch is reattached.

Observes: studio.runtime (Runtime, health.Watchdog, images, docker_runtime.reattach)."""

from __future__ import annotations

import shlex
import threading

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.runtime import RuntimeFailure, ServerOptions, Status, make_runtime
from studio.runtime.health import Death, Watchdog
from studio.ui.common.workers import run_in_background
from studio.ui.server.log_view import LogView
from studio.ui.server.model_states import ModelStatePresenter, ModelStatesView

KINDS = ("embedded", "docker", "url")
KIND_TEXT = {"embedded": "embedded (CPU)", "docker": "Docker", "url": "existing server (URL)"}


class PullBox(QFrame):
    """Per-layer progress of an image pull, with Cancel."""

    sig_cancel = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title = QLabel("")
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)
        self.layers = QTreeWidget()
        self.layers.setHeaderLabels(["layer", "status", "progress"])
        self.layers.setRootIsDecorated(False)
        self.layers.setMaximumHeight(120)
        self.cancel_button = QPushButton("Cancel pull")
        row = QHBoxLayout()
        row.addWidget(self.title, 1)
        row.addWidget(self.cancel_button)
        lay = QVBoxLayout(self)
        lay.addLayout(row)
        lay.addWidget(self.bar)
        lay.addWidget(self.layers)
        self.cancel_button.clicked.connect(self.sig_cancel.emit)
        self._items: dict[str, QTreeWidgetItem] = {}

    def begin(self, image: str) -> None:
        self.title.setText(f"pulling {image} …")
        self.layers.clear()
        self._items.clear()
        self.bar.setRange(0, 0)
        self.cancel_button.setEnabled(True)
        self.show()

    def update_layers(self, layers: dict) -> None:
        from studio.runtime.images import human_size

        done = total = 0
        for lid, st in layers.items():
            item = self._items.get(lid)
            if item is None:
                item = QTreeWidgetItem([lid, "", ""])
                self._items[lid] = item
                self.layers.addTopLevelItem(item)
            item.setText(1, st.get("status", ""))
            if st.get("total"):
                item.setText(2, f"{human_size(st.get('current', 0))} / {human_size(st['total'])}")
                done += st.get("current", 0)
                total += st["total"]
        if total:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(1000 * done / total))


class ServerPanel(QWidget):
    sig_log_line = Signal(str)
    """A server log line (emitted from the log reader thread, delivered on the UI thread)."""
    sig_state_changed = Signal(str)
    """stopped | starting | pulling | ready | failed | stopping | exited"""
    sig_runtime_changed = Signal(object)
    """The Runtime now connected (None: none)."""
    sig_server_dead = Signal(object)
    """The connected server died: a studio.runtime.health.Death."""
    _sig_dead = Signal(object)
    _sig_pull_progress = Signal(dict)
    _sig_pull_done = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.runtime = None
        self.repository: str | None = None
        self.state = "stopped"
        self.death: Death | None = None
        self.users: dict[str, str] = {}  # who uses the server (e.g. a dashboard run) -> what for
        self._watchdog: Watchdog | None = None
        self._pull = None
        self._start_token = 0
        self._shutdown_threads: list[threading.Thread] = []
        self.last_kind = "embedded"
        self.registry_timeout_s = 5.0  # how long the pull question waits for the registry's answer
        settings = QSettings()
        # controls
        self.kind = QComboBox()
        for k in KINDS:
            self.kind.addItem(KIND_TEXT[k], k)
        self.kind.setCurrentIndex(max(0, KINDS.index(str(settings.value("server/kind", "embedded")))
                                      if str(settings.value("server/kind", "embedded")) in KINDS else 0))
        self.start_button = QPushButton("Start")
        self.stop_button = QPushButton("Stop")
        self.restart_button = QPushButton("Restart")
        self.url = QLineEdit(str(settings.value("server/url", "")))
        self.url.setPlaceholderText("http://HOST:8000 or grpc://HOST:8001")
        # docker options
        from studio.runtime.images import DEFAULT_SUGGESTION

        self.docker_box = QGroupBox("Docker")
        self.image = QComboBox()
        self.image.setEditable(True)
        self.image.setMinimumContentsLength(36)
        self.image.lineEdit().setPlaceholderText(DEFAULT_SUGGESTION)
        self.image.setToolTip(f"a local image, or a name to pull (asked first); NVIDIA's current: {DEFAULT_SUGGESTION}")
        self.refresh_images_button = QPushButton("Refresh")
        self.gpus = QComboBox()
        self.gpus.addItems(["none", "all"])
        self.gpus.setEditable(True)
        self.gpus.setToolTip("none, all, or GPU ids like 0,1")
        self.shm = QLineEdit(str(settings.value("server/shm", "1g")))
        self.extra_args = QLineEdit(str(settings.value("server/extra_args", "")))
        self.extra_args.setPlaceholderText("--log-verbose=1 --backend-config=python,shm-default-byte-size=…")
        self.engine = QLabel("")
        self.engine.setWordWrap(True)
        image_row = QHBoxLayout()
        image_row.addWidget(self.image, 1)
        image_row.addWidget(self.refresh_images_button)
        form = QFormLayout(self.docker_box)
        form.addRow("image", image_row)
        form.addRow("GPUs", self.gpus)
        form.addRow("shm size", self.shm)
        form.addRow("server args", self.extra_args)
        form.addRow(self.engine)
        self.status = QLabel("stopped")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.pull_box = PullBox()
        self.pull_box.hide()
        self.pull_question: QMessageBox | None = None
        # models and log
        self.presenter = ModelStatePresenter(self)
        self.models = ModelStatesView(self.presenter)
        self.log = LogView()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.models, "Models")
        self.tabs.addTab(self.log, "Log")
        row = QHBoxLayout()
        row.addWidget(self.kind)
        row.addWidget(self.url, 1)
        row.addWidget(self.start_button)
        row.addWidget(self.stop_button)
        row.addWidget(self.restart_button)
        lay = QVBoxLayout(self)
        lay.addLayout(row)
        lay.addWidget(self.docker_box)
        lay.addWidget(self.status)
        lay.addWidget(self.pull_box)
        lay.addWidget(self.tabs, 1)
        self.start_button.clicked.connect(lambda: self.start())
        self.stop_button.clicked.connect(self.stop)
        self.restart_button.clicked.connect(self.restart)
        self.refresh_images_button.clicked.connect(self.refresh_images)
        self.kind.currentIndexChanged.connect(lambda _i: self._kind_changed())
        self.sig_log_line.connect(self.log.append_line)
        self._sig_dead.connect(self._on_dead)
        self._sig_pull_progress.connect(self.pull_box.update_layers)
        self._sig_pull_done.connect(self._pull_finished)
        self.pull_box.sig_cancel.connect(self.cancel_pull)
        self._docker_checked = False
        self._kind_changed()
        self._set_state("stopped", "stopped")

    # -- options --------------------------------------------------------------------------------------------
    def current_kind(self) -> str:
        return self.kind.currentData()

    def _kind_changed(self) -> None:
        k = self.current_kind()
        self.docker_box.setVisible(k == "docker")
        self.url.setVisible(k == "url")
        if k == "docker" and not self._docker_checked:
            self._docker_checked = True
            self.refresh_images()

    def refresh_images(self) -> None:
        """List local Triton images and what the engine offers (GPUs, remote engine), off the UI thread."""
        from studio.runtime.docker_runtime import docker_client
        from studio.runtime.images import engine_is_remote, local_triton_images, nvidia_runtime

        def work():
            client = docker_client()
            return local_triton_images(client), nvidia_runtime(client), engine_is_remote()

        def done(result) -> None:
            images, gpus_ok, remote = result
            current = self.image.currentText()
            saved = str(QSettings().value("server/image", ""))
            self.image.clear()
            for i in images:
                self.image.addItem(f"{i.tag}", i.tag)
                self.image.setItemData(self.image.count() - 1,
                                       f"{i.size_text()}, created {i.created.replace('T', ' ')}", Qt.ItemDataRole.ToolTipRole)
            from studio.runtime.images import DEFAULT_SUGGESTION

            if self.image.findText(DEFAULT_SUGGESTION) < 0:
                self.image.addItem(DEFAULT_SUGGESTION + "   (not local: pulled after you confirm)", DEFAULT_SUGGESTION)
            pick = current or saved or (images[0].tag if images else DEFAULT_SUGGESTION)
            idx = self.image.findData(pick)
            if idx >= 0:
                self.image.setCurrentIndex(idx)
            else:
                self.image.setEditText(pick)
            self.gpus.setEnabled(gpus_ok)
            if not gpus_ok:
                self.gpus.setCurrentText("none")
            notes = [f"{len(images)} local Triton image(s): " + ", ".join(f"{i.tag} ({i.size_text()})" for i in images[:3])]
            notes.append("GPUs: the NVIDIA runtime is there" if gpus_ok else
                         "GPUs: not offered (this engine has no NVIDIA runtime)")
            if remote:
                notes.append(f"remote Docker engine at {remote} (DOCKER_HOST): ports are published on that host's "
                             "127.0.0.1 and the repository path must exist there")
            self.engine.setText("\n".join(notes))

        run_in_background(work, on_done=done, on_failed=lambda m: self.engine.setText(f"Docker: {m}"))

    def chosen_image(self) -> str:
        from studio.runtime.images import DEFAULT_SUGGESTION

        data = self.image.currentData()
        text = self.image.currentText().strip()
        if data and text.startswith(str(data)):
            return str(data)
        return text.split()[0] if text else DEFAULT_SUGGESTION

    def chosen_gpus(self):
        text = self.gpus.currentText().strip() if self.gpus.isEnabled() else "none"
        return text if text in ("none", "all") else [g.strip() for g in text.split(",") if g.strip()]

    def server_options(self) -> ServerOptions:
        extra = shlex.split(self.extra_args.text()) if self.extra_args.text().strip() else []
        return ServerOptions(models=getattr(self, "_models", None), extra_args=extra)

    def _remember(self, kind: str) -> None:
        s = QSettings()
        s.setValue("server/kind", kind)
        s.setValue("server/url", self.url.text())
        s.setValue("server/image", self.chosen_image())
        s.setValue("server/shm", self.shm.text())
        s.setValue("server/extra_args", self.extra_args.text())

    # -- state ----------------------------------------------------------------------------------------------
    def _set_state(self, state: str, text: str) -> None:
        self.state = state
        self.status.setText(text)
        idle = state in ("stopped", "failed", "exited")
        self.start_button.setEnabled(idle)
        self.stop_button.setEnabled(state in ("ready", "starting", "pulling"))
        self.restart_button.setEnabled(state in ("ready", "exited", "failed") and self.repository is not None)
        self.kind.setEnabled(idle)
        self.docker_box.setEnabled(idle)
        self.url.setEnabled(idle)
        self.sig_state_changed.emit(state)

    @property
    def ready(self) -> bool:
        """A server is connected and, as far as the watchdog knows, alive."""
        return self.state == "ready" and self.runtime is not None and self.runtime.status == Status.READY

    # -- start ----------------------------------------------------------------------------------------------
    def start(self, repository: str | None = None, kind: str | None = None, models: list[str] | None = None) -> None:
        """Start (or connect to) a server. models: None loads every model of the repository, [] none (a deploy
        loads its model itself)."""
        self._models = models
        repository = repository or self.repository
        kind = kind or self.current_kind()
        if kind != "url" and not repository:
            self._set_state("failed", "open a repository first")
            return
        self.repository = repository
        self.last_kind = kind
        self.kind.setCurrentIndex(KINDS.index(kind))
        self._remember(kind)
        self.death = None
        self._start_token += 1
        token = self._start_token
        if kind == "docker":
            self._set_state("starting", f"checking Docker and the image {self.chosen_image()} …")
            image = self.chosen_image()

            def check():
                from studio.runtime.docker_runtime import docker_client, reattach
                from studio.runtime.images import image_is_local

                client = docker_client()
                found = reattach(client, repository)
                return found, image_is_local(client, image)

            run_in_background(check, on_done=lambda r: self._docker_checked_start(token, r, image),
                              on_failed=lambda m: self._failed(token, m))
            return
        try:
            runtime = make_runtime(self.url.text().strip() if kind == "url" else kind)
        except (RuntimeFailure, ValueError) as e:
            self._set_state("failed", str(e))
            return
        self._launch(token, runtime)

    def _docker_checked_start(self, token: int, result, image: str) -> None:
        if token != self._start_token:
            return
        found, local = result
        if found is not None:
            found.logs.append(f"studio: reattached to container {found.container.name}, still running from an earlier launch")
            self._adopt(found, started=False)
            return
        if not local:
            self.ask_pull(token, image)
            return
        self._launch(token, self._docker_runtime(image))

    def _docker_runtime(self, image: str):
        return make_runtime("docker", image=image, gpus=self.chosen_gpus(), shm_size=self.shm.text().strip() or "1g")

    def _launch(self, token: int, runtime) -> None:
        self._set_state("starting", f"starting the {runtime.kind} Triton on {self.repository or runtime.endpoints} …")
        runtime.logs.subscribe(self.sig_log_line.emit, replay=True)
        self.runtime = runtime
        self.sig_runtime_changed.emit(runtime)
        options = self.server_options()
        repo = self.repository

        def work():
            return runtime.start(repo, options)

        run_in_background(work, on_done=lambda ep: self._started(token, runtime),
                          on_failed=lambda m: self._failed(token, m))

    def _failed(self, token: int, message: str) -> None:
        if token != self._start_token:
            return
        self._set_state("failed", message)

    def _started(self, token: int, runtime) -> None:
        if token != self._start_token or runtime is not self.runtime:
            run_in_background(runtime.stop)  # cancelled meanwhile
            return
        self._adopt(runtime, started=True)

    def _adopt(self, runtime, started: bool) -> None:
        if runtime is not self.runtime:
            runtime.logs.subscribe(self.sig_log_line.emit, replay=True)
            self.runtime = runtime
            self.sig_runtime_changed.emit(runtime)
        ep = runtime.endpoints
        owner = "" if runtime.owned else "  (not started by the studio: never stopped from here)"
        how = "ready" if started else "ready (reattached)"
        self._set_state("ready", f"{how} — {runtime.kind} Triton — HTTP {ep.http}   gRPC {ep.grpc}   metrics {ep.metrics}{owner}")
        self._watch(runtime)
        self.presenter.repository_models = self._repository_models()
        self.presenter.set_runtime(runtime)

    def adopt(self, runtime) -> None:
        """Connect a server someone else started (e.g. the deploy pipeline)."""
        self._start_token += 1
        self._adopt(runtime, started=True)

    def _repository_models(self) -> list[str]:
        from pathlib import Path

        if not self.repository:
            return []
        try:
            return sorted(p.name for p in Path(self.repository).iterdir() if (p / "config.pbtxt").is_file() or
                          (p.is_dir() and any(c.name.isdigit() for c in p.iterdir())))
        except OSError:
            return []

    # -- health ---------------------------------------------------------------------------------------------
    def _watch(self, runtime) -> None:
        if self._watchdog is not None:
            self._watchdog.stop()
        self._watchdog = Watchdog(runtime, on_dead=self._sig_dead.emit).start()

    def _on_dead(self, death: Death) -> None:
        if self.runtime is None or death is None:
            return
        self.death = death
        self.presenter.set_runtime(None)
        tail = "\n".join(ln if len(ln) <= 160 else ln[:157] + "…" for ln in death.last_lines[-3:])
        self._set_state("exited", f"✖ {death.message()}. Restart starts it again.\n--- last log lines ---\n{tail}")
        self.sig_server_dead.emit(death)

    # -- pull -------------------------------------------------------------------------------------------------
    def ask_pull(self, token: int, image: str) -> None:
        """Ask before pulling (with the size when the registry says it); the answer comes back asynchronously."""
        self._set_state("pulling", f"{image} is not on this machine: asking its registry …")
        from studio.runtime.docker_runtime import docker_client
        from studio.runtime.images import registry_info

        timeout = self.registry_timeout_s
        run_in_background(lambda: registry_info(docker_client(), image, timeout), on_done=lambda info: self._confirm_pull(token, image, info),
                          on_failed=lambda m: self._failed(token, m))

    def _confirm_pull(self, token: int, image: str, info) -> None:
        if token != self._start_token:
            return
        from studio.runtime.images import NGC_IMAGE, NGC_TYPICAL_SIZE

        if info.size is not None:
            size = f"The registry reports {info.size_text()}."
        elif info.error:
            size = f"The registry could not be asked: {info.error}"
        else:
            size = "The registry does not report the image's size."
        if image.startswith(NGC_IMAGE):
            size += f" NVIDIA's Triton images are {NGC_TYPICAL_SIZE}."
        box = QMessageBox(QMessageBox.Icon.Question, "Pull the image?",
                          f"{image} is not on this machine.\n\n{size}\n\nPull it now?", parent=self)
        pull = box.addButton("Pull", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        self.pull_question = box

        def answered(_r) -> None:
            self.pull_question = None
            if box.clickedButton() is pull and token == self._start_token:
                self.pull_image(token, image)
            elif token == self._start_token:
                self._set_state("stopped", f"not started: {image} was not pulled")

        box.finished.connect(answered)
        box.open()

    def pull_image(self, token: int, image: str) -> None:
        from studio.runtime.images import Pull

        self._set_state("pulling", f"pulling {image} …")
        self.pull_box.begin(image)
        pull = Pull(image, on_progress=self._sig_pull_progress.emit)
        self._pull = (token, image, pull)
        pull.start()

        def wait():
            try:
                pull.wait()
            except Exception as e:  # noqa: BLE001 - handed to the UI thread
                return e
            return None

        run_in_background(wait, on_done=self._sig_pull_done.emit)

    def cancel_pull(self) -> None:
        if self._pull is not None:
            self.pull_box.cancel_button.setEnabled(False)
            self.pull_box.title.setText("cancelling the pull …")
            self._pull[2].cancel()

    def _pull_finished(self, error) -> None:
        if self._pull is None:
            return
        token, image, _pull = self._pull
        self._pull = None
        self.pull_box.hide()
        if token != self._start_token:
            return
        if error is not None:
            self._set_state("failed", str(error))
            return
        self._launch(token, self._docker_runtime(image))

    # -- stop / restart / shutdown ----------------------------------------------------------------------------
    def _detach(self):
        runtime = self.runtime
        if self._watchdog is not None:
            self._watchdog.stop()
            self._watchdog = None
        self.presenter.set_runtime(None)
        if runtime is not None:
            runtime.logs.unsubscribe(self.sig_log_line.emit)
        self.runtime = None
        self.sig_runtime_changed.emit(None)
        return runtime

    def stop(self) -> None:
        self._start_token += 1
        if self._pull is not None:
            self.cancel_pull()
        runtime = self._detach()
        if runtime is None:
            self._set_state("stopped", "stopped")
            return
        if not runtime.owned:
            runtime.stop()
            self._set_state("stopped", "disconnected (the server keeps running: the studio did not start it)")
            return
        self._set_state("stopping", "stopping …")
        run_in_background(runtime.stop, on_done=lambda _r: self._set_state("stopped", "stopped"),
                          on_failed=lambda m: self._set_state("stopped", f"stopped ({m})"))

    def restart(self) -> None:
        kind = self.last_kind
        runtime = self._detach()
        self._start_token += 1
        token = self._start_token
        if runtime is None or not runtime.owned:
            self.start(self.repository, kind, getattr(self, "_models", None))
            return
        self._set_state("starting", "restarting …")
        models = getattr(self, "_models", None)
        run_in_background(runtime.stop, on_done=lambda _r: token == self._start_token and self.start(self.repository, kind, models),
                          on_failed=lambda _m: token == self._start_token and self.start(self.repository, kind, models))

    def acquire(self, user: str, what: str) -> None:
        """Mark the server as in use (e.g. by a dashboard run): closing the window asks first."""
        self.users[user] = what

    def release(self, user: str) -> None:
        self.users.pop(user, None)

    def close_question(self) -> str | None:
        """The question to ask before closing the window, or None when nothing uses the server."""
        if not self.users or not self.ready:
            return None
        uses = "; ".join(self.users.values())
        return f"The server is in use ({uses}). Closing the window stops it. Close anyway?"

    def shutdown(self) -> threading.Thread | None:
        """The window is closing: stop a studio-owned server on a background thread and return at once. The
        thread is not a daemon, so the process waits for the server to stop before it exits."""
        self._start_token += 1
        if self._pull is not None:
            self._pull[2].cancel()
        runtime = self._detach()
        self.log._timer.stop()
        if runtime is None or not runtime.owned:
            return None
        t = threading.Thread(target=runtime.stop, name="studio-server-shutdown", daemon=False)
        t.start()
        self._shutdown_threads.append(t)
        return t
