"""Turn ranking: rank the earlier turns of a conversation by relevance to a question."""

from collections.abc import Mapping

from slmbench.core.sources import SourceArchive
from slmbench.microtasks.baselines import BM25Turns, bm25_ranking, in_order
from slmbench.microtasks.datasets import bfcl
from slmbench.microtasks.datasets.history import widen_ranking
from slmbench.microtasks.datasets.records import Item, RankItem
from slmbench.microtasks.prompts import PROMPT_DIR
from slmbench.microtasks.spec import Built, MicroTask


def _build(archives: Mapping[str, SourceArchive]) -> Built:
    located = bfcl.locate_questions(archives["bfcl-eval"])
    return Built(bfcl.build_ranking(archives["bfcl-eval"], located), (
        bfcl.located_note(located),
        f"windows of {bfcl.WINDOW} consecutive turns from the quote's conversation"))


def _rank(item: Item) -> RankItem:
    assert isinstance(item, RankItem)
    return item


def _fields(item: Item) -> dict[str, str]:
    turns = "\n\n".join(f"[{k + 1}] {t}" for k, t in enumerate(_rank(item).turns))
    return {"turns": turns, "query": _rank(item).query}


def _restrict(item: Item, kept: list[str]) -> tuple[Item, list[str]]:
    """The item showing only the ``kept`` turns; its turn k is ``kept[k - 1]``."""
    rank = _rank(item)
    idx = [int(o) - 1 for o in kept]
    gold = idx.index(rank.gold) if rank.gold in idx else 0
    return rank.model_copy(update={"turns": tuple(rank.turns[i] for i in idx), "gold": gold}), \
        list(kept)


TASK = MicroTask(
    name="ranking", item_type=RankItem, prompts=PROMPT_DIR / "ranking.yaml", fields=_fields,
    metrics=("ndcg@5", "mrr"), shape="ranking",
    options=lambda item: [str(k + 1) for k in range(len(_rank(item).turns))],
    gold=lambda item: str(_rank(item).gold + 1),
    stratum=lambda item: "all",  # not stratified: every position in one pool
    balance=lambda item: f"gold at position {_rank(item).gold + 1}",
    baseline=lambda fit, items: bm25_ranking(items),  # type: ignore[arg-type]
    build=_build, needs=("bfcl-eval",),
    constants=(in_order(), in_order(reverse=True)),
    graded=lambda fit: BM25Turns(), restrict=_restrict,
    history_from="memory", widen=widen_ranking)  # memory's conversations, windows of n turns
