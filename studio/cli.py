"""`triton-studio`: the GUI when run bare, and headless subcommands over the core.

Exit codes: 0 ok, 1 findings or failure, 2 usage (bad arguments, unknown field path), 130 interrupted (Ctrl-C).
Every error a user can cause ends in one line on stderr (`PATH: what failed: reason`), never a traceback.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from studio import __version__

SUBCOMMANDS = (
    "fmt", "get", "set", "validate", "diff", "new", "templates", "serve", "status", "doctor", "bench", "tune", "dashboard",
    "deploy", "export",
)


MAX_CONCURRENCY = 1024
"""The most requests `bench` keeps in flight (each holds its request and response buffers)."""


def _int_in(lo: int, hi: int | None = None, what: str = "a whole number"):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected {what}") from None
        if v < lo or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"{v}: expected {what} from {lo} to {hi}" if hi is not None
                                             else f"{v}: expected {what} of at least {lo}")
        return v
    return parse


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of seconds (or a rate) above 0") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"{text}: expected a finite number above 0")
    return v


_port = _int_in(1, 65535, "a TCP port")


def _shape(text: str) -> str:
    name, _, dims = text.rpartition(":")
    parts = dims.split(",") if dims else []
    if not name or not parts or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: expected INPUT_NAME:d1,d2 with positive sizes, e.g. INPUT0:3,224,224")
    return text


def _url(text: str) -> str:
    import re

    from studio.runtime.remote import parse_server_url

    m = re.search(r":(\d+)/?$", text.strip())
    if m and not 1 <= int(m.group(1)) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: port {m.group(1)} is out of range (1 to 65535)")
    try:
        parse_server_url(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _config_files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(p.rglob("config.pbtxt")))
        else:
            out.append(p)
    return out


def _load(path: Path):
    from studio.config import ConfigDocument

    return ConfigDocument.load(path)


def _load_or_report(path: str):
    """The document at path, or None after printing why it cannot be read (file:line:col for bad text)."""
    from studio.config import ParseError

    try:
        return _load(Path(path))
    except ParseError as e:
        print(e.format(path), file=sys.stderr)
    except OSError as e:
        print(_os_line(path, "cannot read", e), file=sys.stderr)
    return None


def _os_line(path, what: str, e: OSError) -> str:
    """One line for an OSError: `path: what: reason`."""
    return f"{path}: {what}: {e.strerror or e}"


def cmd_fmt(args) -> int:
    from studio.config import ParseError, SaveError, atomic_write
    from studio.config.format import canonical_text
    from studio.repository.storage import ReadOnlyError, check_writable

    try:
        for path in args.paths:
            check_writable(path)
    except ReadOnlyError as e:
        print(e, file=sys.stderr)
        return 1
    status = 0
    files = _config_files(args.paths)
    if not files:
        print("fmt: no config.pbtxt found", file=sys.stderr)
        return 1
    for path in files:
        try:
            doc = _load(path)
        except (OSError, ParseError) as e:
            print(e.format(str(path)) if isinstance(e, ParseError) else _os_line(path, "cannot read", e), file=sys.stderr)
            status = 1
            continue
        new = canonical_text(doc)
        if new == doc.text:
            continue
        if args.check:
            print(f"{path}: would be reformatted")
            status = 1
        else:
            try:
                atomic_write(path, new, expect=doc.disk_stamp, force=args.force)
            except SaveError as e:
                print(e, file=sys.stderr)
                status = 1
                continue
            print(f"{path}: reformatted")
    return status


def _load_config_at(path: str, folder_ok: bool = False):
    """The document at a path or an object-store URL (s3:// gs:// az://; a model folder URL reads its
    config.pbtxt), or None after printing one line saying why not."""
    from studio.repository.storage import is_url

    if not is_url(path):
        if folder_ok and Path(path).is_dir():
            path = str(Path(path) / "config.pbtxt")
        return _load_or_report(path)
    from studio.config import ParseError
    from studio.repository.storage import StorageError, read_config

    try:
        return read_config(path)
    except ParseError as e:
        print(e.format(e.filename or path), file=sys.stderr)
    except StorageError as e:
        print(e, file=sys.stderr)
    return None


def cmd_get(args) -> int:
    from studio.config import PathError

    doc = _load_config_at(args.path)
    if doc is None:
        return 1
    try:
        value = doc.get(args.field)
        if value is None:
            print(f"{args.path}: {args.field} is not set", file=sys.stderr)
            return 1
        print(doc.value_text(args.field))
    except PathError as e:
        print(f"{args.path}: {e}", file=sys.stderr)
        return 2
    return 0


def cmd_set(args) -> int:
    from studio.config import EditError, ParseError, PathError, SaveError
    from studio.config.values import check_value, parse_value_text
    from studio.repository.storage import ReadOnlyError, check_writable

    try:
        check_writable(args.path)
    except ReadOnlyError as e:
        print(e, file=sys.stderr)
        return 1
    doc = _load_or_report(args.path)
    if doc is None:
        return 1
    before = _error_keys(doc, args.path)
    try:
        value = parse_value_text(doc.descriptor, args.field, args.value)
        if not args.force:
            check_value(args.field, value)
        doc.set(args.field, value)
    except PathError as e:
        print(f"{args.path}: {e}", file=sys.stderr)
        return 2
    except (EditError, ParseError, ValueError, TypeError) as e:
        msg = e.message if isinstance(e, ParseError) else str(e)
        hint = f" ({e.hint})" if isinstance(e, ParseError) and e.hint else ""
        print(f"{args.path}: bad value for {args.field}: {_one_line(msg)}{hint}", file=sys.stderr)
        return 2
    if not args.force:
        worse = _new_errors(doc, args.path, before)
        if worse:
            print(f"{args.path}: bad value for {args.field}: {_one_line(worse)} (nothing written; --force writes it anyway)",
                  file=sys.stderr)
            return 2
    try:
        doc.save(args.path, force=args.force)
    except SaveError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _error_keys(doc, path: str):
    """The validator's errors of a document, as a multiset of (rule, field path)."""
    from collections import Counter

    from studio.validate import Options, validate_config

    try:
        findings = validate_config(doc, options=Options(config_only=True), file=str(path))
    except Exception:  # noqa: BLE001 - a validator fault must not stop an edit; the parse check still runs
        return None
    return Counter((f.rule, f.path) for f in findings if f.severity == "error"), findings


