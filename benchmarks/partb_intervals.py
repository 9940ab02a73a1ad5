"""Which Part B intervals moved when they went onto core.stats, and did any verdict change?

Old: the eligibility cells of the reference study as committed at ``--old-ref`` (written by
that commit's code: a percentile bootstrap with 2,000 resamples and Wilson straight from
statsmodels). New: the same cells recomputed by this checkout from the committed raw
readings (``readings.jsonl.gz``), every interval from ``slmbench.core.stats``. Point scores
must be identical (the readings are the same). τ may differ where a baseline was added after
the old commit (fb9020b: the constant answers and the learned baseline); such cells are
counted apart and left out of the Δ-vs-τ columns, and a verdict that flips says whether τ
moved.

Usage (the datasets are built by ``slmbench data prepare``)::

    python benchmarks/partb_intervals.py [--datasets DIR] [--old-ref 0717d58]

writes ``docs/results/partb-intervals-v2.md``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from slmbench.core import paths
from slmbench.microtasks import tasks
from slmbench.microtasks.eligibility import EligibilityCell, tau_sweep
from slmbench.microtasks.matrix import run_matrix
from slmbench.microtasks.readout import RawReading
from slmbench.microtasks.store import ReadingStore
from slmbench.study import load_study

ROOT = Path(__file__).resolve().parents[1]
RESULTS = "docs/results/reference-study"
STUDY = "experiments/reference-v1.toml"  # the study file that made RESULTS' readings
TOLERANCE = 1e-9  # float noise below this is "unchanged"

Key = tuple[str, str, str, str, str]


def key(c: dict[str, Any]) -> Key:
    return (c["task"], c["model"], c["prompt_id"], c["reading"], c["metric"])


EMBEDDED = "docs/results/eligibility-embedded/eligibility.json"


def at_ref(ref: str, path: str) -> Any:
    """A committed JSON file as it was at ``ref``."""
    return json.loads(subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{path}"],
                                     check=True, capture_output=True, text=True).stdout)


def old_runs(ref: str) -> list[dict[str, Any]]:
    return at_ref(ref, f"{RESULTS}/eligibility.json")


def new_cells(datasets: Path) -> list[EligibilityCell]:
    """The reference study's cells from its committed readings, read by this checkout."""
    study = load_study(ROOT / STUDY, base=ROOT)
    items = {t: {i.id: i for i in tasks.get(t).load_items(datasets)}
             for b in study.part_b for t in b.tasks}

    def refuse(spec: str) -> Any:
        raise AssertionError(f"{spec}: a reading is missing from readings.jsonl.gz")

    with tempfile.TemporaryDirectory() as tmp, ReadingStore(Path(tmp) / "r.sqlite") as store:
        with gzip.open(ROOT / RESULTS / "readings.jsonl.gz", "rt", encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                store.put(r["model"], r["task"], r["prompt_id"], items[r["task"]][r["item_id"]],
                          RawReading.model_validate(r["raw"]))
        return [c for b in study.part_b
                for c in run_matrix(b.models, b.tasks, b.prompts, limit=b.limit, seed=b.seed,
                                    source=datasets, loader=refuse, store=store).cells]


def bounds(new: EligibilityCell) -> dict[str, float | None]:
    return {"low": new.score.low, "high": new.score.high, "diff_low": new.diff.low,
            "diff_high": new.diff.high}


def old_bounds(old: dict[str, Any]) -> dict[str, float]:
    return {"low": old["ci_low"], "high": old["ci_high"], "diff_low": old["diff_low"],
            "diff_high": old["diff_high"]}


def changes(old: dict[str, Any], new: EligibilityCell) -> dict[str, float]:
    """new − old of each bound."""
    nb = bounds(new)
    return {k: (nb[k] if nb[k] is not None else float("nan")) - v
            for k, v in old_bounds(old).items()}


def same_tau(old: dict[str, Any], new: EligibilityCell) -> bool:
    return old["tau_anchor"] == new.tau_anchor and abs(old["tau"] - new.tau) <= TOLERANCE


def moved(delta: dict[str, float], *bounds: str) -> bool:
    return any(abs(delta[k]) > TOLERANCE for k in bounds)


def fmt(x: float) -> str:
    return f"{x:+.4f}"


def summary_rows(pairs: Sequence[tuple[dict[str, Any], EligibilityCell]]) -> list[str]:
    rows = []
    for metric in sorted({o["metric"] for o, _ in pairs}):
        chosen = [(o, n) for o, n in pairs if o["metric"] == metric]
        deltas = [changes(o, n) for o, n in chosen]
        paired = [changes(o, n) for o, n in chosen if same_tau(o, n)]
        moved = sum(any(abs(d[k]) > TOLERANCE for k in ("low", "high")) for d in deltas)
        old_methods = Counter(o["ci_method"] for o, _ in chosen)
        new_methods = Counter(n.score.method.split(" (")[0] for _, n in chosen)
        cells = [f"{metric}", f"{len(chosen)}", "; ".join(f"{m} ({k})" for m, k in
                                                         sorted(old_methods.items())),
                 "; ".join(f"{m} ({k})" for m, k in sorted(new_methods.items())), str(moved)]
        for k in ("low", "high", "diff_low", "diff_high"):
            values = [abs(d[k]) for d in (paired if k.startswith("diff") else deltas)]
            cells.append(f"{max(values):.4f} / {statistics.median(values):.4f}" if values
                         else "– (τ changed)")
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def sweep_rows(old: list[dict[str, Any]], new: list[EligibilityCell]) -> list[str]:
    """Eligible cells with τ at each anchor, old and new (all blocks together)."""
    before: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for run in old:
        for row in run["tau_sweep"]:
            before[row["anchor"]] += row["eligible"]
            total[row["anchor"]] += row["total"]
    after = Counter({r.anchor: r.eligible for r in tau_sweep(new)})
    return [f"| {a} | {total[a]} | {before[a]} | {after[a]} |" for a in sorted(total)]


def render(pairs: Sequence[tuple[dict[str, Any], EligibilityCell]], ref: str,
           command: str, sweep: list[str], embedded: str) -> str:
    flips = [(o, n) for o, n in pairs if o["eligible"] != n.eligible]
    all_deltas = [changes(o, n) for o, n in pairs]
    both = list(zip(pairs, all_deltas, strict=True))
    old = f"`{ref}`, superseded"
    retau = Counter(f"{o['tau_anchor']} → {n.tau_anchor}" for o, n in pairs
                    if not same_tau(o, n))
    lines = [
        "# Part B intervals v2: onto core.stats", "",
        f"Generated by `slmbench data prepare && {command}` from stored data only; do not "
        "edit by hand.", "",
        f"**The old columns show the superseded intervals of `{ref}`, on purpose**: their "
        "zero-width intervals are the defect this page documents; no other page uses that "
        "method any more.", "",
        f"**Old (`{ref}`, superseded)**: the {len(pairs)} eligibility cells of the reference "
        f"study committed at `{ref}` (`{RESULTS}/eligibility.json`, written by that commit's "
        "code: percentile bootstrap, 2,000 resamples, seed 20250101, and Wilson from "
        "statsmodels). **New (current)**: the same cells recomputed by this checkout from the "
        f"committed raw readings (`{RESULTS}/readings.jsonl.gz`, the blocks of `{STUDY}`): "
        "every interval from `slmbench.core.stats` "
        "(accuracy: Wilson; MRR and nDCG@5: a Jeffreys Dirichlet posterior over the per-item "
        "values and the range's ends; F1 and every paired difference: a Jeffreys Dirichlet "
        "posterior of the joint cells; 20,000 draws each). Point scores are "
        "identical in every cell (checked), and so are τ and its anchor except where a "
        f"baseline was added after `{ref}` (fb9020b: the constant answers and the learned "
        "baseline).", "",
        f"- cells compared: {len(pairs)}",
        f"- cells whose score interval moved (by more than {TOLERANCE:g}): "
        f"{sum(any(abs(d[k]) > TOLERANCE for k in ('low', 'high')) for d in all_deltas)}",
        f"- cells whose τ changed (a baseline added since; left out of the Δ vs τ columns): "
        f"{sum(retau.values())}" + "".join(f"; {a}: {k}" for a, k in sorted(retau.items())),
        f"- cells with the same τ whose paired-difference interval moved: "
        f"{sum(same_tau(o, n) and moved(d, 'diff_low', 'diff_high') for (o, n), d in both)}",
        f"- eligibility verdicts changed: {len(flips)} of {len(pairs)}",
        f"- cells with a zero-width score interval (every resample gives the same value, e.g. "
        f"F1 = 0 when a model never answers the positive class): "
        f"{sum(o['ci_low'] == o['ci_high'] for o, _ in pairs)} old ({old}), "
        f"{sum(n.score.low == n.score.high for _, n in pairs)} new",
        f"- {embedded}", "",
        "## Change of each bound (|new − old|: max / median over the cells)", "",
        "Score interval: the cell's 95% interval; Δ vs τ: the paired interval of model − "
        "τ-baseline. Methods with their cell counts, as each cell names its own.", "",
        f"| metric | cells | old interval ({old}) | new interval | score interval moved "
        "| lower bound "
        "| upper bound | Δ vs τ lower | Δ vs τ upper |",
        "|---|---|---|---|---|---|---|---|---|",
        *summary_rows(pairs), "",
        "## τ sweep (eligible cells with τ set to each anchor)", "",
        f"The new column also counts what changed after `{ref}` besides the intervals: since "
        "fb9020b a cell that gives one answer to nearly every item (`constant`) is never "
        "eligible.", "",
        f"| τ anchor | cells | eligible, old ({old}) | eligible, new |", "|---|---|---|---|",
        *sweep, "",
        "## Verdicts", "",
    ]
    if flips:
        lines += [f"- {o['task']} · {o['model']} · {o['prompt_id']} · {o['reading']} · "
                  f"{o['metric']}: {'eligible' if o['eligible'] else 'not eligible'} → "
                  f"{'eligible' if n.eligible else 'not eligible'} (lower bound "
                  f"{o['ci_low']:.3f} → {n.score.low:.3f}, τ {o['tau']:.3f} → {n.tau:.3f})"
                  for o, n in flips]
    else:
        lines.append(f"No verdict changed: the same {sum(n.eligible for _, n in pairs)} of "
                     f"{len(pairs)} cells are eligible before and after.")
    lines += ["", "## Every cell whose score interval moved", "",
              f"| task | model | prompt | reading | metric | n | score | old 95% CI ({old}) "
              "| new 95% CI "
              "| Δ low | Δ high | τ | eligible |", "|" + "---|" * 13]
    for (o, n), d in zip(pairs, all_deltas, strict=True):
        if not any(abs(d[k]) > TOLERANCE for k in ("low", "high")):
            continue
        lines.append(
            f"| {o['task']} | {o['model']} | {o['prompt_id']} | {o['reading']} | {o['metric']} "
            f"| {o['n_items']} | {o['score']:.3f} | [{o['ci_low']:.3f}, {o['ci_high']:.3f}] "
            f"| {n.score.formatted(percent=False, digits=3).split(' ', 1)[-1]} | {fmt(d['low'])} "
            f"| {fmt(d['high'])} | {o['tau']:.3f} | {'yes' if n.eligible else 'no'} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=None,
                        help="built datasets (default: $SLMBENCH_HOME/datasets)")
    parser.add_argument("--old-ref", default="0717d58", help="commit holding the old cells")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/results/partb-intervals-v2.md")
    args = parser.parse_args(argv)
    runs = old_runs(args.old_ref)
    old = {key(c): c for run in runs for c in run["cells"]}
    new = new_cells(args.datasets or paths.datasets_dir())
    pairs = [(old[key(n.model_dump())], n) for n in new]
    if len(pairs) != len(old):
        raise SystemExit(f"{len(old)} old cells but {len(pairs)} new ones")
    for o, n in pairs:
        if abs(o["score"] - (n.score.estimate or 0.0)) > TOLERANCE or (same_tau(o, n) and abs(
                o["diff"] - (n.diff.estimate or 0.0)) > TOLERANCE):
            raise SystemExit(f"point values differ for {key(o)}: the readings do not match")
    emb = at_ref(args.old_ref, EMBEDDED)["cells"]
    same = sum(old.get(key(c), {}) == c for c in emb)
    embedded = (f"`{EMBEDDED}` at `{args.old_ref}`: {same} of its {len(emb)} cells are "
                "identical to cells compared here (same readings), so the same changes apply")
    command = f"python benchmarks/partb_intervals.py --old-ref {args.old_ref}"
    args.out.write_text(render(pairs, args.old_ref, command, sweep_rows(runs, new), embedded),
                        encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
