"""The backend-agreement page, rendered from its facts alone."""

from __future__ import annotations

from slmbench.agents.agreement import against_floor as a_floor
from slmbench.agents.agreement import compare_runtimes
from slmbench.agents.records import Action, Outcome, Step, Trial
from slmbench.core.stats import Estimate
from slmbench.microtasks.agreement import against_floor as b_floor
from slmbench.microtasks.agreement import readings_agreement
from slmbench.microtasks.cells import EligibilityCell
from slmbench.microtasks.matrix import MatrixRun
from slmbench.microtasks.readout import ItemReading
from slmbench.models.base import Message
from slmbench.report.agreement_page import (
    AgreementFacts,
    FloorA,
    FloorB,
    TemplateShown,
    agreement_markdown,
)

CPP, SERVER, HF = "llamacpp:m", "llamaserver:m", "hf:m.gguf"
PROMPT = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


def _trials(spec: str, solved: int, reply: str = "Final Answer: 1") -> list[Trial]:
    step = Step(index=0, raw_response=reply, action=Action(kind="final", answer="1"))
    return [Trial(model=spec, task_id=f"IR-{t}", suite="capability", steps=[step],
                  outcome=Outcome.SUCCESS if t <= solved else Outcome.WRONG_ANSWER)
            for t in range(1, 32)]


def _run(spec: str, flips: set[int]) -> MatrixRun:
    e = Estimate(estimate=0.8, low=0.7, high=0.9, method="wilson", n=200)
    readings = [ItemReading(item_id=f"i{i}", task="approval", prompt_id="p0",
                            options=["approve", "deny"], logprobs=None, logprob_ranking=None,
                            reply="", generation_ranking=["deny" if (i in flips) ^ (i % 2)
                                                          else "approve"])
                for i in range(200)]
    cell = EligibilityCell(task="approval", model=spec, precision="q8", prompt_id="p0",
                           reading="generation", metric="f1", n_items=200, score=e, tau=0.6,
                           tau_anchor="majority", baseline_scores={}, diff=e,
                           format_failures=0, eligible=True, verdict="eligible")
    return MatrixRun(command="", created="", models=[spec], tasks=["approval"],
                     prompts=["p0"], limit=200, seed=0,
                     items={"approval": [r.item_id for r in readings]}, baseline_scores={},
                     cells=[cell], tau_sweep=[], by_prompt=[], readings=readings, notes=[])


def _facts() -> AgreementFacts:
    part_a = compare_runtimes({CPP: _trials(CPP, 12), SERVER: _trials(SERVER, 12),
                               HF: _trials(HF, 2, reply="Final Answer: 2")})
    (floor_a,) = compare_runtimes({f"{SERVER} (1 in flight)": _trials(SERVER, 12),
                                   f"{SERVER} (8 in flight)": _trials(SERVER, 12)})
    part_b = readings_agreement({CPP: _run(CPP, set()), HF: _run(HF, {1, 2, 3})})
    (floor_b,) = readings_agreement({CPP: _run(CPP, set()),
                                     f"{CPP}?chunking=prompt": _run(f"{CPP}?chunking=prompt",
                                                                    set())})
    ids = [f"i{i}" for i in range(200)]
    return AgreementFacts(
        title="Backend agreement: m", command="slmbench agree llamacpp:m llamaserver:m hf:m",
        created="2026-12-03T00:00:00+00:00", specs=[CPP, SERVER, HF],
        floor=["llama-server at 1 and 8 requests in flight"], margin=0.1, suite="capability",
        conversation=[Message(role="user", content="Hi")],
        templates=[TemplateShown(label=CPP, text=PROMPT),
                   TemplateShown(label=SERVER, text=PROMPT),
                   TemplateShown(label=HF, text=PROMPT.replace("Hi", "Hi ")),
                   TemplateShown(label="ollama:m", text=None, note="Ollama renders no prompt")],
        part_a=part_a, part_a_floor=[floor_a],
        part_a_beyond=[FloorA(cross=(CPP, HF), floor=(floor_a.a, floor_a.b),
                              comparison=a_floor(part_a[1], floor_a))],
        part_b=part_b, part_b_floor=[floor_b],
        part_b_beyond=[FloorB(task="approval", prompt_id="p0", cross=(CPP, HF),
                              floor=(floor_b.a, floor_b.b),
                              test=b_floor(part_b[0], floor_b, ids))])


def test_the_page_shows_templates_first_then_a_verdict_per_pair() -> None:
    page = agreement_markdown(_facts())
    assert page.index("chat template") < page.index("Part A") < page.index("Part B")
    assert f"`{SERVER}`: the same text as `{CPP}`" in page
    assert f"`{HF}`: **differs** from `{CPP}`" in page and "+Hi <|im_end|>" in page
    assert "`ollama:m`: not shown (Ollama renders no prompt)" in page
    rows = [line for line in page.splitlines() if line.startswith(f"| `{CPP}` | `{SERVER}`")]
    # identical on 31 tasks: TOST p 0.038, but Holm over the three pairs' TOSTs is 0.114
    assert len(rows) == 1 and "| 0.038, Holm 0.114 [-9.2, 9.2] |" in rows[0]
    assert rows[0].endswith("| cannot tell at this n |")
    assert "**different**" in next(line for line in page.splitlines()
                                   if line.startswith(f"| `{CPP}` | `{HF}` | 31"))
    assert "| 197/200 = 98.5 [95.7, 99.5] | 0.970 [0.930, 1.000] |" in page  # 3 items flipped
    tables = "\n".join(line if line.startswith("|") else "" for line in page.splitlines())
    for block in filter(None, tables.split("\n\n")):
        assert len({row.count("|") for row in block.strip().splitlines()}) == 1  # no stray |
    assert "identical transcripts, floor − across by task 100.0" in page
    assert "3 items agreed within the floor only, 0 across only" in page


def test_the_facts_round_trip_through_json() -> None:
    facts = _facts()
    again = AgreementFacts.model_validate_json(facts.model_dump_json())
    assert agreement_markdown(again) == agreement_markdown(facts)