def _new_errors(doc, path: str, before) -> str | None:
    """Why the edited document is worse than before (it no longer parses back, or a new validator error), or None."""
    from studio.config import ConfigDocument, ParseError

    try:
        again = ConfigDocument.parse(doc.text)
    except ParseError as e:
        return f"the edited text would not parse: {e.message}"
    if again.to_message() != doc.to_message():
        return "the edited text would not read back as the same config"
    if not isinstance(before, tuple):
        return None
    after = _error_keys(doc, path)
    if not isinstance(after, tuple):
        return None
    new = after[0] - before[0]
    if not new:
        return None
    rule, fpath = next(iter(new))
    msg = next(f.message for f in after[1] if f.severity == "error" and (f.rule, f.path) == (rule, fpath))
    return msg


def _escaped(text):
    """Text for output: bytes of a file name that are not UTF-8 (surrogate escapes from os.listdir) as \\xNN."""
    if not isinstance(text, str) or text.isascii():
        return text
    return "".join(f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)


def cmd_validate(args) -> int:
    import json

    from studio.repository.storage import StorageError, is_url
    from studio.validate import Options, local_gpus, validate_path

    remote = is_url(args.path)
    options = Options(
        auto_complete=not args.disable_auto_complete_config,
        config_only=args.config_only or (not remote and Path(args.path).is_file()),
        extra_backends=set(args.backend or []),
        triton_version=args.triton_version,
    )
    options.gpus = local_gpus()
    snapshot = None
    try:
        if remote and args.path.endswith(".pbtxt"):  # a lone config file: config-only, as for a local file
            from studio.config import ParseError
            from studio.repository.storage import read_config
            from studio.validate import Finding, Report, validate_config

            options.config_only = True
            try:
                doc = read_config(args.path)
                name = doc.get("name") or args.path.rstrip("/").rsplit("/", 2)[-2]
                report = Report(validate_config(doc, model_name=name, options=options, file=args.path), [name])
            except ParseError as e:
                report = Report([Finding.from_parse_error(e, file=args.path)])
        elif remote:  # a repository or a model folder: a local read-only snapshot of its tree, validated as one
            from studio.repository.storage import snapshot as take_snapshot

            snapshot = take_snapshot(args.path)
            report = validate_path(snapshot.local, options)
        else:
            report = validate_path(args.path, options)
    except FileNotFoundError as e:
        print(f"validate: {e}", file=sys.stderr)
        return 2
    except StorageError as e:
        print(f"validate: {e}", file=sys.stderr)
        return e.exit_code
    try:
        findings = sorted(report.findings, key=lambda f: (f.file or "", f.line or 0, f.column or 0))
        if snapshot is not None:
            for f in findings:
                f.file, f.message = snapshot.to_url(f.file), snapshot.to_url(f.message)
        if args.format == "json":
            keys = ("severity", "rule", "message", "file", "line", "column", "path", "hint")
            print(json.dumps([{k: _escaped(getattr(f, k)) for k in keys} for f in findings], indent=2))
        else:
            for f in findings:
                print(_escaped(f.format()))
            c = report.counts()
            print(f"{len(report.models)} model(s): {c['error']} error(s), {c['warning']} warning(s), {c['info']} note(s)", file=sys.stderr)
    finally:
        if snapshot is not None:
            snapshot.close()
    bad = report.counts()["error"] or (args.strict and report.counts()["warning"])
    return 1 if bad else 0


def cmd_diff(args) -> int:
    import json

    from studio.diff import semantic_diff

    a, b = _load_config_at(args.a, folder_ok=True), _load_config_at(args.b, folder_ok=True)
    if a is None or b is None:
        return 1
    changes = semantic_diff(a.to_message(), b.to_message())
    if args.category:
        changes = [c for c in changes if c.category == args.category]
    if args.format == "json":
        print(json.dumps([c.to_json() for c in changes], indent=2))
    else:
        for c in changes:
            tag = {"added": "+", "removed": "-", "changed": "~"}[c.kind]
            fw = f" ({', '.join(c.frameworks)} only)" if c.frameworks else ""
            left = c.left if c.left is not None else "(unset)"
            right = c.right if c.right is not None else "(unset)"
            print(f"{tag} {c.path} [{c.category}{fw}]: {left} -> {right}")
    return 0


def cmd_new(args) -> int:
    from tritonclient.grpc import model_config_pb2

    from studio.config import EditError, ParseError, PathError
    from studio.config.values import parse_value_text
    from studio.repository.templates import TemplateError, create_model

    sets = {}
    for item in args.set or []:
        if "=" not in item:
            print(f"new: --set takes FIELD=VALUE, got {item!r}", file=sys.stderr)
            return 2
        field, value = item.split("=", 1)
        try:
            sets[field] = parse_value_text(model_config_pb2.ModelConfig.DESCRIPTOR, field, value)
        except (PathError, ParseError) as e:
            print(f"new: --set {item}: {e.message if isinstance(e, ParseError) else e}", file=sys.stderr)
            return 2
    try:
        written = create_model(args.name, args.template, args.repo, sets)
    except (TemplateError, EditError, PathError) as e:
        print(f"new: {e}", file=sys.stderr)
        return 2
    for cfg in written:
        print(f"created {cfg.parent}")
    from studio.repository.templates import list_templates

    t = list_templates()[args.template]
    for f in t.model_files:
        print(f"next: put {f} in {Path(args.repo) / args.name / '1'}/")
    return 0


