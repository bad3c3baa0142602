"""One Triton client facade over tritonclient (gRPC first, HTTP where simpler), no Qt.

    client = TritonClient(endpoints, logs=runtime.logs)
    client.wait_model_ready("add_sub")
    client.load("add_sub", config=doc)          # config override from a ConfigDocument; LoadFailed has the real reason
    stats = client.statistics("add_sub")        # cumulative; client.statistics_delta(...) for the change since last call
    metrics = client.metrics()                  # Prometheus text parsed with prometheus_client's parser
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from dataclasses import dataclass

from google.protobuf import json_format
from google.protobuf.message import Message

from studio.runtime.base import Endpoints, LogStream
from studio.runtime.errors import LoadFailed, LoadTimeout, RuntimeFailure

_REASON = re.compile(r"^[EW]\d{4} [\d:.]+\s+\d+\s+\S+\]\s*\"?(?P<msg>.*?)\"?$")


@dataclass
class ModelState:
    name: str
    version: str
    state: str  # READY | UNAVAILABLE | LOADING | UNLOADING
    reason: str


def config_json(config) -> str:
    """A config override for load_model: JSON with protobuf field names (a ConfigDocument or a ModelConfig)."""
    msg: Message = config.to_message() if hasattr(config, "to_message") else config
    return json_format.MessageToJson(msg, preserving_proto_field_name=True, indent=None)


class TritonClient:
    def __init__(self, endpoints: Endpoints, logs: LogStream | None = None, timeout_s: float = 30.0) -> None:
        import tritonclient.grpc as grpcclient

        self.endpoints = endpoints
        self.logs = logs
        self.timeout_s = timeout_s
        self._grpc = grpcclient.InferenceServerClient(endpoints.grpc_target)
        self._last_stats: dict[str, dict] = {}

    def close(self) -> None:
        self._grpc.close()

    # -- health ------------------------------------------------------------------------------------------
    def server_ready(self) -> bool:
        try:
            return bool(self._grpc.is_server_ready())
        except Exception:  # noqa: BLE001 - unreachable means not ready
            return False

    def model_ready(self, name: str, version: str = "") -> bool:
        try:
            return bool(self._grpc.is_model_ready(name, version))
        except Exception:  # noqa: BLE001
            return False

    def wait_model_ready(self, name: str, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.model_ready(name):
                return
            time.sleep(0.1)
        states = {m.name: m for m in self.repository_index()}
        reason = states[name].reason if name in states else "not in the repository index"
        raise RuntimeFailure(f"model '{name}' did not become ready within {timeout_s:.0f} s: {reason}")

    def server_metadata(self) -> dict:
        return self._grpc.get_server_metadata(as_json=True)

    # -- repository ----------------------------------------------------------------------------------------
    def repository_index(self) -> list[ModelState]:
        data = self._grpc.get_model_repository_index(as_json=True)
        out = []
        for m in data.get("models", []):
            out.append(ModelState(m.get("name", ""), m.get("version", ""), m.get("state", ""), m.get("reason", "")))
        return out

    def load(self, name: str, config=None, files: dict[str, bytes] | None = None,
             timeout_s: float | None = None) -> None:
        """Load (or reload) a model, optionally with a config override; LoadFailed carries the log's reason.
        With `timeout_s`, a load that takes longer raises LoadTimeout (the server goes on loading it)."""
        mark = self.logs.total if self.logs is not None else 0
        try:
            self._grpc.load_model(name, config=config_json(config) if config is not None else None, files=files,
                                  client_timeout=timeout_s)
        except Exception as e:  # noqa: BLE001 - tritonclient raises InferenceServerException
            message = e.message() if callable(getattr(e, "message", None)) else str(e)
            status = e.status() if callable(getattr(e, "status", None)) else None
            if timeout_s is not None and "DEADLINE_EXCEEDED" in str(status or message):
                raise LoadTimeout(name, timeout_s, self._reason_from_log(name, mark)) from None
            raise LoadFailed(name, message, self._reason_from_log(name, mark)) from None

    def unload(self, name: str, unload_dependents: bool = False) -> None:
        self._grpc.unload_model(name, unload_dependents=unload_dependents)

    def _reason_from_log(self, name: str, mark: int) -> str | None:
        if self.logs is None:
            return None
        deadline = time.monotonic() + 2.0
        while True:
            new = self.logs.lines()[-max(0, self.logs.total - mark):] if self.logs.total > mark else []
            for line in new:
                if name in line and (line.startswith("E") or "failed" in line.lower() or "Poll failed" in line):
                    m = _REASON.match(line)
                    text = m.group("msg") if m else line
                    if "Poll failed for model directory" in text and ": " in text:
                        text = text.split("': ", 1)[-1]
                    return text
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)

    # -- configuration -------------------------------------------------------------------------------------
    def resolved_config(self, name: str) -> dict:
        """What the server made of the config (auto-completed), from GET /v2/models/<m>/config."""
        with urllib.request.urlopen(f"{self.endpoints.http}/v2/models/{name}/config", timeout=self.timeout_s) as r:
            return json.loads(r.read())

    # -- statistics and metrics ----------------------------------------------------------------------------
    def statistics(self, name: str) -> dict:
        data = self._grpc.get_inference_statistics(name, as_json=True)
        stats = data.get("model_stats", [])
        return stats[0] if stats else {}

    def statistics_delta(self, name: str) -> dict:
        """Counts and times since the previous call for this model (the first call returns the totals)."""
        now = self.statistics(name)
        before = self._last_stats.get(name, {})
        self._last_stats[name] = now
        return _delta(now, before)

    def metrics(self) -> dict[str, list[tuple[dict, float]]]:
        """Prometheus metrics: family name -> [(labels, value)], parsed with prometheus_client."""
        from prometheus_client.parser import text_string_to_metric_families

        with urllib.request.urlopen(f"{self.endpoints.metrics}/metrics", timeout=self.timeout_s) as r:
            text = r.read().decode()
        out: dict[str, list[tuple[dict, float]]] = {}
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                out.setdefault(s.name, []).append((dict(s.labels), float(s.value)))
        return out


def _num(v) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def _delta(now, before):
    if isinstance(now, dict):
        return {k: _delta(v, before.get(k) if isinstance(before, dict) else None) for k, v in now.items()}
    if isinstance(now, list):
        if isinstance(before, list) and now and isinstance(now[0], dict) and "batch_size" in now[0]:
            prev = {_num(b.get("batch_size")): b for b in before}
            return [_delta(n, prev.get(_num(n.get("batch_size")), {})) | {"batch_size": n.get("batch_size")} for n in now]
        return now
    if isinstance(now, (int, float)) or (isinstance(now, str) and now.isdigit()):
        return _num(now) - _num(before)
    return now
