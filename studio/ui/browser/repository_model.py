"""The repository browser's item model: models -> versions -> files, with framework and validation badges.

Scanning and validation run in a QThreadPool job; the model only swaps in finished results."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QRectF,
    QRunnable,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPen, QPixmap

from studio.frameworks import framework_of
from studio.repository import ModelEntry, Repository
from studio.validate import Options, validate_repository

ROLE_PATH = Qt.ItemDataRole.UserRole + 1
ROLE_KIND = Qt.ItemDataRole.UserRole + 3
ROLE_MODEL = Qt.ItemDataRole.UserRole + 4

_FRAMEWORK_COLORS = {
    "tensorrt": "#76b900", "onnxruntime": "#5b5b5b", "pytorch": "#ee4c2c", "tensorflow_savedmodel": "#ff8f00",
    "tensorflow_graphdef": "#ff8f00", "python": "#3776ab", "openvino": "#0071c5", "ensemble": "#8e44ad",
    "dali": "#00a3e0", "fil": "#16a085", "tensorrtllm": "#76b900", "vllm": "#30a2ff",
}
_FRAMEWORK_LETTERS = {
    "tensorrt": "T", "onnxruntime": "O", "pytorch": "P", "tensorflow_savedmodel": "TF", "tensorflow_graphdef": "TF",
    "python": "Py", "openvino": "OV", "ensemble": "E", "dali": "D", "fil": "F", "tensorrtllm": "TL", "vllm": "vL",
}
NEUTRAL = "#7a8591"  # a backend the knowledge base has no framework for (official extras, custom backends)


def icon_spec(key: str | None) -> tuple[str, str, bool]:
    """(fill colour, letters, outlined) of a model's icon. key: a framework key, "backend:<name>" for a
    backend without a framework entry (identity, your own libtriton_<name>.so), None when nothing says
    which backend the model uses (no config and no model files)."""
    if key in _FRAMEWORK_LETTERS:
        return _FRAMEWORK_COLORS[key], _FRAMEWORK_LETTERS[key], False
    if key and key.startswith("backend:"):
        name = key.removeprefix("backend:")
        return NEUTRAL, (name[:2] or "B").capitalize(), True
    return NEUTRAL, "?", True


def framework_icon(key: str | None) -> QIcon:
    color, letters, outlined = icon_spec(key)
    pm = QPixmap(18, 18)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    f = QFont()
    f.setPixelSize(9)
    f.setBold(True)
    p.setFont(f)
    if outlined:  # neutral: an outline, so it does not look like a framework's brand nor like an alarm
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(QColor(color), 1.6))
        p.drawRoundedRect(QRectF(1, 1, 16, 16), 4, 4)
        p.setPen(QColor(color))
    else:
        p.setBrush(QColor(color))
        p.setPen(Qt.PenStyle.NoPen)
        p.drawRoundedRect(0, 0, 18, 18, 4, 4)
        p.setPen(QColor("white"))
    p.drawText(pm.rect(), Qt.AlignmentFlag.AlignCenter, letters)
    p.end()
    return QIcon(pm)


@dataclass
class Node:
    kind: str  # model | version | file
    name: str
    path: Path | None
    parent: Node | None
    children: list[Node] = field(default_factory=list)
    framework: str | None = None  # icon_spec key
    errors: int = 0
    warnings: int = 0
    tooltip: str = ""
    row: int = 0


class ScanSignals(QObject):
    sig_done = Signal(object, object)
    """(Repository, Report) after a scan and validation; the report carries each model's framework."""
    sig_failed = Signal(str)