def cmd_templates(args) -> int:
    from studio.repository.templates import list_templates

    for key, t in list_templates().items():
        print(f"{key:24} {t.description}")
    return 0


def cmd_serve(args) -> int:
    import signal
    import threading

    from studio.runtime import RuntimeFailure, ServerOptions, Status, make_runtime

    gpus = None
    if args.gpus is not None:
        gpus = "all" if args.gpus == "all" else ("none" if args.gpus == "none" else args.gpus.split(","))
    try:
        runtime = make_runtime(args.runtime, image=args.image, gpus=gpus)
    except RuntimeFailure as e:
        print(f"serve: {e}", file=sys.stderr)
        return 1
    options = ServerOptions(
        models=args.models.split(",") if args.models else None,
        http_port=args.http_port, grpc_port=args.grpc_port, metrics_port=args.metrics_port,
        ready_timeout_s=args.timeout,
    )
    stop = threading.Event()
    got: list[int] = []

    class _Interrupted(BaseException):
        pass

    def on_signal(signum, _frame) -> None:
        got.append(signum)
        stop.set()
        if starting.is_set():  # break out of the start-up wait: the runtime stops the half-started server
            starting.clear()
            raise _Interrupted()

    starting = threading.Event()
    starting.set()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    if args.verbose:
        runtime.logs.subscribe(lambda line: print(line, file=sys.stderr), replay=False)
    print(f"serve: starting the {runtime.kind} Triton on {args.repository} …", file=sys.stderr)
    try:
        try:
            ep = runtime.start(args.repository, options)
        finally:
            starting.clear()
    except _Interrupted:
        name = signal.Signals(got[0]).name if got else "a signal"
        print(f"serve: interrupted ({name}) while starting: the server was stopped", file=sys.stderr)
        return 128 + (got[0] if got else signal.SIGINT)
    except RuntimeFailure as e:
        print(f"serve: {e}", file=sys.stderr)
        return 1
    if got:  # a signal that landed right as the server became ready
        runtime.stop()
        print("serve: stopped", file=sys.stderr)
        return 128 + got[0]
    print(f"ready: http {ep.http}  grpc {ep.grpc}  metrics {ep.metrics}", flush=True)
    from studio.runtime.client import TritonClient

    client = TritonClient(ep, logs=runtime.logs)
    for m in client.repository_index():
        note = f" ({m.reason})" if m.reason else ""
        print(f"  {m.name} {m.version or ''} {m.state}{note}".replace("  ", " ", 1), flush=True)
    client.close()
    code = 0
    try:
        while not stop.wait(0.5):
            if runtime.poll() == Status.EXITED:
                print(f"serve: {runtime.exit_reason}", file=sys.stderr)
                code = 1
                break
    finally:
        runtime.stop()
        print("serve: stopped", file=sys.stderr)
    return code  # Ctrl-C / SIGTERM once ready is the way serve ends: 0 (during start-up: 130 / 143)


def _studio_servers(with_grpc: bool = False) -> list[tuple]:
    """(kind, id, status, repository, http URL[, gRPC URL]) of studio-owned servers."""
    from studio.runtime.embedded import list_embedded_servers
    from studio.runtime.errors import DockerUnavailable

    rows = []
    for s in list_embedded_servers():
        rows.append(("embedded", str(s["pid"]), "running", s["repository"], s["http"]) + ((s["grpc"],) if with_grpc else ()))
    try:
        from studio.runtime.docker_runtime import docker_client, studio_containers

        client = docker_client()
        from studio.runtime.base import LABEL

        for c in studio_containers(client):
            ports = (c.attrs.get("NetworkSettings") or {}).get("Ports") or {}
            http = ports.get("8000/tcp") or []
            url = f"http://127.0.0.1:{http[0]['HostPort']}" if http else "-"
            grpc = ports.get("8001/tcp") or []
            extra = ((f"grpc://127.0.0.1:{grpc[0]['HostPort']}" if grpc else "-"),) if with_grpc else ()
            rows.append(("docker", c.name, c.status, c.labels.get(f"{LABEL}.repository", "?"), url) + extra)
    except DockerUnavailable:
        pass
    return rows


def _model_states_of(url: str, grpc: str | None = None) -> dict:
    from studio.runtime.base import Endpoints
    from studio.runtime.client import TritonClient
    from studio.runtime.models import fetch_states
    from studio.runtime.remote import parse_server_url, reachable

    ep = parse_server_url(url)
    if grpc:
        ep = Endpoints(url, grpc, ep.metrics)
    if not reachable(ep, timeout=2.0):
        raise ConnectionError(f"no Triton answers at {url}")
    client = TritonClient(ep)
    try:
        return fetch_states(client)
    finally:
        client.close()


