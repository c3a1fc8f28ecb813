"""``FactRetriever``: hybrid search and the HRR reasoning operations (docs/providers.md §4.5).

* ``search`` — FTS5 candidates (3 × limit) re-ranked by ``0.4·fts + 0.3·jaccard + 0.3·hrr``
  (``hrr_weight`` sets the last weight; without numpy ``0.6·fts + 0.4·jaccard``), times trust,
  times an optional half-life decay on the age in days. A query naming dates ("in March 2024",
  "on 3 June, 2023") reads :data:`DATE_POOL` × limit candidates and facts learned in those dates
  (``created_at``, the session-search rule of :func:`hermes_memory.dates.date_hint`)
  gain :data:`hermes_memory.dates.DATE_WEIGHT` times the best relevance, as rows of
  matching sessions do in ``session_search``. The HRR term compares the query with the
  fact's content component (``unbind(fact, ROLE_CONTENT)``), not with the whole role-bound vector.
* ``probe(entity)`` — facts about an entity: similarity of each fact vector to the entity's role
  binding ``bind(atom(entity), ROLE_ENTITY)`` (a bundle is similar to each of its members); with a
  category, the reference's bank probe ``unbind(bank, key)`` is used instead. Candidates are the
  facts linked to the entity plus keyword matches (not the whole table), so the cost does not grow
  with the store; an explicit entity link ranks above a keyword-only candidate.
* ``related(entity)`` — facts one hop away: those sharing an entity with the entity's own facts,
  scored by HRR structure (residual after unbinding the entity atom).
* ``reason(entities)`` — AND-join: facts involving every entity (min over entities of the HRR
  membership score); when no single fact links them all, two-fact chains that connect them
  through a shared bridging entity.
* ``contradict()`` — pairs about the same entities that disagree. Reference score
  ``overlap × (1 − (content_sim+1)/2)`` plus, beyond the reference, lexical checks (negation
  mismatch, antonyms, differing values for the same predicate); every pair carries a ``reason``.

Without numpy, probe/related/reason fall back to keyword search over the entity names and
contradict uses the lexical checks only.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
import time
from typing import Any

from hermes_memory import dates as dates_mod
from hermes_memory.plugins.holographic import hrr
from hermes_memory.plugins.holographic.store import FactStore, query_terms

logger = logging.getLogger(__name__)

_NEGATIONS = {"not", "no", "never", "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't", "weren't", "won't",
              "can't", "cannot", "dont", "doesnt", "didnt", "isnt", "arent", "wont", "cant", "neither", "nor",
              "stopped", "quit", "longer"}
_ANTONYMS = [("like", "dislike"), ("likes", "dislikes"), ("love", "hate"), ("loves", "hates"), ("prefer", "avoid"),
             ("prefers", "avoids"), ("enable", "disable"), ("enabled", "disabled"), ("true", "false"), ("yes", "no"),
             ("always", "never"), ("allow", "deny"), ("allowed", "forbidden"), ("on", "off"), ("start", "stop"),
             ("open", "closed"), ("accept", "reject"), ("married", "divorced"), ("alive", "dead"), ("win", "lose"),
             ("increase", "decrease"), ("before", "after"), ("light", "dark"), ("likes", "hates"), ("like", "hate"),
             ("loves", "dislikes")]
_ANT: dict[str, set[str]] = {}
for _a, _b in _ANTONYMS:
    _ANT.setdefault(_a, set()).add(_b)
    _ANT.setdefault(_b, set()).add(_a)
_TOKEN = re.compile(r"[\w'’]+", re.UNICODE)

# Bounds that keep entity operations fast on large stores (most recently updated facts first).
MAX_ENTITY_FACTS = 2000        # facts per entity considered by probe / reason
MAX_RELATED_OWN = 200          # the entity's own facts considered by related
MAX_RELATED_ENTITIES = 20      # co-occurring entities followed by related
MAX_RELATED_PER_ENTITY = 50    # facts per co-occurring entity
MAX_CHAIN_FACTS = 300          # facts per end of a reason chain
MAX_CHAINS = 200               # chains examined
DATE_POOL = 10
"""Keyword candidates read per result when the query names a date (3 otherwise): facts of the
named dates that match fewer words must be among the candidates to be lifted."""


def _tokens(text: str) -> set[str]:
    """Lowercased tokens with ``/`` and ``=`` split out; CJK runs become bigrams (Jaccard input)."""
    out: set[str] = set()
    for tok in re.split(r"[\s/=]+", text.lower()):
        tok = tok.strip(".,!?;:\"'()[]{}")
        if not tok:
            continue
        if re.search(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]", tok) and len(tok) > 2:
            out.update(tok[i:i + 2] for i in range(len(tok) - 1))
        else:
            out.add(tok)
    return out


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _words(text: str) -> list[str]:
    return [w.replace("’", "'") for w in _TOKEN.findall(text.lower())]


class FactRetriever:
    """Read-side operations over a :class:`FactStore`.

    Args:
        store: the fact store.
        hrr_weight: weight of HRR similarity in search relevance (0..1; default 0.3).
        half_life_days: temporal decay half-life in days (0 = off, the default).
    """

    def __init__(self, store: FactStore, *, hrr_weight: float = 0.3, half_life_days: float = 0.0,
                 semantic: Any = None) -> None:
        self.store = store
        self.semantic = semantic
        """A :class:`hermes_memory.plugins.holographic.semantic.FactVectors` when ``search.embeddings``
        is on: ``search`` then fuses the hybrid order with the facts' cosine order."""
        self.hrr_weight = min(1.0, max(0.0, float(hrr_weight)))
        self.half_life_days = max(0.0, float(half_life_days))

    @property
    def use_hrr(self) -> bool:
        return self.store.use_hrr

    def _decay(self, row: Any) -> float:
        if not self.half_life_days:
            return 1.0
        age_days = max(0.0, (time.time() - float(row["updated_at"])) / 86400.0)
        return 0.5 ** (age_days / self.half_life_days)

    # ------------------------------------------------------------------ search
    def search(self, query: str, *, min_trust: float = 0.3, limit: int = 10, category: str | None = None,
               touch: bool = True) -> list[dict[str, Any]]:
        """Hybrid keyword + HRR search; facts as dicts with ``score``. Malformed queries → ``[]``.

        With :attr:`semantic`, the hybrid order (read to ``DEPTH x limit`` facts) is fused with the
        nearest facts by meaning (:func:`hermes_memory.sessions.fusion.fuse`, the weights of
        :mod:`hermes_memory.plugins.holographic.semantic`; a fact sharing no word with the query
        joins above :data:`hermes_memory.sessions.fusion.SEMANTIC_FLOOR`); ``score`` is then the
        fused reciprocal-rank score. A failing model leaves the hybrid order (logged)."""
        limit = max(1, int(limit))
        if self.semantic is None:
            top = self._hybrid(query, min_trust=min_trust, limit=limit, category=category)
        else:
            top = self._fused(query, min_trust=min_trust, limit=limit, category=category)
        if touch:
            self.store.touch(r["fact_id"] for _, r in top)
        return [self.store.row_to_fact(r, score=round(s, 4)) for s, r in top]

    def _fused(self, query: str, *, min_trust: float, limit: int, category: str | None) -> list[tuple[float, Any]]:
        from hermes_memory.plugins.holographic import semantic as sem
        from hermes_memory.sessions import fusion

        deep = self._hybrid(query, min_trust=min_trust, limit=sem.DEPTH * limit, category=category)
        try:
            near = self.semantic.nearest(query, sem.POOL, min_trust=min_trust, category=category)
        except Exception as exc:  # a failing model never breaks a search
            logger.warning("holographic: semantic candidates failed; hybrid order kept: %s", exc)
            return deep[:limit]
        if near is None:  # the model is still loading (in the background)
            return deep[:limit]
        order = fusion.fuse([r["fact_id"] for _, r in deep], near, weight=sem.WEIGHT, k=sem.RRF_K)[:limit]
        rows = {r["fact_id"]: r for _, r in deep}
        rows.update((r["fact_id"], r) for r in self.store.rows(i for i in order if i not in rows))
        rank = {i: r for r, (i, _) in enumerate(near, start=1)}
        lex = {r["fact_id"]: n for n, (_, r) in enumerate(deep, start=1)}
        out = []
        for i in order:
            if i not in rows:
                continue
            score = (1.0 / (sem.RRF_K + lex[i]) if i in lex else 0.0) + \
                (sem.WEIGHT / (sem.RRF_K + rank[i]) if i in rank else 0.0)
            out.append((score, rows[i]))
        return out

    def _hybrid(self, query: str, *, min_trust: float, limit: int, category: str | None) -> list[tuple[float, Any]]:
        """The best ``limit`` ``(score, row)`` of the hybrid search, best first (module doc)."""
        dates = dates_mod.date_hint(query)
        cands = self.store.fts(query, min_trust=min_trust, limit=limit * (DATE_POOL if dates else 3), category=category)
        if not cands:
            return []
        max_rank = max(abs(r) for _, r in cands) or 1.0
        qtok = _tokens(" ".join(query_terms(query)) or query)
        if self.use_hrr:
            w_fts, w_jac, w_hrr = 0.4 / 0.7 * (1 - self.hrr_weight), 0.3 / 0.7 * (1 - self.hrr_weight), self.hrr_weight
            # compare with the fact's *content* component: unbind ROLE_CONTENT first (comparing with the
            # whole, role-bound fact vector — as the reference does — scores as noise); stopwords dropped
            qvec = hrr.encode_text(" ".join(query_terms(query)) or query, self.store.dim)
            role_c = hrr.atom(hrr.ROLE_CONTENT, self.store.dim)
        else:
            w_fts, w_jac, w_hrr, qvec, role_c = 0.6, 0.4, 0.0, None, None
        scored = []
        for row, rank in cands:
            fts = abs(rank) / max_rank if max_rank else 0.0
            jac = _jaccard(qtok, _tokens(f"{row['content']} {row['tags']}"))
            vec = self.store.vector(row) if qvec is not None else None
            sim = (hrr.similarity(qvec, hrr.unbind(vec, role_c)) + 1) / 2 if vec is not None else 0.5
            relevance = w_fts * fts + w_jac * jac + w_hrr * sim
            scored.append((relevance, row))
        if dates:
            bonus = dates_mod.DATE_WEIGHT * max(r for r, _ in scored)
            scored = [(r + bonus if dates.matches(_float(row["created_at"])) else r, row) for r, row in scored]
        scored = [(r * float(row["trust_score"]) * self._decay(row), row) for r, row in scored]
        scored.sort(key=lambda t: (-t[0], t[1]["fact_id"]))
        return scored[:limit]

    # ------------------------------------------------------------------ entity operations
    def _entity_candidates(self, entity: str, limit: int) -> list[Any]:
        ids = set(self.store.facts_for_entity(entity, limit=MAX_ENTITY_FACTS))
        ids.update(r["fact_id"] for r, _ in self.store.fts(entity, limit=max(50, limit * 5)))
        return self.store.rows(ids)

    def _keyword(self, text: str, min_trust: float, limit: int, how: str) -> list[dict[str, Any]]:
        results = self.search(text, min_trust=min_trust, limit=limit)
        for r in results:
            r["method"] = how
        return results

    def probe(self, entity: str, *, category: str | None = None, min_trust: float = 0.0,
              limit: int = 10) -> list[dict[str, Any]]:
        """Facts about ``entity``, best first (``score`` = HRR match × trust; keyword fallback without numpy)."""
        entity = (entity or "").strip()
        if not entity:
            return []
        if not self.use_hrr:
            return self._keyword(entity, min_trust, limit, "keyword")
        dim = self.store.dim
        key = hrr.bind(hrr.atom(entity.lower(), dim), hrr.atom(hrr.ROLE_ENTITY, dim))
        bank_probe = None
        if category:
            bank = self.store.bank(category)
            bank_probe = hrr.unbind(bank, key) if bank is not None else None
        linked = set(self.store.facts_for_entity(entity, limit=MAX_ENTITY_FACTS))
        out = []
        for row in self._entity_candidates(entity, limit):
            if row["trust_score"] < min_trust or (category and row["category"] != category):
                continue
            vec = self.store.vector(row)
            if vec is None:
                continue
            if bank_probe is not None:
                sim = hrr.similarity(bank_probe, vec)
            else:  # membership of the entity binding in the fact bundle
                sim = hrr.similarity(vec, key)
            score = (sim + 1) / 2 * float(row["trust_score"])
            if row["fact_id"] in linked:
                score += 1.0  # an explicit entity link always outranks a keyword-only candidate
            out.append((score, row, sim))
        out.sort(key=lambda t: (-t[0], t[1]["fact_id"]))
        return [self.store.row_to_fact(r, score=round(s, 4), hrr_similarity=round(sim, 4), method="hrr")
                for s, r, sim in out[:limit]]

    def related(self, entity: str, *, min_trust: float = 0.0, limit: int = 10) -> list[dict[str, Any]]:
        """Facts connected to ``entity``: its own facts and those sharing one of their other entities."""
        entity = (entity or "").strip()
        if not entity:
            return []
        if not self.use_hrr:
            return self._keyword(entity, min_trust, limit, "keyword")
        own = set(self.store.facts_for_entity(entity, limit=MAX_RELATED_OWN))
        neighbours: dict[int, str] = {}
        others: dict[str, str] = {}
        for fid in own:
            for other in self.store.entities_of(fid):
                if other.casefold() != entity.casefold():
                    others.setdefault(other.casefold(), other)
        for other in list(others.values())[:MAX_RELATED_ENTITIES]:
            for nid in self.store.facts_for_entity(other, limit=MAX_RELATED_PER_ENTITY):
                if nid not in own:
                    neighbours.setdefault(nid, other)
        dim = self.store.dim
        ea = hrr.atom(entity.lower(), dim)
        re_, rc = hrr.atom(hrr.ROLE_ENTITY, dim), hrr.atom(hrr.ROLE_CONTENT, dim)
        rows = self.store.rows(own | set(neighbours)) or [r for r, _ in self.store.fts(entity, limit=limit * 3)]
        out = []
        for row in rows:
            if row["trust_score"] < min_trust:
                continue
            vec = self.store.vector(row)
            if vec is None:
                continue
            residual = hrr.unbind(vec, ea)
            sim = max(hrr.similarity(residual, re_), hrr.similarity(residual, rc))
            score = (sim + 1) / 2 * float(row["trust_score"]) + (1.0 if row["fact_id"] in own else 0.5)
            extra = {"via": neighbours[row["fact_id"]]} if row["fact_id"] in neighbours else {"via": entity}
            out.append((score, row, extra))
        out.sort(key=lambda t: (-t[0], t[1]["fact_id"]))
        return [self.store.row_to_fact(r, score=round(s, 4), method="hrr", **x) for s, r, x in out[:limit]]

    def reason(self, entities: list[str], *, min_trust: float = 0.0, limit: int = 10) -> list[dict[str, Any]]:
        """Facts that involve *all* ``entities`` (AND-join), or chains of two facts linking them.

        Direct results carry ``score`` = min over entities of the HRR membership score × trust.
        Chain results carry ``chain`` (two facts), ``via`` (the bridging entity) and ``score``.
        Without numpy: keyword search on the joined entity names.
        """
        names = [e.strip() for e in entities or [] if isinstance(e, str) and e.strip()]
        if not names:
            return []
        if not self.use_hrr:
            return self._keyword(" ".join(names), min_trust, limit, "keyword")
        dim = self.store.dim
        role_e = hrr.atom(hrr.ROLE_ENTITY, dim)
        keys = [hrr.bind(hrr.atom(n.lower(), dim), role_e) for n in names]
        direct_ids = set(self.store.facts_for_all_entities(names, MAX_ENTITY_FACTS))
        # keyword candidates mentioning every name also count (entities not extracted, e.g. lowercase)
        for row, _ in self.store.fts(" ".join(names), limit=limit * 5):
            text = row["content"].casefold()
            if all(n.casefold() in text for n in names):
                direct_ids.add(row["fact_id"])
        out: list[tuple[float, dict[str, Any]]] = []
        for row in self.store.rows(direct_ids):
            if row["trust_score"] < min_trust:
                continue
            vec = self.store.vector(row)
            if vec is None:
                continue
            sims = [hrr.similarity(vec, k) for k in keys]
            score = min((s + 1) / 2 for s in sims) * float(row["trust_score"])
            out.append((score, self.store.row_to_fact(row, score=round(score, 4), method="hrr",
                                                      entity_scores={n: round(s, 4) for n, s in zip(names, sims, strict=True)})))
        if not out and len(names) >= 2:
            out = self._chains(names, min_trust)
        out.sort(key=lambda t: -t[0])
        return [r for _, r in out[:limit]]

    def _chains(self, names: list[str], min_trust: float) -> list[tuple[float, dict[str, Any]]]:
        """Two-fact chains: a fact about names[0] and one about names[1] sharing a third entity."""
        a_ids = self.store.facts_for_entity(names[0], limit=MAX_CHAIN_FACTS)
        b_ids = self.store.facts_for_entity(names[1], limit=MAX_CHAIN_FACTS)
        exclude = [i for n in names for i in self.store.entity_ids(n)]
        links = self.store.bridges(a_ids, b_ids, exclude, MAX_CHAINS)
        rows = {r["fact_id"]: r for r in self.store.rows({i for a, b, _ in links for i in (a, b)})}
        out = []
        seen: set[tuple[int, int]] = set()
        for fa, fb, via in links:
            ra, rb = rows.get(fa), rows.get(fb)
            if ra is None or rb is None or (fa, fb) in seen:
                continue
            seen.add((fa, fb))
            if min(ra["trust_score"], rb["trust_score"]) < min_trust:
                continue
            score = 0.5 * float(ra["trust_score"]) * float(rb["trust_score"])
            out.append((score, {"chain": [self.store.row_to_fact(ra), self.store.row_to_fact(rb)], "via": via,
                                "score": round(score, 4), "method": "chain",
                                "explanation": f"{names[0]} → {via} → {names[1]}"}))
        return out

    # ------------------------------------------------------------------ contradictions
    def contradict(self, *, threshold: float = 0.3, limit: int = 10, max_facts: int = 500,
                   min_trust: float = 0.0) -> list[dict[str, Any]]:
        """Pairs of facts about the same entities that appear to disagree, strongest first.

        Only the ``max_facts`` most recently updated facts are compared (an O(n²) guard). A pair
        needs entity Jaccard ≥ 0.3. Each result: ``fact_a``, ``fact_b``, ``shared_entities``,
        ``entity_overlap``, ``content_similarity`` (HRR, ``None`` without numpy),
        ``contradiction_score`` and ``reason`` (one sentence saying why).
        """
        with self.store.lock:
            rows = self.store.conn.execute(
                "SELECT * FROM facts WHERE trust_score >= ? ORDER BY updated_at DESC, fact_id DESC LIMIT ?",
                (min_trust, max_facts)).fetchall()
            ids = [r["fact_id"] for r in rows]
            ents: dict[int, dict[str, str]] = {i: {} for i in ids}
            for chunk in range(0, len(ids), 500):
                part = ids[chunk:chunk + 500]
                for fid, name in self.store.conn.execute(
                        f"SELECT fe.fact_id, e.name FROM fact_entities fe JOIN entities e ON e.entity_id = fe.entity_id "
                        f"WHERE fe.fact_id IN ({','.join('?' * len(part))})", part):
                    ents[fid][name.casefold()] = name
        index = {r["fact_id"]: n for n, r in enumerate(rows)}
        sims = None
        if self.use_hrr and rows:  # all pairwise HRR similarities in one matrix product
            import numpy as np

            vecs = [self.store.vector(r) for r in rows]
            has = np.array([v is not None for v in vecs])
            mat = np.stack([v if v is not None else np.zeros(self.store.dim) for v in vecs])
            phasors = np.exp(1j * mat)
            sims = (phasors @ phasors.conj().T).real / self.store.dim
            sims[~has, :] = np.nan
            sims[:, ~has] = np.nan
        # candidate pairs share at least one entity (inverted index instead of all n² pairs)
        by_entity: dict[str, list[int]] = {}
        for fid, names in ents.items():
            for key in names:
                by_entity.setdefault(key, []).append(fid)
        pairs: set[tuple[int, int]] = set()
        for members in by_entity.values():
            for a, b in itertools.combinations(sorted(members, key=index.__getitem__), 2):
                pairs.add((a, b))
        words = {r["fact_id"]: _words(r["content"]) for r in rows}
        out: list[dict[str, Any]] = []
        for fa, fb in sorted(pairs, key=lambda p: (index[p[0]], index[p[1]])):
            ra, rb = rows[index[fa]], rows[index[fb]]
            ea, eb = ents[fa], ents[fb]
            overlap = len(set(ea) & set(eb)) / len(set(ea) | set(eb))
            if overlap < 0.3:
                continue
            shared = sorted(ea[k] for k in set(ea) & set(eb))
            content_sim = None
            if sims is not None and not math.isnan(float(sims[index[fa], index[fb]])):
                content_sim = float(sims[index[fa], index[fb]])
            hrr_score = overlap * (1 - (content_sim + 1) / 2) if content_sim is not None else 0.0
            lex_score, why = self._lexical_conflict(words[fa], words[fb], set(ea) & set(eb))
            score = max(hrr_score, lex_score)
            if score < threshold:
                continue
            if not why:
                why = (f"both are about {', '.join(shared)} but say different things "
                       f"(HRR content similarity {content_sim:.2f})")
            out.append({
                "fact_a": self.store.row_to_fact(ra), "fact_b": self.store.row_to_fact(rb),
                "shared_entities": shared, "entity_overlap": round(overlap, 4),
                "content_similarity": None if content_sim is None else round(content_sim, 4),
                "contradiction_score": round(score, 4), "reason": why,
            })
        out.sort(key=lambda d: -d["contradiction_score"])
        return out[:max(1, int(limit))]

    @staticmethod
    def _lexical_conflict(a: list[str], b: list[str], entity_keys: set[str]) -> tuple[float, str]:
        """``(score in [0,1], reason)`` from negation, antonyms, or different values for one predicate.

        ``entity_keys`` are the *shared* entities (the common subject); their words are ignored, while
        entities only one fact names count as values ("lives in Paris" vs "lives in London").
        """
        ent_words = {w for k in entity_keys for w in _words(k)}
        wa = [w for w in a if w not in ent_words]
        wb = [w for w in b if w not in ent_words]
        sa, sb = set(wa), set(wb)
        neg_a, neg_b = sa & _NEGATIONS, sb & _NEGATIONS
        core_a, core_b = sa - _NEGATIONS - {"a", "an", "the"}, sb - _NEGATIONS - {"a", "an", "the"}
        common = core_a & core_b
        base = len(common) / max(1, min(len(core_a), len(core_b)))
        if bool(neg_a) != bool(neg_b) and base >= 0.5:
            neg = sorted(neg_a or neg_b)[0]
            which = "first" if neg_a else "second"
            return min(1.0, 0.5 + base / 2), (f"negation: the {which} fact says '{neg}' about the same claim "
                                              f"({', '.join(sorted(common)[:4])})")
        for w in sorted(sa - sb):
            for opposite in sorted(_ANT.get(w, set()) & (sb - sa)):
                return 0.9, f"opposite claims: '{w}' vs '{opposite}'"
        only_a, only_b = core_a - core_b, core_b - core_a
        content_a = {w for w in only_a if w not in _STOP}
        content_b = {w for w in only_b if w not in _STOP}
        shared_content = {w for w in common if w not in _STOP}
        if shared_content and content_a and content_b and len(content_a) <= 3 and len(content_b) <= 3:
            score = 0.7 * len(shared_content) / math.sqrt(len(shared_content) + len(content_a) + len(content_b))
            return min(0.9, score + 0.2), (f"same subject and predicate ({' '.join(sorted(shared_content)[:4])}) "
                                           f"with different values: {', '.join(sorted(content_a))} vs "
                                           f"{', '.join(sorted(content_b))}")
        return 0.0, ""


_STOP = {"is", "are", "was", "were", "be", "in", "on", "at", "to", "of", "for", "and", "or", "with", "by", "as", "it",
         "that", "this", "has", "have", "had", "do", "does", "did", "from", "now", "still", "also", "very", "s"}
