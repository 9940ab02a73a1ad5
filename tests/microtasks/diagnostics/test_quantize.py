"""4-bit RTN on torch Linear layers, precision parsing and the paired precision comparison."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="quantize needs the hf extra (torch)")

from torch import nn  # noqa: E402

from slmbench.core.errors import ConfigError  # noqa: E402
from slmbench.microtasks import tasks  # noqa: E402
from slmbench.microtasks.diagnostics.precisions import compare, parse_precisions  # noqa: E402
from slmbench.microtasks.diagnostics.quantize import (  # noqa: E402
    GROUP_SIZE,
    rtn_codes,
    rtn_dequantize,
    rtn_quantize_,
)


def weight(rows: int = 8, cols: int = 300, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(rows, cols, generator=gen) * 0.05


@pytest.mark.parametrize("symmetric", [False, True])
def test_codes_stay_in_the_int4_range(symmetric: bool) -> None:
    codes, _, zero = rtn_codes(weight(), symmetric=symmetric)
    assert torch.equal(codes, codes.round())
    low, high = (-8, 7) if symmetric else (0, 15)
    assert int(codes.min()) >= low and int(codes.max()) <= high
    assert len(torch.unique(codes)) <= 16
    if symmetric:
        assert torch.all(zero == 0)


@pytest.mark.parametrize("symmetric", [False, True])
def test_error_is_at_most_half_a_step_of_its_group(symmetric: bool) -> None:
    w = weight()
    codes, scale, zero = rtn_codes(w, symmetric=symmetric)
    back = rtn_dequantize(codes, scale, zero)
    # a weight can be off by at most half its own group's step (plus float round-off)
    step = scale.repeat_interleave(GROUP_SIZE, dim=1)[:, : w.shape[1]]
    assert torch.all((back - w).abs() <= step / 2 + 1e-6)
    assert (back - w).abs().max() > 0  # it did quantize


def test_groups_of_128_columns_get_their_own_scale() -> None:
    w = weight(rows=2, cols=300)
    w[:, 128:256] *= 100  # the second group is 100x wider: its scale must be too
    codes, scale, zero = rtn_codes(w)
    assert scale.shape == (2, 3)  # 300 columns -> groups of 128, 128, 44
    assert torch.all(scale[:, 1] > 50 * scale[:, 0])
    # a group of small weights keeps its precision next to a group of large ones
    back = rtn_dequantize(codes, scale, zero)
    assert (back[:, :128] - w[:, :128]).abs().max() < 0.02


def test_quantize_skips_lm_head_and_changes_every_other_linear() -> None:
    torch.manual_seed(0)
    model = nn.Sequential()
    model.add_module("proj", nn.Linear(256, 64))
    model.add_module("act", nn.ReLU())
    model.add_module("lm_head", nn.Linear(64, 32))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    report = rtn_quantize_(model)
    assert [layer.name for layer in report.layers] == ["proj"]
    assert report.skipped == ["lm_head"] and report.parameters_quantized == 256 * 64
    assert torch.equal(model.lm_head.weight, before["lm_head.weight"])
    assert torch.equal(model.proj.bias, before["proj.bias"])  # biases stay full precision
    assert not torch.equal(model.proj.weight, before["proj.weight"])
    # every group of 128 input weights of a row now takes at most 16 distinct values
    assert all(len(torch.unique(g)) <= 16 for g in model.proj.weight.view(64, 2, 128).flatten(0, 1))
    x = torch.randn(4, 256)
    # the quantized layer's outputs stay close: 4-bit noise is a few percent of the signal
    ref = x @ before["proj.weight"].T + before["proj.bias"]
    with torch.no_grad():
        rel = (model.proj(x) - ref).norm() / ref.norm()
    assert 0 < float(rel) < 0.15


def test_precisions_are_parsed_and_gptq_is_refused_with_the_reason() -> None:
    assert parse_precisions("fp32, rtn4,bf16") == ["fp32", "rtn4", "bf16"]
    with pytest.raises(ConfigError, match="gptq is not available here"):
        parse_precisions("fp32,gptq")
    with pytest.raises(ConfigError, match="unknown precision"):
        parse_precisions("int3")


def test_comparison_flags_a_change_of_eligibility_and_pairs_items() -> None:
    ref = [True] * 30 + [False] * 10
    same = list(ref)
    worse = [True] * 20 + [False] * 20
    cmp_same = compare("approval", "logprob", "fp32", "rtn4", ref, same, margin=0.05,
                       ref_eligible=True, eligible=True)
    assert cmp_same.difference.estimate == 0.0 and cmp_same.mcnemar.p_value == 1.0
    assert cmp_same.eligibility_changed is False
    cmp_worse = compare("approval", "logprob", "fp32", "rtn4", ref, worse, margin=0.05,
                        ref_eligible=True, eligible=False)
    assert cmp_worse.difference.estimate == pytest.approx(-0.25)
    assert cmp_worse.mcnemar.only_b == 10 and cmp_worse.mcnemar.p_value < 0.01
    assert cmp_worse.tost is not None and not cmp_worse.tost.equivalent
    assert cmp_worse.eligibility_changed is True


def test_no_material_loss_is_claimed_family_wise_over_the_reports_comparisons() -> None:
    """Identical on 60 items: each TOST alone says equivalent within ±0.05 (0.95^60 = 0.046);
    two such comparisons in one report are two claims, and after Holm (0.092) neither is."""
    from slmbench.microtasks.diagnostics.precisions import _holm_tost

    hits = [True] * 45 + [False] * 15
    one = compare("approval", "logprob", "fp32", "rtn4", hits, hits, margin=0.05)
    assert one.tost is not None and one.tost.equivalent and one.tost_p_holm is None
    [alone] = _holm_tost([one])
    assert alone.equivalent and alone.tost_p_holm == pytest.approx(0.95 ** 60)
    two = _holm_tost([one, one.model_copy(update={"reading": "generation"})])
    assert [c.equivalent for c in two] == [False, False]
    assert [c.tost_p_holm for c in two] == pytest.approx([2 * 0.95 ** 60] * 2)


class TinyTorchModel:
    """A Model whose approve/deny log-probs come from a small torch Linear (so RTN acts)."""

    supports_logprobs = True
    supports_native_tools = False

    def __init__(self, spec: str) -> None:
        self.spec = spec
        torch.manual_seed(0)
        self.model = nn.Sequential()
        self.model.add_module("proj", nn.Linear(256, 2))
        self.closed = False

    def score(self, messages, candidates):  # type: ignore[no-untyped-def]
        from slmbench.models.records import CandidateScore, as_messages

        text = as_messages(messages)[-1].content
        gen = torch.Generator().manual_seed(len(text))
        x = torch.randn(1, 256, generator=gen)
        with torch.no_grad():
            logp = torch.log_softmax(self.model(x)[0], dim=-1)
        row = {"approve": 0, "deny": 1}
        return [CandidateScore(candidate=c, logprob=float(logp[row[c.lower()]]),
                               first_token_logprob=0.0, n_tokens=1) for c in candidates]

    def generate(self, messages, **_):  # type: ignore[no-untyped-def]
        from slmbench.models.records import Completion

        return Completion(text="approve", prompt_tokens=1, completion_tokens=1, latency_s=0.0,
                          finish_reason="stop", model=self.spec)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def approval_home(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """12 fit and 12 eval approval items in a fresh SLMBENCH_HOME."""
    from slmbench.microtasks.datasets.records import ApprovalItem, Provenance

    prov = (Provenance(package="t", version="0", licence="CC0", archive_sha256="0" * 64,
                       source_path="t", record_id="x"),)
    home = tmp_path / "home"
    (home / "datasets").mkdir(parents=True)
    lines = [ApprovalItem(id=f"a-{s}-{k}", split=s, command=f"ls d{k}", rule="t", origin="t",
                          label="approve" if k % 3 else "deny", provenance=prov
                          ).model_dump_json() for s in ("fit", "eval") for k in range(12)]
    (home / "datasets" / "approval.jsonl").write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("SLMBENCH_HOME", str(home))
    return home


def test_run_quantize_rounds_the_fp32_model_in_place_and_pairs_precisions(
        approval_home) -> None:  # type: ignore[no-untyped-def]
    from slmbench.microtasks.diagnostics.quantize import run_quantize

    loads: list[str] = []
    made: list[TinyTorchModel] = []

    def loader(source: str, level: str):  # type: ignore[no-untyped-def]
        loads.append(level)
        made.append(TinyTorchModel(f"fake:{level}"))
        return made[-1], None

    report = run_quantize("/models/m.gguf", ["fp32", "rtn4"], [tasks.get("approval")], limit=None,
                          gguf=["llamacpp:other"], loader=loader)
    assert loads == ["fp32", "llamacpp:other"]  # rtn4 reused the fp32 model: no second load
    assert report.rtn["rtn4"].layers[0].name == "proj" and not report.rtn["rtn4"].symmetric
    assert all(m.closed for m in made)
    assert {(c.precision, c.reading) for c in report.cells} >= {
        ("fp32", "logprob"), ("rtn4", "generation")}
    pairs = {(c.precision, c.reading) for c in report.comparisons}
    assert pairs == {(p, r) for p in ("rtn4", "llamacpp:other")
                     for r in ("logprob", "generation")}
    assert all(c.n_items == 12 for c in report.comparisons)
    assert any("dequantizes" in n for n in report.notes)
    assert any(n.startswith("gptq: not run") for n in report.notes)


class Stop(Exception):
    """Stands for Ctrl-C in the middle of a run."""


def test_an_interrupted_run_resumes_from_its_store(approval_home, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from slmbench.microtasks.diagnostics.quantize import run_quantize
    from slmbench.microtasks.store import ReadingStore

    loads: list[str] = []

    class Failing(TinyTorchModel):
        calls = 0

        def score(self, messages, candidates):  # type: ignore[no-untyped-def]
            Failing.calls += 1
            if self.spec == "fake:fp32" and Failing.calls > 5 and fail:
                raise Stop
            return super().score(messages, candidates)

    def loader(source: str, level: str):  # type: ignore[no-untyped-def]
        loads.append(level)
        return Failing(f"fake:{level}"), None

    args = ("/models/m.gguf", ["fp32", "rtn4"], [tasks.get("approval")])
    fail = True
    with ReadingStore(tmp_path / "r.sqlite") as store:
        with pytest.raises(Stop):
            run_quantize(*args, limit=None, loader=loader, store=store)
        assert store.count() == 5  # every reading before the interruption was kept
        fail = False
        first = run_quantize(*args, limit=None, loader=loader, store=store)
        assert (first.read_counts.from_store, first.read_counts.read_now) == (5, 12 - 5 + 12)
        assert loads == ["fp32", "fp32"]  # rtn4 rounded the resumed fp32 model in place
        again = run_quantize(*args, limit=None, loader=loader, store=store)
    assert loads == ["fp32", "fp32"]  # all stored: no model loaded
    assert (again.read_counts.from_store, again.read_counts.read_now) == (24, 0)
    assert again.rtn["rtn4"] == first.rtn["rtn4"]  # the RTN report comes from the store
    assert [c.score for c in again.cells] == [c.score for c in first.cells]


def test_a_model_in_the_home_folder_is_shown_with_a_tilde_and_its_readings_are_shared(
        approval_home, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from slmbench.microtasks.diagnostics.quantize import run_quantize
    from slmbench.microtasks.store import ReadingStore

    user = tmp_path / "user"
    monkeypatch.setenv("HOME", str(user))
    loads: list[str] = []

    def loader(source: str, level: str):  # type: ignore[no-untyped-def]
        loads.append(source)
        return TinyTorchModel(f"fake:{level}"), None

    with ReadingStore(tmp_path / "r.sqlite") as store:
        report = run_quantize(f"{user}/models/m.gguf", ["fp32"], [tasks.get("approval")],
                              limit=None,
                              loader=loader, store=store)
        typed = run_quantize("~/models/m.gguf", ["fp32"], [tasks.get("approval")], limit=None,
                             loader=loader, store=store)
    text = report.model_dump_json()
    assert str(user) not in text
    assert report.source == "~/models/m.gguf" and report.cells[0].model == "~/models/m.gguf"
    assert any(n.startswith("~/models/m.gguf is a GGUF file") for n in report.notes)
    assert typed.read_counts.read_now == 0 and loads == [f"{user}/models/m.gguf"]
