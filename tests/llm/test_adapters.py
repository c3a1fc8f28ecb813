"""Model adapters against local servers speaking the real wire formats (real openai/anthropic SDK clients)."""

from __future__ import annotations

import json

import pytest

from hermes_memory.config import HermesConfig, ModelConfig
from hermes_memory.errors import ContextLengthError, ModelError, ModelNotConfiguredError
from hermes_memory.llm import (
    ModelAuthError,
    ModelNetworkError,
    ModelRequestError,
    build_model,
    build_models,
)
from hermes_memory.llm.anthropic import AnthropicModel, convert_messages
from hermes_memory.llm.openai_compat import OpenAICompatModel
from hermes_memory.testing import ScriptedModel, assistant_tool_calls, tool_call
from tests.helpers.anthropic_fake import FakeAnthropicServer
from tests.helpers.http import closed_port_url
from tests.helpers.model_fake import FakeHTTPError, FakeOpenAIServer

TOOL = {"name": "lookup", "description": "Look a word up.",
        "parameters": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}}


def _oa(server: FakeOpenAIServer, **kw) -> OpenAICompatModel:
    return OpenAICompatModel("fake-gpt", base_url=server.base_url, api_key=kw.pop("api_key", "k"), max_retries=0, **kw)


def _an(server: FakeAnthropicServer, **kw) -> AnthropicModel:
    return AnthropicModel("fake-claude", base_url=server.url, api_key=kw.pop("api_key", "k"), max_retries=0, **kw)


# -- OpenAI-compatible ------------------------------------------------------------------------------

def test_openai_text_reply_and_usage():
    with FakeOpenAIServer(["hello there"]) as srv:
        resp = _oa(srv).complete([{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}])
    assert resp.message == {"role": "assistant", "content": "hello there"}
    assert resp.finish_reason == "stop"
    body = srv.requests[0].body
    assert body["model"] == "fake-gpt" and body["messages"][1] == {"role": "user", "content": "hi"}
    assert resp.usage.prompt_tokens == srv.responses[0]["usage"]["prompt_tokens"] > 0
    assert resp.usage.completion_tokens > 0


def test_openai_tool_call_round_trip_and_markers_stripped():
    call = tool_call("lookup", {"word": "cat"}, call_id="call_1")
    with FakeOpenAIServer([assistant_tool_calls(call), "a cat is a small feline"]) as srv:
        model = _oa(srv)
        first = model.complete([{"role": "user", "content": [{"type": "text", "text": "define cat",
                                                               "cache_control": {"type": "ephemeral"}}]}],
                               tools=[TOOL])
        assert first.finish_reason == "tool_calls"
        assert first.tool_calls[0]["function"]["name"] == "lookup"
        assert json.loads(first.tool_calls[0]["function"]["arguments"]) == {"word": "cat"}
        history = [{"role": "user", "content": "define cat"}, first.message,
                   {"role": "tool", "tool_call_id": "call_1", "content": "feline", "cache_control": {"type": "ephemeral"},
                    "_private": 1}]
        second = model.complete(history, tools=[{"type": "function", "function": TOOL}])
    assert second.content == "a cat is a small feline"
    sent = srv.requests[0].body
    assert sent["tools"] == [{"type": "function", "function": TOOL}]
    assert "cache_control" not in json.dumps(sent) and "cache_control" not in json.dumps(srv.requests[1].body)
    assert srv.requests[1].body["messages"][2] == {"role": "tool", "tool_call_id": "call_1", "content": "feline"}


def test_openai_context_length_error_is_mapped():
    with FakeOpenAIServer(["never"], context_limit=10) as srv:
        with pytest.raises(ContextLengthError) as info:
            _oa(srv).complete([{"role": "user", "content": "x" * 400}])
    assert "context" in str(info.value)


def test_openai_auth_and_network_errors_are_mapped():
    with FakeOpenAIServer(["never"], api_key="right") as srv:
        with pytest.raises(ModelAuthError) as info:
            _oa(srv, api_key="wrong").complete([{"role": "user", "content": "hi"}])
    assert info.value.kind == "auth" and info.value.status_code == 401
    dead = OpenAICompatModel("m", base_url=closed_port_url() + "/v1", max_retries=0, timeout=5)
    with pytest.raises(ModelNetworkError) as info:
        dead.complete([{"role": "user", "content": "hi"}])
    assert info.value.kind == "network"


def test_openai_reports_cached_prefix_tokens():
    long_system = {"role": "system", "content": "rules " * 1500}
    with FakeOpenAIServer(default="ok") as srv:
        model = _oa(srv)
        first = model.complete([long_system, {"role": "user", "content": "one"}])
        second = model.complete([long_system, {"role": "user", "content": "one"}, {"role": "assistant", "content": "ok"},
                                 {"role": "user", "content": "two"}])
    assert first.usage.cache_read_tokens == 0
    assert second.usage.cache_read_tokens >= 1024 and second.usage.cache_read_tokens % 128 == 0