class ScanJob(QRunnable):
    def __init__(self, repository: Repository, full: bool = True) -> None:
        super().__init__()
        self.repository = repository
        self.full = full
        self.signals = ScanSignals()

    def run(self) -> None:
        try:
            if self.full or not self.repository.models:
                self.repository.scan()
            else:
                self.repository.refresh()
            report = validate_repository(self.repository, Options())
            report.frameworks = {n: _framework_key(e) for n, e in self.repository.models.items()}
            report.nodes = build_nodes(self.repository, report)
        except OSError as e:
            self.signals.sig_failed.emit(f"{self.repository.path}: {e.strerror or e}")
            return
        except Exception as e:  # noqa: BLE001 - shown, never a traceback
            self.signals.sig_failed.emit(f"{self.repository.path}: {e}")
            return
        self.signals.sig_done.emit(self.repository, report)


class RepositoryModel(QAbstractItemModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.roots: list[Node] = []
        self._icons: dict[str | None, QIcon] = {}
        self.server_states: dict = {}  # model name -> its state on the connected server (studio.runtime.models)

    def set_server_states(self, states: dict) -> None:
        """The connected server's state per model (ModelStatus: .state, .reason, .label(), .versions), or {}
        when no server is connected. Only the model rows repaint."""
        changed = {n for n in set(states) | set(self.server_states)
                   if _state_key(states.get(n)) != _state_key(self.server_states.get(n))}
        self.server_states = dict(states)
        if not changed or not self.roots:
            return
        for node in self.roots:
            if node.name in changed:
                i = self.createIndex(node.row, 0, node)
                self.dataChanged.emit(i, i)
                if node.children:
                    self.dataChanged.emit(self.createIndex(0, 0, node.children[0]),
                                          self.createIndex(len(node.children) - 1, 0, node.children[-1]))

    def set_repository(self, repository: Repository, report) -> None:
        self.set_roots(build_nodes(repository, report))

    def set_roots(self, roots: list[Node]) -> None:
        """Swap in a tree built off the UI thread (build_nodes)."""
        self.beginResetModel()
        self.roots = roots
        self.endResetModel()

    # -- Qt model API ---------------------------------------------------------------------------------------------
    def index(self, row: int, column: int, parent: QModelIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        if column != 0 or row < 0:
            return QModelIndex()
        siblings = self.roots if not parent.isValid() else parent.internalPointer().children
        if row >= len(siblings):
            return QModelIndex()
        return self.createIndex(row, 0, siblings[row])

    def parent(self, index: QModelIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        node: Node = index.internalPointer()
        if node.parent is None:
            return QModelIndex()
        return self.createIndex(node.parent.row, 0, node.parent)

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        if parent.column() > 0:
            return 0
        if not parent.isValid():
            return len(self.roots)
        return len(parent.internalPointer().children)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 1

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        node: Node = index.internalPointer()
        if role == Qt.ItemDataRole.DisplayRole:
            if node.kind == "model":
                badge = ""
                if node.errors:
                    badge += f"  ✗{node.errors}"
                if node.warnings:
                    badge += f"  ⚠{node.warnings}"
                st = self.server_states.get(node.name)
                if st is not None:
                    badge += f"  ● {_elide(st.label(), 60)}"
                return node.name + badge
            if node.kind == "version":
                v = _version_state(self.server_states.get(node.parent.name), node.name)
                return f"version {node.name}" + (f"  ● {v.state}" if v is not None and v.state else "")
            return node.name
        if role == Qt.ItemDataRole.DecorationRole and node.kind == "model":
            if node.framework not in self._icons:
                self._icons[node.framework] = framework_icon(node.framework)
            return self._icons[node.framework]
        if role == Qt.ItemDataRole.ToolTipRole and node.kind == "model":
            st = self.server_states.get(node.name)
            if st is None:
                return node.tooltip
            return node.tooltip + f"\nserver: {st.state}" + (f": {st.reason}" if st.reason else "")
        if role == Qt.ItemDataRole.ToolTipRole and node.kind == "file":
            return node.tooltip or None
        if role == Qt.ItemDataRole.ForegroundRole and node.kind == "file" and node.warnings:
            return QColor("#b7791f")
        if role == Qt.ItemDataRole.ToolTipRole and node.kind == "version":
            v = _version_state(self.server_states.get(node.parent.name), node.name)
            return f"server: {v.state}" + (f": {v.reason}" if v.reason else "") if v is not None else None
        if role == Qt.ItemDataRole.ForegroundRole and node.kind == "model" and node.errors:
            return QColor("#d0312d")
        if role == ROLE_PATH:
            return str(node.path) if node.path else None
        if role == ROLE_KIND:
            return node.kind
        if role == ROLE_MODEL:
            n = node
            while n.parent is not None:
                n = n.parent
            return n.name
        return None

    def flags(self, index: QModelIndex):
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def model_names(self) -> list[str]:
        return [n.name for n in self.roots]


def _state_key(status) -> tuple | None:
    if status is None:
        return None
    return (status.state, status.reason, tuple((v.version, v.state, v.reason) for v in status.versions))


def _version_state(status, version: str):
    if status is None:
        return None
    return next((v for v in status.versions if v.version == version), None)


def _elide(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def build_nodes(repository: Repository, report) -> list[Node]:
    """The browser's tree as plain Python objects (no Qt): built in the scan job, not on the UI thread."""
    counts: dict[str, list[int]] = {}
    tips: dict[str, list[str]] = {}
    for f in report.findings:
        if f.model:
            c = counts.setdefault(f.model, [0, 0])
            if f.severity == "error":
                c[0] += 1
            elif f.severity == "warning":
                c[1] += 1
            if f.severity != "info" and len(tips.setdefault(f.model, [])) < 8:
                tips[f.model].append(f"{f.severity}: {f.message}")
    file_tips: dict[str, list[str]] = {}  # findings about one file (a misplaced config) on its row
    for f in report.findings:
        if f.file and f.severity != "info":
            file_tips.setdefault(str(f.file), []).append(f"{f.severity}: {f.message}")
    frameworks = getattr(report, "frameworks", None) or {}
    roots = []
    for i, (name, entry) in enumerate(sorted(repository.models.items())):
        node = Node("model", name, entry.config or entry.path, None, row=i)
        node.framework = frameworks.get(name) if frameworks else _framework_key(entry)
        node.errors, node.warnings = counts.get(name, [0, 0])
        node.tooltip = "\n".join(tips.get(name, [])) or "no problems found"
        for j, v in enumerate(entry.versions):
            vn = Node("version", v, entry.path / v, node, row=j)
            for k, fname in enumerate(entry.version_dirs[v].files):
                fn = Node("file", fname, entry.path / v / fname, vn, row=k)
                if f"{v}/{fname}" in entry.misplaced_configs:
                    fn.tooltip = "\n".join(file_tips.get(str(fn.path), [])) or (
                        f"Triton reads only {name}/config.pbtxt; this file is ignored")
                    fn.warnings = 1
                vn.children.append(fn)
            node.children.append(vn)
        roots.append(node)
    return roots


def _framework_key(entry: ModelEntry) -> str | None:
    if entry.document is None:
        return None
    from studio.frameworks import backend_kind
    from studio.validate.normalize import VersionFolder, auto_complete_backend_fields

    msg = entry.document.to_message()
    vd = entry.first_version_dir()
    try:
        auto_complete_backend_fields(entry.name, msg, VersionFolder(set(vd.files), lambda n: n in vd.dirs) if vd else None)
    except ValueError:
        return None
    fw = framework_of(msg)
    if fw is not None:
        return fw.key
    return f"backend:{msg.backend}" if backend_kind(msg.backend) in ("official", "custom") else None


class RepositoryFilter(QSortFilterProxyModel):
    """Filter by model name (case-insensitive), keeping a model's versions and files."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setRecursiveFilteringEnabled(False)

    def filterAcceptsRow(self, row: int, parent: QModelIndex) -> bool:  # noqa: N802
        if parent.isValid():
            return True
        idx = self.sourceModel().index(row, 0, parent)
        name = idx.internalPointer().name
        return self.filterRegularExpression().match(name).hasMatch()
