from __future__ import annotations

import os
import time

from studio.repository import Repository, scan_repository, version_ignored_reason


def test_scan_models_versions_and_alternative_configs(tmp_path):
    m = tmp_path / "m"
    (m / "1").mkdir(parents=True)
    (m / "10").mkdir()
    (m / "2").mkdir()
    (m / "007").mkdir()
    (m / "latest").mkdir()
    (m / "configs").mkdir()
    (m / "configs" / "h100.pbtxt").write_text('name: "m"\n')
    (m / "1" / "model.onnx").write_bytes(b"\0" * 1024)
    (m / "config.pbtxt").write_text('name: "m"\nplatform: "onnxruntime_onnx"\n')
    (tmp_path / "noconfig" / "1").mkdir(parents=True)
    (tmp_path / ".hidden").mkdir()
    models = {e.name: e for e in scan_repository(tmp_path)}
    assert sorted(models) == ["m", "noconfig"]
    e = models["m"]
    assert e.versions == ["1", "2", "10"]
    assert [n for n, _ in e.ignored] == ["007", "latest"]
    assert e.alt_configs == {"h100": m / "configs" / "h100.pbtxt"}
    assert e.files["1"] == ["model.onnx"]
    assert e.document is not None and e.document.get("platform") == "onnxruntime_onnx"
    assert models["noconfig"].config is None
    assert version_ignored_reason("0") is None and "leading zeros" in version_ignored_reason("01")


def test_refresh_rescans_only_changed_models(tmp_path):
    for n in ("a", "b", "c"):
        (tmp_path / n / "1").mkdir(parents=True)
        (tmp_path / n / "config.pbtxt").write_text(f'name: "{n}"\nbackend: "python"\n')
    repo = Repository(tmp_path)
    repo.scan()
    before = {n: repo.models[n] for n in "abc"}
    assert repo.refresh() == set()
    time.sleep(0.01)
    cfg = tmp_path / "b" / "config.pbtxt"
    cfg.write_text('name: "b"\nbackend: "python"\nmax_batch_size: 4\n')
    os.utime(cfg, None)
    (tmp_path / "d" / "1").mkdir(parents=True)
    import shutil

    shutil.rmtree(tmp_path / "c")
    assert repo.refresh() == {"b", "c", "d"}
    assert repo.models["a"] is before["a"]
    assert repo.models["b"].document.get("max_batch_size") == 4
    assert "c" not in repo.models and "d" in repo.models


def test_model_binaries_are_never_read(tmp_path):
    m = tmp_path / "big" / "1"
    m.mkdir(parents=True)
    f = m / "model.plan"
    f.write_bytes(b"")
    f.chmod(0)  # unreadable: a scan that opened it would fail for a non-root user; root must not either
    (tmp_path / "big" / "config.pbtxt").write_text('platform: "tensorrt_plan"\n')
    e = scan_repository(tmp_path)[0]
    assert e.files["1"] == ["model.plan"]
