"""Repository operations (no Qt): duplicate, rename and trash keep `name:` equal to the folder."""

from __future__ import annotations

import shutil

import pytest

from studio.config import ConfigDocument
from studio.repository.operations import OperationError, duplicate_model, rename_model, trash_model
from tests.conftest import REPO

DEMO = REPO / "model_repository_templates" / "demo"


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    shutil.copytree(DEMO, r)
    return r


def test_duplicate_copies_the_folder_and_renames_the_config(repo):
    before = (repo / "add_sub" / "config.pbtxt").read_bytes()
    dst = duplicate_model(repo, "add_sub", "add_sub_copy")
    assert (repo / "add_sub" / "config.pbtxt").read_bytes() == before
    assert ConfigDocument.load(dst / "config.pbtxt").get("name") == "add_sub_copy"
    assert sorted(p.name for p in dst.iterdir()) == sorted(p.name for p in (repo / "add_sub").iterdir())
    # only the name line differs
    a = before.decode().splitlines()
    b = (dst / "config.pbtxt").read_text().splitlines()
    assert [x for x, y in zip(a, b) if x != y] == ['name: "add_sub"']


def test_rename_moves_the_folder_and_the_name(repo):
    dst = rename_model(repo, "add_sub", "adder")
    assert not (repo / "add_sub").exists()
    assert ConfigDocument.load(dst / "config.pbtxt").get("name") == "adder"


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "x\ny"])
def test_bad_names_and_existing_targets_are_refused_without_change(repo, bad):
    with pytest.raises(OperationError):
        rename_model(repo, "add_sub", bad)
    with pytest.raises(OperationError, match="already exists"):
        duplicate_model(repo, "add_sub", "batched_sleep")
    assert (repo / "add_sub" / "config.pbtxt").is_file()


def test_trash_moves_the_model_out_and_keeps_it(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    before = (repo / "add_sub" / "config.pbtxt").read_bytes()
    target = trash_model(repo, "add_sub")
    assert not (repo / "add_sub").exists()
    assert (target / "config.pbtxt").read_bytes() == before
    assert str(target).startswith(str(tmp_path / "data" / "Trash"))
    with pytest.raises(OperationError):
        trash_model(repo, "add_sub")
