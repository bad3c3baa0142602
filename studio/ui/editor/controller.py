"""One open config: the ConfigDocument, its undo stack, validation off the UI thread, saving, recovery.

Every view edits through this controller; the controller tells every view. Undo wraps document edits (text
snapshots), so undo works across the form and the text view alike.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QRunnable, QThreadPool, QTimer, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from studio.config import ConfigDocument, EditError, ParseError, PathError, atomic_write, read_file
from studio.config.saving import FileStamp
from studio.repository import Repository
from studio.resources import state_dir
from studio.validate import Options, validate_config, validate_model


def recovery_dir() -> Path:
    return state_dir("recovery")


def recovery_files() -> list[dict]:
    """Unsaved edits left by a studio that did not close cleanly."""
    out = []
    for meta in sorted(recovery_dir().glob("*.json")):
        try:
            info = json.loads(meta.read_text())
            info["text"] = Path(info["text_file"]).read_text(encoding="utf-8")
            info["meta_file"] = str(meta)
            out.append(info)
        except (OSError, ValueError, KeyError):
            meta.unlink(missing_ok=True)
    return out


def discard_recovery(info: dict) -> None:
    Path(info["meta_file"]).unlink(missing_ok=True)
    Path(info["text_file"]).unlink(missing_ok=True)


class _TextChange(QUndoCommand):
    """A document edit as before/after text: cheap to reason about, exact to undo."""

    MERGE_ID = 1

    def __init__(self, controller: DocumentController, description: str, before: str, after: str, merge: bool) -> None:
        super().__init__(description)
        self.controller = controller
        self.before = before
        self.after = after
        self.merge = merge
        self.first = True

    def id(self) -> int:  # noqa: A003 - Qt's name
        return self.MERGE_ID if self.merge else -1

    def mergeWith(self, other) -> bool:  # noqa: N802 - Qt's name
        if not (self.merge and isinstance(other, _TextChange) and other.merge):
            return False
        self.after = other.after
        return True

    def redo(self) -> None:
        if self.first:  # the edit is already applied
            self.first = False
            return
        self.controller._restore(self.after)

    def undo(self) -> None:
        self.controller._restore(self.before)


class _ModelFolder:
    """The repository around an open config.pbtxt, rescanned incrementally in the validation jobs (one at a time):
    the editor validates its model as the browser does (studio.validate.validate_model), with the current text."""

    def __init__(self, root: Path, name: str) -> None:
        self.repository = Repository(root)
        self.name = name
        self._lock = threading.Lock()

    def findings(self, doc: ConfigDocument) -> list | None:
        """The model's findings with `doc` as its config; None when the folder is gone (validate the text alone)."""
        with self._lock:
            try:
                if self.repository.models:
                    self.repository.refresh()
                else:
                    self.repository.scan()
            except OSError:
                return None
            if self.name not in self.repository.models:
                return None
            return validate_model(self.repository, self.name, doc, Options())


def model_folder_of(path: str | None) -> tuple[Path, str] | None:
    """(repository, model name) when `path` is a model's config.pbtxt (<repository>/<model>/config.pbtxt, as
    `triton-studio validate` takes a folder with a config.pbtxt for a model); None for a config elsewhere (an
    alternative config, a file in a version folder, an untitled text): that is validated as a config alone."""
    if not path:
        return None
    p = Path(path).resolve()
    if p.name != "config.pbtxt" or p.parent.name.isdigit() or p.parent.parent == p.parent:
        return None
    return p.parent.parent, p.parent.name


def _validate(text_or_doc, name: str, file: str | None, folder: _ModelFolder | None) -> list:
    """The findings the browser shows for this model (repository rules with this text), or the config rules
    alone when the config is not in a model folder."""
    doc = text_or_doc if isinstance(text_or_doc, ConfigDocument) else ConfigDocument.parse(text_or_doc, filename=file)
    if folder is not None:
        found = folder.findings(doc)
        if found is not None:
            return found
    return validate_config(doc, model_name=name, options=Options(config_only=True), file=file)


class _ValidateJob(QRunnable):
    def __init__(self, controller: DocumentController, text: str, revision: int, name: str, file: str | None) -> None:
        super().__init__()
        self.text = text
        self.revision = revision
        self.name = name
        self.file = file
        self.folder = controller._folder
        self.signals = controller._signals

    def run(self) -> None:
        _share_the_interpreter()
        try:
            findings = _validate(self.text, self.name, self.file, self.folder)
        except ParseError:
            findings = []
        self.signals.sig_validated.emit(self.revision, findings)