# -- Anthropic ---------------------------------------------------------------------------------------

def test_convert_messages_shapes_tools_and_markers():
    marker = {"type": "ephemeral"}
    system, msgs = convert_messages([
        {"role": "system", "content": [{"type": "text", "text": "sys", "cache_control": marker}]},
        {"role": "user", "content": "hi", "_flush_sentinel": "x"},
        {"role": "assistant", "content": "", "tool_calls": [tool_call("lookup", {"word": "a"}, call_id="t1"),
                                                             tool_call("lookup", {"word": "b"}, call_id="t2")]},
        {"role": "tool", "tool_call_id": "t1", "content": "A"},
        {"role": "tool", "tool_call_id": "t2", "content": "B", "cache_control": marker},
        {"role": "user", "content": "thanks"},
    ])
    assert system == [{"type": "text", "text": "sys", "cache_control": marker}]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1]["content"] == [
        {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"word": "a"}},
        {"type": "tool_use", "id": "t2", "name": "lookup", "input": {"word": "b"}},
    ]
    results = msgs[2]["content"]
    assert results[0]["type"] == "tool_result" and results[0]["tool_use_id"] == "t1" and "cache_control" not in results[0]
    assert results[1]["cache_control"] == marker
    assert results[2] == {"type": "text", "text": "thanks"}


def test_anthropic_tool_round_trip_through_real_sdk():
    call = tool_call("lookup", {"word": "cat"}, call_id="toolu_1")
    with FakeAnthropicServer([assistant_tool_calls(call, content="Looking it up."), "A feline."]) as srv:
        model = _an(srv)
        history = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "define cat"}]
        first = model.complete(history, tools=[TOOL])
        assert first.finish_reason == "tool_calls" and first.content == "Looking it up."
        assert first.tool_calls[0]["id"] == "toolu_1"
        history += [first.message, {"role": "tool", "tool_call_id": "toolu_1", "content": "feline"}]
        second = model.complete(history, tools=[TOOL])
    assert second.message == {"role": "assistant", "content": "A feline."}
    sent = srv.requests[0].body
    assert sent["system"] == [{"type": "text", "text": "Be brief."}]
    assert sent["tools"][0]["input_schema"] == TOOL["parameters"]
    assert srv.requests[1].body["messages"][2]["content"][0]["type"] == "tool_result"


def test_anthropic_cache_breakpoints_read_and_write_counts():
    marker = {"type": "ephemeral"}
    system = {"role": "system", "content": [{"type": "text", "text": "policy " * 1200, "cache_control": marker}]}
    with FakeAnthropicServer(default="ok") as srv:
        model = _an(srv)
        one = model.complete([system, {"role": "user", "content": [{"type": "text", "text": "q1", "cache_control": marker}]}])
        two = model.complete([system, {"role": "user", "content": "q1"}, {"role": "assistant", "content": "ok"},
                              {"role": "user", "content": [{"type": "text", "text": "q2", "cache_control": marker}]}])
    assert one.usage.cache_read_tokens == 0 and one.usage.cache_write_tokens > 1024
    assert two.usage.cache_read_tokens == one.usage.cache_write_tokens  # the whole first prefix is reused
    assert two.usage.prompt_tokens == two.usage.cache_read_tokens + two.usage.cache_write_tokens + \
        srv.responses[1]["usage"]["input_tokens"]


def test_anthropic_errors_are_mapped():
    too_many = [{"role": "user", "content": [{"type": "text", "text": f"p{i}", "cache_control": {"type": "ephemeral"}}
                                             for i in range(5)]}]
    with FakeAnthropicServer(["never"], context_limit=20, api_key="right") as srv:
        with pytest.raises(ModelAuthError):
            _an(srv, api_key="wrong").complete([{"role": "user", "content": "hi"}])
        with pytest.raises(ContextLengthError):
            _an(srv, api_key="right").complete([{"role": "user", "content": "y" * 400}])
        with pytest.raises(ModelRequestError) as info:
            _an(srv, api_key="right").complete(too_many)
    assert "maximum of 4" in str(info.value)
    with FakeAnthropicServer([FakeHTTPError(413, {"type": "error", "error": {"type": "request_too_large",
                                                                               "message": "Request exceeds the maximum size"}})]) as srv:
        with pytest.raises(ContextLengthError):
            _an(srv).complete([{"role": "user", "content": "hi"}])


# -- factory and ScriptedModel ---------------------------------------------------------------------

