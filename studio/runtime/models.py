"""Per-model state on a server, from the repository index API (POST v2/repository/index), and whether the
served config differs from the file. No Qt.

    states = fetch_states(client, repository_models=["add_sub", ...])
    states["add_sub"].state        # READY | LOADING | UNLOADING | UNAVAILABLE | NOT_LOADED
    states["add_sub"].versions     # [VersionState("1", "READY", "")]
    config_drift(file_config, client.resolved_config("add_sub"))   # [] when the server runs the file's settings
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from google.protobuf import json_format
from tritonclient.grpc import model_config_pb2 as pb

READY = "READY"
LOADING = "LOADING"
UNLOADING = "UNLOADING"
UNAVAILABLE = "UNAVAILABLE"
NOT_LOADED = "NOT_LOADED"


@dataclass(frozen=True)
class VersionState:
    version: str
    state: str
    reason: str = ""


@dataclass(frozen=True)
class ModelStatus:
    name: str
    versions: tuple[VersionState, ...] = field(default_factory=tuple)

    @property
    def state(self) -> str:
        states = [v.state for v in self.versions if v.state]
        if LOADING in states:
            return LOADING
        if UNLOADING in states:
            return UNLOADING
        if READY in states:
            return READY
        if any(s == UNAVAILABLE and v.reason not in ("", "unloaded") for v in self.versions for s in [v.state]):
            return UNAVAILABLE
        return NOT_LOADED

    @property
    def reason(self) -> str:
        """The first non-trivial reason a version gives (Triton's words)."""
        for v in self.versions:
            if v.reason and v.reason != "unloaded":
                return v.reason
        return ""

    def label(self) -> str:
        """Short text for a badge: 'READY v1', 'UNAVAILABLE: reason', 'not loaded'."""
        if self.state == NOT_LOADED:
            return "not loaded"
        vs = ",".join(v.version for v in self.versions if v.state == self.state and v.version)
        text = self.state + (f" v{vs}" if vs else "")
        if self.state == UNAVAILABLE and self.reason:
            text += f": {self.reason}"
        return text

    def to_json(self) -> dict:
        return {"name": self.name, "state": self.state, "reason": self.reason,
                "versions": [asdict(v) for v in self.versions]}


def states_from_index(index, repository_models: list[str] | None = None) -> dict[str, ModelStatus]:
    """Index entries (objects with name/version/state/reason) grouped per model. Models of the repository the
    index does not list are NOT_LOADED."""
    grouped: dict[str, list[VersionState]] = {}
    for m in index:
        lst = grouped.setdefault(m.name, [])
        if m.version or m.state:
            lst.append(VersionState(m.version, m.state, m.reason))
    for name in repository_models or []:
        grouped.setdefault(name, [])
    return {name: ModelStatus(name, tuple(sorted(vs, key=lambda v: (len(v.version), v.version))))
            for name, vs in sorted(grouped.items())}


def fetch_states(client, repository_models: list[str] | None = None) -> dict[str, ModelStatus]:
    return states_from_index(client.repository_index(), repository_models)


class ModelControlDisabled(RuntimeError):
    """The server runs with --model-control-mode=none (or poll): explicit load/unload is refused."""


def _control_error(e: Exception) -> Exception:
    text = e.message() if callable(getattr(e, "message", None)) else str(e)
    if "not allowed" in text and ("polling" in text or "model control" in text or "explicit" in text):
        return ModelControlDisabled(
            "this server does not allow loading or unloading models (it runs with --model-control-mode=none or poll): "
            + text)
    return e


def load(client, name: str, config=None) -> None:
    try:
        client.load(name, config=config)
    except Exception as e:  # noqa: BLE001 - re-raised, classified
        raise _control_error(e) from None


def unload(client, name: str) -> None:
    try:
        client.unload(name)
    except Exception as e:  # noqa: BLE001
        raise _control_error(e) from None


def load_all(client, names: list[str]) -> dict[str, str]:
    """Load each model; returns {name: error message} for those that failed."""
    errors = {}
    for n in names:
        try:
            load(client, n)
        except ModelControlDisabled:
            raise
        except Exception as e:  # noqa: BLE001 - collected per model
            errors[n] = str(e)
    return errors


def unload_all(client, names: list[str]) -> dict[str, str]:
    errors = {}
    for n in names:
        try:
            unload(client, n)
        except ModelControlDisabled:
            raise
        except Exception as e:  # noqa: BLE001
            errors[n] = str(e)
    return errors


# -- the served config against the file ----------------------------------------------------------------------
def _as_message(config) -> pb.ModelConfig:
    if isinstance(config, pb.ModelConfig):
        return config
    if hasattr(config, "to_message"):
        return config.to_message()
    msg = pb.ModelConfig()
    if isinstance(config, str):
        json_format.Parse(config, msg, ignore_unknown_fields=True)
    else:
        json_format.ParseDict(config, msg, ignore_unknown_fields=True)
    return msg


def _subset_diff(mine, served, path: str, out: list[tuple[str, object, object]]) -> None:
    if isinstance(mine, dict):
        served = served if isinstance(served, dict) else {}
        for k, v in mine.items():
            _subset_diff(v, served.get(k), f"{path}.{k}" if path else k, out)
    elif isinstance(mine, list) and mine and isinstance(mine[0], dict):
        served = served if isinstance(served, list) else []
        by_name = {s.get("name"): s for s in served if isinstance(s, dict) and s.get("name")}
        for i, v in enumerate(mine):
            other = by_name.get(v.get("name")) if v.get("name") else (served[i] if i < len(served) else None)
            if other is None:
                out.append((f"{path}[{i}]", v, None))
            else:
                _subset_diff(v, other, f"{path}[{i}]", out)
    elif mine != served:
        out.append((path, mine, served))


def config_drift(file_config, served_config) -> list[tuple[str, object, object]]:
    """Settings the file makes that the server does not run: [(field path, file value, served value)].
    Both sides are parsed into ModelConfig messages first; fields the file leaves out (Triton's defaults and
    auto-completion) are not differences."""
    mine = json_format.MessageToDict(_as_message(file_config), preserving_proto_field_name=True)
    served = json_format.MessageToDict(_as_message(served_config), preserving_proto_field_name=True)
    mine.pop("name", None)
    out: list[tuple[str, object, object]] = []
    _subset_diff(mine, served, "", out)
    return out
