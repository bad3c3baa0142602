#!/usr/bin/env python3
"""Record a real Triton's verdict on every oracle case (tests/validate/oracle/cases.py).

One embedded Triton (explicit model control, no model loaded at start) serves a repository holding every case's
folders; each case is loaded by its folder name, its verdict (loaded / refused) and Triton's reason (from the
log, as the studio's client reads it) recorded, then unloaded. The server is restarted only when it dies (a
warmup that crashes it) or a load hangs. Run by hand (it is not a test):

    .venv/bin/python scripts/record-validator-oracle.py            # writes tests/validate/oracle/triton-<ver>.json
    .venv/bin/python scripts/record-validator-oracle.py --only py_base,py_count_neg --out /tmp/x.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from studio.runtime.base import ServerOptions  # noqa: E402
from studio.runtime.embedded import EmbeddedRuntime, EmbeddedServer  # noqa: E402
from tests.validate.oracle.cases import SEED, generate, write_repository  # noqa: E402

_LOG = re.compile(r"^[EWI]\d{4} [\d:.]+\s+\d+\s+\S+\]\s*\"?(?P<msg>.*?)\"?$")
# cases that take the server down or hang it: run last, each on a fresh server
RISKY = ("py_warmup_bs_gt_max", "py_default_filename_missing")


def reason_from_log(lines: list[str], name: str) -> str | None:
    """The first error line about this model: Triton's reason without the log prefix."""
    for line in lines:
        m = _LOG.match(line)
        text = m.group("msg") if m else line
        if not line.startswith("E") and "failed" not in text.lower():
            continue
        if name not in text:
            continue
        if "Poll failed for model directory" in text and "': " in text:
            text = text.split("': ", 1)[1]
        elif text.startswith("failed to load '") and "': " in text:
            text = text.split("': ", 1)[1]
        return clean(text)
    return None


# server log lines that carry the reason the load error leaves out: protobuf's text-format parser writes its
# "line:col: message" to the log while the load error only says "failed to read text proto from ..."
_DETAIL = re.compile(r"^\[libprotobuf (?:ERROR|WARNING) [^\]]*\]\s*(?P<msg>.*)$")


def detail_from_log(lines: list[str]) -> list[str]:
    """The log lines of one load that explain a refusal: protobuf's parser messages, then error lines (E....)
    that do not repeat the load error; prefixes stripped."""
    out: list[str] = []
    for line in lines:
        m = _DETAIL.match(line)
        if m:
            out.append(m.group("msg").strip())
            continue
        m = _LOG.match(line)
        if m and line.startswith("E") and "failed to load" not in m.group("msg"):
            out.append(m.group("msg").strip())
        elif not m and line.strip() and ("Error" in line or "error" in line):  # a python stub's traceback etc.
            out.append(line.strip())
    return out[:20]


def clean(text: str) -> str:
    """Triton's reason without "failed to load 'm' version 1: " and the status code name."""
    text = re.sub(r"^failed to load '[^']*'(?: version \d+)?: ", "", text)
    return re.sub(r"^(Invalid argument|Internal|Not found|Unavailable|Unknown|Unsupported|Already exists): ", "", text)


class Server:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.rt: EmbeddedRuntime | None = None
        self.client = None

    def start(self) -> None:
        import tritonclient.grpc as grpcclient

        self.stop()
        self.rt = EmbeddedRuntime()
        eps = self.rt.start(self.repo, ServerOptions(models=[], ready_timeout_s=120))
        self.client = grpcclient.InferenceServerClient(eps.grpc_target)

    def alive(self) -> bool:
        return self.rt is not None and self.rt._proc is not None and self.rt._proc.poll() is None

    def stop(self) -> None:
        if self.client is not None:
            try:
                self.client.close()
            except Exception:  # noqa: BLE001
                pass
            self.client = None
        if self.rt is not None:
            self.rt.stop()
            self.rt = None

    def load(self, name: str, timeout_s: float) -> dict:
        assert self.rt is not None and self.client is not None
        new: list[str] = []  # every log line written while this model loads (loads are sequential)
        self.rt.logs.subscribe(new.append, replay=False)
        t0 = time.monotonic()
        try:
            return self._load(name, timeout_s, new, t0)
        finally:
            self.rt.logs.unsubscribe(new.append)

    def _load(self, name: str, timeout_s: float, new: list[str], t0: float) -> dict:
        assert self.rt is not None and self.client is not None
        try:
            self.client.load_model(name, client_timeout=timeout_s)
            verdict, message = "loaded", ""
        except Exception as e:  # noqa: BLE001 - InferenceServerException
            api = e.message() if callable(getattr(e, "message", None)) else str(e)
            time.sleep(0.3)
            if not self.alive():
                verdict, message = "refused", f"the server crashed (exit code {self.rt._proc.returncode})"
            elif "Deadline Exceeded" in api or time.monotonic() - t0 >= timeout_s - 0.5:
                verdict, message = "refused", f"still LOADING after {timeout_s:.0f} s"
            else:
                verdict, message = "refused", reason_from_log(new, name) or clean(api)
            r = {"verdict": verdict, "message": message, "api_message": api, "seconds": round(time.monotonic() - t0, 2)}
            detail = detail_from_log(list(new))
            if detail:
                r["log"] = detail
            return r
        return {"verdict": verdict, "message": message, "seconds": round(time.monotonic() - t0, 2)}

    def unload(self, name: str) -> None:
        try:
            self.client.unload_model(name, unload_dependents=True, client_timeout=30)
        except Exception:  # noqa: BLE001 - an unload that fails is not a verdict
            pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--only", help="comma-separated case ids")
    ap.add_argument("--merge", action="store_true", help="keep the other cases of an existing --out file")
    ap.add_argument("--timeout", type=float, default=40.0, help="seconds one load may take")
    args = ap.parse_args()
    version = EmbeddedServer.find().triton_version()
    out = args.out or ROOT / "tests" / "validate" / "oracle" / f"triton-{'.'.join(version.split('.')[:2])}.json"
    cases = generate()
    if args.only:
        keep = set(args.only.split(","))
        cases = [c for c in cases if c.id in keep]
    cases.sort(key=lambda c: c.id in RISKY)
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="oracle-") as tmp:
        repo = Path(tmp) / "models"
        write_repository(cases, repo)
        server = Server(repo)
        server.start()
        try:
            for i, case in enumerate(cases):
                if not server.alive() or case.id in RISKY:
                    server.start()
                r = server.load(case.name, args.timeout)
                r["category"] = case.category
                r["message"] = r["message"].replace(f"{repo}/", "")  # paths relative to the repository
                if "log" in r:
                    r["log"] = [line.replace(f"{repo}/", "") for line in r["log"]]
                results[case.id] = r
                print(f"[{i + 1}/{len(cases)}] {case.id}: {r['verdict']} {r['message'][:150]}", flush=True)
                if r["verdict"] == "loaded":
                    server.unload(case.name)
                elif not server.alive() or r["message"].startswith("still LOADING"):
                    server.start()
        finally:
            server.stop()
    if args.merge and out.exists():
        old = json.loads(out.read_text())
        results = {**old["cases"], **results}
    data = {"triton_version": version, "seed": SEED, "generator": "tests/validate/oracle/cases.py",
            "recorded": time.strftime("%Y-%m-%d"), "cases": results}
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}: {sum(r['verdict'] == 'refused' for r in results.values())} refused, "
          f"{sum(r['verdict'] == 'loaded' for r in results.values())} loaded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
