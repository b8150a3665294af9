"""Provenance sidecars: one writer, the payload first, never overwritten by the stamp."""

import json

import pytest

import drk
from drk.provenance import caption_stamp, write_provenance


def test_write_provenance_stamps_the_payload(tmp_path):
    path = write_provenance(tmp_path / "a" / "run.json", {"config": {"steps": 2}, "path": tmp_path})
    saved = json.loads(path.read_text())
    assert list(saved)[:2] == ["config", "path"] and saved["config"] == {"steps": 2}
    assert saved["path"] == str(tmp_path)  # not JSON: written as a string
    assert saved["drk_version"] == drk.__version__ and saved["git_sha"] and saved["torch"]
    with pytest.raises(ValueError, match="git_sha"):
        write_provenance(tmp_path / "b.json", {"git_sha": "mine"})


def test_caption_stamp_names_the_version():
    assert caption_stamp().startswith(f" [made by drk {drk.__version__}, git ")


def test_display_path_never_shows_a_machine_root(tmp_path, monkeypatch):
    from drk.provenance import REPO_ROOT, display_path

    assert display_path(REPO_ROOT / "results" / "mini") == "results/mini"  # cwd is the repository in CI
    monkeypatch.chdir(tmp_path)
    assert display_path(tmp_path / "ours" / "eval") == "ours/eval"
    assert display_path(REPO_ROOT / "figures") == "figures"
    outside = REPO_ROOT.parent / "elsewhere" / "ours" / "stts" / "vanilla.jsonl"
    assert display_path(outside) == "ours/stts/vanilla.jsonl"


def test_display_command_has_no_machine_paths():
    from drk.provenance import display_command

    line = display_command(["benchmarks/x.py", "--out", "/root/somewhere/deep/part1.csv", "--cache", "/tmp/c"])
    assert line == "benchmarks/x.py --out somewhere/deep/part1.csv --cache tmp/c"
