"""`triton-studio dashboard REPO --model M [--server embedded|docker|URL] [--concurrency N | --rate R]
[--script STEPS.json] [--record OUT.json] [--screenshot OUT.png] [--exit-after S]`: the dashboard in its own
window, for a presenter: it starts the server when needed, plays the script's steps through the dashboard's
real controls, writes the record and the screenshot, and stops what it started.

Exit codes: 0 ok; 1 a failure (server, model, load, a step refused), with a one-line message; 2 bad arguments
or a bad script (file:line:col where JSON gives a position).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from studio.tuning.script import Recording, ScriptError, ScriptStep, load_script

SAMPLE_KEYS = ("t", "throughput", "p50_ms", "p90_ms", "p99_ms", "errors", "queue_us", "compute_us", "avg_batch_size",
               "util", "mem_mb")
TAIL_S = 20.0  # after the last step, when no --exit-after: time for its effect to show


def _fail(code: int, message: str) -> int:
    print(f"dashboard: {message}", file=sys.stderr)
    return code


def play_step(dash, step: ScriptStep) -> str | None:
    """Play one step through the dashboard's controls (what a user's clicks do); a refusal message or None."""
    from studio.tuning.controls import BATCHING

    if step.kind == "load":
        p = step.payload
        if p.get("pause"):
            dash.pause()
        if p.get("resume"):
            dash.start()
        if "concurrency" in p or "rate" in p or "poisson" in p:
            dash.set_load(concurrency=p.get("concurrency"), rate=p.get("rate"), poisson=p.get("poisson"))
        return None
    for path, value in step.edits().items():
        control = dash.controls.get(path)
        if path == BATCHING and control is not None:
            ok = control.commit(value is not None)
            message = None if ok else (dash.last_refusal or "refused")
        elif control is not None and control.isEnabled():
            ok = control.commit(value)
            message = None if ok else (dash.last_refusal or "refused")
        else:
            message = dash.request_edits({path: value}, source="script")
        if message:
            return message
    return None


def docker_image(requested: str | None = None) -> tuple[str | None, str]:
    """The image for `--server docker`: the one asked for, else NVIDIA's default Triton when it is on this
    machine, else a local Triton image (the studio's CPU build first). Never a pull: a presenter's demo must not
    start a 10-20 GB download. (None, why) when the engine cannot be asked (the runtime then says why)."""
    from studio.runtime.docker_runtime import CPU_IMAGE_REPOSITORY, DEFAULT_IMAGE, docker_client
    from studio.runtime.images import image_is_local, local_triton_images

    if requested:
        return requested, "asked for"
    try:
        client = docker_client()
        if image_is_local(client, DEFAULT_IMAGE):
            return DEFAULT_IMAGE, "the default"
        local = [i.tag for i in local_triton_images(client)]
    except Exception as e:  # noqa: BLE001 - no engine: make_runtime reports it in its own words
        return None, str(e)
    cpu = [t for t in local if t.startswith(CPU_IMAGE_REPOSITORY + ":")]
    if cpu or local:
        return (cpu or local)[0], f"{DEFAULT_IMAGE} is not on this machine; a local Triton image"
    return None, "no local Triton image"


def server_pid(runtime) -> int | None:
    """The Triton process on this machine (its RSS is plotted): the embedded server's, or a local container's."""
    pid = getattr(runtime, "pid", None)
    if isinstance(pid, int) and pid > 0:
        return pid
    container = getattr(runtime, "container", None)
    if container is None:
        return None
    from studio.runtime.images import engine_is_remote

    if engine_is_remote(getattr(runtime, "base_url", None)):
        return None  # another machine's process table
    try:
        container.reload()
        pid = int(container.attrs["State"]["Pid"])
    except Exception:  # noqa: BLE001 - a gone container: no memory plot
        return None
    return pid if pid > 0 and Path(f"/proc/{pid}").exists() else None


def run_dashboard(args) -> int:
    repo = Path(args.repository)
    if not repo.is_dir():
        return _fail(2, f"{repo}: not a folder")
    if args.concurrency is not None and args.concurrency < 1:
        return _fail(2, "--concurrency must be at least 1")
    if args.rate is not None and args.rate <= 0:
        return _fail(2, "--rate must be > 0")
    if args.exit_after is not None and args.exit_after <= 0:
        return _fail(2, "--exit-after must be > 0")
    steps: list[ScriptStep] = []
    if args.script:
        try:
            steps = load_script(args.script)
        except ScriptError as e:
            return _fail(2, str(e))
    config_path = repo / args.model / "config.pbtxt"
    server = args.server or "embedded"
    is_url = server not in ("embedded", "docker")
    if not config_path.is_file() and not is_url:
        return _fail(2, f"{config_path}: no such model config (is '{args.model}' a model of {repo}?)")

    from studio.config import ConfigDocument, ParseError

    document = None
    if config_path.is_file():
        try:
            document = ConfigDocument.load(config_path)
        except ParseError as e:
            return _fail(1, f"{config_path}:{e.line}:{e.column}: {e}")

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([sys.argv[0]])
    runtime = None
    client = None
    try:
        from studio.runtime import RuntimeFailure, ServerOptions, make_runtime
        from studio.runtime.client import TritonClient

        if is_url:
            from studio.tuning.remote import endpoints_for, fetch_config, grpc_target

            target = grpc_target(server)
            try:
                endpoints = endpoints_for(target)
                client = TritonClient(endpoints)
                if document is None:
                    from google.protobuf import text_format

                    document = ConfigDocument.parse(text_format.MessageToString(fetch_config(target, args.model)))
            except Exception as e:  # noqa: BLE001 - unreachable server, unknown model
                return _fail(1, f"cannot reach model '{args.model}' at {server}: {e}")
        else:
            image = None
            if server == "docker":
                image, why = docker_image(getattr(args, "image", None))
                if image is not None:
                    print(f"dashboard: image {image} ({why})", file=sys.stderr)
            print(f"dashboard: starting the {server} Triton on {repo} …", file=sys.stderr)
            try:
                runtime = make_runtime(server, image=image)
                endpoints = runtime.start(repo, ServerOptions(models=[args.model]))
            except RuntimeFailure as e:
                return _fail(1, f"the {server} server did not start: {str(e).splitlines()[0]}")
            client = TritonClient(endpoints, logs=runtime.logs)
            target = endpoints.grpc_target
        try:
            client.wait_model_ready(args.model, timeout_s=60)
        except Exception as e:  # noqa: BLE001
            return _fail(1, str(e).splitlines()[0])
        return _run_window(app, args, document, client, target, steps, server,
                           server_pid(runtime) if runtime is not None else None)
    finally:
        if client is not None:
            client.close()
        if runtime is not None:
            runtime.stop()


def _run_window(app, args, document, client, target, steps, server, pid: int | None = None) -> int:
    from PySide6.QtCore import QEventLoop, QTimer

    from studio.ui.tuning.dashboard import TuningDashboard

    concurrency = None if args.rate else (args.concurrency or 16)
    dash = TuningDashboard(target, args.model, document, client, keep=None, concurrency=concurrency,
                           rate=args.rate, autostart=True, server_pid=pid)
    dash.setWindowTitle(f"Tuning {args.model} — Triton Config Studio")
    dash.resize(1280, 800)
    problems: list[str] = []
    dash.show()
    if dash.load_error.text():
        dash.shutdown()
        return _fail(1, f"load did not start: {dash.load_error.text()}")
    t0 = time.monotonic()
    QTimer.singleShot(1500, dash.stalls.reset)  # the first layout and paint are not a stall of the live view
    for step in steps:
        def play(step=step):
            message = play_step(dash, step)
            if message:
                problems.append(f"{args.script}:{step.line}:{step.column}: step at {step.at_s:g} s refused: {message}")

        QTimer.singleShot(int(step.at_s * 1000), play)
    if args.exit_after is not None:
        duration = args.exit_after
    elif steps:
        duration = steps[-1].at_s + TAIL_S
    else:
        duration = None  # interactive: until the window closes
    if duration is None:
        app.exec()
    else:
        loop = QEventLoop()
        QTimer.singleShot(int(duration * 1000), loop.quit)
        loop.exec()
        # a reload still running finishes (at most 15 s more), so the record holds its outcome
        deadline = time.monotonic() + 15
        while (dash.coordinator.state != "idle") and time.monotonic() < deadline:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
            time.sleep(0.02)
        app.processEvents()
    dash._redraw()
    dash.plots.redraw()
    if args.screenshot:
        Path(args.screenshot).parent.mkdir(parents=True, exist_ok=True)
        dash.grab().save(args.screenshot)
    rows = dash.series.rows()
    rec = Recording(args.model, server, samples=[{k: r.get(k) for k in SAMPLE_KEYS} for r in rows],
                    changes=[c.to_json() for c in dash.engine.changes], ui_max_stall_ms=dash.stalls.max_stall_ms,
                    load={"concurrency": dash.engine.concurrency, "rate": dash.engine.rate,
                          "seconds": round(time.monotonic() - t0, 2)},
                    errors_total=dash.engine.errors_total, perf_analyzer=dash.engine.perf_analyzer())
    if args.record:
        Path(args.record).parent.mkdir(parents=True, exist_ok=True)
        rec.write(args.record)
    dash.shutdown()
    dash.close()
    if problems:
        return _fail(1, problems[0])
    if not any((r.get("throughput") or 0) > 0 for r in rows):
        err = dash.load_error.text() or "no request completed"
        return _fail(1, f"the load generator got no answers from {target}: {err}")
    print(f"dashboard: {len(rows)} samples, {len(rec.changes)} changes, "
          f"longest UI stall {dash.stalls.max_stall_ms:.0f} ms", file=sys.stderr)
    return 0