def test_no_model_configured_says_how_to_configure():
    with pytest.raises(ModelNotConfiguredError) as info:
        build_models(HermesConfig())
    text = str(info.value)
    for needle in ("model:", "provider:", "name:", "base_url:", "api_key_env:", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        assert needle in text


def test_missing_keys_are_reported_with_the_variable():
    with pytest.raises(ModelNotConfiguredError, match="MY_KEY"):
        build_model(ModelConfig(provider="anthropic", name="c", api_key_env="MY_KEY"), env={})
    with pytest.raises(ModelNotConfiguredError, match="OPENAI_API_KEY"):
        build_model(ModelConfig(provider="openai", name="g"), env={})
    local = build_model(ModelConfig(provider="openai", name="llama3", base_url="http://127.0.0.1:9/v1"), env={})
    assert isinstance(local, OpenAICompatModel) and local.base_url == "http://127.0.0.1:9/v1"


def test_auxiliary_falls_back_to_main_and_inherits_fields():
    cfg = HermesConfig.model_validate({"model": {"provider": "anthropic", "name": "big", "api_key_env": "K"}})
    main, aux = build_models(cfg, env={"K": "secret"})
    assert aux is main and isinstance(main, AnthropicModel)
    cfg = HermesConfig.model_validate({"model": {"provider": "anthropic", "name": "big", "api_key_env": "K"},
                                       "auxiliary": {"name": "small", "max_tokens": 512}})
    main, aux = build_models(cfg, env={"K": "secret"})
    assert isinstance(aux, AnthropicModel) and aux.name == "small" and aux.max_tokens == 512 and aux is not main


def test_scripted_model_records_and_runs_out_loudly():
    model = ScriptedModel(["one", assistant_tool_calls(tool_call("lookup", {"word": "x"}))])
    assert model.complete([{"role": "user", "content": "a"}]).content == "one"
    second = model.complete([{"role": "user", "content": "b"}], tools=[TOOL])
    assert second.finish_reason == "tool_calls" and model.requests[1]["tools"] == [TOOL]
    with pytest.raises(ModelError, match="ran out"):
        model.complete([{"role": "user", "content": "c"}])


def test_summary_model_from_compression_config():
    from hermes_memory.llm.factory import build_summary_model

    cfg = HermesConfig.model_validate({"model": {"provider": "openai", "name": "big", "base_url": "http://127.0.0.1:9/v1"},
                                       "compression": {"summary_model": "tiny"}})
    main, aux = build_models(cfg, env={})
    summary = build_summary_model(cfg, main, aux, env={})
    assert summary.name == "tiny" and isinstance(summary, OpenAICompatModel) and summary.base_url == main.base_url
    plain = HermesConfig.model_validate({"model": {"provider": "openai", "name": "big", "base_url": "http://127.0.0.1:9/v1"}})
    m2, a2 = build_models(plain, env={})
    assert build_summary_model(plain, m2, a2, env={}) is a2


def test_fake_anthropic_cache_minimum_and_lookback_window():
    marker = {"type": "ephemeral"}
    with FakeAnthropicServer(default="ok", min_cacheable_tokens=1024) as srv:
        model = _an(srv)
        short = [{"role": "user", "content": [{"type": "text", "text": "tiny prompt", "cache_control": marker}]}]
        model.complete(short)
        again = model.complete(short)
        assert again.usage.cache_read_tokens == 0 and again.usage.cache_write_tokens == 0  # under the minimum
        # a cached prefix more than 20 blocks before the only breakpoint is not found
        big = {"role": "system", "content": [{"type": "text", "text": "x " * 3000, "cache_control": marker}]}
        first = model.complete([big, {"role": "user", "content": "q"}])
        assert first.usage.cache_write_tokens > 1024
        blocks = [{"type": "text", "text": f"part {i}"} for i in range(25)]
        blocks[-1]["cache_control"] = marker
        plain_big = {"role": "system", "content": big["content"][0]["text"]}
        far = model.complete([plain_big, {"role": "user", "content": blocks}])
        assert far.usage.cache_read_tokens == 0
        near = model.complete([plain_big, {"role": "user", "content": blocks[-19:]}])
        assert near.usage.cache_read_tokens == first.usage.cache_write_tokens


def test_openai_401_without_any_key_says_which_variable_is_unset():
    # A local base_url may need no key, so none is required up front; but when the server answers
    # 401 the error used to say only "Set the key in the variable named by model.api_key_env".
    cfg = ModelConfig(provider="openai", name="fake-gpt", api_key_env="MY_LLM_KEY", max_retries=0)
    with FakeOpenAIServer(["never"], api_key="right") as srv:
        cfg.base_url = srv.base_url
        model = build_model(cfg, env={})
        with pytest.raises(ModelAuthError) as info:
            model.complete([{"role": "user", "content": "hi"}])
    assert "MY_LLM_KEY" in str(info.value) and "not set" in str(info.value)
    assert info.value.status_code == 401