def cmd_status(args) -> int:
    import json

    if args.url and not args.models:
        print("status: --url goes with --models", file=sys.stderr)
        return 2
    if args.models:
        if args.url:
            try:
                from studio.runtime.remote import parse_server_url

                parse_server_url(args.url)
            except ValueError as e:
                print(f"status: {e}", file=sys.stderr)
                return 2
            targets = [("url", args.url, "", args.url, None)]
        else:
            targets = [(k, i, repo, url, grpc) for k, i, st, repo, url, grpc in _studio_servers(with_grpc=True)
                       if st == "running" and url != "-"]
        out = []
        code = 0
        for kind, ident, repo, url, grpc in targets:
            entry = {"server": url, "kind": kind, "id": ident, "repository": repo}
            try:
                entry["models"] = [m.to_json() for m in _model_states_of(url, grpc).values()]
            except Exception as e:  # noqa: BLE001 - one line per unreachable server
                entry["error"] = str(e).splitlines()[0]
                code = 1 if args.url else code  # a studio-owned server that just went away is reported, not fatal
            out.append(entry)
        if args.format == "json":
            print(json.dumps(out, indent=2))
            return code
        if not out:
            print("no studio-owned Triton servers (give --url for another one)")
        for e in out:
            print(f"{e['server']}  ({e['kind']} {e['id']}{'  ' + e['repository'] if e['repository'] else ''})")
            if "error" in e:
                print(f"  error: {e['error']}")
                continue
            for m in e["models"]:
                versions = ",".join(v["version"] for v in m["versions"] if v["version"]) or "-"
                reason = f"  {m['reason']}" if m["reason"] else ""
                print(f"  {m['name']:24} {versions:8} {m['state']}{reason}")
        return code
    rows = _studio_servers()
    if args.format == "json":
        print(json.dumps([dict(zip(("kind", "id", "status", "repository", "http"), r, strict=True)) for r in rows], indent=2))
        return 0
    if not rows:
        print("no studio-owned Triton servers")
        return 0
    for r in rows:
        print("  ".join(r))
    return 0


def cmd_deploy(args) -> int:
    """validate -> start -> load -> READY -> one test inference; the figures; exit 0 only when all worked."""
    import json

    from studio.runtime import RuntimeFailure, make_runtime
    from studio.runtime.deploy import DeployRequest, deploy

    repo = Path(args.repository)
    if not repo.is_dir():
        print(f"deploy: {repo}: not a folder", file=sys.stderr)
        return 2
    if not (repo / args.model / "config.pbtxt").is_file():
        print(f"deploy: {repo / args.model / 'config.pbtxt'}: no such model config", file=sys.stderr)
        return 2
    server = args.server
    if server not in ("embedded", "docker") and "://" not in server:
        print(f"deploy: --server {server}: expected embedded, docker, or a URL (http://HOST:PORT, grpc://HOST:PORT)",
              file=sys.stderr)
        return 2
    if (args.image or args.gpus or args.pull) and server != "docker":
        print("deploy: --image, --gpus and --pull go with --server docker", file=sys.stderr)
        return 2
    gpus = None
    if args.gpus is not None:
        gpus = "all" if args.gpus == "all" else ("none" if args.gpus == "none" else args.gpus.split(","))
    if "://" in server:
        try:
            from studio.runtime.remote import parse_server_url

            parse_server_url(server)
        except ValueError as e:
            print(f"deploy: {e}", file=sys.stderr)
            return 2
    test_inputs = None
    if args.input_data:
        from studio.config import ConfigDocument
        from studio.runtime.inference import InputError, load_inputs

        try:
            test_inputs = load_inputs(args.input_data, ConfigDocument.load(repo / args.model / "config.pbtxt"))
        except (InputError, OSError, ValueError) as e:
            print(f"deploy: {e}", file=sys.stderr)
            return 2
    quiet = args.format == "json"

    def progress(step: str, message: str) -> None:
        if not quiet:
            print(f"deploy: {message}", file=sys.stderr, flush=True)

    try:
        res = deploy(DeployRequest(repo, args.model,
                                   make_runtime=lambda: make_runtime(server, image=args.image, gpus=gpus,
                                                                     allow_pull=args.pull),
                                   ready_timeout_s=args.timeout, test_inputs=test_inputs), progress=progress)
    except RuntimeFailure as e:
        print(f"deploy: {e}", file=sys.stderr)
        return 1
    try:
        figures = {
            "model": args.model, "ok": res.ok, "step": res.step, "server": res.runtime.kind if res.runtime else server,
            "server_start_s": res.server_start_s, "time_to_ready_s": res.time_to_ready_s, "total_s": round(res.total_s, 3),
            "latency_ms": res.inference.latency_ms if res.inference else None, "error": res.error, "reason": res.reason,
            "field": res.field_path, "line": res.line,
            "outputs": {k: {"shape": list(v.shape), "dtype": str(v.dtype), "values": v.reshape(-1)[:16].tolist()}
                        for k, v in (res.inference.outputs.items() if res.inference else [])},
        }
        if quiet:
            print(json.dumps(figures, indent=2, default=str))
        elif res.ok:
            from studio.runtime.inference import summarize

            if res.server_start_s is not None:
                print(f"server: {res.runtime.kind} started in {res.server_start_s:.2f} s")
            print(f"{args.model}: READY in {res.time_to_ready_s:.2f} s (load request to READY)")
            print(f"test inference: {res.inference.latency_ms:.1f} ms")
            for name, arr in res.inference.outputs.items():
                print(f"  {name}: {summarize(arr, 8)}")
        else:
            print(f"deploy: {res.error}", file=sys.stderr)
            if res.log_lines:
                print("server log:\n  " + "\n  ".join(res.log_lines), file=sys.stderr)
            if res.field_path:
                where = f"{repo / args.model / 'config.pbtxt'}:{res.line}" if res.line else "the config"
                print(f"the reason names {res.field_path} ({where})", file=sys.stderr)
        return 0 if res.ok else 1
    finally:
        if res.started_server and res.runtime is not None:
            res.runtime.stop()


def cmd_doctor(args) -> int:
    from studio.runtime.doctor import run_checks

    checks = run_checks()
    for c in checks:
        mark = "ok  " if c.ok else "FAIL"
        print(f"[{mark}] {c.name}: {c.detail}")
        if not c.ok and c.fix:
            print(f"       fix: {c.fix}")
    return 1 if any(c.essential and not c.ok for c in checks) else 0


