"""Our query plan as PostgreSQL tsquery text (sessions/pg/tsquery.py): the translation, and a real
server parsing it for any text (failure case C14: user text is never tsquery syntax)."""

from __future__ import annotations

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_memory.sessions.fts import build_query
from hermes_memory.sessions.pg.search_schema import CONFIG_SQL, TS_CONFIG
from hermes_memory.sessions.pg.tsquery import fts_to_tsquery, like_literals, quote_lexeme, ts_plan


def test_lexemes_are_quoted_so_no_character_is_an_operator() -> None:
    assert quote_lexeme("it's") == "'it''s'"
    assert quote_lexeme("a\\b") == "'a\\\\b'"
    assert quote_lexeme("x:*|&!()") == "'x:*|&!()'"


@pytest.mark.parametrize(("query", "syntax", "expected"), [
    ("chat-send deploy*", False, "(('chat' <-> 'send') | 'deploy':*)"),
    ("alpha NOT beta", False, "('alpha' | 'beta')"),  # NOT is a word unless asked for
    ("alpha NOT beta", True, "('alpha' & !'beta')"),
    ("alpha AND beta OR gamma", True, "(('alpha' & 'beta') | 'gamma')"),  # AND binds tighter (FTS5)
    ("alpha OR beta NOT gamma", True, "('alpha' | ('beta' & !'gamma'))"),  # NOT tightest (FTS5)
    ("a NEAR b NEAR c", True, "('a' & 'b' & 'c')"),  # a NEAR of three: all present
    ('"docker network" bridge', False, "(('docker' <-> 'network') | 'bridge')"),
    ("gateway/run.py", False, "('gateway' <-> 'run' <-> 'py')"),
    ("alice::bob", False, "('alice' <-> 'bob')"),
])
def test_plans_translate_to_tsquery(query: str, syntax: bool, expected: str) -> None:
    assert ts_plan(build_query(query, syntax=syntax)).query == expected


def test_near_of_two_words_allows_every_distance_up_to_ten_tokens_between_them() -> None:
    q = ts_plan(build_query("kafka NEAR timeout", syntax=True)).query
    assert q is not None and q.count("|") == 21
    assert "'kafka' <1> 'timeout'" in q and "'timeout' <11> 'kafka'" in q and "<12>" not in q


def test_empty_and_cjk_only_plans_have_no_tsquery() -> None:
    assert fts_to_tsquery(None) is None and fts_to_tsquery("") is None
    ts = ts_plan(build_query("记忆断裂 悬空"))
    assert ts.query is None and ts.trigram == ["记忆断裂"] and ts.like == ["悬空"]
    assert like_literals('"a""b" OR "c"') == ['a"b', "c"]


@pytest.fixture(scope="module")
def pg_conn(pg_server):
    with psycopg.connect(pg_server.create_database(), autocommit=True) as conn:
        conn.execute(CONFIG_SQL)
        yield conn


_SOUP = st.lists(st.sampled_from(['"', "'", ":", "::", "-", ".", "/", "@", "%", "*", ":*", "(", ")", "&", "|", "!",
                                  "<->", "<2>", "AND", "OR", "NOT", "NEAR", "alpha", "记忆", " ", "\\", "_", "the",
                                  "it's", "\u00e9", "\U0001f600"]), max_size=14)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=80),
       syntax=st.booleans())
def test_postgres_parses_the_tsquery_of_any_text(pg_conn, text: str, syntax: bool) -> None:
    ts = ts_plan(build_query(text, syntax=syntax))
    for q in [ts.query, *ts.or_terms, *ts.exclude]:
        if q is not None:
            pg_conn.execute(f"SELECT to_tsquery('{TS_CONFIG}', %s)", [q]).fetchone()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=_SOUP, syntax=st.booleans())
def test_postgres_parses_the_tsquery_of_operator_soup(pg_conn, parts: list[str], syntax: bool) -> None:
    for joined in ("".join(parts), " ".join(parts)):
        ts = ts_plan(build_query(joined, syntax=syntax))
        for q in [ts.query, *ts.or_terms, *ts.exclude]:
            if q is not None:
                pg_conn.execute(f"SELECT to_tsquery('{TS_CONFIG}', %s)", [q]).fetchone()
