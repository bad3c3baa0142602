"""The shell: the main window that wires the capabilities together (repository browser, editor tabs, diff,
ensemble graph, server panel, wizard); menus, toolbar, shortcuts, settings, recent repositories, crash
recovery. Repository operations are the core's (studio.repository.operations); the shell asks and shows."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QFileSystemWatcher,
    QModelIndex,
    QSettings,
    Qt,
    QThreadPool,
    QTimer,
    QUrl,
    Signal,
)
from PySide6.QtGui import QAction, QDesktopServices, QFont, QFontDatabase, QKeySequence, QUndoGroup
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QScrollArea,
    QToolBar,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from studio import __version__
from studio.repository import Repository
from studio.repository.operations import OperationError, duplicate_model, rename_model, trash_model
from studio.ui.browser.repository_model import (
    ROLE_KIND,
    ROLE_MODEL,
    RepositoryFilter,
    RepositoryModel,
    ScanJob,
)
from studio.ui.common.workers import run_in_background
from studio.ui.editor.controller import DocumentController, discard_recovery, recovery_files
from studio.ui.server.config_banner import ConfigDriftBanner
from studio.ui.server.deploy_panel import DeployController, DeployPanel, make_deploy_action
from studio.ui.server.server_panel import ServerPanel
from studio.ui.shell.editor_tab import ConfigEditor
from studio.ui.shell.settings import recent_repositories, remember_repository
from studio.ui.shell.tabs import CentralTabs
from studio.ui.shell.undo_keys import UndoKeyRouter
from studio.ui.tuning.dashboard import TuningDashboard


class MainWindow(QMainWindow):
    sig_repository_loaded = Signal(int)
    """The repository browser is filled (after scan and validation): the number of models."""
    sig_dashboard_opened = Signal(object)
    """A tuning dashboard opened in a tab (Tune, Ctrl+T): the TuningDashboard."""

    def __init__(self, offer_recovery: bool = False) -> None:
        super().__init__()
        self.setWindowTitle("Triton Config Studio")
        self.resize(1280, 800)
        self.repository: str | None = None
        self.repo: Repository | None = None
        self.interactive = True  # False: a screenshot or scripted start, where no modal question may wait
        self._jobs: list[ScanJob] = []
        self.undo_group = QUndoGroup(self)

        # repository browser
        self.repo_model = RepositoryModel(self)
        self.proxy = RepositoryFilter(self)
        self.proxy.setSourceModel(self.repo_model)
        self.tree = QTreeView()
        self.tree.setModel(self.proxy)
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)  # 1,000 models lay out without measuring each row
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.doubleClicked.connect(self._on_activated)
        self.tree.activated.connect(self._on_activated)
        self.filter_box = QLineEdit()
        self.filter_box.setPlaceholderText("Filter models")
        self.filter_box.setClearButtonEnabled(True)
        self.filter_box.textChanged.connect(self.proxy.setFilterFixedString)
        browser = QWidget()
        bl = QVBoxLayout(browser)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(self.filter_box)
        bl.addWidget(self.tree)
        dock = QDockWidget("Repository", self)
        dock.setObjectName("repository_dock")
        dock.setWidget(browser)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)

        # server
        self.server = ServerPanel()
        server_dock = self.server_dock = QDockWidget("Server", self)
        server_dock.setObjectName("server_dock")
        server_dock.setWidget(self.server)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, server_dock)
        self.deploy_controller = DeployController(self.server)
        self.deploy_panel = DeployPanel(self.deploy_controller)
        self.deploy_panel.target = self._deploy_target
        self.deploy_dock = QDockWidget("Deploy", self)
        self.deploy_dock.setObjectName("deploy_dock")
        deploy_scroll = QScrollArea()  # the panel is tall (progress, findings, test inference): scroll, never squeeze
        deploy_scroll.setWidgetResizable(True)
        deploy_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        deploy_scroll.setWidget(self.deploy_panel)
        self.deploy_dock.setWidget(deploy_scroll)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.deploy_dock)
        self.tabifyDockWidget(server_dock, self.deploy_dock)
        server_dock.raise_()
        self.deploy_controller.sig_busy.connect(lambda on: on and self.deploy_dock.raise_())
        self.deploy_controller.sig_goto_line.connect(self._go_to_line_in_current)
        self.deploy_controller.sig_finished.connect(lambda _r: self._check_drift(self.current_editor()))
        self.server.presenter.sig_model_states.connect(self._on_model_states)
        self.server.presenter.sig_action_done.connect(lambda _m: [self._check_drift(ed) for ed in self.editors()])
        self.server.presenter.sig_action_failed.connect(lambda m: self.status.setText(m))
        self.server.sig_state_changed.connect(self._on_server_state)
        self._served_states: dict = {}

        # editors
        self.tabs = CentralTabs()
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.placeholder = QLabel("Open a model repository (Ctrl+O) and double-click a model to edit its config.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.tabs.addTab(self.placeholder, "Start")
        self.setCentralWidget(self.tabs)
        self.status = QLabel("")
        self.statusBar().addWidget(self.status, 1)

        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(lambda _p: self._rescan_timer.start())
        self._rescan_timer = QTimer(self, singleShot=True, interval=400)
        self._rescan_timer.timeout.connect(lambda: self._scan(full=False))

        self._make_actions()
        self._undo_keys = UndoKeyRouter(self)
        QApplication.instance().installEventFilter(self._undo_keys)
        settings = QSettings()
        geometry = settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = settings.value("window/state")
        if state is not None:
            self.restoreState(state)
        else:
            self.resizeDocks([dock], [260], Qt.Orientation.Horizontal)
            self.resizeDocks([server_dock], [150], Qt.Orientation.Vertical)
        if offer_recovery:
            QTimer.singleShot(0, self.offer_recovery)

    def ask(self, title: str, text: str, buttons=None):
        """A modal question (one place, so that scripted use and tests can answer it)."""
        if buttons is None:
            buttons = QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No
        return QMessageBox.question(self, title, text, buttons)

    # -- actions ------------------------------------------------------------------------------------------------
    def _action(self, text: str, slot, shortcut=None, tip: str | None = None) -> QAction:
        a = QAction(text, self)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        if tip:
            a.setStatusTip(tip)
        a.triggered.connect(slot)
        return a

    def _make_actions(self) -> None:
        K = QKeySequence.StandardKey
        self.act_open = self._action("&Open repository…", self._choose_repository, K.Open)
        self.act_save = self._action("&Save", self.save_current, K.Save)
        self.act_close = self._action("&Close tab", lambda: self.close_tab(self.tabs.currentIndex()), K.Close)
        self.act_quit = self._action("&Quit", self.close, K.Quit)
        self.act_undo = self.undo_group.createUndoAction(self, "&Undo")
        self.act_undo.setShortcut(K.Undo)
        self.act_redo = self.undo_group.createRedoAction(self, "&Redo")
        self.act_redo.setShortcut(K.Redo)
        self.act_find = self._action("&Find field…", self.find_field, K.Find)
        self.act_goto = self._action("&Go to line…", self.go_to_line, "Ctrl+L")
        self.act_validate = self._action("&Validate", self.validate, "F5", "validate the open config and the repository")
        self.act_next_error = self._action("&Next problem", self.next_error, "F8")
        self.act_diff = self._action("&Diff…", self.diff, "Ctrl+Shift+D", "compare the config with the file on disk or another model")
        self.act_deploy = make_deploy_action(self, self.deploy_panel.trigger)
        self.act_tune = self._action("&Tune…", self.tune_current, "Ctrl+T", "live tuning dashboard for the open model on the server")
        self.act_load_all = self._action("&Load all models", lambda: self.server.presenter.load_all())
        self.act_unload_all = self._action("&Unload all models", lambda: self.server.presenter.unload_all())
        self.act_new = self._action("&New model…", self.new_model, K.New)
        self.act_convert = self._action("Con&vert framework…", self.convert_framework, None, "preview moving the model to another framework")
        self.act_ensemble = self._action("&Ensemble graph", self.show_ensemble, "Ctrl+G", "draw the open ensemble's steps and tensors")
        self.act_export = self._action("E&xport for a cluster…", self.export_repository, None,
                                       "KServe InferenceService, Helm values or a compose file for this repository")
        self.act_about = self._action("&About", self._about)
        self.recent_menu = QMenu("Recent repositories", self)
        self.recent_menu.aboutToShow.connect(self._fill_recent)

        m = self.menuBar().addMenu("&File")
        for a in (self.act_open, self.act_new):
            m.addAction(a)
        m.addMenu(self.recent_menu)
        m.addAction(self.act_export)
        m.addSeparator()
        m.addAction(self.act_save)
        m.addAction(self.act_close)
        m.addSeparator()
        m.addAction(self.act_quit)
        e = self.menuBar().addMenu("&Edit")
        for a in (self.act_undo, self.act_redo, self.act_find, self.act_goto):
            e.addAction(a)
        t = self.menuBar().addMenu("&Tools")
        for a in (self.act_validate, self.act_next_error, self.act_diff, self.act_convert, self.act_ensemble):
            t.addAction(a)
        sm = self.menuBar().addMenu("&Server")
        for a in (self.act_deploy, self.act_tune, self.act_load_all, self.act_unload_all):
            sm.addAction(a)
        v = self.menuBar().addMenu("&View")
        for d in self.findChildren(QDockWidget):
            v.addAction(d.toggleViewAction())
        h = self.menuBar().addMenu("&Help")
        h.addAction(self.act_about)
        tb = QToolBar("Main")
        tb.setObjectName("main_toolbar")
        for a in (self.act_open, self.act_save, self.act_undo, self.act_redo, self.act_validate, self.act_diff,
                  self.act_deploy, self.act_tune):
            tb.addAction(a)
        self.addToolBar(tb)

    # -- repository ---------------------------------------------------------------------------------------------
    def open_repository(self, path: str) -> None:
        from studio.repository import repository_candidates
        from studio.ui.browser.repository_choice import choose_repository

        candidates = repository_candidates(path)
        if candidates:  # a folder of repositories or a model folder: offer the repositories instead
            if self.interactive:
                path = choose_repository(self, path, candidates)
                if path is None:
                    return
            else:  # a screenshot or scripted start asks nothing: the nearest repository
                path = str(candidates[0])
        self.repository = str(Path(path).resolve())
        self.repo = Repository(self.repository)
        self.server.repository = self.repository
        self.setWindowTitle(f"Triton Config Studio — {Path(self.repository).name}")
        settings = QSettings()
        remember_repository(settings, self.repository)
        self.filter_box.clear()
        self._scan(full=True)

    def _scan(self, full: bool) -> None:
        if self.repo is None:
            return
        self.status.setText(f"Scanning {self.repository}…")
        job = ScanJob(self.repo, full=full)
        job.signals.sig_done.connect(self._on_scanned)
        job.signals.sig_failed.connect(self.status.setText)
        self._jobs.append(job)
        QThreadPool.globalInstance().start(job)

    def _on_scanned(self, repo: Repository, report) -> None:
        self._jobs = [j for j in self._jobs if j.signals is not self.sender()]
        if repo is not self.repo:
            return  # an older repository's scan
        self.repo_model.set_roots(report.nodes)
        watched = self._watcher.directories()
        if watched:
            self._watcher.removePaths(watched)
        self._watch_queue = [self.repository] + [str(e.path) for e in repo.models.values()][:2000]
        self._watch_more()
        c = report.counts()
        self.status.setText(f"{self.repository}: {len(repo.models)} models, {c['error']} error(s), {c['warning']} warning(s)")
        self.server.presenter.repository_models = self.repo_model.model_names()
        self.sig_repository_loaded.emit(len(repo.models))

    def _watch_more(self) -> None:
        """Watch the model folders a few hundred at a time, so the UI thread never stalls on it."""
        chunk, self._watch_queue = self._watch_queue[:200], self._watch_queue[200:]
        if chunk:
            self._watcher.addPaths(chunk)
        if self._watch_queue:
            QTimer.singleShot(0, self._watch_more)

    def _choose_repository(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a Triton model repository")
        if path:
            self.open_repository(path)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for r in recent_repositories(QSettings()):
            self.recent_menu.addAction(r, lambda r=r: self.open_repository(r))

    def _on_activated(self, index: QModelIndex) -> None:
        if index.data(ROLE_KIND) == "model":
            model = index.data(ROLE_MODEL)
            entry = self.repo.models.get(model) if self.repo else None
            if entry is not None and entry.config is not None:
                self.open_config(str(entry.config))
            elif entry is not None and entry.misplaced_configs:  # e.g. 1/config.pbtxt: open it, the browser warns
                self.open_config(str(entry.path / entry.misplaced_configs[0]))
            else:
                self.status.setText(f"{model} has no config.pbtxt: Triton derives it from the model files")
        elif index.data(ROLE_KIND) == "file":
            from studio.ui.browser.repository_model import ROLE_PATH

            path = index.data(ROLE_PATH) or ""
            if path.endswith(".pbtxt"):  # e.g. a config in a version folder: Triton ignores it, the browser says so
                self.open_config(path)

    def select_model(self, name: str) -> QModelIndex:
        for r in range(self.proxy.rowCount()):
            idx = self.proxy.index(r, 0)
            if idx.data(ROLE_MODEL) == name:
                self.tree.setCurrentIndex(idx)
                return idx
        return QModelIndex()

    def _context_menu(self, pos) -> None:
        idx = self.tree.indexAt(pos)
        menu = QMenu(self)
        menu.addAction("New model from template…", self.new_model)
        if idx.isValid():
            model = idx.data(ROLE_MODEL)
            menu.addAction("Open config", lambda: self._on_activated(self.select_model(model)))
            menu.addAction("Duplicate…", lambda: self.duplicate_model(model))
            menu.addAction("Rename…", lambda: self.rename_model(model))
            menu.addAction("Delete…", lambda: self.delete_model(model))
            menu.addAction("Validate", self.validate)
            if self.server.runtime is not None:
                menu.addSeparator()
                menu.addAction("Load on the server", lambda: self.server.presenter.load(model, config=self._model_document(model)))
                menu.addAction("Reload on the server", lambda: self.server.presenter.reload(model, config=self._model_document(model)))
                menu.addAction("Unload from the server", lambda: self.server.presenter.unload(model))
            menu.addAction("Open folder", lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(self.repository) / model))))
        menu.exec(self.tree.viewport().mapToGlobal(pos))

    def new_model(self, dialog=None) -> str | None:
        """The new-model wizard; returns the config written (or None)."""
        from studio.repository.templates import create_model
        from studio.ui.wizard.wizard import NewModelDialog

        if not self.repository:
            return None
        dlg = dialog or NewModelDialog(self)
        if dialog is None and dlg.exec() != dlg.DialogCode.Accepted:
            return None
        try:
            name, template, sets = dlg.values()
            created = create_model(name, template, self.repository, sets)
        except Exception as e:  # noqa: BLE001 - shown to the user
            self.status.setText(f"new model: {e}")
            return None
        self._scan(full=False)
        self.open_config(str(created[0]))
        return str(created[0])

    def duplicate_model(self, model: str, new_name: str | None = None) -> None:
        if new_name is None:
            new_name, ok = QInputDialog.getText(self, "Duplicate", f"Copy {model} as:", text=f"{model}_copy")
            if not ok or not new_name:
                return
        try:
            duplicate_model(self.repository, model, new_name)
        except OperationError as e:
            QMessageBox.warning(self, "Duplicate", str(e))
            return
        self._scan(full=False)

    def rename_model(self, model: str, new_name: str | None = None) -> None:
        """Rename the folder and the config's name: together."""
        if new_name is None:
            new_name, ok = QInputDialog.getText(self, "Rename", f"New name for {model}:", text=model)
            if not ok or not new_name or new_name == model:
                return
        src = Path(self.repository) / model
        for i in range(self.tabs.count() - 1, 0, -1):
            ed = self.tabs.widget(i)
            if isinstance(ed, ConfigEditor) and ed.controller.path and Path(ed.controller.path).parent == src:
                if not self.close_tab(i):
                    return
        try:
            rename_model(self.repository, model, new_name)
        except OperationError as e:
            QMessageBox.warning(self, "Rename", str(e))
            return
        self._scan(full=False)

    def delete_model(self, model: str, confirm: bool = True) -> None:
        path = Path(self.repository) / model
        if confirm:
            r = self.ask("Delete model", f"Move {path} to the trash?\n(It can be restored from there.)")
            if r != QMessageBox.StandardButton.Yes:
                return
        try:
            target = trash_model(self.repository, model)
        except (OperationError, OSError) as e:
            QMessageBox.warning(self, "Delete", str(e))
            return
        self.status.setText(f"{model} moved to {target}")
        self._scan(full=False)

    # -- documents ----------------------------------------------------------------------------------------------
    def editors(self) -> list[ConfigEditor]:
        return [self.tabs.widget(i) for i in range(self.tabs.count()) if isinstance(self.tabs.widget(i), ConfigEditor)]

    def current_editor(self) -> ConfigEditor | None:
        w = self.tabs.currentWidget()
        return w if isinstance(w, ConfigEditor) else None

    def open_config(self, path: str, text: str | None = None) -> ConfigEditor | None:
        path = str(Path(path).resolve())
        for ed in self.editors():
            if ed.controller.path == path:
                self.tabs.setCurrentWidget(ed)
                return ed
        try:
            controller = DocumentController(path)
        except OSError as e:
            self.status.setText(f"{path}: {e.strerror}")
            return None
        except UnicodeDecodeError:
            self.status.setText(f"{path}: not UTF-8 text")
            return None
        editor = self._new_editor(controller)
        banner = editor.drift_banner
        banner.sig_reload.connect(lambda m, ed=editor: self.server.presenter.reload(m, config=ed.controller.document))
        banner.sig_show_diff.connect(lambda m, served, ed=editor: self.show_diff(ed.controller.disk_text(), served, "file", f"server: {m}"))
        controller.sig_saved.connect(lambda _p, ed=editor: self._check_drift(ed))
        controller.sig_external_change.connect(lambda ed=editor: self._external_change(ed))
        controller.sig_file_gone.connect(lambda p, ed=editor: self._file_gone(ed, p))
        title = Path(path).parent.name
        self.tabs.addTab(editor, title)
        self.tabs.setCurrentWidget(editor)
        if text is not None:
            controller.set_text(text, source="recovery")
            editor.text.set_text_preserving_cursor(controller.text)
        self._update_title(editor)
        self._check_drift(editor)
        return editor

    def _new_editor(self, controller: DocumentController) -> ConfigEditor:
        """An editor on a controller, wired as every tab is: status line, drift banner, undo group, dirty title."""
        editor = ConfigEditor(controller)
        editor.sig_status.connect(self.status.setText)
        banner = ConfigDriftBanner()
        editor.layout().insertWidget(0, banner)
        editor.drift_banner = banner
        self.undo_group.addStack(controller.undo_stack)
        controller.sig_dirty_changed.connect(lambda _d, ed=editor: self._update_title(ed))
        controller.sig_saved.connect(lambda p: self.status.setText(f"saved {p}"))
        return editor

    def _update_title(self, editor: ConfigEditor) -> None:
        i = self.tabs.indexOf(editor)
        if i < 0:
            return
        name = Path(editor.controller.path).parent.name if editor.controller.path else "untitled"
        dirty = editor.controller.dirty
        self.tabs.setTabText(i, name + (" *" if dirty else ""))
        if editor is self.current_editor():
            self.setWindowTitle(f"{name}{' *' if dirty else ''} — Triton Config Studio")

    def _on_tab_changed(self, _i: int) -> None:
        ed = self.current_editor()
        if ed is not None:
            self.undo_group.setActiveStack(ed.controller.undo_stack)
            self._update_title(ed)

    def save_current(self) -> None:
        ed = self.current_editor()
        if ed is None:
            return
        ed.text.flush()
        if ed.controller.parse_error is not None:
            r = self.ask("Save", "The text does not parse: Triton will refuse it. Save anyway?")
            if r != QMessageBox.StandardButton.Yes:
                return
        self.save_editor(ed)

    def save_editor(self, ed: ConfigEditor, force: bool = False) -> bool:
        """Save through the safe path; a file changed on disk, a read-only file or a failing write ask what to do
        (overwrite, reload, show the diff, Save As) and never lose the user's text. True when saved."""
        from studio.config import FileChangedOnDisk, ReadOnlyFile, SaveError

        B = QMessageBox.StandardButton
        try:
            ed.controller.save(force=force)
        except FileChangedOnDisk as e:
            r = self.ask("Save", f"{e}\n\nOverwrite it with your text (Yes), or keep the file and look at the "
                                 "difference first (No)?", B.Yes | B.No | B.Cancel)
            if r == B.Yes:
                return self.save_editor(ed, force=True)
            if r == B.No and ed.controller.path and Path(ed.controller.path).exists():
                self.show_diff(ed.controller.disk_text(), ed.controller.text, "on disk", "your edits")
            return False
        except ReadOnlyFile as e:
            if self.ask("Save", f"{e}\n\nWrite it anyway?") == B.Yes:
                return self.save_editor(ed, force=True)
            return False
        except (SaveError, OSError) as e:
            text = str(e) if isinstance(e, SaveError) else f"{ed.controller.path}: {e.strerror or e}"
            self.status.setText(text)
            if self.ask("Save failed", f"{text}\n\nThe file is as it was. Save your text elsewhere (Save As)?") == B.Yes:
                return self.save_editor_as(ed)
            return False
        self._update_title(ed)
        self._rescan_timer.start()
        return True

    def save_editor_as(self, ed: ConfigEditor, path: str | None = None) -> bool:
        if path is None:
            path, _f = QFileDialog.getSaveFileName(self, "Save as", ed.controller.path or "config.pbtxt")
            if not path:
                return False
        try:
            ed.controller.save(path)
        except OSError as e:
            self.status.setText(str(e))
            return False
        self._update_title(ed)
        return True

    def close_tab(self, index: int) -> bool:
        ed = self.tabs.widget(index)
        if isinstance(ed, TuningDashboard):
            ed.shutdown()
            self.server.release(f"dashboard:{id(ed)}")
            self.tabs.removeTab(index)
            ed.deleteLater()
            return True
        if not isinstance(ed, ConfigEditor):
            if index > 0 and ed is not None:  # a diff or a graph: nothing to save
                self.tabs.removeTab(index)
                ed.deleteLater()
            return True
        ed.text.flush()
        if ed.controller.dirty:
            r = self.ask("Unsaved edits", f"Save the edits to {ed.controller.path}?",
                         QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel)
            if r == QMessageBox.StandardButton.Cancel:
                return False
            if r == QMessageBox.StandardButton.Save and not self.save_editor(ed):
                return False  # the save failed: the tab (and the window) stay open with the text
        ed.controller.close()
        self.undo_group.removeStack(ed.controller.undo_stack)
        self.tabs.removeTab(index)
        ed.deleteLater()
        return True

    def _external_change(self, ed: ConfigEditor) -> None:
        choice = self.choose_external(ed)
        if choice == "reload":
            ed.controller.reload_from_disk()
        elif choice == "diff":
            self.show_diff(ed.controller.disk_text(), ed.controller.text, "on disk", "your edits")

    def choose_external(self, ed: ConfigEditor) -> str:
        """Ask what to do with a file that changed on disk under unsaved edits: reload, keep or diff."""
        box = QMessageBox(self)
        box.setWindowTitle("File changed on disk")
        box.setText(f"{ed.controller.path} changed on disk, and you have unsaved edits.")
        reload_b = box.addButton("Reload from disk", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton("Keep mine", QMessageBox.ButtonRole.RejectRole)
        diff_b = box.addButton("Show diff", QMessageBox.ButtonRole.ActionRole)
        box.exec()
        if box.clickedButton() is reload_b:
            return "reload"
        if box.clickedButton() is diff_b:
            return "diff"
        return "keep"

    def offer_recovery(self) -> None:
        B = QMessageBox.StandardButton
        for info in recovery_files():
            path = info.get("path")
            if path and not Path(path).exists():
                r = self.ask("Recover unsaved edits", f"The studio closed with unsaved edits to {path}, which no "
                             "longer exists. Open them and save them somewhere (Save As)?")
                if r != B.Yes:
                    discard_recovery(info)  # the user's choice
                    continue
                ed = self._open_gone(path, info["text"])
                if ed is None:
                    continue  # the recovery file stays for the next start
                discard_recovery(info)
                ed.controller.write_recovery()  # the open tab's own (same file name: kept until saved)
                self.save_editor_as(ed)
                continue
            r = self.ask("Recover unsaved edits", f"The studio closed with unsaved edits to {path}. Restore them?")
            if r == B.Yes and path:
                self.open_config(path, text=info["text"])
            discard_recovery(info)

    def _open_gone(self, path: str, text: str) -> ConfigEditor | None:
        """A tab for text whose file no longer exists: dirty, its recovery kept, saved with Save As."""
        try:
            controller = DocumentController(path, text=text)
        except ValueError as e:
            self.status.setText(f"{path}: {e}")
            return None
        editor = self._new_editor(controller)
        self.tabs.addTab(editor, Path(path).parent.name)
        self.tabs.setCurrentWidget(editor)
        self._update_title(editor)
        return editor

    def _file_gone(self, ed: ConfigEditor, path: str) -> None:
        """The open file was deleted on disk: keep the text (the tab is dirty, the recovery file kept) and offer
        Save As."""
        self._update_title(ed)
        self.status.setText(f"{path} was deleted on disk: your text is kept (and in a recovery file)")
        r = self.ask("File deleted", f"{path} was deleted on disk. Your text is still open here and kept in a "
                     "recovery file. Save it somewhere (Save As)?")
        if r == QMessageBox.StandardButton.Yes:
            self.save_editor_as(ed)

    # -- tools --------------------------------------------------------------------------------------------------
    def find_field(self) -> None:
        ed = self.current_editor()
        if ed is not None:
            ed.form.find_box.setFocus()
            ed.form.find_box.selectAll()

    def go_to_line(self) -> None:
        ed = self.current_editor()
        if ed is None:
            return
        n, ok = QInputDialog.getInt(self, "Go to line", "Line:", 1, 1, max(1, ed.text.blockCount()))
        if ok:
            ed.text.go_to(n)

    def validate(self) -> None:
        ed = self.current_editor()
        if ed is not None:
            ed.text.flush()
            ed.controller.validate_now()
        self._scan(full=False)

    def next_error(self) -> None:
        ed = self.current_editor()
        if ed is not None:
            ed.next_error()

    def diff(self, choice: str | None = None) -> None:
        ed = self.current_editor()
        if ed is None:
            return
        server = "the running server's resolved config"
        if choice is None:
            from studio.repository.templates import list_templates

            choices = (["the file on disk"] + ([server] if self.server.state == "ready" else []) + self.repo_model.model_names()
                       + [f"template: {t}" for t in list_templates() if t != "ensemble"])
            choice, ok = QInputDialog.getItem(self, "Diff", "Compare with:", choices, 0, False)
            if not ok:
                return
        if choice == "the file on disk":
            self.show_diff(ed.controller.disk_text(), ed.controller.text, "on disk", "editor")
        elif choice == server:
            from studio.diff.server import server_diff_texts
            from studio.runtime.client import TritonClient

            model = Path(ed.controller.path).parent.name
            try:
                client = TritonClient(self.server.runtime.endpoints)
                data = client.resolved_config(model)
                client.close()
            except Exception as e:  # noqa: BLE001 - not loaded, server gone
                self.status.setText(f"the server has no config for {model}: {e}")
                return
            left, right, _changes = server_diff_texts(ed.controller.text, data)  # one canonical layout on both sides
            self.show_diff(left, right, "editor", "server (auto-completed)")
        elif choice.startswith("template: "):
            from studio.repository.templates import list_templates

            t = list_templates()[choice.removeprefix("template: ")]
            self.show_diff((t.path / "config.pbtxt").read_text(encoding="utf-8"), ed.controller.text, choice, "editor")
        else:
            other = Path(self.repository) / choice / "config.pbtxt"
            self.show_diff(other.read_text(encoding="utf-8", errors="replace"), ed.controller.text, choice, "editor")

    def convert_framework(self, target: str | None = None):
        """Preview moving the open model to another framework; the diff view's Apply makes the edits."""
        from studio.diff.convert import plan_conversion
        from studio.frameworks import frameworks

        ed = self.current_editor()
        if ed is None or ed.controller.document is None:
            return None
        if target is None:
            keys = [k for k in frameworks() if k != "ensemble"]
            target, ok = QInputDialog.getItem(self, "Convert framework", "Move the model to:", keys, 0, False)
            if not ok:
                return None
        try:
            plan = plan_conversion(ed.controller.document.to_message(), target)
        except ValueError as e:
            self.status.setText(str(e))
            return None
        from studio.config import ConfigDocument

        preview = ConfigDocument.parse(ed.controller.text)
        preview.apply(plan.message)
        view = self.show_diff(ed.controller.text, preview.text, "now", plan.target.label)
        view.set_plan(plan, lambda: ed.controller.edit(f"convert to {plan.target.label}", lambda d: d.apply(plan.message)))
        return view

    def show_diff(self, left: str, right: str, left_name: str, right_name: str):
        from studio.ui.diff.diff_view import DiffView

        view = DiffView(left, right, left_name, right_name)
        self.tabs.addTab(view, f"diff: {left_name} ↔ {right_name}")
        self.tabs.setCurrentWidget(view)
        return view

    def show_ensemble(self):
        from studio.ui.ensemble.ensemble_view import EnsembleView

        ed = self.current_editor()
        if ed is None or ed.controller.document is None:
            return None
        msg = ed.controller.document.to_message()
        if not msg.HasField("ensemble_scheduling"):
            self.status.setText("the open config is not an ensemble")
            return None
        models = {}
        if self.repo is not None:
            for name, entry in self.repo.models.items():
                if entry.document is not None:
                    models[name] = entry.document.to_message()
        view = EnsembleView(msg, models)
        view.sig_open_model.connect(self._open_model_by_name)
        self.tabs.addTab(view, f"graph: {Path(ed.controller.path).parent.name}")
        self.tabs.setCurrentWidget(view)
        return view

    def _open_model_by_name(self, name: str) -> None:
        if self.repo is not None and name in self.repo.models and self.repo.models[name].config:
            self.open_config(str(self.repo.models[name].config))

    # -- server: deploy, model states, drift, tuning --------------------------------------------------------------
    def _deploy_target(self):
        """What Deploy deploys: (repository, model, text, save) of the current editor, or None."""
        ed = self.current_editor()
        if ed is None or not self.repository:
            return None
        ed.text.flush()
        return self.repository, ed.controller.model_name, ed.controller.text, self._save_editor(ed)

    def _save_editor(self, ed: ConfigEditor):
        def save() -> None:  # Deploy's save step: the same questions as Ctrl+S; not saved stops the deploy
            if not self.save_editor(ed):
                raise OSError(f"{ed.controller.path}: not saved")
        return save

    def _go_to_line_in_current(self, line: int) -> None:
        ed = self.current_editor()
        if ed is not None:
            ed.text.go_to(line)
            ed.text.setFocus()

    def _model_document(self, model: str):
        """The open editor's document of a model (unsaved edits included), else None (the server reads the file)."""
        for ed in self.editors():
            if ed.controller.model_name == model and ed.controller.document is not None:
                return ed.controller.document
        return None

    def _on_model_states(self, states: dict) -> None:
        changed = {m for m in set(states) | set(self._served_states)
                   if getattr(states.get(m), "state", None) != getattr(self._served_states.get(m), "state", None)}
        self._served_states = dict(states)
        self.repo_model.set_server_states(states)
        for ed in self.editors():
            if ed.controller.model_name in changed:
                self._check_drift(ed)

    def _on_server_state(self, state: str) -> None:
        if state != "ready":
            self._served_states = {}
            self.repo_model.set_server_states({})
            for ed in self.editors():
                ed.drift_banner.hide()

    def _check_drift(self, ed: ConfigEditor | None) -> None:
        if ed is None or ed.controller.path is None:
            return
        runtime = self.server.runtime if self.server.state == "ready" else None
        ed.drift_banner.check(runtime, ed.controller.model_name, ed.controller.disk_text())

    def tune_current(self) -> TuningDashboard | None:
        """Ctrl+T: the live dashboard for the open model on the connected server (started when none runs; the
        model is loaded with the editor's config first when it is not READY)."""
        ed = self.current_editor()
        if ed is None or ed.controller.document is None:
            self.status.setText("Tune: open a model's config (one that parses) first")
            return None
        if not self.repository:
            return None
        if self.server.state != "ready":
            if self.server.state not in ("starting",):
                self.server.start(self.repository, models=[])

            def when_ready(state: str) -> None:
                if state in ("ready", "failed", "stopped", "exited"):
                    self.server.sig_state_changed.disconnect(when_ready)
                    if state == "ready":
                        self.tune_current()
                    else:
                        self.status.setText(f"Tune: the server is {state}")

            self.server.sig_state_changed.connect(when_ready)
            self.status.setText("Tune: starting a server…")
            return None
        runtime = self.server.runtime
        model = ed.controller.model_name
        doc = ed.controller.document
        from studio.runtime.client import TritonClient

        def ensure_loaded():
            client = TritonClient(runtime.endpoints, logs=runtime.logs)
            if not client.model_ready(model):
                client.load(model, config=doc)
            return client

        def open_dashboard(client) -> None:
            def keep(edits: dict, ed=ed) -> None:
                if ed not in self.editors():
                    self.status.setText("Keep: the config's tab was closed; reopen it and press Keep again")
                    return
                from studio.tuning.controls import apply_edits

                ed.controller.edit("Keep tuned settings", lambda d: apply_edits(d, edits))
                self.tabs.setCurrentWidget(ed)
                self.status.setText(f"kept {len(edits)} setting(s) in {model}'s config (unsaved; Ctrl+Z undoes)")

            from studio.ui.tuning.scripted import server_pid

            dash = TuningDashboard(runtime.endpoints.grpc, model, ed.controller.document, client, keep=keep,
                                   server_pid=server_pid(runtime))  # the server's memory curve
            self.server.acquire(f"dashboard:{id(dash)}", f"tuning {model}")
            self.tabs.addTab(dash, f"tune: {model}")
            self.tabs.setCurrentWidget(dash)
            self.resizeDocks([self.server_dock], [130], Qt.Orientation.Vertical)  # room for the plots
            self.status.setText(f"tuning {model} on {runtime.endpoints.grpc}")
            self.sig_dashboard_opened.emit(dash)

        self.status.setText(f"Tune: loading {model}…")
        run_in_background(ensure_loaded, on_done=open_dashboard,
                          on_failed=lambda m: self.status.setText(f"Tune: {model} could not be loaded: {m}"))
        return None

    def export_repository(self, target: str | None = None, storage_uri: str | None = None) -> QPlainTextEdit | None:
        """The repository as a KServe InferenceService, Helm values or a compose file (studio.export), shown in a
        tab to read, copy or save. Without arguments it asks which, and for the storage URI a cluster needs."""
        from studio.export import TARGETS, ExportError, ExportOptions, UsageError, export

        if not self.repository:
            self.status.setText("Export: open a repository first")
            return None
        if target is None:
            target, ok = QInputDialog.getItem(self, "Export for a cluster", "Export as:", list(TARGETS), 0, False)
            if not ok:
                return None
            if target != "compose":
                storage_uri, ok = QInputDialog.getText(
                    self, "Export for a cluster", "Where the cluster reads the repository (s3://, gs://, pvc://, nfs://…):",
                    text="s3://my-bucket/" + Path(self.repository).name)
                if not ok:
                    return None
        try:
            text = export(self.repository, ExportOptions(to=target, storage_uri=storage_uri or None))
        except (UsageError, ExportError, OSError) as e:
            self.status.setText(f"Export: {e}")
            return None
        view = QPlainTextEdit(text)
        view.setReadOnly(True)
        view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        view.setObjectName(f"export_{target}")
        self.tabs.addTab(view, f"export: {target}")
        self.tabs.setCurrentWidget(view)
        self.status.setText(f"{target} export of {self.repository}: copy it, or save it with Ctrl+A, Ctrl+C")
        return view

    def _about(self) -> None:
        import google.protobuf
        import PySide6

        try:
            from importlib.metadata import version

            tc = version("tritonclient")
        except Exception:  # noqa: BLE001
            tc = "?"
        QMessageBox.about(
            self,
            "About Triton Config Studio",
            f"Triton Config Studio {__version__}\n\nQt {PySide6.QtCore.qVersion()}, PySide6 {PySide6.__version__}\n"
            f"tritonclient {tc}, protobuf {google.protobuf.__version__}",
        )

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        question = self.server.close_question()
        if question and self.ask("Quit", question) != QMessageBox.StandardButton.Yes:
            event.ignore()
            return
        for i in range(self.tabs.count() - 1, 0, -1):
            if not self.close_tab(i):
                event.ignore()
                return
        settings = QSettings()
        settings.setValue("window/geometry", self.saveGeometry())
        settings.setValue("window/state", self.saveState())
        self.server.shutdown()
        super().closeEvent(event)


def make_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setOrganizationName("triton-config-studio")
    app.setApplicationName("Triton Config Studio")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("triton-config-studio")  # packaging/triton-config-studio.desktop
    from PySide6.QtGui import QIcon

    from studio.resources import resource

    icon = QIcon()
    for png in sorted(resource("icons").glob("triton-config-studio-*.png")):
        icon.addFile(str(png))
    app.setWindowIcon(icon)
    font = app.font()
    if font.pointSize() < 9:
        app.setFont(QFont(font.family(), 10))
    return app  # type: ignore[return-value]


def run_gui(repository: str | None, screenshot: str | None = None, serve: str | None = None,
            open_file: str | None = None) -> int:
    """The window on `repository`; `open_file` (a config in it) opens in an editor tab, else the first model."""
    app = make_app()
    win = MainWindow(offer_recovery=screenshot is None)
    win.interactive = screenshot is None
    if screenshot:
        win.resize(1280, 800)
    win.show()
    if repository:
        win.open_repository(repository)
        if serve:
            win.server.start(win.repository, serve)
    pending = {"repo": bool(repository), "server": bool(repository and serve)}

    def open_first() -> None:
        if open_file:
            win.open_config(open_file)
            return
        if win.repo is not None and win.repo.models:
            first = sorted(win.repo.models)[0]
            idx = win.select_model(first)
            win._on_activated(idx)

    def shoot() -> None:
        if any(pending.values()):
            return
        QTimer.singleShot(400, lambda: (win.grab().save(screenshot), app.quit()))

    def done(key: str) -> None:
        if not pending[key]:
            return
        pending[key] = False
        if key == "repo":
            open_first()
        if screenshot:
            shoot()

    win.sig_repository_loaded.connect(lambda _n: done("repo"))
    win.server.sig_state_changed.connect(lambda st: done("server") if st in ("ready", "failed") else None)
    if screenshot:
        QTimer.singleShot(0, shoot)
    code = app.exec()
    # close after the loop: closing the last window inside it would post a second Quit that a later event loop
    # of the same process (a test calling this) would take as its own
    win.close()
    win.server.shutdown()
    QCoreApplication.removePostedEvents(app, QEvent.Type.Quit)
    return code
