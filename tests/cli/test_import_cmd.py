"""``slmbench import``: a page's exports back into stores, through the real entry point."""

from __future__ import annotations

from pathlib import Path

import pytest
from clirun import CliRunner

from slmbench.core.jsonl import write_jsonl_gz

TRIAL = ('{"model": "scripted:echo", "task_id": "IR-1", "suite": "capability", '
         '"outcome": "wrong_answer"}')


def test_import_writes_the_stores_then_refuses_to_overwrite_them(
        cli: CliRunner, home: Path, tmp_path: Path) -> None:
    study = tmp_path / "s.toml"
    study.write_text('name = "s"\nout = "runs/s"\npage = "docs/s.md"\n[part_a]\n'
                     'models = ["scripted:echo"]\ntasks = ["IR-1"]\n', encoding="utf-8")
    write_jsonl_gz(tmp_path / "docs" / "s" / "trials.jsonl.gz", [TRIAL])
    out = tmp_path / "imported"
    args = ("import", str(tmp_path / "docs" / "s"), "--study", str(study), "--out", str(out))
    first = cli(*args)
    assert first.code == 0, first.err
    assert first.out == f"{out / 'part-a' / '1' / 'run.sqlite'}: 1 records\n"
    again = cli(*args)
    assert again.code == 2 and "exists; import never overwrites a store" in again.err
    assert "Traceback" not in again.err


def test_study_merge_copies_another_machines_store_and_refuses_a_clash(
        cli: CliRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3
    from contextlib import closing

    monkeypatch.chdir(tmp_path)  # the page is written relative to the working folder
    study = tmp_path / "s.toml"
    study.write_text('name = "s"\nout = "runs/s"\npage = "docs/s.md"\n[part_a]\n'
                     'models = ["scripted:echo"]\ntasks = ["IR-1"]\ntemperatures = [0.7]\n'
                     'repeats = 1\n', encoding="utf-8")
    other, here = tmp_path / "gpu-box", tmp_path / "here"
    ran = cli("study", str(study), "--out", str(other))
    assert ran.code == 0, ran.err
    merged = cli("study", str(study), "--out", str(here), "--merge", str(other))
    assert merged.code == 0, merged.err
    assert f"{here / 'part-a' / '1' / 'run.sqlite'}: 1 records merged" in merged.out
    with closing(sqlite3.connect(other / "part-a" / "1" / "run.sqlite")) as conn, conn:
        conn.execute("UPDATE trials SET record = json_set(record, '$.wall_s', 99.0)")
    clash = cli("study", str(study), "--out", str(here), "--merge", str(other))
    assert clash.code == 2 and "different content" in clash.err and "Traceback" not in clash.err


def test_study_export_then_merge_carries_a_study_to_a_new_machine(
        cli: CliRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    study = tmp_path / "s.toml"
    study.write_text('name = "s"\nout = "runs/s"\n[part_a]\nmodels = ["scripted:echo"]\n'
                     'tasks = ["IR-1"]\ntemperatures = [0.7]\nrepeats = 2\n', encoding="utf-8")
    old, new, carried = tmp_path / "old-machine", tmp_path / "new-machine", tmp_path / "carried"
    nothing = cli("study", str(study), "--out", str(old), "--export", str(carried))
    assert nothing.code == 2 and "has nothing stored" in nothing.err
    assert not carried.exists()
    assert cli("study", str(study), "--out", str(old)).code == 0
    exported = cli("study", str(study), "--out", str(old), "--export", str(carried))
    assert exported.code == 0, exported.err
    assert exported.out == f"{carried / 'trials.jsonl.gz'}: 2 records\n"
    merged = cli("study", str(study), "--out", str(new), "--merge", str(carried))
    assert merged.code == 0, merged.err
    assert f"{new / 'part-a' / '1' / 'run.sqlite'}: 2 records merged" in merged.out
    resumed = cli("study", str(study), "--out", str(new))
    assert resumed.code == 0 and "0 to run" in resumed.out, resumed.out


def test_a_partial_study_never_replaces_another_study_files_page(
        cli: CliRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The v2 reference study writes to the v1 page's path: until v2 is complete, its partial
    page (and exports) must leave v1's page as it is."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v1.toml").write_text(
        'name = "v1"\nout = "runs/v1"\npage = "docs/s.md"\n[part_a]\nmodels = ["scripted:echo"]'
        '\ntasks = ["IR-1"]\ntemperatures = [0.7]\nrepeats = 1\n', encoding="utf-8")
    (tmp_path / "v2.toml").write_text(
        'name = "v2"\nout = "runs/v2"\npage = "docs/s.md"\n[[part_a]]\nmodels = ["scripted:echo"]'
        '\ntasks = ["IR-1"]\ntemperatures = [0.7]\nrepeats = 1\n[[part_a]]\nmodels = '
        '["scripted:silent"]\ntasks = ["IR-1"]\ntemperatures = [0.7]\nrepeats = 1\n',
        encoding="utf-8")
    assert cli("study", "v1.toml").code == 0
    v1 = {p: p.read_bytes() for p in (tmp_path / "docs").rglob("*") if p.is_file()}
    assert "From the study file `v1.toml`" in (tmp_path / "docs" / "s.md").read_text()
    partial = cli("study", "v2.toml", "-m", "scripted:echo")  # A2 not run
    assert partial.code == 0, partial.err
    assert "results page not written: docs/s.md is the page of v1.toml" in partial.out
    assert "A2 still to run" in partial.out
    assert {p: p.read_bytes() for p in (tmp_path / "docs").rglob("*") if p.is_file()} == v1
    assert "not written" in cli("study", "v2.toml", "--page-only").out
    done = cli("study", "v2.toml")  # complete: its page replaces v1's
    assert done.code == 0 and "not written" not in done.out, done.out
    assert "From the study file `v2.toml`" in (tmp_path / "docs" / "s.md").read_text()
