"""A study: Part A (agent suites) and Part B (micro-task eligibility) from one TOML file.

.. code-block:: toml

    name = "reference-study"
    out = "runs/reference-study"          # part-a/<n>/ (RunStores), part-b/ (ReadingStore)
    page = "docs/results/reference-study.md"
    humaneval = ["runs/humaneval-q05"]    # HumanEval run dirs shown on the page
    previous = "docs/results/reference-study-v1.md"  # an earlier page: "What changed since"
                                          # lists every verdict the two state differently
                                          # (report.since; each page writes verdicts.json)
    executor = "ray"                      # every block's models on Ray actors (docs/scale-out.md);
    ray_address = "ray://head:10001"      # a block's own executor / ray_address / retry wins
    retry = {attempts = 5}                # Part A: [retry] of each block; Part B: the tries of
                                          # a reading whose Ray replica died or hung (default 3)

    [[part_a]]                            # the fields of `slmbench run`'s experiment file
    models = ["llamacpp:qwen2.5-coder-0.5b"]
    suites = ["capability", "reliability"]
    temperatures = [0.3, 0.7, 1.0]
    repeats = 2

    [[part_a]]                            # a cheaper grid for a slower model
    models = ["llamacpp:qwen2.5-coder-1.5b"]
    temperatures = [0.7]
    repeats = 1

    [[part_b]]
    models = ["llamacpp:qwen2.5-coder-0.5b"]
    tasks = ["approval", "memory", "tools", "ranking"]
    prompts = ["p0", "p1", "p2", "p3"]
    limit = 40                            # eval items per task (seeded, stratified)

    [part_b.ray_models."llamacpp:qwen2.5-coder-0.5b"]   # with executor = "ray", per model
    replicas = 2                          # as in an experiment's [ray_models]

Each part is one table or several (``[[part_a]]`` blocks): a block is a uniform grid,
so a slow model can get a smaller grid than the others within one study. Part A
blocks run into their own run directories (``part-a/<n>``, or a block's ``out``, a folder
inside the study's ``out`` written relative to it: the demo's is ``"."``) and are analysed
together; Part B blocks share one readings store and their matrices are shown one after the
other. A caller may fill ``{name}`` placeholders in the file's strings
(:func:`load_study`'s ``fill``: the demo's ``{model}`` and ``{out}``).

A Part B block with ``sequential = true`` reads each cell only until its verdict is
decided (the sequential rule), at most ``limit`` items (or the whole eval split).

A ``[[cascade]]`` block is ``slmbench cascade`` inside the study: BM25's top ``k`` re-ranked
by the model's log-probabilities, and the router fitted on ``fit_limit`` fit items, its
readings (one per shortlist) in the study's readings store; it runs with Part B:

.. code-block:: toml

    [[cascade]]
    model = "llamacpp:qwen2.5-coder-0.5b"
    task = "ranking"                      # or "tools"
    k = 3
    limit = 40                            # eval items (None: the whole eval split)
    fit_limit = 20                        # fit items the router's margin is fitted on

``slmbench study FILE`` runs what is missing of both parts and writes the page.
Both parts resume: Part A's trials and Part B's readings are committed one by one
to SQLite, so running the same command again after an interruption computes only
what is not stored. ``--page-only`` regenerates the page from what is stored,
without loading a model. Every number on the page is computed from the stores.
``--merge DIR...`` first copies another machine's stores of the same study file (its
``out``, or the ``*.jsonl.gz`` that ``--export DIR`` wrote there) into this one's, refusing a
key stored with different content; ``--export DIR`` writes everything stored as those files
(how a long study survives a change of machine). A page another study file made at the same
path is replaced only once this study is complete (:func:`page_blocker`); ``--plan``
prints each block's remaining work in model hours at the rates measured in the stores (the
study's own, the exports beside its page, and ``--rates`` folders). ``--readme README.md``
also writes the study's entry in the README from the page's facts, between the lines
``<!-- study:PAGE -->`` and ``<!-- /study:PAGE -->``.

The package, one way down: :mod:`~slmbench.study.spec` (the file, each block's tasks resolved
once, and what each block plans), :mod:`~slmbench.study.run` (running the blocks into the
stores, each Part B and cascade block one ``microtasks.job.Job``),
:mod:`~slmbench.study.export` (the stores as ``*.jsonl.gz``), :mod:`~slmbench.study.carry`
(import and merge: which record goes to which block's store), :mod:`~slmbench.study.plan`
(``--plan``: hours per block and each Part A block's power), :mod:`~slmbench.study.verdicts`
(the previous page's verdicts, the cells a new cell rule moved), :mod:`~slmbench.study.gather`
(what the stores hold, gathered for the page), :mod:`~slmbench.study.page` (the page; with
:mod:`~slmbench.study.provenance`, the versions and model hashes it records),
:mod:`~slmbench.study.workflow` (``slmbench study FILE`` as one call, :func:`run_study`),
:mod:`~slmbench.study.demo` (``slmbench demo`` as one call, :func:`run_demo`: the small study
file ``demo.toml`` shipped with the package, :func:`demo_study`) and
:mod:`~slmbench.study.eligibility` (the page of a bare readings store).

A study with an ``[agreement]`` table (``slmbench agree``) is one model through several
runtimes: its blocks follow from the table (:class:`AgreementBlock`) and its page is the
agreement page (:mod:`~slmbench.study.agree`).

.. code-block:: toml

    name = "qwen2.5-coder-0.5b"
    out = "runs/agree-qwen05"
    page = "docs/results/agreement-qwen2.5-coder-0.5b.md"

    [agreement]
    specs = ["llamacpp:qwen2.5-coder-0.5b", "llamaserver:qwen2.5-coder-0.5b",
             "hf:qwen2.5-coder-0.5b?dtype=fp32"]
    margin = 0.1                          # Part A: TOST within ±10 points
    suites = ["capability"]               # Part A, at T = 0, one repeat
    tasks = ["approval", "tools"]         # Part B, p0, fixed n
    limit = 200
    floor = true                          # and each runtime's noise floor
"""

from slmbench.study.agree import agreement_block, write_agreement_file, write_agreement_page
from slmbench.study.carry import import_exports, merge_stores
from slmbench.study.demo import DemoRun, demo_study, run_demo
from slmbench.study.eligibility import write_eligibility_page
from slmbench.study.export import ImportSummary, export_study
from slmbench.study.gather import StoredPartB, stored_part_b
from slmbench.study.page import page_blocker, write_page
from slmbench.study.plan import BlockPower, PlanRow, size_plan, size_power
from slmbench.study.run import check_can_run, run_cascades, run_part_a, run_part_b
from slmbench.study.spec import (
    READINGS_NAME,
    AgreementBlock,
    CascadeBlock,
    PartB,
    Study,
    check_models,
    load_study,
)
from slmbench.study.workflow import StudyRun, run_study

__all__ = [
    "READINGS_NAME",
    "AgreementBlock",
    "BlockPower",
    "CascadeBlock",
    "DemoRun",
    "ImportSummary",
    "PartB",
    "PlanRow",
    "StoredPartB",
    "Study",
    "StudyRun",
    "agreement_block",
    "check_can_run",
    "check_models",
    "demo_study",
    "export_study",
    "import_exports",
    "load_study",
    "merge_stores",
    "page_blocker",
    "run_cascades",
    "run_demo",
    "run_part_a",
    "run_part_b",
    "run_study",
    "size_plan",
    "size_power",
    "stored_part_b",
    "write_agreement_file",
    "write_agreement_page",
    "write_eligibility_page",
    "write_page",
]
