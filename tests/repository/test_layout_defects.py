"""Repository layouts seen in real checkouts (issue 12): configs without model files, a config inside a
version folder, the parent folder of a repository opened by mistake."""

from __future__ import annotations

from pathlib import Path

import studio.repository as core
from studio.repository import Repository


def _model(root: Path, name: str, versions: tuple[str, ...] = (), nested: bool = False) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "config.pbtxt").write_text(f'name: "{name}"\nbackend: "python"\n')
    for v in versions:
        (d / v).mkdir()
        (d / v / "model.py").write_text("")
    if nested:
        (d / "1").mkdir(exist_ok=True)
        (d / "1" / "config.pbtxt").write_text(f'name: "{name}"\nplatform: "ensemble"\n')
    return d


def test_config_only_checkout_is_most_models_without_version_folders(tmp_path):
    for n in ("a", "b", "c"):
        _model(tmp_path / "bare", n)
    _model(tmp_path / "bare", "code", ("1",))  # a python model whose model.py is committed
    assert core.config_only_checkout(Repository(tmp_path / "bare").scan())
    for n in ("a", "b", "c"):
        _model(tmp_path / "full", n, ("1",))
    _model(tmp_path / "full", "forgot")  # one model without its version: a mistake, not a checkout
    assert not core.config_only_checkout(Repository(tmp_path / "full").scan())
    assert not core.config_only_checkout({})


def test_a_config_inside_a_version_folder_is_listed_as_misplaced(tmp_path):
    _model(tmp_path, "ensemble_model", nested=True)
    (tmp_path / "ensemble_model" / "config.pbtxt").unlink()
    e = Repository(tmp_path).scan()["ensemble_model"]
    assert e.config is None
    assert e.misplaced_configs == ["1/config.pbtxt"]
    assert e.files["1"] == ["config.pbtxt"]  # still a file of version 1


def test_a_folder_of_repositories_offers_the_repositories(tmp_path):
    for repo in ("addsub_repo", "subadd_repo"):
        _model(tmp_path / "parent" / repo, "simple", ("1",))
    (tmp_path / "parent" / "docs").mkdir()
    assert core.repository_candidates(tmp_path / "parent") == [tmp_path / "parent" / "addsub_repo", tmp_path / "parent" / "subadd_repo"]
    # deeper: project/deploy/models/<model>
    _model(tmp_path / "project" / "deploy" / "models", "m", ("1",))
    (tmp_path / "project" / "src").mkdir()
    assert core.repository_candidates(tmp_path / "project") == [tmp_path / "project" / "deploy" / "models"]
    # a repository itself, and a model folder
    assert core.repository_candidates(tmp_path / "parent" / "addsub_repo") == []
    assert core.repository_candidates(tmp_path / "parent" / "addsub_repo" / "simple") == [tmp_path / "parent" / "addsub_repo"]
    # a repository of auto-complete models (no config.pbtxt, only version folders) is a repository too
    (tmp_path / "auto" / "m" / "1").mkdir(parents=True)
    assert core.repository_candidates(tmp_path / "auto") == []
    assert core.repository_candidates(tmp_path / "nothing-here") == []