def _share_the_interpreter() -> None:
    """Workers parse and validate in Python while the user types: with CPython's default 5 ms switch interval
    the UI thread can wait that long for the interpreter at every event it handles in Python. 1 ms keeps the
    event loop responsive; a worker's total time barely changes."""
    if sys.getswitchinterval() > 0.001:
        sys.setswitchinterval(0.001)


class _ParseJob(QRunnable):
    """Parse typed text off the UI thread (and build its message); the controller applies the result on the UI
    thread if no newer text came meanwhile."""

    def __init__(self, controller: DocumentController, text: str, revision: int, file: str | None) -> None:
        super().__init__()
        self.text = text
        self.revision = revision
        self.file = file
        self.signals = controller._signals

    def run(self) -> None:
        _share_the_interpreter()
        try:
            result = ConfigDocument.parse(self.text, filename=self.file)
            result.to_message()  # builds the document's message here, not on the UI thread
        except ParseError as e:
            result = e
        except Exception as e:  # noqa: BLE001 - reported like a parse error rather than lost in a thread
            result = ParseError(f"internal error while parsing: {e}", 1, 1)
        self.signals.sig_parsed.emit(self.revision, self.text, result)


class _Signals(QObject):
    sig_validated = Signal(int, list)
    sig_parsed = Signal(int, str, object)


