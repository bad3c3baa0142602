"""Deploy one model: validate -> save -> server (start one if none is connected) -> load with the document's
config -> wait for READY -> one test inference. Plain functions, a cancel flag and a progress callback; no Qt.

    result = deploy(DeployRequest(repository, "add_sub", text=doc.text, save=doc.save, runtime=None,
                                  make_runtime=lambda: make_runtime("embedded")),
                    progress=lambda step, message: print(step, message), cancel=threading.Event())
    result.ok, result.time_to_ready_s, result.inference.outputs, result.reason

Nothing reaches the server when validation finds an error. A failed load carries Triton's reason (the load
response and the relevant server log lines) and, when the reason names a field, that field's line.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from studio.runtime.base import Runtime, ServerOptions, Status
from studio.runtime.errors import LoadFailed, RuntimeFailure

STEPS = ("validate", "save", "server", "load", "ready", "test")
STEP_TEXT = {
    "validate": "validating",
    "save": "saving",
    "server": "starting a server",
    "load": "loading the model",
    "ready": "waiting for READY",
    "test": "running a test inference",
}


class Cancelled(RuntimeFailure):
    pass


@dataclass
class DeployRequest:
    repository: str | Path
    model: str
    text: str | None = None  # the document's current text; None: the file as it is on disk
    save: Callable[[], None] | None = None  # the editor's save; None: write `text` atomically when it differs
    runtime: Runtime | None = None  # a connected server; None (or not ready): make_runtime() and start it
    make_runtime: Callable[[], Runtime] | None = None
    server_options: ServerOptions | None = None
    ready_timeout_s: float = 120.0
    test_inputs: dict | None = None  # {name: ndarray}; None: synthesized from the served config
    run_test: bool = True


@dataclass
class DeployResult:
    ok: bool = False
    step: str = "validate"  # the step reached (the failing one when not ok)
    runtime: Runtime | None = None
    started_server: bool = False
    server_start_s: float | None = None
    time_to_ready_s: float | None = None  # from the load request to READY
    total_s: float = 0.0
    findings: list = field(default_factory=list)  # validation findings (errors refuse the deploy)
    error: str | None = None  # one paragraph for the user
    reason: str | None = None  # Triton's own reason for a refused load
    log_lines: list[str] = field(default_factory=list)  # the relevant server log lines
    field_path: str | None = None  # the config field the reason names
    line: int | None = None  # that field's line in the document (1-based)
    inference: object = None  # inference.InferenceResult
    inference_error: str | None = None
    served_config: dict | None = None  # the server's resolved config of the model (GET v2/models/<m>/config)
    cancelled: bool = False

    def summary(self) -> str:
        if self.cancelled:
            return f"deploy cancelled during {STEP_TEXT[self.step]}"
        if not self.ok:
            return self.error or f"deploy failed during {STEP_TEXT[self.step]}"
        text = f"READY in {self.time_to_ready_s:.2f} s"
        if self.inference is not None:
            text += f"; test inference {self.inference.latency_ms:.1f} ms"
        return text


# -- helpers -----------------------------------------------------------------------------------------------
def _cancellable(fn: Callable[[], object], cancel: threading.Event | None, on_late: Callable[[object], None] | None = None):
    """Run fn on a helper thread; return its result, or raise Cancelled as soon as `cancel` is set (fn's late
    result then goes to on_late, for clean-up)."""
    if cancel is None:
        return fn()
    box: dict = {}
    done = threading.Event()
    lock = threading.Lock()

    def run() -> None:
        try:
            box["result"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised on the caller's thread
            box["error"] = e
        with lock:
            done.set()
            late = box.get("abandoned")
        if late and on_late is not None and "result" in box:
            on_late(box["result"])

    threading.Thread(target=run, daemon=True, name="deploy-step").start()
    while not done.wait(0.05):
        if cancel.is_set():
            with lock:
                if not done.is_set():
                    box["abandoned"] = True
                    raise Cancelled("cancelled")
            break
    if "error" in box:
        raise box["error"]
    return box["result"]


# words in Triton's messages -> the field they are about
_FIELD_WORDS = [
    (r"preferred (batch )?size", "dynamic_batching.preferred_batch_size"),
    (r"max[ _]queue[ _]delay", "dynamic_batching.max_queue_delay_microseconds"),
    (r"dynamic batching", "dynamic_batching"),
    (r"sequence batching", "sequence_batching"),
    (r"max[ _]batch[ _]size", "max_batch_size"),
    (r"instance group|instance_group|KIND_GPU|KIND_CPU", "instance_group"),
    (r"version policy|version_policy", "version_policy"),
    (r"default_model_filename|model file", "default_model_filename"),
    (r"\bplatform\b", "platform"),
    (r"\bbackend\b", "backend"),
    (r"ensemble", "ensemble_scheduling"),
]
_IO = re.compile(r"(input|output)s? '([^']+)'", re.IGNORECASE)


def field_of_reason(reason: str, doc) -> tuple[str | None, int | None]:
    """The config field a Triton message is about, and its line in the document (when it is written there)."""
    if not reason:
        return None, None
    candidates: list[str] = []
    m = _IO.search(reason)
    if m is not None and doc is not None:
        kind = m.group(1).lower()
        for i, io in enumerate(getattr(doc.to_message(), kind)):
            if io.name == m.group(2):
                low = reason.lower()
                for sub, words in (("dims", ("dims", "shape")), ("data_type", ("datatype", "data type", "data_type")),
                                   ("reshape", ("reshape",)), ("format", ("format",))):
                    if any(w in low for w in words):
                        candidates.append(f"{kind}[{i}].{sub}")
                candidates.append(f"{kind}[{i}]")
    for pattern, path in _FIELD_WORDS:
        if re.search(pattern, reason, re.IGNORECASE):
            candidates.append(path)
    for path in candidates:
        line = None
        if doc is not None:
            p = path
            while p and line is None:
                for q in (p, p + "[0]"):  # a repeated scalar is written where its first element is
                    try:
                        pos = doc.position(q)
                    except Exception:  # noqa: BLE001 - not a path of this document
                        pos = None
                    if pos is not None and (line is None or pos[0] > line):
                        line = pos[0]
                if line is not None:
                    break
                p = p[: p.rindex("[")] if p.endswith("]") else (p[: p.rindex(".")] if "." in p else "")
        if line is not None or doc is None:
            return path, line
    return (candidates[0], None) if candidates else (None, None)


def relevant_log_lines(lines: list[str], model: str, limit: int = 12) -> list[str]:
    """Log lines about this model that matter for a failure: errors and warnings, and lines naming it."""
    out = []
    for ln in lines:
        low = ln.lower()
        if (model in ln and (ln[:1] in ("E", "W") or "fail" in low or "error" in low or "unavailable" in low)) \
                or (ln[:1] == "E" and "error" in low):
            out.append(ln)
    # tracebacks from a python model's initialize come as plain lines after an error line
    return out[-limit:]


def validate_document(repository: str | Path, model: str, text: str | None):
    """(document or None, findings). The document's current text against Triton's rules and the model
    folder's files."""
    from studio.config import ConfigDocument, ParseError
    from studio.repository import scan_model
    from studio.validate import Finding, Options
    from studio.validate import model_config_and_findings as check

    folder = Path(repository) / model
    cfg = folder / "config.pbtxt"
    if text is None:
        try:
            text = cfg.read_text()
        except OSError as e:
            return None, [Finding("error", "repository.unreadable", f"{cfg}: {e.strerror or e}", file=str(cfg), model=model)]
    try:
        doc = ConfigDocument.parse(text)
    except ParseError as e:
        return None, [Finding.from_parse_error(e, file=str(cfg), model=model)]
    entry = scan_model(folder, Path(repository))
    entry.document, entry.error, entry.read_error = doc, None, None
    entry.config = cfg
    _, findings = check(entry, Options())
    return doc, findings


