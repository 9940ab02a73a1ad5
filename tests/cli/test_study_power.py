"""``slmbench study FILE --plan`` prints each Part A block's minimum detectable difference
(issue #39): at the defaults while nothing is stored, at the stored trials' components once
the study holds some, and says why where a block compares nothing."""

from __future__ import annotations

from pathlib import Path

from clirun import CliRunner

from slmbench.agents import power
from slmbench.agents.records import Outcome, Trial
from slmbench.agents.store import export_trials
from slmbench.study import load_study, size_power

TASKS = ["IR-1", "IR-2", "DA-1", "SC-1", "CM-1", "MR-1"]


def _study(tmp: Path) -> Path:
    path = tmp / "s.toml"
    path.write_text(f"""\
name = "power"
out = "runs/s"
page = "docs/s.md"
[[part_a]]
models = ["scripted:echo", "scripted:silent"]
tasks = {TASKS!r}
temperatures = [0.0, 0.7]
repeats = 2
instances = 3
[[part_a]]
models = ["scripted:echo"]
tasks = ["IR-1", "IR-2"]
temperatures = [0.7]
[[part_a]]
models = ["scripted:echo", "scripted:silent"]
tasks = ["IR-1", "IR-2"]
[[part_a]]
models = ["scripted:echo"]
tasks = {TASKS!r}
temperatures = [0.3, 0.7, 1.0]
repeats = 2
instances = 3
""", encoding="utf-8")
    return path


def test_the_plan_prints_each_blocks_mdd_at_the_defaults(cli: CliRunner, tmp_path: Path) -> None:
    got = cli("study", str(_study(tmp_path)), "--plan")
    assert got.code == 0, got.err
    out = " ".join(got.out.split())  # rich wraps long lines at the terminal's width
    assert "MDD (points)" in out and "defaults: reference study v2" in out
    a1, a2, a3, a4 = size_power(load_study(_study(tmp_path), base=tmp_path))
    assert (a1.models, a1.families, a1.instances, a1.trials) == (2, len(TASKS), 3, 4)
    assert a1.mdd == power.planned(power.DEFAULT_COMPONENTS, len(TASKS), 3, 4)
    assert f"{a1.mdd:.1f}" in out
    assert a2.mdd is None and "one model at one temperature" in a2.note
    assert "one model at one temperature" in out
    # two families cannot detect anything: said so, not a difference of 276 points
    assert a3.mdd is not None and a3.mdd > 100 and "no difference is detectable" in out
    # one model at three temperatures: its temperatures pair on (task, instance, repeat), two
    # trials an instance, sized by the temperature defaults (both sources are printed)
    assert (a4.compares, a4.families, a4.instances, a4.trials) == ("temperatures", 6, 3, 2)
    assert a4.mdd == power.planned(power.DEFAULT_TEMPERATURE_COMPONENTS, len(TASKS), 3, 2)
    assert "temperature pair" in out and a4.mdd != a1.mdd


def test_the_plan_sizes_with_the_trials_stored_beside_the_page(tmp_path: Path) -> None:
    """An export beside the page where echo passes half its repeats and silent none: the
    components are that pair's, and they give another MDD than the defaults."""
    trials = [Trial(model=m, task_id=t, suite="capability", variant="base", temperature=0.0,
                    seed=r, repeat=r, instance=0, final_answer="x",
                    outcome=Outcome.SUCCESS if m == "scripted:echo" and (r + i) % 2
                    else Outcome.WRONG_ANSWER)
              for m in ("scripted:echo", "scripted:silent") for i, t in enumerate(TASKS)
              for r in range(3)]
    study = load_study(_study(tmp_path), base=tmp_path)
    assert study.page is not None
    export_trials(trials, study.page.parent / study.page.stem / "trials.jsonl.gz")
    a1 = size_power(study)[0]
    assert "this study's stored trials" in a1.source and "scripted:echo" in a1.source
    pair = power.difference_components(trials, "scripted:echo", "scripted:silent")
    assert a1.mdd == power.planned(pair.components, len(TASKS), 3, 4)
    assert a1.mdd != power.planned(power.DEFAULT_COMPONENTS, len(TASKS), 3, 4)