def cmd_bench(args) -> int:
    import json

    from studio.runtime.client import TritonClient
    from studio.tuning.inputs import InputError, from_input_data, parse_shapes, synthesize
    from studio.tuning.loadgen import LoadGenerator, LoadSpec
    from studio.tuning.remote import endpoints_for, fetch_config, grpc_target
    from studio.tuning.sampler import server_fields
    from studio.tuning.session import perf_analyzer_command

    if args.input_data and not os.path.isfile(args.input_data):
        print(f"bench: --input-data {args.input_data}: no such file (perf_analyzer's --input-data JSON)", file=sys.stderr)
        return 2
    target = grpc_target(args.url)
    try:
        shapes = parse_shapes(args.shape)
        config = fetch_config(target, args.model)
        if args.input_data:
            requests = from_input_data(args.model, config, args.input_data, args.batch_size)
        else:
            requests = synthesize(args.model, config, args.batch_size, shapes)
    except InputError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - unreachable server, unknown model
        print(f"bench: cannot get the config of '{args.model}' from {target}: {e}", file=sys.stderr)
        return 1
    spec = LoadSpec(concurrency=None if args.rate else args.concurrency, rate=args.rate, poisson=args.poisson,
                    duration_s=args.duration, max_requests=args.requests)
    client = TritonClient(endpoints_for(target))
    try:
        client.statistics_delta(args.model)
    except Exception:  # noqa: BLE001
        client = None
    gen = LoadGenerator(target, requests, spec).start()
    gone = _watch_for_dead_server(gen, target)
    result = gen.wait()
    if gone is not None:
        print(f"bench: {gone}", file=sys.stderr)
        return 1
    out = result.summary()
    out["avg_batch_size"] = None
    if client is not None:
        try:
            out["avg_batch_size"] = server_fields(client.statistics_delta(args.model), result.seconds or 1)["avg_batch_size"]
        except Exception:  # noqa: BLE001 - the server went away: client figures stand
            pass
    out["perf_analyzer"] = perf_analyzer_command(target, args.model, concurrency=args.concurrency, rate=args.rate,
                                                 shapes=shapes, batch_size=args.batch_size)
    if args.format == "json":
        print(json.dumps(out, indent=2))
    else:
        def ms(v):
            return f"{v:.2f} ms" if v is not None else "-"

        print(f"throughput {out['throughput']:.1f} infer/s   p50 {ms(out['p50_ms'])}   p90 {ms(out['p90_ms'])}   "
              f"p99 {ms(out['p99_ms'])}   errors {out['errors']}   avg batch {out['avg_batch_size'] or '-'}")
        print(f"same with perf_analyzer: {out['perf_analyzer']}")
    if result.stop_reason == "errors":
        print(f"bench: stopped: too many errors ({result.error_detail})", file=sys.stderr)
        return 1
    return 0


def _server_refuses(target: str) -> bool:
    """Whether a TCP connection to the gRPC target is refused (nothing listens there any more)."""
    import socket

    host, _, port = target.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=0.5):
            return False
    except ConnectionRefusedError:
        return True
    except (OSError, ValueError):
        return False


def _watch_for_dead_server(gen, target: str, tick_s: float = 0.25, dead_after_s: float = 1.0) -> str | None:
    """Watch a running load generator; when the server dies (every request fails as UNAVAILABLE and nothing
    completes for dead_after_s, or the port refuses connections while requests fail) stop it and say so in one
    line. None when the run ended by itself."""
    import time

    started = time.monotonic()
    last_ok = started
    completed = 0
    failing_since: float | None = None
    errors: dict[str, int] = {}
    while gen.running:
        time.sleep(tick_s)
        w = gen.window()
        now = time.monotonic()
        completed += w.completed
        if w.completed:
            last_ok = now
            failing_since = None
            continue
        if not w.errors.get("UNAVAILABLE"):  # a model's own errors (INTERNAL, ...) are not a dead server
            continue
        for code, n in w.errors.items():
            errors[code] = errors.get(code, 0) + n
        failing_since = failing_since or now
        if now - failing_since >= dead_after_s or _server_refuses(target):
            gen.stop()
            reason = ", ".join(f"{n} {code}" for code, n in errors.items())
            return (f"the server at {target} stopped answering {last_ok - started:.1f} s into the run ({reason}); "
                    f"{completed} request(s) completed before: no figures (they would average in the dead time)")
    if failing_since is not None and _server_refuses(target):  # it stopped itself on errors between two looks
        return (f"the server at {target} stopped answering {last_ok - started:.1f} s into the run; "
                f"{completed} request(s) completed before: no figures (they would average in the dead time)")
    return None