class DocumentController(QObject):
    sig_changed = Signal(str)
    """The document changed; the argument names the view that made the change ("form", "text", "undo", "disk")."""
    sig_dirty_changed = Signal(bool)
    """Unsaved edits appeared or went away."""
    sig_findings = Signal(list)
    """Validation findings for the current text."""
    sig_parse_error = Signal(object)
    """The text view holds text that does not parse (a ParseError), or None once it parses again."""
    sig_external_change = Signal()
    """The file changed on disk while there are unsaved edits: the window asks what to do."""
    sig_saved = Signal(str)
    """The file was written."""
    sig_file_gone = Signal(str)
    """The file was deleted (or moved away) on disk while open: the text lives only here and in the recovery file."""

    def __init__(self, path: str | None = None, text: str | None = None, model_name: str | None = None, parent=None) -> None:
        super().__init__(parent)
        self.path = path
        self.undo_stack = QUndoStack(self)
        self.parse_error: ParseError | None = None
        self.findings: list = []
        self.form_findings: list = []  # values typed in form fields that the document refused
        self._signals = _Signals()
        self._signals.sig_validated.connect(self._on_validated)
        self._signals.sig_parsed.connect(self._on_parsed)
        self._parse_revision = 0
        self._validate_timer = QTimer(self, singleShot=True, interval=250)
        self._validate_timer.timeout.connect(self._start_validation)
        self._recovery_timer = QTimer(self, singleShot=True, interval=300)  # < 0.5 s after the last keystroke
        self._recovery_timer.timeout.connect(self.write_recovery)
        self._revision = 0
        self._jobs: list[_ValidateJob] = []
        self._pending_text: str | None = None
        self._disk_text: str | None = None
        self._stamp: FileStamp | None = None  # the file as it was read: a save refuses a file changed since
        if text is None:
            if path is None:
                raise ValueError("a path or a text")
            data, self._stamp = read_file(path)
            text = data.decode("utf-8")
        self._disk_text = text if path else None
        # the file is gone from disk (deleted while open, or a recovered text whose file no longer exists): the
        # text is unsaved whatever the undo stack says, and its recovery file is kept
        self.file_gone = bool(path) and not os.path.exists(path)
        try:
            self.document = ConfigDocument.parse(text, filename=path)
        except ParseError as e:
            self.document = None
            self.parse_error = e
            self._pending_text = text
        self.model_name = model_name or (Path(path).parent.name if path else "model")
        where = model_folder_of(path)
        self._folder = _ModelFolder(*where) if where is not None else None
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._on_file_changed)
        if path and not self.file_gone:
            self._watcher.addPath(path)
        self._validate_timer.start()
        if self.file_gone:
            self._recovery_timer.start()

    def _on_clean_changed(self, clean: bool) -> None:
        self.sig_dirty_changed.emit(not clean)

    # -- reading ------------------------------------------------------------------------------------------------
    @property
    def text(self) -> str:
        if self._pending_text is not None:
            return self._pending_text
        return self.document.text if self.document is not None else ""

    @property
    def dirty(self) -> bool:
        return (self.file_gone or not self.undo_stack.isClean()
                or self._pending_text not in (None, self._disk_text))

    # -- edits --------------------------------------------------------------------------------------------------
    def edit(self, description: str, fn, source: str = "form") -> None:
        """Run fn(document) as one undoable edit. EditError/PathError propagate (nothing changes)."""
        if self.document is None:
            raise EditError("the file does not parse: fix it in the text view first")
        self._parse_revision += 1  # typed text still parsing in a worker must not land over this edit
        before = self.document.text
        try:
            fn(self.document)
        except (EditError, PathError, ValueError):
            if self.document.text != before:
                self.document.set_text(before)
            raise
        after = self.document.text
        if after == before:
            return
        self.undo_stack.push(_TextChange(self, description, before, after, merge=False))
        self._after_change(source)

    def set_field(self, path: str, value, source: str = "form") -> None:
        self.edit(f"set {path}", lambda d: d.set(path, value), source)

    def clear_field(self, path: str, source: str = "form") -> None:
        self.edit(f"clear {path}", lambda d: d.clear(path), source)

    def set_text(self, text: str, source: str = "text", description: str | None = None) -> None:
        """Typing in the text view: parse; if it parses, one (merged) undoable edit. With a description (a fix
        applied to text that does not parse), its own undo step. Synchronous: see set_text_async for typing."""
        self._parse_revision += 1  # a parse still running in a worker is now stale
        if text == self.text:
            return
        try:
            result = ConfigDocument.parse(text, filename=self.path)
        except ParseError as e:
            result = e
        self._apply_text(text, result, source, description)

    def set_text_async(self, text: str, source: str = "text") -> None:
        """Typing: the text is parsed in a worker; the result is applied on the UI thread unless newer text (or a
        synchronous edit) came meanwhile. The UI thread never parses the whole text per keystroke."""
        self._parse_revision += 1
        if text == self.text:
            return
        job = _ParseJob(self, text, self._parse_revision, self.path)
        self._jobs.append(job)  # keep the runnable's Python side alive while it runs
        QThreadPool.globalInstance().start(job)

    @property
    def parsing(self) -> bool:
        """Typed text is being parsed in a worker (its result not applied yet)."""
        return any(isinstance(j, _ParseJob) and j.revision == self._parse_revision for j in self._jobs)

    def _on_parsed(self, revision: int, text: str, result) -> None:
        self._jobs = [j for j in self._jobs if not (isinstance(j, _ParseJob) and j.revision <= revision)]
        if revision != self._parse_revision or text == self.text:
            return  # stale: newer typing, an edit, undo or a synchronous set_text came meanwhile
        self._apply_text(text, result, "text", None)

    def _hold_unparsed(self, text: str, error: ParseError) -> None:
        """Text that does not parse: keep it pending (the document stays as it was) and tell the views."""
        self.parse_error = error
        self._pending_text = text
        self.sig_parse_error.emit(error)
        self.sig_dirty_changed.emit(self.dirty)  # text that does not parse is an unsaved edit too
        self._recovery_timer.start()

    def _apply_text(self, text: str, result, source: str, description: str | None) -> None:
        if isinstance(result, ParseError):
            self._hold_unparsed(text, result)
            self._schedule()
            return
        new = result
        before = self.document.text if self.document is not None else (self._disk_text or "")
        self._pending_text = None
        had_error = self.parse_error is not None
        self.parse_error = None
        if self.document is None:
            self.document = new
        else:
            self.document.adopt(new)
        if had_error:
            self.sig_parse_error.emit(None)
        self.undo_stack.push(_TextChange(self, description or "typing", before, text, merge=description is None))
        self._after_change(source)

    def _restore(self, text: str) -> None:
        """Undo/redo: put the document back to a text (which may be text that does not parse, e.g. before a fix)."""
        self._parse_revision += 1
        try:
            parsed = ConfigDocument.parse(text, filename=self.path)
        except ParseError as e:
            self._hold_unparsed(text, e)
            self._after_change("undo")
            return
        self._pending_text = None
        if self.parse_error is not None:
            self.parse_error = None
            self.sig_parse_error.emit(None)
        if self.document is None:
            self.document = parsed
        else:
            self.document.set_text(text)
        self._after_change("undo")

    def _after_change(self, source: str) -> None:
        self._revision += 1
        self.sig_changed.emit(source)
        self._schedule()
        self._recovery_timer.start()

    def _schedule(self) -> None:
        self._revision += 1
        self._validate_timer.start()

    # -- validation ---------------------------------------------------------------------------------------------
    def _start_validation(self) -> None:
        if self.parse_error is not None:
            e = self.parse_error
            from studio.validate import Finding

            self.findings = [Finding.from_parse_error(e, file=self.path)]
            self._publish()
            return
        job = _ValidateJob(self, self.text, self._revision, self.model_name, self.path)
        self._jobs.append(job)
        QThreadPool.globalInstance().start(job)

    def _on_validated(self, revision: int, findings: list) -> None:
        self._jobs = [j for j in self._jobs if not (isinstance(j, _ValidateJob) and j.revision <= revision)]
        if revision != self._revision:
            return  # stale: the text changed since
        self.findings = findings
        self._publish()

    def validate_now(self) -> list:
        """Synchronous validation (for tests and the Validate action)."""
        if self.parse_error is not None or self.document is None:
            self._start_validation()
            return self.findings
        self.findings = _validate(self.document, self.model_name, self.path, self._folder)
        self._publish()
        return self.findings

    def set_form_findings(self, findings: list) -> None:
        """Values refused at form fields (they never reached the document): shown with the validator's findings."""
        self.form_findings = list(findings)
        self._publish()

    def _publish(self) -> None:
        self.sig_findings.emit(self.form_findings + self.findings)

    # -- disk ---------------------------------------------------------------------------------------------------
    def save(self, path: str | None = None, force: bool = False) -> None:
        """Write the text through the one safe save path. Raises SaveError: ReadOnlyFile, FileChangedOnDisk (the
        file changed since it was read) unless force; any other failure leaves the file as it was."""
        target = path or self.path
        if target is None:
            raise ValueError("no file name")
        expect = self._stamp if target == self.path else None
        watched = self._watcher.files()
        if watched:
            self._watcher.removePaths(watched)
        try:
            self._stamp = atomic_write(target, self.text, expect=expect, force=force)
        except OSError:
            if watched:
                self._watcher.addPaths(watched)
            raise
        if target != self.path:
            where = model_folder_of(target)
            self._folder = _ModelFolder(*where) if where is not None else None
            self.discard_own_recovery()  # kept under the old name's key (Save As): the text is saved now
        self.path = target
        self._disk_text = self.text
        self.file_gone = False
        self.undo_stack.setClean()
        self._watcher.addPath(target)
        self.discard_own_recovery()
        self.sig_saved.emit(target)
        self.sig_dirty_changed.emit(False)

    def reload_from_disk(self) -> None:
        assert self.path is not None
        data, self._stamp = read_file(self.path)
        text = data.decode("utf-8", "replace")
        self._disk_text = text
        if text != self.text:
            self.set_text(text, source="disk")
        self.undo_stack.setClean()

    def _on_file_changed(self, path: str) -> None:
        if not os.path.exists(path):
            # deleted, or replaced by an editor that writes a new file and renames it: look again shortly
            QTimer.singleShot(200, self, lambda p=path: self._check_gone(p))
            return
        if path not in self._watcher.files():  # editors that replace the file drop the watch
            self._watcher.addPath(path)
        try:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return
        if text == self._disk_text:
            return
        if self.dirty:
            self._disk_text_pending = text
            self.sig_external_change.emit()
        else:
            self.reload_from_disk()

    def _check_gone(self, path: str) -> None:
        if path != self.path or self.file_gone:
            return
        if os.path.exists(path):
            self._on_file_changed(path)  # it was replaced: reload or ask as for any change
            return
        self.file_gone = True
        self.write_recovery()  # at once: the text exists nowhere else now
        self.sig_dirty_changed.emit(True)
        self.sig_file_gone.emit(path)

    def disk_text(self) -> str:
        assert self.path is not None
        with open(self.path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    # -- recovery -----------------------------------------------------------------------------------------------
    def _recovery_paths(self) -> tuple[Path, Path]:
        key = hashlib.sha1((self.path or f"untitled-{id(self)}").encode()).hexdigest()[:16]
        d = recovery_dir()
        return d / f"{key}.json", d / f"{key}.pbtxt"

    def write_recovery(self) -> None:
        if not self.dirty:
            self.discard_own_recovery()
            return
        meta, body = self._recovery_paths()
        body.write_text(self.text, encoding="utf-8")
        meta.write_text(json.dumps({"path": self.path, "text_file": str(body), "written": time.time()}))

    def discard_own_recovery(self) -> None:
        meta, body = self._recovery_paths()
        meta.unlink(missing_ok=True)
        body.unlink(missing_ok=True)

    def close(self) -> None:
        """A clean close: no recovery file is left behind."""
        self._validate_timer.stop()
        self._recovery_timer.stop()
        self._parse_revision += 1  # results still to come are dropped
        self.discard_own_recovery()
