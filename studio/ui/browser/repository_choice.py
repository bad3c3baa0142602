"""The question asked when the folder opened is not a model repository but holds some (a folder of
repositories, or a model folder): which one to open. The candidates come from
studio.repository.repository_candidates."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QInputDialog, QWidget

AS_IS = "open {path} as it is"


def choose_repository(parent: QWidget | None, path: str, candidates: list[Path]) -> str | None:
    """The repository to open instead of PATH (PATH itself when asked to), or None when cancelled."""
    items = [str(c) for c in candidates] + [AS_IS.format(path=path)]
    is_model = (Path(path) / "config.pbtxt").is_file()
    why = (f"{path} is a model folder, not a repository." if is_model else
           f"{path} looks like a folder of model repositories: opened as one, each of its folders would "
           "become a bogus model.")
    dialog = QInputDialog(parent)
    dialog.setObjectName("choose_repository")
    dialog.setWindowTitle("Open a model repository")
    dialog.setLabelText(why + "\nOpen this repository instead:")
    dialog.setComboBoxItems(items)
    dialog.setComboBoxEditable(False)
    if not dialog.exec():
        return None
    choice = dialog.textValue()
    return path if choice == items[-1] else choice