def cmd_tune(args) -> int:
    import json

    from google.protobuf import text_format

    from studio.config import ConfigDocument
    from studio.runtime.client import TritonClient
    from studio.tuning.inputs import InputError, parse_shapes, synthesize
    from studio.tuning.loadgen import LoadGenerator, LoadSpec
    from studio.tuning.remote import endpoints_for, fetch_config, grpc_target
    from studio.tuning.sampler import Sampler
    from studio.tuning.search import Space, Tuner, baseline_point
    from studio.tuning.session import TuningSession, shortest
    from studio.tuning.tune_report import report_text

    target = grpc_target(args.url)
    try:
        config = fetch_config(target, args.model)
        requests = synthesize(args.model, config, 1, parse_shapes(args.shape))
    except InputError as e:
        print(f"tune: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001
        print(f"tune: cannot get the config of '{args.model}' from {target}: {e}", file=sys.stderr)
        return 1
    if args.min_concurrency > args.max_concurrency:
        print("tune: --min-concurrency is above --max-concurrency", file=sys.stderr)
        return 2
    if args.config:
        doc = _load_or_report(args.config)
        if doc is None:
            return 1
        file_config = doc.to_message()
    else:
        doc = ConfigDocument.parse(text_format.MessageToString(config))
        file_config = config
    work = ConfigDocument.parse(doc.text)
    client = TritonClient(endpoints_for(target))
    space = Space.for_model(file_config, gpus=args.gpus, max_concurrency=args.max_concurrency,
                            min_concurrency=args.min_concurrency, max_instances=args.max_instances)
    loadgen = LoadGenerator(target, requests, LoadSpec(concurrency=args.min_concurrency, duration_s=None)).start()
    sampler = Sampler(loadgen, client, args.model).start()
    # ease_after_s 0: a tune measures only after a reload, so the load drops at once while the server reloads
    # (a full load 2.1 -> 1.5 s, an in-place one that must wait for an empty queue no longer waits 3 s first)
    session = TuningSession(client, args.model, work, sampler, window_s=args.window_s, max_window_s=2.0,
                            load_timeout_s=args.load_timeout_s, ease_after_s=0.0)

    def show(m):
        if args.format == "text":
            p99 = f"{m.p99_ms:.1f} ms" if m.p99_ms is not None else "-"
            again = f" (measured {m.attempts}x: it did not settle)" if m.attempts > 1 else ""
            err = f" failed: {m.error}" if m.error else ""
            print(f"  {m.at:5.0f}s  {m.point.label()} @ concurrency {m.point.concurrency}: "
                  f"{m.throughput:,.0f} infer/s, p99 {p99}{again}{err}", file=sys.stderr, flush=True)

    # the python backend removes instances one after another at ~1.1 s each: fewer instances are loaded anew
    # (the session's document is `work`, a copy: the file and --write never see the reload parameter)
    tuner = Tuner(session, args.p99_ms, budget_s=args.budget_s, on_measurement=show, point_budget_s=8.0,
                  requests_per_window=200, full_reload_removals=file_config.backend == "python")
    try:
        result = tuner.tune(space, baseline=baseline_point(file_config), rounds=args.rounds)
    finally:
        loadgen.stop()
        sampler.stop()
        try:  # put the model back as the file says, within what is left of the budget (at least MIN_RELOAD_S)
            client.load(args.model, config=doc, timeout_s=shortest(args.load_timeout_s, tuner.reload_budget()))
        except Exception as e:  # noqa: BLE001 - said in one line: the server may run a tuning variant now
            from studio.tuning.live import failure_text

            print(f"tune: could not put '{args.model}' back as {args.config or 'its config'} says: "
                  f"{failure_text(e)}", file=sys.stderr)
    if args.format == "json":
        out = result.to_json()
        out["perf_analyzer"] = (_tune_pa(args, result) if result.best else None)
        print(json.dumps(out, indent=2))
    else:
        print(report_text(result, args.model, args.p99_ms, _tune_pa(args, result) if result.best else None), end="")
    if result.best is None:
        print(f"tune: no configuration met p99 <= {args.p99_ms} ms", file=sys.stderr)
        return 1
    b = result.best
    if args.write:
        if not args.config:
            print("tune: --write needs --config PATH (the model's config.pbtxt)", file=sys.stderr)
            return 2
        from studio.tuning.controls import apply_edits

        apply_edits(doc, b.point.edits())  # the same write-back as the dashboard's Keep
        from studio.config import SaveError

        try:
            doc.save(args.config)
        except SaveError as e:
            print(e, file=sys.stderr)
            return 1
        if args.format == "text":
            print(f"# written to {args.config}")
    return 0


def _tune_pa(args, result) -> str:
    from studio.tuning.inputs import parse_shapes
    from studio.tuning.session import perf_analyzer_command

    return perf_analyzer_command(args.url, args.model, concurrency=result.best.point.concurrency,
                                 shapes=parse_shapes(args.shape), window_ms=5000)


def cmd_dashboard(args) -> int:
    """The window (lazily imported: the CLI's other commands never load Qt)."""
    from studio.ui.tuning.scripted import run_dashboard

    return run_dashboard(args)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="triton-studio",
        description="Triton Config Studio. Run without a subcommand to open the GUI.",
    )
    p.add_argument("--version", action="version", version=f"triton-studio {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    f = sub.add_parser("fmt", help="rewrite config.pbtxt files in canonical layout (keeps comments)")
    f.add_argument("--check", action="store_true", help="only report files that would change (exit 1)")
    f.add_argument("--force", action="store_true", help="write read-only files and files changed on disk meanwhile")
    f.add_argument("paths", nargs="+", metavar="PATH", help="config files or folders (searched for config.pbtxt)")
    f.set_defaults(func=cmd_fmt)
    g = sub.add_parser("get", help="print a field's value")
    g.add_argument("path", metavar="PATH", help="a config file, or its s3:// gs:// az:// URL (a model folder URL reads its config.pbtxt)")
    g.add_argument("field", metavar="FIELD", help='field path, e.g. dynamic_batching.max_queue_delay_microseconds, input[0].dims, parameters["K"].string_value')
    g.set_defaults(func=cmd_get)
    s = sub.add_parser("set", help="set a field with a minimal edit (atomic write)")
    s.add_argument("path", metavar="PATH")
    s.add_argument("field", metavar="FIELD")
    s.add_argument("value", metavar="VALUE", help="pbtxt value: 8, TYPE_FP32, true, \"text\" (quotes optional), [1, 2], { ... }")
    s.add_argument("--force", action="store_true",
                   help="write even a value the validator refuses, a read-only file, or a file changed on disk meanwhile")
    s.set_defaults(func=cmd_set)
    v = sub.add_parser("validate", help="report what Triton will reject, before Triton sees it")
    v.add_argument("path", metavar="PATH", help="a repository, a model folder or a lone config file; a repository "
                   "may be an s3:// gs:// az:// URL (read-only; needs the cloud extra)")
    v.add_argument("--config-only", action="store_true", help="no file-system checks; called models need not exist")
    v.add_argument("--disable-auto-complete-config", action="store_true", help="as tritonserver's flag of that name")
    v.add_argument("--format", choices=("text", "json"), default="text")
    v.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    v.add_argument("--backend", action="append", metavar="NAME", help="a custom backend the server has (repeatable)")
    v.add_argument("--triton-version", default="2.51", metavar="X.Y",
                   help="the Triton release whose rules apply (2.51, or a container tag such as 24.10)")
    v.set_defaults(func=cmd_validate)
    d = sub.add_parser("diff", help="semantic diff of two configs (files or model folders, local or s3:// gs:// az://)")
    d.add_argument("a", metavar="A")
    d.add_argument("b", metavar="B")
    d.add_argument("--category", choices=("framework", "batching", "io", "instances", "versioning", "other"))
    d.add_argument("--format", choices=("text", "json"), default="text")
    d.set_defaults(func=cmd_diff)
    n = sub.add_parser("new", help="create a model folder from a template")
    n.add_argument("name", metavar="NAME")
    n.add_argument("--template", required=True, metavar="T", help="see `triton-studio templates`")
    n.add_argument("--repo", required=True, metavar="R")
    n.add_argument("--set", action="append", metavar="FIELD=VALUE")
    n.set_defaults(func=cmd_new)
    t = sub.add_parser("templates", help="list the model templates")
    t.set_defaults(func=cmd_templates)
    sv = sub.add_parser("serve", help="run Triton on a repository in the foreground (Ctrl-C stops it)")
    sv.add_argument("repository", metavar="REPO")
    sv.add_argument("--runtime", choices=("embedded", "docker"), help="default: docker with GPUs, else embedded")
    sv.add_argument("--image", help="Docker image (default NVIDIA's tritonserver 24.10-py3)")
    sv.add_argument("--gpus", help="all, none, or ids like 0,1 (docker)")
    sv.add_argument("--models", help="comma-separated models to load (default: all)")
    sv.add_argument("--http-port", type=_port)
    sv.add_argument("--grpc-port", type=_port)
    sv.add_argument("--metrics-port", type=_port)
    sv.add_argument("--timeout", type=_positive_float, default=120.0, help="seconds to wait for readiness")
    sv.add_argument("-v", "--verbose", action="store_true", help="print the server log")
    sv.set_defaults(func=cmd_serve)
    st = sub.add_parser("status", help="list studio-owned Triton servers (--models: each model's state)")
    st.add_argument("--models", action="store_true", help="per model: versions, state, reason (repository index)")
    st.add_argument("--url", type=_url, help="a Triton to ask (http://HOST:PORT or grpc://HOST:PORT); default: studio-owned servers")
    st.add_argument("--format", choices=("text", "json"), default="text")
    st.set_defaults(func=cmd_status)
    dp = sub.add_parser("deploy", help="validate, start a server, load a model, wait READY, run one test inference")
    dp.add_argument("repository", metavar="REPO")
    dp.add_argument("--model", required=True, metavar="M")
    dp.add_argument("--server", default="embedded", help="embedded (default), docker, or a Triton URL")
    dp.add_argument("--image", help="Docker image (default NVIDIA's tritonserver 24.10-py3; never pulled without --pull)")
    dp.add_argument("--gpus", help="all, none, or ids like 0,1 (docker; default all when the NVIDIA runtime is there)")
    dp.add_argument("--pull", action="store_true", help="pull the Docker image when it is not local (NGC images are 10-20 GB)")
    dp.add_argument("--input-data", metavar="FILE", help="test inputs: .npy, .npz or JSON (default: synthesized)")
    dp.add_argument("--timeout", type=_positive_float, default=120.0, help="seconds to wait for READY")
    dp.add_argument("--format", choices=("text", "json"), default="text")
    dp.set_defaults(func=cmd_deploy)
    b = sub.add_parser("bench", help="measure throughput and latency of a model on a running Triton")
    b.add_argument("--url", required=True, type=_url, help="grpc://HOST:PORT")
    b.add_argument("--model", required=True)
    mode = b.add_mutually_exclusive_group()
    mode.add_argument("--concurrency", type=_int_in(1, MAX_CONCURRENCY, "a request count"), default=8,
                      help=f"requests in flight, 1 to {MAX_CONCURRENCY} (default 8)")
    mode.add_argument("--rate", type=_positive_float, help="requests per second (request-rate mode)")
    b.add_argument("--poisson", action="store_true", help="Poisson arrivals in request-rate mode")
    b.add_argument("--duration", type=_positive_float, default=10.0, help="seconds")
    b.add_argument("--requests", type=_int_in(1), help="stop after this many requests")
    b.add_argument("--shape", action="append", type=_shape, help="NAME:d1,d2 for variable-size inputs (repeatable)")
    b.add_argument("--input-data", help="perf_analyzer's --input-data JSON")
    b.add_argument("--batch-size", type=_int_in(1), default=1)
    b.add_argument("--format", choices=("text", "json"), default="text")
    b.set_defaults(func=cmd_bench)
    tu = sub.add_parser("tune", help="search batching and instances for the best throughput under a p99 budget")
    tu.add_argument("--url", required=True, type=_url, help="grpc://HOST:PORT")
    tu.add_argument("--model", required=True)
    tu.add_argument("--p99-ms", type=_positive_float, required=True)
    tu.add_argument("--budget-s", type=_positive_float, default=180.0,
                    help="the most seconds the tune may take (it usually ends sooner)")
    tu.add_argument("--max-concurrency", type=_int_in(1, 65536), default=256, help="the highest load tried")
    tu.add_argument("--min-concurrency", type=_int_in(1, 65536), default=1, help="the lowest load tried")
    tu.add_argument("--max-instances", type=_int_in(1, 64), help="default: 4 per CPU core, at least 8 (4 per GPU with --gpus)")
    tu.add_argument("--gpus", type=_int_in(0, 64), default=0, help="GPUs the server has (sizes the instance axis)")
    tu.add_argument("--load-timeout-s", type=_positive_float, default=120.0,
                    help="a reload that takes longer stops the search (the server may still be loading it)")
    tu.add_argument("--rounds", type=_int_in(1, 10), default=2,
                    help="alternating re-measurement rounds of the top three before a winner is named")
    tu.add_argument("--window-s", type=_positive_float, default=0.25,
                    help="shortest measurement window (longer when needed for 500 requests); a point is steady when "
                         "3 windows agree within 10%%")
    tu.add_argument("--shape", action="append", type=_shape)
    tu.add_argument("--config", help="the model's config.pbtxt (base of the edits; written with --write)")
    tu.add_argument("--write", action="store_true", help="write the best settings into --config as a minimal edit")
    tu.add_argument("--format", choices=("text", "json"), default="text")
    tu.set_defaults(func=cmd_tune)
    db = sub.add_parser("dashboard", help="the live tuning dashboard on a model, optionally playing a script (window)")
    db.add_argument("repository", help="the model repository")
    db.add_argument("--model", required=True, help="the model to tune")
    db.add_argument("--server", default="embedded", help="embedded (default), docker, or a Triton URL (grpc://HOST:PORT)")
    db.add_argument("--image", metavar="I", help="with --server docker: the Triton image (default NVIDIA's when local, "
                    "else a local Triton image; never pulled)")
    load = db.add_mutually_exclusive_group()
    load.add_argument("--concurrency", type=_int_in(1, MAX_CONCURRENCY, "a request count"), help="requests in flight (default 16)")
    load.add_argument("--rate", type=_positive_float, help="requests per second")
    db.add_argument("--script", metavar="STEPS.json", help="a timeline of config and load changes to play")
    db.add_argument("--record", metavar="OUT.json", help="write samples and changes here")
    db.add_argument("--screenshot", metavar="OUT.png", help="save a picture of the window at the end")
    db.add_argument("--exit-after", type=_positive_float, metavar="S", help="close after S seconds")
    db.set_defaults(func=cmd_dashboard)
    dr = sub.add_parser("doctor", help="check Docker, the NVIDIA runtime, GPUs, the embedded server and Qt")
    dr.set_defaults(func=cmd_doctor)
    from studio.export.cli import add_parser as add_export_parser

    add_export_parser(sub)
    return p


def gui_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="triton-studio", description="Open the studio window.", add_help=True)
    p.add_argument("repository", nargs="?", metavar="REPO|FILE.pbtxt",
                   help="a model repository folder, a model folder, or a config file (opens its repository and the file)")
    p.add_argument("--screenshot", metavar="PNG", help="open, save a screenshot of the window, and quit")
    p.add_argument("--serve", choices=("embedded", "docker"), help="start a local Triton on the repository")
    p.add_argument("--version", action="version", version=f"triton-studio {__version__}")
    return p


