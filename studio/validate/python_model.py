"""What the python backend will make of a model.py, read statically (ast.parse: the file is parsed, never compiled
to code objects that run, never imported or executed in the studio process).

    info = read_model_py(text)
    info.syntax_error      # "SyntaxError: invalid syntax (model.py, line 1)": the stub's own wording
    info.auto_complete     # None: no auto_complete_config; "fills-nothing": one that adds no input/output; "fills"
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass

# larger files are not parsed (ast on a hostile file costs memory and time); their checks are skipped
MAX_PARSE_BYTES = 2_000_000
# the auto-complete object's methods that fill in inputs and outputs (triton_python_backend_utils.ModelConfig)
_FILLS_IO = {"add_input", "add_output"}


@dataclass
class ModelPy:
    syntax_error: str | None = None
    line: int | None = None
    auto_complete: str | None = None  # None | "fills-nothing" | "fills" | "unknown"


def read_model_py(text: str, filename: str = "model.py") -> ModelPy:
    if len(text) > MAX_PARSE_BYTES:
        return ModelPy(auto_complete="unknown")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning on odd escapes: the stub prints them, loads anyway
            tree = ast.parse(text, filename=filename)
    except SyntaxError as e:
        # the stub imports model.py: Python's str(SyntaxError) is what Triton reports ("invalid syntax (model.py,
        # line 1)"); the stub's Python may word a few errors differently from ours
        return ModelPy(syntax_error=f"{type(e).__name__}: {e.msg} ({filename}, line {e.lineno})", line=e.lineno)
    except (ValueError, RecursionError, MemoryError):  # NUL bytes, absurd nesting: leave it to the stub
        return ModelPy(auto_complete="unknown")
    return ModelPy(auto_complete=_auto_complete(tree))


def _auto_complete(tree: ast.Module) -> str | None:
    """How TritonPythonModel.auto_complete_config fills in the config: "fills-nothing" when its body calls nothing
    that could add an input or output (only returns its argument, maybe sets max_batch_size), "fills" when it calls
    add_input/add_output, "unknown" when it calls something else (a helper may add them)."""
    found = None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "TritonPythonModel":
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "auto_complete_config":
                    found = item
    if found is None:
        # a module-level def (or a class under another name) is not what the stub calls; but a text that defines
        # the name elsewhere may assign it to the class: do not claim "nothing" then
        names = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return "unknown" if "auto_complete_config" in names else None
    verdict = "fills-nothing"
    for node in ast.walk(found):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else None
            if name in _FILLS_IO:
                return "fills"
            if name not in {"set_max_batch_size", "set_dynamic_batching", "set_model_transaction_policy",
                            "as_dict", "get", "print", "len", "str", "int", "logger", "log_info", "log_warn",
                            "log_error", "log_verbose"}:
                verdict = "unknown"
    return verdict
