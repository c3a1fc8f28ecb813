"""The Holographic provider's fact search uses the date rule of session search: a query naming a
day, month or year lifts the facts learned then (``learned_at``), on a real fact database."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from hermes_memory.plugins.holographic.retrieval import FactRetriever
from hermes_memory.plugins.holographic.store import FactStore
from tests.helpers.values import present


def _ts(y: int, m: int, d: int) -> float:
    return datetime(y, m, d, 15, tzinfo=UTC).timestamp()


@pytest.fixture
def store(tmp_path: Path):
    s = FactStore(tmp_path / "facts.db", hrr_dim=256)
    # the July fact matches the words better; only the date says the question is about May
    s.add_fact("Maria had dinner with her mother at the harbour.", learned_at=_ts(2023, 5, 3))
    s.add_fact("Maria had dinner with her mother and her aunt; her mother cooked the dinner.",
               learned_at=_ts(2023, 7, 9))
    s.add_fact("John fixed the fence.", learned_at=_ts(2023, 5, 4))
    yield s
    s.close()


@pytest.mark.parametrize("hrr_weight", [0.0, 0.3])
def test_a_named_date_lifts_the_facts_learned_then(store: FactStore, hrr_weight: float) -> None:
    r = FactRetriever(store, hrr_weight=hrr_weight)
    assert "aunt" in r.search("dinner with her mother", min_trust=0, touch=False)[0]["content"]
    for q in ("Who did Maria have dinner with on May 3, 2023?", "dinner with her mother in May 2023",
              "Maria dinner mother 3 May, 2023"):
        assert "harbour" in r.search(q, min_trust=0, touch=False)[0]["content"], q


def test_learned_at_is_stored_and_refused_when_not_a_time(store: FactStore) -> None:
    fid, created = store.add_fact("Luna is a tabby cat.", learned_at=_ts(2022, 1, 2))
    assert created and present(store.get(fid))["created_at"] == pytest.approx(_ts(2022, 1, 2))
    with pytest.raises(ValueError):
        store.add_fact("Oliver is a dog.", learned_at=float("nan"))
    assert store.fts("Oliver") == []  # the refused fact was not written


@pytest.mark.parametrize("query", ["May 99, 2023", "31 February, 2023 dinner", "2023年5月 晚饭", '"dinner',
                                   "in ()*^ June", ""])
def test_date_like_queries_never_raise(store: FactStore, query: str) -> None:
    assert isinstance(FactRetriever(store).search(query, min_trust=0, touch=False), list)