def gui_target(path: str) -> tuple[str, str | None]:
    """(repository folder, config file to open or None) for what the GUI was given; ValueError says why not.

    A repository opens as it is; a model folder (it has config.pbtxt) opens its repository and its config; a file
    (config.pbtxt, or an alternative config under <model>/configs/) opens the repository above its model folder.
    """
    p = Path(path).expanduser().resolve()
    if p.is_dir():
        if (p / "config.pbtxt").is_file():
            return str(p.parent), str(p / "config.pbtxt")
        return str(p), None
    if p.is_file():
        if p.suffix != ".pbtxt":
            raise ValueError(f"{path}: not a model repository folder or a .pbtxt config file")
        model = p.parent.parent if p.parent.name == "configs" else p.parent
        return str(model.parent), str(p)
    raise ValueError(f"{path}: no such folder or file")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI. Whatever a user does ends in one line and an exit code: 1 failure, 2 usage, 130 Ctrl-C."""
    for stream in (sys.stdout, sys.stderr):  # paths with undecodable bytes print escaped, never crash
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("triton-studio: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `triton-studio ... | head`: the reader left
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        return 1
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"triton-studio: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    except MemoryError:
        print("triton-studio: out of memory", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - the promise is one line, never a traceback; STUDIO_DEBUG=1 shows it
        if os.environ.get("STUDIO_DEBUG"):
            raise
        print(f"triton-studio: internal error: {type(e).__name__}: {' '.join(str(e).split())} "
              "(STUDIO_DEBUG=1 shows the traceback; please report it)", file=sys.stderr)
        return 1


def _main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and (argv[0] in SUBCOMMANDS or argv[0] in ("-h", "--help")):
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:
            return int(e.code or 0)
        return args.func(args)
    try:
        args = gui_parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    repository, open_file = args.repository, None
    if repository:
        try:
            repository, open_file = gui_target(repository)
        except (ValueError, OSError) as e:
            print(f"triton-studio: {e}", file=sys.stderr)
            return 2
    from studio.ui.shell.main_window import run_gui

    return run_gui(repository, screenshot=args.screenshot, serve=args.serve, open_file=open_file)


if __name__ == "__main__":
    sys.exit(main())
