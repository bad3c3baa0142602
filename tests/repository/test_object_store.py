"""Object-store repositories against a real S3-compatible server: moto's server mode (ThreadedMotoServer, HTTP on
127.0.0.1) read through s3fs, the way a user reads a bucket (AWS_ENDPOINT_URL points the SDK at the server).

A repository uploaded to the bucket gets exactly the findings of the same folder on disk (paths shown as s3://
URLs), `get`, `diff`, `validate` and `export` take the URLs, and writing is refused in one line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, scaled_s

DEMO = REPO / "model_repository_templates" / "demo"
BUCKET = "models"
PREFIX = "prod/triton"
URL = f"s3://{BUCKET}/{PREFIX}"


def _need(module: str, package: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        pytest.fail(f"{package} is not installed: pip install -e '.[test]' (the test extra has it)", pytrace=False)


@pytest.fixture(scope="module")
def local_repo(tmp_path_factory) -> Path:
    """The demo, an ONNX model with a 3 MB model file, a broken config, and a model whose version is misnamed."""
    r = tmp_path_factory.mktemp("s3src") / "triton"
    shutil.copytree(DEMO, r)
    onnx = r / "onnx_model"
    shutil.copytree(REPO / "model_repository_templates" / "onnxruntime_onnx", onnx,
                    ignore=shutil.ignore_patterns("manifest.toml"))
    (onnx / "1").mkdir(exist_ok=True)
    (onnx / "1" / "model.onnx").write_bytes(b"\x08\x07" + os.urandom(3 * 2**20))
    (r / "broken").mkdir()
    (r / "broken" / "config.pbtxt").write_text('name: "broken"\nmax_batch_sise: 4\n')
    (r / "misnamed").mkdir()
    shutil.copy(DEMO / "add_sub" / "config.pbtxt", r / "misnamed" / "config.pbtxt")
    shutil.copytree(DEMO / "add_sub" / "1", r / "misnamed" / "v1")
    return r


@pytest.fixture(scope="module")
def s3(local_repo):
    """A moto S3 server on 127.0.0.1 with the repository uploaded; yields the environment that reaches it."""
    _need("s3fs", "s3fs")
    server_mod = _need("moto.server", "moto[server]")
    boto3 = _need("boto3", "boto3 (moto[server] brings it)")
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        client = boto3.client("s3")
        client.create_bucket(Bucket=BUCKET)
        for f in sorted(local_repo.rglob("*")):
            if f.is_file():
                client.upload_file(str(f), BUCKET, f"{PREFIX}/{f.relative_to(local_repo).as_posix()}")
            if f.is_file() and f.relative_to(local_repo).parts[0] not in ("broken", "misnamed"):
                client.upload_file(str(f), BUCKET, f"prod/clean/{f.relative_to(local_repo).as_posix()}")
        client.put_object(Bucket=BUCKET, Key="other/readme.txt", Body=b"not a repository")
        yield {**os.environ, **env}
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


def cli(env, *args, timeout=60.0):
    return subprocess.run([sys.executable, "-m", "studio.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=scaled_s(timeout), env=env, cwd=REPO)


def one_line(r) -> str:
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_validate_an_s3_repository_gives_the_findings_of_the_same_folder_on_disk(s3, local_repo):
    remote = cli(s3, "validate", URL, "--format", "json")
    local = cli(s3, "validate", local_repo, "--format", "json")
    assert remote.returncode == local.returncode == 1, (remote.stderr, local.stderr)
    want = json.loads(local.stdout.replace(str(local_repo), URL))
    got = json.loads(remote.stdout)
    assert got == want
    rules = {(f["rule"], f["file"]) for f in got}
    assert ("config.unknown-field", f"{URL}/broken/config.pbtxt") in {(r, f) for r, f in rules} or any(
        f["file"] == f"{URL}/broken/config.pbtxt" and f["severity"] == "error" for f in got), got
    assert any(f["rule"] == "repository.version-ignored" and "v1" in f["message"] for f in got), got
    text = cli(s3, "validate", URL)
    assert text.stderr.strip().splitlines()[-1].startswith("7 model(s):"), text.stderr
    assert str(local_repo) not in text.stdout and "/tmp" not in text.stdout


@pytest.mark.parametrize("where", ["misnamed", "broken/config.pbtxt", "onnx_model"])
def test_validate_a_model_folder_or_a_config_at_a_url_as_on_disk(s3, local_repo, where):
    remote = cli(s3, "validate", f"{URL}/{where}", "--format", "json")
    local = cli(s3, "validate", local_repo / where, "--format", "json")
    assert remote.returncode == local.returncode, (remote.stderr, local.stderr)
    assert json.loads(remote.stdout) == json.loads(local.stdout.replace(str(local_repo), URL))


def test_the_snapshot_lists_every_model_downloads_configs_only_and_is_removed(s3, local_repo):
    from studio.repository import scan_repository
    from studio.repository.storage import open_repository

    repo = open_repository(URL + "/")
    snap = repo.snapshot
    try:
        assert repo.read_only and repo.location == URL
        assert sorted(repo.models) == sorted(e.name for e in scan_repository(local_repo))
        cfg = repo.models["onnx_model"].config
        assert cfg.read_bytes() == (local_repo / "onnx_model" / "config.pbtxt").read_bytes()
        model = snap.local / "onnx_model" / "1" / "model.onnx"
        st = model.stat()
        assert st.st_size == (local_repo / "onnx_model" / "1" / "model.onnx").stat().st_size
        assert st.st_blocks == 0, "the model file was downloaded (it should be a sparse placeholder)"
        assert repo.models["misnamed"].ignored and repo.models["add_sub"].versions == ["1"]
        assert not os.access(cfg, os.W_OK) or os.geteuid() == 0
        assert cfg.stat().st_mode & 0o222 == 0
    finally:
        snap.close()
    assert not snap.local.exists()


def test_get_and_diff_read_configs_at_urls(s3, local_repo):
    r = cli(s3, "get", f"{URL}/add_sub/config.pbtxt", "max_batch_size")
    assert r.returncode == 0 and r.stdout == "64\n", r.stderr
    r = cli(s3, "get", f"{URL}/batched_sleep", "max_batch_size")
    assert r.returncode == 0 and r.stdout == "32\n", r.stderr
    r = cli(s3, "diff", f"{URL}/add_sub", local_repo / "add_sub", "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout) == [], r.stderr
    r = cli(s3, "diff", f"{URL}/add_sub", f"{URL}/batched_sleep", "--category", "batching")
    assert r.returncode == 0 and "max_batch_size [batching]: 64 -> 32" in r.stdout, r.stderr
    r = cli(s3, "get", f"{URL}/broken", "name")  # a parse error as for a local file: file:line:col, source, hint
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"{URL}/broken/config.pbtxt:2:1: error:") and "did you mean max_batch_size" in r.stderr


@pytest.mark.parametrize("args, says", [
    (["validate", f"s3://{BUCKET}/no/such/prefix"], "no such repository"),
    (["validate", "s3://no-such-bucket/x"], "no such repository"),
    (["get", f"{URL}/add_sub/missing.pbtxt", "name"], "no such config file"),
    (["diff", f"{URL}/nothing", DEMO / "add_sub"], "no such config file"),
])
def test_missing_locations_end_in_one_line(s3, args, says):
    r = cli(s3, *args)
    assert r.returncode == 1 and says in one_line(r), r.stderr


def test_writing_is_refused_in_one_line(s3):
    from studio.repository.operations import OperationError, duplicate_model, rename_model, trash_model
    from studio.repository.storage import ReadOnlyError, check_writable, open_repository

    r = cli(s3, "new", "m2", "--template", "python", "--repo", URL)
    assert r.returncode == 2 and "read-only" in one_line(r), r.stderr
    with pytest.raises(ReadOnlyError, match="read-only"):
        check_writable(f"{URL}/add_sub/config.pbtxt")
    repo = open_repository(URL)
    try:  # the local snapshot is read-only too: the model operations refuse it before touching anything
        for op in (lambda: duplicate_model(repo.path, "add_sub", "copy"), lambda: rename_model(repo.path, "add_sub", "x"),
                   lambda: trash_model(repo.path, "add_sub")):
            with pytest.raises(OperationError, match="read-only"):
                op()
        assert sorted(p.name for p in repo.path.iterdir()) == sorted(repo.models)
    finally:
        repo.snapshot.close()
    check_writable(repo.path)  # closed: an ordinary folder name again



@pytest.mark.parametrize("args", [
    ["set", f"{URL}/add_sub/config.pbtxt", "max_batch_size", "8"],
    ["set", f"{URL}/add_sub/config.pbtxt", "max_batch_size", "8", "--force"],
    ["fmt", f"{URL}/add_sub/config.pbtxt"],
    ["fmt", URL],
    ["fmt", "--check", f"{URL}/add_sub"],
])
def test_set_and_fmt_on_a_url_say_read_only_in_one_line_and_write_nothing(s3, args):
    boto3 = _need("boto3", "boto3 (moto[server] brings it)")
    client = boto3.client("s3")
    key = f"{PREFIX}/add_sub/config.pbtxt"
    before = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    r = cli(s3, *args)
    line = one_line(r)
    assert r.returncode == 1, r.stderr
    assert "read-only" in line and line.startswith(args[-1] if args[0] == "fmt" else args[1]), line
    assert "No such file" not in line and r.stdout == "", (r.stdout, r.stderr)
    assert client.get_object(Bucket=BUCKET, Key=key)["Body"].read() == before

def test_export_reads_the_bucket_and_points_the_cluster_at_it(s3):
    r = cli(s3, "export", URL, "--to", "kserve")  # a broken config: named by its URL, nothing exported
    assert r.returncode == 1 and one_line(r).startswith(f"export: {URL}/broken/config.pbtxt: ") \
        and f"validate {URL}" in r.stderr
    clean = f"s3://{BUCKET}/prod/clean"
    r = cli(s3, "export", clean, "--to", "kserve")
    assert r.returncode == 0, r.stderr
    yaml = _need("yaml", "PyYAML")
    isvc = yaml.safe_load(r.stdout)
    assert isvc["spec"]["predictor"]["model"]["storageUri"] == clean
    assert isvc["metadata"]["name"] == "clean" and f"from {clean}" in r.stdout.splitlines()[0]
    assert isvc["spec"]["predictor"]["model"]["resources"]["limits"]["nvidia.com/gpu"] == "1"  # the ONNX model
    r = cli(s3, "export", clean, "--to", "helm")
    values = yaml.safe_load(r.stdout)
    assert r.returncode == 0 and values["image"]["modelRepositoryPath"] == clean and "deploy/aws" in r.stdout
    r = cli(s3, "export", clean, "--to", "compose")
    assert r.returncode == 2 and "compose mounts a local folder" in one_line(r)


def test_a_missing_backend_says_which_extra_to_install(s3):
    """s3fs made unimportable in the child (sys.modules entry None: what `import s3fs` does when it is absent)."""
    code = ("import sys; sys.modules['s3fs'] = None; from studio.cli import main; "
            f"sys.exit(main(['validate', '{URL}']))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=s3, cwd=REPO,
                       timeout=scaled_s(60))
    assert r.returncode == 1 and "pip install 'triton-config-studio[cloud]'" in one_line(r), r.stderr
