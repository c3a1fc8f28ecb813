"""The shared test servers behave as their docstrings promise, checked with real clients (httpx, the
official OpenAI SDK): a fake that silently drifts would let the tests built on it pass for nothing."""

from __future__ import annotations

import threading

import httpx
import pytest
from openai import OpenAI
from openai.types.chat import ChatCompletionMessageFunctionToolCall, ChatCompletionMessageParam

from tests.helpers.http import LocalHTTPServer, Reply, closed_port_url
from tests.helpers.model_fake import FakeHTTPError, FakeOpenAIServer, embed


def test_routes_log_scripted_replies_and_faults() -> None:
    with LocalHTTPServer(replies=[Reply(201, {"first": True})]) as srv:
        srv.route("GET", "/v1/items/{item_id}", lambda req: {"id": req.params["item_id"], "q": req.query})
        srv.route("POST", "/v1/items", lambda req: req.body["name"])  # KeyError -> 422
        with httpx.Client(base_url=srv.url) as c:
            assert c.get("/anything").status_code == 201  # the scripted reply goes first
            assert c.get("/v1/items/7/", params={"x": ""}).json() == {"id": "7", "q": {"x": ""}}
            assert c.post("/v1/items", json={}).status_code == 422
            srv.fail(503, times=2, path="/v1/items")
            assert [c.get("/v1/items/1").status_code for _ in range(3)] == [503, 503, 200]
            assert c.get("/nowhere").status_code == 404
        assert [r.path for r in srv.calls("GET", r"^/v1/items/")] == ["/v1/items/7/", "/v1/items/1",
                                                                       "/v1/items/1", "/v1/items/1"]
        assert srv.calls("POST")[0].body == {} and srv.calls("POST")[0].headers["content-type"] == "application/json"


def test_stop_releases_stalled_replies_and_refuses_kept_alive_connections() -> None:
    srv = LocalHTTPServer().start()
    srv.route("GET", "/ok", lambda req: {"ok": True})
    client = httpx.Client(base_url=srv.url, timeout=30)
    assert client.get("/ok").json() == {"ok": True}  # the connection is now kept alive in the pool
    srv.stall(60, path="/slow")
    outcome: list[object] = []
    waiter = threading.Thread(target=lambda: outcome.append(_get(client, "/slow")))
    waiter.start()
    while not srv.calls("GET", "/slow"):
        threading.Event().wait(0.01)
    srv.stop()
    waiter.join(30)  # a hang detector: stop() releases the stalled handler at once
    assert not waiter.is_alive() and outcome
    srv.stop()  # idempotent
    with pytest.raises(httpx.TransportError):
        client.get("/ok")  # the pooled connection was closed too: the service is really down
    with pytest.raises(httpx.ConnectError):
        httpx.get(closed_port_url() + "/ok")
    client.close()


def _get(client: httpx.Client, path: str) -> object:
    try:
        return client.get(path).status_code
    except httpx.TransportError as exc:
        return exc


def test_openai_fake_with_the_official_sdk_chat_tools_streaming_usage_and_embeddings() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "cats"}'}}
    script = ["plain answer", {"content": None, "tool_calls": [call]}, "streamed answer",
              {"content": None, "tool_calls": [call]}, FakeHTTPError(429, {"error": {"message": "slow down"}})]
    with FakeOpenAIServer(script, api_key="sk-local") as srv:
        client = OpenAI(base_url=srv.base_url, api_key="sk-local", max_retries=0)
        long_prompt: list[ChatCompletionMessageParam] = [{"role": "system", "content": "x" * 6000},
                                                       {"role": "user", "content": "hi"}]
        first = client.chat.completions.create(model="m", messages=long_prompt)
        assert first.choices[0].message.content == "plain answer"
        second = client.chat.completions.create(model="m", messages=long_prompt)
        assert second.choices[0].finish_reason == "tool_calls"
        tool_calls = second.choices[0].message.tool_calls
        assert tool_calls is not None and isinstance(tool_calls[0], ChatCompletionMessageFunctionToolCall)
        assert tool_calls[0].function.name == "lookup"
        assert second.usage is not None and second.usage.prompt_tokens_details is not None
        cached = second.usage.prompt_tokens_details.cached_tokens
        assert cached is not None and cached >= 1024 and cached % 128 == 0  # the repeated prefix
        chunks = list(client.chat.completions.create(model="m", messages=long_prompt, stream=True,
                                                     stream_options={"include_usage": True}))
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "streamed answer"
        assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
        streamed_calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
        assert streamed_calls == []
        tool_chunks = list(client.chat.completions.create(model="m", messages=long_prompt, stream=True))
        deltas = [tc for c in tool_chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
        assert [(d.id, d.function and d.function.name, d.function and d.function.arguments) for d in deltas] == [
            ("call_1", "lookup", '{"q": "cats"}')]
        assert tool_chunks[-1].choices[0].finish_reason == "tool_calls"
        with pytest.raises(Exception, match="slow down"):
            client.chat.completions.create(model="m", messages=long_prompt)
        with pytest.raises(Exception, match="script exhausted"):
            client.chat.completions.create(model="m", messages=long_prompt)
        vectors = client.embeddings.create(model="e", input=["bees on the roof", "bees in the garden"])
        assert [d.embedding for d in vectors.data] == [embed("bees on the roof"), embed("bees in the garden")]
        assert [m.id for m in client.models.list()] == ["fake-model"]
        wrong = OpenAI(base_url=srv.base_url, api_key="sk-other", max_retries=0)
        with pytest.raises(Exception, match="Incorrect API key"):
            wrong.chat.completions.create(model="m", messages=long_prompt)