# -- the pipeline ------------------------------------------------------------------------------------------
def deploy(req: DeployRequest, progress: Callable[[str, str], None] | None = None,
           cancel: threading.Event | None = None) -> DeployResult:
    from studio.runtime.client import TritonClient
    from studio.runtime.models import ModelControlDisabled, _control_error

    t_start = time.monotonic()
    res = DeployResult(runtime=req.runtime)
    say = progress or (lambda step, message: None)

    def step(name: str, message: str | None = None) -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled("cancelled")
        res.step = name
        say(name, message or STEP_TEXT[name] + " …")

    client = None
    try:
        # 1. validate: errors refuse, nothing reaches the server
        step("validate")
        doc, findings = validate_document(req.repository, req.model, req.text)
        res.findings = findings
        errors = [f for f in findings if f.severity == "error"]
        if errors:
            res.error = f"{len(errors)} validation error(s): nothing was sent to the server\n" + "\n".join(
                f.format() for f in errors)
            return res
        # 2. save
        step("save")
        if req.save is not None:
            req.save()
        elif req.text is not None:
            from studio.config import atomic_write

            cfg = Path(req.repository) / req.model / "config.pbtxt"
            if not cfg.exists() or cfg.read_text() != req.text:
                atomic_write(cfg, req.text)
        # 3. server
        rt = req.runtime
        if rt is None or rt.poll() != Status.READY:
            if req.make_runtime is None:
                raise RuntimeFailure("no server is connected and none can be started")
            step("server")
            rt = req.make_runtime()
            res.runtime = rt
            options = req.server_options or ServerOptions(models=[])
            t0 = time.monotonic()

            def late_stop(_ep) -> None:
                rt.stop()

            _cancellable(lambda: rt.start(req.repository, options), cancel, on_late=late_stop)
            res.started_server = True
            res.server_start_s = time.monotonic() - t0
            say("server", f"{rt.kind} server ready in {res.server_start_s:.2f} s")
        client = TritonClient(rt.endpoints, logs=rt.logs)
        # 4. load with the document's config
        step("load")
        mark = rt.logs.total
        t_load = time.monotonic()
        try:
            _cancellable(lambda: client.load(req.model, config=doc), cancel)
        except LoadFailed as e:
            ctl = _control_error(RuntimeError(e.server_message))
            if isinstance(ctl, ModelControlDisabled):
                res.error = str(ctl)
                return res
            res.reason = e.reason or e.server_message
            new = rt.logs.lines()[-max(0, rt.logs.total - mark):] if rt.logs.total > mark else []
            res.log_lines = relevant_log_lines(new, req.model)
            res.field_path, res.line = field_of_reason(res.reason, doc)
            res.error = f"Triton refused to load '{req.model}': " + e.server_message.replace("\\n", "\n").strip()
            pieces = re.split(r": |\\n|\n", e.reason.rsplit('] "', 1)[-1]) if e.reason else []
            said = any(len(p) >= 20 and p in e.server_message for p in pieces)  # Triton's answer has it already
            if e.reason and not said:
                res.error += f"\nreason (server log): {e.reason}"
            return res
        # 5. READY
        step("ready")
        deadline = time.monotonic() + req.ready_timeout_s
        while not client.model_ready(req.model):
            if cancel is not None and cancel.is_set():
                raise Cancelled("cancelled")
            if time.monotonic() > deadline:
                res.error = f"'{req.model}' did not become READY within {req.ready_timeout_s:.0f} s"
                return res
            states = {m.name: m for m in client.repository_index() if m.name == req.model}
            st = states.get(req.model)
            if st is not None and st.state == "UNAVAILABLE" and st.reason not in ("", "unloaded"):
                res.reason = st.reason
                res.error = f"'{req.model}' is UNAVAILABLE: {st.reason}"
                res.field_path, res.line = field_of_reason(st.reason, doc)
                return res
            time.sleep(0.05)
        res.time_to_ready_s = time.monotonic() - t_load
        say("ready", f"READY in {res.time_to_ready_s:.2f} s")
        # 6. one test inference
        if req.run_test:
            step("test")
            from studio.runtime.inference import run_inference, synthesize_inputs

            try:
                try:
                    res.served_config = client.resolved_config(req.model)
                except Exception:  # noqa: BLE001 - fall back to the document's config
                    res.served_config = None
                inputs = req.test_inputs
                if inputs is None:
                    inputs = synthesize_inputs(res.served_config if res.served_config is not None else doc)
                res.inference = run_inference(rt.endpoints, req.model, inputs)
            except Exception as e:  # noqa: BLE001 - the model is READY; the test call's failure is reported
                msg = e.message() if callable(getattr(e, "message", None)) else str(e)
                res.inference_error = msg
                res.error = f"'{req.model}' is READY but the test inference failed: {msg}"
                return res
        res.ok = True
        return res
    except Cancelled:
        res.cancelled = True
        res.error = f"cancelled during {STEP_TEXT[res.step]}"
        return res
    except RuntimeFailure as e:
        res.error = str(e)
        return res
    finally:
        res.total_s = time.monotonic() - t_start
        if client is not None:
            client.close()
