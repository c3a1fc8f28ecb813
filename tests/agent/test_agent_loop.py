"""The agent turn end to end with ScriptedModel and real parts (MemoryStore files, SessionDB, MemoryManager)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.agent import Agent
from hermes_memory.agent.flush import SENTINEL_KEY
from hermes_memory.agent.prompt import NUDGE_REVIEW_PROMPT
from hermes_memory.config import HermesConfig
from hermes_memory.errors import ContextLengthError, ModelError
from hermes_memory.sessions.db import SessionDB
from hermes_memory.testing import FakeProvider, ScriptedModel, assistant_tool_calls, tool_call
from tests.agent.helpers import RoutingModel, config, memory_call, system_of, tool_names
from tests.helpers.values import present

LONG = "The deployment pipeline has several stages and each one logs a lot of detail. " * 6  # ~470 chars


def small_window(threshold: float = 0.5) -> HermesConfig:
    """Compression after a handful of long turns (with an 8k-token window): short head and tail."""
    return config(memory={"flush_min_turns": 2},
                  compression={"threshold": threshold, "protect_first_n": 1, "protect_last_n": 4})


# -- frozen snapshot -------------------------------------------------------------------------------

def test_memory_write_mid_session_keeps_system_prompt_and_appears_next_session(hermes_home: Path):
    model = RoutingModel([memory_call("add", "user", "User's name is Ada and she prefers tabs."), "Noted.",
                          "Sure.", "Done."])
    agent = Agent(model, home=hermes_home)
    agent.run_turn("I'm Ada. I like tabs.")
    agent.run_turn("What's next?")
    agent.run_turn("Thanks")
    prompts = {system_of(r) for r in model.requests_of("main")}
    assert len(prompts) == 1, "the system prompt changed mid-session"
    assert "Ada" not in prompts.pop()
    assert "Ada" in (hermes_home / "memories" / "USER.md").read_text()
    first_id = agent.session_id
    agent.close()

    model2 = RoutingModel(["Hello Ada."])
    agent2 = Agent(model2, home=hermes_home)
    agent2.run_turn("hi again")
    assert "User's name is Ada and she prefers tabs." in system_of(model2.requests[0])
    assert agent2.session_id != first_id
    agent2.close()


def test_memory_tool_result_and_mirror_to_external_provider(hermes_home: Path):
    ext = FakeProvider("ext")
    model = RoutingModel([memory_call("add", "memory", "Project uses Python 3.12"), "ok"])
    agent = Agent(model, home=hermes_home, provider=ext)
    agent.run_turn("note the python version")
    tool_msg = next(m for m in agent.messages if m["role"] == "tool")
    assert json.loads(tool_msg["content"])["success"] is True
    writes = ext.called("on_memory_write")
    assert writes and writes[0][0][:3] == ("add", "memory", "Project uses Python 3.12")
    agent.close()


# -- prefetch fencing ----------------------------------------------------------------------------

def test_prefetch_goes_only_into_the_api_copy(hermes_home: Path):
    ext = FakeProvider("ext", prefetch_result="User drinks green tea.")
    model = RoutingModel(["First.", "Second."])
    agent = Agent(model, home=hermes_home, provider=ext)
    agent.run_turn("what do I drink in the morning?")
    agent.run_turn("and in the evening?")
    first, second = model.requests_of("main")
    assert "<memory-context>" in first["messages"][-1]["content"]
    assert "green tea" in first["messages"][-1]["content"]
    # history and SessionDB hold the plain text; the next request carries the old message without its fence
    assert second["messages"][1]["content"] == "what do I drink in the morning?"
    stored = [m["content"] for m in agent.db.get_messages(agent.session_id) if m["role"] == "user"]
    assert stored == ["what do I drink in the morning?", "and in the evening?"]
    assert all("<memory-context>" not in (m.get("content") or "") for m in agent.messages)
    agent.close()


def test_trivial_prompt_skips_prefetch(hermes_home: Path):
    ext = FakeProvider("ext", prefetch_result="recalled")
    agent = Agent(RoutingModel(["ok"]), home=hermes_home, provider=ext)
    agent.run_turn("thanks!")
    assert ext.called("prefetch") == []
    agent.close()


# -- tools ---------------------------------------------------------------------------------------

def test_provider_tools_are_routed_and_unknown_tools_reported(hermes_home: Path):
    ext = FakeProvider("ext", tools=["fact_lookup"], tool_result={"facts": ["Ada likes tabs"]})
    model = RoutingModel([
        assistant_tool_calls(tool_call("fact_lookup", {"q": "Ada"}), tool_call("no_such_tool", {})),
        "Ada likes tabs.",
    ])
    agent = Agent(model, home=hermes_home, provider=ext)
    result = agent.run_turn("what does Ada like?")
    assert result.text == "Ada likes tabs." and result.tool_calls == 2
    assert "fact_lookup" in tool_names(model.requests[0]) and "memory" in tool_names(model.requests[0])
    tools = [m for m in agent.messages if m["role"] == "tool"]
    assert json.loads(tools[0]["content"]) == {"facts": ["Ada likes tabs"]}
    assert "Unknown tool 'no_such_tool'" in json.loads(tools[1]["content"])["error"]
    assert ext.called("handle_tool_call")[0][0][:2] == ("fact_lookup", {"q": "Ada"})
    agent.close()


def test_session_search_finds_an_earlier_session(hermes_home: Path):
    a1 = Agent(RoutingModel(["Noted the zebrafish experiment."]), home=hermes_home)
    a1.run_turn("Our lab runs the zebrafish regeneration experiment on Tuesdays.")
    a1.close()
    model = RoutingModel([assistant_tool_calls(tool_call("session_search", {"query": "zebrafish"})), "Tuesdays."])
    a2 = Agent(model, home=hermes_home)
    a2.run_turn("when do we run the fish experiment?")
    result = next(m for m in a2.messages if m["role"] == "tool")["content"]
    assert "zebrafish" in result and a1.session_id in result
    a2.close()


# -- provider failures ----------------------------------------------------------------------------

def test_provider_raising_in_every_hook_does_not_break_a_turn(hermes_home: Path):
    ext = FakeProvider("ext", tools=["ext_tool"], raise_in="all", prefetch_result="never")
    model = RoutingModel([memory_call("add", "user", "User is Bo."), "Saved.", "Fine."])
    agent = Agent(model, home=hermes_home, provider=ext)
    assert agent.run_turn("I'm Bo").text == "Saved."
    assert agent.run_turn("how are you?").text == "Fine."
    agent.new_session()
    agent.close()
    assert "User is Bo." in (hermes_home / "memories" / "USER.md").read_text()
    rows = SessionDB(hermes_home / "state.db").list_sessions()
    assert any(r.get("end_reason") == "new_session" for r in rows)


# -- nudge -----------------------------------------------------------------------------------------

def test_nudge_review_fires_on_turn_10_and_only_adds(hermes_home: Path):
    review = memory_call("add", "user", "User wants answers in French.")
    model = RoutingModel(review=lambda msgs, tools: review)
    model.handlers["review"] = _once(review, "Nothing to save.")
    agent = Agent(model, home=hermes_home)
    results = [agent.run_turn(f"question {i}" + (" (answer in French please)" if i == 4 else "")) for i in range(1, 11)]
    assert [r.review_ran for r in results] == [False] * 9 + [True]
    reviews = model.requests_of("review")
    assert len(reviews) == 2  # the add, then the model's closing reply
    # the session's own tools (its prompt cache stays valid); other tools are refused by the loop
    assert tool_names(reviews[0]) == tool_names(model.requests_of("main")[-1])
    assert reviews[0]["messages"][-1]["content"] == NUDGE_REVIEW_PROMPT
    assert "French" in (hermes_home / "memories" / "USER.md").read_text()
    # the review is not part of the conversation or SessionDB
    assert all(m.get("content") != NUDGE_REVIEW_PROMPT for m in agent.messages)
    assert all(m["content"] != NUDGE_REVIEW_PROMPT for m in agent.db.get_messages(agent.session_id))
    agent.close()


def _once(first, then):
    state = {"n": 0}

    def reply(messages, tools):
        state["n"] += 1
        return first if state["n"] == 1 else then

    return reply


def test_nudge_counter_reset_by_memory_write_and_disabled_by_zero(hermes_home: Path):
    model = RoutingModel(["a", memory_call("add", "memory", "Repo is monorepo."), "b", "c", "d", "e"])
    agent = Agent(model, home=hermes_home, config=config(memory={"nudge_interval": 3}))
    reviewed = [agent.run_turn(f"t{i}").review_ran for i in range(1, 6)]
    # turn 2 wrote memory (counter reset), so the next review is due at turn 5, not 3
    assert reviewed == [False, False, False, False, True]
    agent.close()
    model = RoutingModel()
    agent = Agent(model, home=hermes_home, config=config(memory={"nudge_interval": 0}))
    assert not any(agent.run_turn(f"t{i}").review_ran for i in range(12))
    assert model.requests_of("review") == []
    agent.close()


def test_background_review_may_not_remove_entries(hermes_home: Path):
    (hermes_home / "memories").mkdir(exist_ok=True)
    (hermes_home / "memories" / "MEMORY.md").write_text("Keep this entry.")
    removal = assistant_tool_calls(tool_call("memory", {"action": "remove", "target": "memory", "old_text": "Keep"}))
    model = RoutingModel()
    model.handlers["review"] = _once(removal, "Done.")
    agent = Agent(model, home=hermes_home, config=config(memory={"nudge_interval": 1}))
    assert agent.run_turn("hello there").review_ran
    assert (hermes_home / "memories" / "MEMORY.md").read_text() == "Keep this entry."
    agent.close()


# -- flush ---------------------------------------------------------------------------------------

def test_flush_skipped_below_min_turns_and_runs_at_exit(hermes_home: Path):
    model = RoutingModel(flush=memory_call("add", "user", "User is a night owl."))
    agent = Agent(model, home=hermes_home, config=config(memory={"flush_min_turns": 3}))
    agent.run_turn("one")
    agent.run_turn("two")
    agent.close()
    assert model.requests_of("flush") == []
    agent = Agent(model, home=hermes_home, config=config(memory={"flush_min_turns": 3}))
    for t in ("one", "two", "I work best after midnight"):
        agent.run_turn(t)
    before = [dict(m) for m in agent.messages]
    agent.close()
    flushes = model.requests_of("flush")
    assert len(flushes) == 1 and tool_names(flushes[0]) == tool_names(model.requests_of("main")[-1])
    assert flushes[0]["opts"] == {"temperature": 0.3, "max_tokens": 5120}
    assert agent.messages == before and not any(SENTINEL_KEY in m for m in agent.messages)
    assert "night owl" in (hermes_home / "memories" / "USER.md").read_text()


def test_flush_cleans_up_even_when_the_model_raises(hermes_home: Path):
    model = RoutingModel(flush=ModelError("boom"))
    agent = Agent(model, home=hermes_home, config=config(memory={"flush_min_turns": 1}))
    agent.run_turn("one")
    agent.run_turn("two")
    before = [dict(m) for m in agent.messages]
    outcome = agent.flush_memories()
    assert outcome.ran and "boom" in outcome.error
    assert agent.messages == before
    agent.close()


def test_flush_disabled_when_flush_min_turns_is_zero(hermes_home: Path):
    model = RoutingModel()
    agent = Agent(model, home=hermes_home, config=config(memory={"flush_min_turns": 0}))
    for i in range(4):
        agent.run_turn(f"turn {i}")
    agent.close()
    assert model.requests_of("flush") == []


# -- compression ----------------------------------------------------------------------------------

def _long_conversation(agent: Agent, turns: int) -> list:
    out = []
    for i in range(turns):
        msg = f"turn {i}: {LONG}" if i != 2 else "remember: codename PLACEHOLDER-7"
        out.append(agent.run_turn(msg))
        if agent.compressor.compression_count:
            break
    return out


def test_B34_compression_flushes_first_with_full_history_then_splits_session(hermes_home: Path):
    flush_reply = memory_call("add", "memory", "Codename is PLACEHOLDER-7.")
    model = RoutingModel(default=None, flush=flush_reply, summary="SUMMARY: user shared a codename; deploy talk.",
                         context_length=8000)
    model.script = []
    ext = FakeProvider("ext", pre_compress="provider notes")
    agent = Agent(model, home=hermes_home, config=small_window(), provider=ext)
    first_session = agent.session_id
    agent.run_turn("hello")
    agent.db.set_session_title(first_session, "Deploy chat")
    results = _long_conversation(agent, 40)
    assert agent.compressor.compression_count == 1, "the conversation never compressed"
    # the flush ran exactly once, before the summariser, over the full uncompressed history
    kinds = [k for k in model.kinds if k in ("flush", "summary")]
    assert kinds[:2] == ["flush", "summary"] and kinds.count("flush") == 1
    flush_req = model.requests_of("flush")[0]
    assert any("PLACEHOLDER-7" in (m.get("content") or "") for m in flush_req["messages"])
    assert tool_names(flush_req) == tool_names(model.requests_of("main")[0])
    # the provider saw the pre-compression history too
    pre = ext.called("on_pre_compress")
    assert pre and any("PLACEHOLDER-7" in (m.get("content") or "") for m in pre[0][0][0])
    # session split: old ends with "compression", child has the parent and a lineage title
    db = agent.db
    old = present(db.get_session(first_session))
    child = present(db.get_session(agent.session_id))
    assert old["end_reason"] == "compression"
    assert child["parent_session_id"] == first_session and child["title"] == "Deploy chat #2"
    assert results[-1].session_id == agent.session_id != first_session
    # the snapshot was reloaded: the flushed memory is in the rebuilt system prompt (and the child row)
    assert "Codename is PLACEHOLDER-7." in agent.system_prompt
    assert child["system_prompt"] == agent.system_prompt
    # the child holds the compacted history, and the next call is built from it
    child_msgs = db.get_messages_as_conversation(agent.session_id)
    assert any("SUMMARY: user shared a codename" in (m.get("content") or "") for m in child_msgs)
    agent.run_turn("and now?")
    last = model.requests_of("main")[-1]
    assert system_of(last) == agent.system_prompt
    assert not any(SENTINEL_KEY in m for m in agent.messages)
    ext_switch = ext.called("on_session_switch")
    assert ext_switch and ext_switch[-1][0][0] == agent.session_id
    # then manually: one more flush, over the compacted history only (the raw turn is not re-flushed)
    agent.run_turn(f"later: {LONG}")
    assert agent.compress_context(reason="manual", force=True)
    flushes = model.requests_of("flush")
    assert len(flushes) == 2 and model.kinds.count("summary") == 2
    assert not any(m.get("content") == "remember: codename PLACEHOLDER-7" for m in flushes[1]["messages"])
    assert any("SUMMARY: user shared a codename" in (m.get("content") or "") for m in flushes[1]["messages"])
    agent.close()


def test_B34_flush_failure_does_not_block_compression(hermes_home: Path):
    model = RoutingModel(flush=ModelError("flush model down"), context_length=8000)
    agent = Agent(model, home=hermes_home, config=small_window())
    _long_conversation(agent, 40)
    assert agent.compressor.compression_count == 1
    assert agent.last_flush is not None and "flush model down" in agent.last_flush.error
    agent.close()


def test_manual_compress_twice_does_not_reflush_compacted_range(hermes_home: Path):
    model = RoutingModel(context_length=8000)
    agent = Agent(model, home=hermes_home, config=small_window(threshold=1.0))
    for i in range(30):
        agent.run_turn(f"turn {i}: {LONG}")
    assert agent.compress_context(reason="manual", force=True)
    assert len(model.requests_of("flush")) == 1
    agent.compress_context(reason="manual", force=True)  # nothing new since: no second flush
    assert len(model.requests_of("flush")) == 1
    agent.close()


def test_context_length_error_compresses_and_retries_once(hermes_home: Path):
    model = RoutingModel(context_length=8000)
    agent = Agent(model, home=hermes_home, config=small_window(threshold=1.0))
    for i in range(30):
        agent.run_turn(f"turn {i}: {LONG}")
    model.script = [ContextLengthError("prompt is too long"), "recovered"]
    before = agent.session_id
    result = agent.run_turn("one more")
    assert result.text == "recovered" and result.compressions == 1 and agent.session_id != before
    model.script = [ContextLengthError("too long"), ContextLengthError("still too long")]
    with pytest.raises(ContextLengthError):
        agent.run_turn("again")
    agent.close()


# -- resume ----------------------------------------------------------------------------------------

def test_tool_calls_and_results_survive_a_restart_with_resume(hermes_home: Path):
    call = tool_call("memory", {"action": "add", "target": "memory", "content": "Build runs on Fridays."},
                     call_id="call_keep")
    model = RoutingModel([assistant_tool_calls(call), "Saved it."])
    agent = Agent(model, home=hermes_home)
    agent.run_turn("builds are on fridays")
    sid, prompt = agent.session_id, agent.system_prompt
    agent.close()

    model2 = RoutingModel(["Fridays."])
    resumed = Agent(model2, home=hermes_home, resume=sid[:15])
    assert resumed.session_id == sid
    resumed.run_turn("when are builds?")
    sent = model2.requests[0]["messages"]
    assert sent[0]["content"] == prompt  # the stored prompt is reused byte for byte
    assistant = next(m for m in sent if m.get("tool_calls"))
    assert assistant["tool_calls"][0]["id"] == "call_keep"
    tool = next(m for m in sent if m["role"] == "tool")
    assert tool["tool_call_id"] == "call_keep" and json.loads(tool["content"])["success"] is True
    resumed.close()
    assert present(SessionDB(hermes_home / "state.db").get_session(sid))["message_count"] == 6


def test_resume_unknown_session_is_an_error(hermes_home: Path):
    from hermes_memory.errors import SessionStoreError

    with pytest.raises(SessionStoreError, match="sessions list"):
        Agent(ScriptedModel(), home=hermes_home, resume="nope")


def test_token_counts_reach_the_session_row(hermes_home: Path):
    model = RoutingModel(["a", "b"])
    agent = Agent(model, home=hermes_home)
    r1 = agent.run_turn("x")
    r2 = agent.run_turn("y")
    row = present(agent.db.get_session(agent.session_id))
    assert row["input_tokens"] == r1.usage.prompt_tokens + r2.usage.prompt_tokens > 0
    assert row["output_tokens"] == r1.usage.completion_tokens + r2.usage.completion_tokens
    assert row["api_call_count"] == 2
    agent.close()


# -- session end and after-turn hooks ------------------------------------------------------------------

def test_session_end_flushes_before_on_session_end_then_shuts_down(hermes_home: Path):
    ext = FakeProvider("ext")
    seen_at_flush: list[int] = []

    def flush(msgs: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        seen_at_flush.append(len(ext.called("on_session_end")))
        return "ok"

    model = RoutingModel(flush=flush)
    agent = Agent(model, home=hermes_home, config=config(memory={"flush_min_turns": 2}), provider=ext)
    agent.run_turn("first thing")
    agent.run_turn("second thing")
    agent.manager.flush_pending(5)
    synced = ext.called("sync_turn")
    assert [s[0][:2] for s in synced] == [("first thing", "answer 1"), ("second thing", "answer 2")]
    assert [q[0][0] for q in ext.called("queue_prefetch")] == ["first thing", "second thing"]
    agent.close()
    assert seen_at_flush == [0]  # the flush ran before on_session_end
    hooks = [h for h, _, _ in ext.calls if h in ("on_session_end", "shutdown")]
    assert hooks == ["on_session_end", "shutdown"]
    ended = ext.called("on_session_end")[0][0][0]
    assert [m["content"] for m in ended if m["role"] == "user"] == ["first thing", "second thing"]
    assert present(agent.db.get_session(agent.session_id))["end_reason"] == "user_exit"


def test_preflight_compresses_before_a_call_that_would_not_fit(hermes_home: Path):
    model = RoutingModel(context_length=8000)
    agent = Agent(model, home=hermes_home, config=small_window(threshold=0.9))
    for i in range(8):
        agent.run_turn(f"turn {i}: {LONG}")
    assert agent.compressor.compression_count == 0
    before = agent.session_id
    result = agent.run_turn("Please review this log:\n" + "line of build output with details\n" * 600)
    assert result.compressions >= 1 and agent.session_id != before
    request = model.requests_of("main")[-1]
    assert any("SUMMARY: earlier turns" in (m.get("content") or "") for m in request["messages"])
    assert model.kinds.index("summary") < len(model.kinds) - 1  # summarised before the answering call
    agent.close()


def test_session_search_summaries_use_the_auxiliary_model(hermes_home: Path):
    a1 = Agent(RoutingModel(["Noted."]), home=hermes_home)
    a1.run_turn("The quarterly okapi census is in March.")
    a1.close()
    aux = ScriptedModel(default="They discussed the okapi census timing (March).")
    model = RoutingModel([assistant_tool_calls(tool_call("session_search", {"query": "okapi"})), "March."])
    a2 = Agent(model, aux_model=aux, home=hermes_home, config=config(session_search={"summarize": True}))
    a2.run_turn("when is the okapi census?")
    result = next(m for m in a2.messages if m["role"] == "tool")["content"]
    assert "okapi census timing" in result and aux.calls >= 1
    a2.close()


def test_bundled_holographic_provider_mirrors_writes_and_recalls_them(hermes_home: Path):
    model = RoutingModel([memory_call("add", "user", "User's dog is named Biscuit."), "Saved.", "Biscuit."])
    agent = Agent(model, home=hermes_home, config=config(memory={"provider": "holographic"}))
    assert [p.name for p in agent.manager.providers] == ["builtin", "holographic"]
    agent.run_turn("my dog is called Biscuit")
    agent.manager.flush_pending(5)
    agent.run_turn("what is my dog Biscuit's name again?")
    last = model.requests_of("main")[-1]
    assert "fact_store" in tool_names(last)
    fenced = last["messages"][-1]["content"]
    assert "<memory-context>" in fenced and "User's dog is named Biscuit." in fenced.split("<memory-context>")[1]
    agent.close()


# -- memory tool intercept: model-supplied internals ---------------------------------------------

def test_memory_call_with_extra_origin_and_store_args_still_writes(hermes_home: Path):
    args = {"action": "add", "target": "user", "content": "User drinks green tea.", "origin": "foreground",
            "store": "/tmp/elsewhere"}
    model = RoutingModel([assistant_tool_calls(tool_call("memory", args)), "Noted."])
    agent = Agent(model, home=hermes_home)
    agent.run_turn("I drink green tea")
    result = json.loads(next(m for m in agent.messages if m["role"] == "tool")["content"])
    assert result.get("success") is True, result
    assert "green tea" in (hermes_home / "memories" / "USER.md").read_text()
    agent.close()


def test_background_review_cannot_lift_its_add_only_origin_by_passing_origin(hermes_home: Path):
    (hermes_home / "memories").mkdir(exist_ok=True)
    (hermes_home / "memories" / "MEMORY.md").write_text("Keep this entry.")
    calls = assistant_tool_calls(
        tool_call("memory", {"action": "remove", "target": "memory", "old_text": "Keep", "origin": "foreground"}),
        tool_call("memory", {"action": "add", "target": "user", "content": "User prefers metric units.",
                             "origin": "foreground"}),
    )
    replies = iter([calls, "Done."])
    model = RoutingModel()
    model.handlers["review"] = lambda messages, tools: next(replies)
    agent = Agent(model, home=hermes_home, config=config(memory={"nudge_interval": 1}))
    assert agent.run_turn("I use metric units").review_ran
    assert (hermes_home / "memories" / "MEMORY.md").read_text() == "Keep this entry."
    assert "metric units" in (hermes_home / "memories" / "USER.md").read_text()  # the review was not aborted
    assert len(model.requests_of("review")) == 2
    agent.close()


# -- a context-length error that compression cannot cure -------------------------------------------

def test_context_length_error_twice_says_how_to_fix_it(hermes_home: Path):
    too_long = ContextLengthError("prompt is too long: 9000 tokens > 8000 maximum")
    model = RoutingModel(context_length=200_000)
    agent = Agent(model, home=hermes_home)
    agent.run_turn("first")
    model.script = [too_long, too_long]
    with pytest.raises(ContextLengthError) as err:
        agent.run_turn("second")
    message = str(err.value)
    assert "model.context_length" in message and "200,000" in message and "/new" in message
    assert "retries once" not in message  # it already did
    stored = agent.db.get_messages_as_conversation(agent.session_id)
    assert [m["role"] for m in stored] == ["user", "assistant", "user"]
    agent.close()


# -- Ctrl-C during the flush at exit ---------------------------------------------------------------

def test_interrupted_exit_flush_still_ends_the_session_and_shuts_providers_down(hermes_home: Path):
    ext = FakeProvider("ext")
    model = RoutingModel(["a", "b"], flush=KeyboardInterrupt())
    agent = Agent(model, home=hermes_home, provider=ext, config=config(memory={"flush_min_turns": 1}))
    agent.run_turn("first")
    agent.run_turn("second")
    with pytest.raises(KeyboardInterrupt):
        agent.close()
    assert model.kinds[-1] == "flush"
    row = present(SessionDB(hermes_home / "state.db").get_session(agent.session_id))
    assert row["end_reason"] == "user_exit"
    assert ext.called("on_session_end") and ext.called("shutdown")
    assert all(not m.get("_flush_sentinel") for m in agent.messages)
