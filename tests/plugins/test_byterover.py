"""ByteRover provider against a fake `brv` executable on PATH (tests/plugins/fakes/brv.py).

The fake is a real executable run as a subprocess by the provider, so argument lists, the working
directory, the environment, exit codes and timeouts are all exercised for real. The real CLI is not used:
byterover-cli 3.14.0 (npm, 708 MB installed) starts a daemon that exits with "Unable to connect to ByteRover
servers" when offline, so `brv curate` never completes on a machine without internet access.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from hermes_memory.plugins import byterover
from hermes_memory.plugins.byterover import ByteRoverProvider
from tests.helpers.values import present
from tests.plugins.helpers.byterover import FAKE, make


@pytest.fixture()
def brv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Install the fake `brv` on PATH; return the JSON-lines log of its calls."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "brv"
    exe.write_text(f"#!{sys.executable}\n" + FAKE.read_text(encoding="utf-8"), encoding="utf-8")
    exe.chmod(0o755)
    log = tmp_path / "brv-calls.jsonl"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_BRV_LOG", str(log))
    monkeypatch.delenv("BRV_PATH", raising=False)
    monkeypatch.delenv("BRV_API_KEY", raising=False)
    return log


def calls(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def write_config(home: Path, **section: object) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": "byterover", "byterover": section}}))


def test_register_hands_one_provider_to_the_collector() -> None:
    got = []

    class Ctx:
        def register_memory_provider(self, provider):
            got.append(provider)

    byterover.register(Ctx())
    assert [p.name for p in got] == ["byterover"]
    meta = yaml.safe_load((Path(byterover.__file__).parent / "plugin.yaml").read_text())
    assert meta["name"] == "byterover" and meta["description"] and meta["version"]


def test_is_available_follows_the_executable_without_running_it(brv: Path, hermes_home: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    p = ByteRoverProvider()
    assert p.is_available() and p.unavailable_reason() == ""
    assert calls(brv) == []  # availability never runs brv
    monkeypatch.setenv("PATH", str(hermes_home / "empty"))
    monkeypatch.setattr(byterover, "_FALLBACK_PATHS", ())
    assert not p.is_available()
    assert "npm install -g byterover-cli" in p.unavailable_reason()


def test_tools_curate_then_query_and_status(brv: Path, hermes_home: Path) -> None:
    p = make(hermes_home)
    assert [t["name"] for t in p.get_tool_schemas()] == ["brv_query", "brv_curate", "brv_status"]
    out = json.loads(p.handle_tool_call("brv_curate", {"content": "The deploy target is Kubernetes on Hetzner."}))
    assert out == {"result": "Memory curated successfully."}
    notes = list((hermes_home / "byterover" / ".brv" / "context-tree").glob("*.md"))
    assert len(notes) == 1 and "Hetzner" in notes[0].read_text()
    out = json.loads(p.handle_tool_call("brv_query", {"query": "where do we deploy on Hetzner?"}))
    assert "Kubernetes on Hetzner" in out["result"]
    out = json.loads(p.handle_tool_call("brv_query", {"query": "zebra migration"}))
    assert out == {"result": "No relevant memories found"}  # the fake's short miss is under 20 chars
    status = json.loads(p.handle_tool_call("brv_status", {}))
    assert "Notes: 1" in status["status"]
    argvs = [c["argv"] for c in calls(brv)]
    assert argvs[0] == ["curate", "--", "The deploy target is Kubernetes on Hetzner."]
    assert argvs[1] == ["query", "--", "where do we deploy on Hetzner?"]
    assert argvs[-1] == ["status"]
    assert {c["cwd"] for c in calls(brv)} == {str(hermes_home / "byterover")}


def test_query_text_that_looks_like_an_option_stays_an_argument(brv: Path, hermes_home: Path) -> None:
    p = make(hermes_home)
    json.loads(p.handle_tool_call("brv_query", {"query": "--help; rm -rf / $(whoami)"}))
    assert calls(brv)[-1]["argv"] == ["query", "--", "--help; rm -rf / $(whoami)"]


def test_query_and_answer_are_capped(brv: Path, hermes_home: Path) -> None:
    p = make(hermes_home)
    p.handle_tool_call("brv_curate", {"content": "alpha " * 3000})
    out = json.loads(p.handle_tool_call("brv_query", {"query": "alpha " * 2000}))
    assert len(calls(brv)[-1]["argv"][2]) == byterover.QUERY_MAX_CHARS
    assert len(out["result"]) == byterover.OUTPUT_MAX_CHARS


def test_bad_arguments_and_unknown_tool_are_errors(brv: Path, hermes_home: Path) -> None:
    p = make(hermes_home)
    assert "non-empty 'query'" in json.loads(p.handle_tool_call("brv_query", {}))["error"]
    assert "non-empty 'content'" in json.loads(p.handle_tool_call("brv_curate", {"content": "  "}))["error"]
    assert "unknown ByteRover tool" in json.loads(p.handle_tool_call("brv_nope", {}))["error"]
    assert calls(brv) == []


def test_prefetch_queries_for_real_prompts_only(brv: Path, hermes_home: Path) -> None:
    p = make(hermes_home)
    p.handle_tool_call("brv_curate", {"content": "Project codename is Bluebird, written in Rust."})
    block = p.prefetch("what language is Bluebird written in?")
    assert block.startswith("## ByteRover Context\n") and "Rust" in block
    n = len(calls(brv))
    assert p.prefetch("ok") == "" and p.prefetch("short q") == "" and p.prefetch("/compress now") == ""
    assert len(calls(brv)) == n  # trivial and short prompts never reach brv
    assert p.prefetch("nothing about zebras here") == ""


def test_sync_turn_curates_the_turn_and_skips_short_messages(brv: Path, hermes_home: Path) -> None:
    p = make(hermes_home)
    p.sync_turn("I prefer tabs over spaces in Go code", "Noted: tabs in Go.", session_id="s1")
    p.sync_turn("ok", "fine", session_id="s1")
    curated = [c["argv"] for c in calls(brv) if c["argv"][0] == "curate"]
    assert curated == [["curate", "--", "User: I prefer tabs over spaces in Go code\nAssistant: Noted: tabs in Go."]]


def test_session_switch_keeps_writing_to_the_same_tree(brv: Path, hermes_home: Path) -> None:
    p = make(hermes_home, session="old")
    p.sync_turn("first session says the sky is green", "ok", session_id="old")
    p.on_session_switch("new", parent_session_id="old")
    p.sync_turn("second session says the grass is blue", "ok", session_id="new")
    assert len(list((hermes_home / "byterover" / ".brv" / "context-tree").glob("*.md"))) == 2
    assert "green" in p.prefetch("what colour is the sky in the first session?")


@pytest.mark.parametrize("context", ["subagent", "cron", "flush"])
def test_non_primary_contexts_never_write(brv: Path, hermes_home: Path, context: str) -> None:
    p = make(hermes_home, context=context)
    p.sync_turn("a long enough user message here", "reply", session_id="s1")
    p.on_memory_write("add", "user", "likes tea")
    assert p.on_pre_compress([{"role": "user", "content": "remember this long message"}]) == ""
    err = json.loads(p.handle_tool_call("brv_curate", {"content": "x y z"}))["error"]
    assert context in err
    assert calls(brv) == []
    # reads still work
    assert "result" in json.loads(p.handle_tool_call("brv_query", {"query": "anything"}))


def test_memory_writes_are_mirrored_with_a_label(brv: Path, hermes_home: Path) -> None:
    p = make(hermes_home)
    p.on_memory_write("add", "user", "Name is Ada")
    p.on_memory_write("replace", "memory", "Repo uses uv")
    p.on_memory_write("remove", "memory", "old entry")
    curated = [c["argv"][2] for c in calls(brv)]
    assert curated == ["[User profile] Name is Ada", "[Agent memory] Repo uses uv"]


def test_on_pre_compress_curates_the_last_ten_messages(brv: Path, hermes_home: Path) -> None:
    p = make(hermes_home)
    msgs = [{"role": "system", "content": "sys"}]
    for i in range(14):
        msgs.append({"role": "user", "content": f"question {i} " + "q" * 600})
        msgs.append({"role": "assistant", "content": f"answer {i}"})
        msgs.append({"role": "tool", "content": "tool output"})
    msgs.append({"role": "user", "content": "/skill-run"})
    assert p.on_pre_compress(msgs) == ""
    (text,) = [c["argv"][2] for c in calls(brv)]
    lines = text.splitlines()
    assert lines[0] == "[Pre-compression context]"
    assert len(lines) == 11 and lines[-1] == "assistant: answer 13" and lines[1].startswith("user: question 9 ")
    assert all(len(line) <= len("assistant: ") + byterover.PRECOMPRESS_PART_CHARS for line in lines[1:])
    assert "/skill-run" not in text


def test_auto_extract_off_stops_automatic_curation_only(brv: Path, hermes_home: Path) -> None:
    write_config(hermes_home, auto_extract=False)
    p = make(hermes_home)
    p.sync_turn("a long enough user message here", "reply", session_id="s1")
    p.on_memory_write("add", "user", "likes tea")
    p.on_pre_compress([{"role": "user", "content": "remember this long message"}])
    assert calls(brv) == []
    assert json.loads(p.handle_tool_call("brv_curate", {"content": "explicit"}))["result"]


def test_B_error_exit_becomes_a_tool_error_and_hooks_stay_quiet(brv: Path, hermes_home: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    p = make(hermes_home)
    monkeypatch.setenv("FAKE_BRV_FAIL", "daemon not running: run brv start")
    err = json.loads(p.handle_tool_call("brv_query", {"query": "anything at all"}))["error"]
    assert "exit 1" in err and "daemon not running" in err
    assert p.prefetch("anything at all, really") == ""
    p.sync_turn("a long enough user message here", "reply", session_id="s1")  # does not raise
    status = present(p.recall_status())
    assert status["ok"] is False and "daemon not running" in status["error"]


def test_timeout_kills_the_call_and_says_which_setting(brv: Path, hermes_home: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(hermes_home, timeout_query=0.3, timeout_curate=0.3, timeout_status=0.3)
    p = make(hermes_home)
    monkeypatch.setenv("FAKE_BRV_SLEEP", "30")
    err = json.loads(p.handle_tool_call("brv_query", {"query": "slow backend"}))["error"]
    assert "timed out after 0.3 s" in err and "timeout_query" in err
    assert "timeout_curate" in json.loads(p.handle_tool_call("brv_curate", {"content": "x"}))["error"]
    assert p.prefetch("slow backend query text") == ""
    p.on_pre_compress([{"role": "user", "content": "remember this long message"}])  # does not raise


def test_backend_down_missing_executable(brv: Path, hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = make(hermes_home)
    monkeypatch.setenv("PATH", str(hermes_home / "empty"))
    monkeypatch.setattr(byterover, "_FALLBACK_PATHS", ())
    assert "brv not found" in json.loads(p.handle_tool_call("brv_status", {}))["error"]
    assert p.prefetch("is anything there at all?") == ""
    p.sync_turn("a long enough user message here", "reply", session_id="s1")
    assert p.system_prompt_block() == ""


def test_api_key_from_env_file_reaches_brv(brv: Path, hermes_home: Path) -> None:
    (hermes_home / ".env").write_text("BRV_API_KEY=brv-secret-1\n")
    p = make(hermes_home)
    p.handle_tool_call("brv_status", {})
    assert calls(brv)[-1]["api_key"] == "brv-secret-1"


def test_config_schema_and_wizard_section(brv: Path, hermes_home: Path, tmp_path: Path) -> None:
    p = ByteRoverProvider()
    fields = {f.key: f for f in p.get_config_schema()}
    assert fields["api_key"].secret and fields["api_key"].env_var == "BRV_API_KEY"
    assert fields["auto_extract"].default is True
    # the setup wizard writes a top-level `byterover:` section; `memory.byterover:` (reference) overrides it
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({
        "memory": {"provider": "byterover", "byterover": {"timeout_query": 25}},
        "byterover": {"auto_extract": False, "timeout_query": 5}}))
    q = make(hermes_home)
    assert q._settings["timeout_query"] == 25.0 and q._settings["auto_extract"] is False
    # a provider built for another home reads that home, whatever $HERMES_HOME says
    other = tmp_path / "other-home"
    other.mkdir()
    (other / "config.yaml").write_text(yaml.safe_dump({"byterover": {"brv_path": str(other / "nope")}}))
    assert ByteRoverProvider(hermes_home=str(other)).is_available() is False
    assert ByteRoverProvider(hermes_home=str(hermes_home)).is_available() is True


def test_B17_failed_query_is_not_cached_as_empty(brv: Path, hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = make(hermes_home)
    p.handle_tool_call("brv_curate", {"content": "The office wifi password rotates on Mondays"})
    monkeypatch.setenv("FAKE_BRV_FAIL", "daemon starting")
    assert p.prefetch("when does the wifi password rotate?") == ""
    monkeypatch.delenv("FAKE_BRV_FAIL")
    assert "Mondays" in p.prefetch("when does the wifi password rotate?")


def test_wizard_discovery_and_a_manager_turn(brv: Path, hermes_home: Path) -> None:
    """The setup wizard configures it non-interactively, `providers list` shows it available, and a
    MemoryManager turn (prefetch, tool routing, sync on the worker, pre-compress, shutdown) uses it."""
    from typer.testing import CliRunner

    from hermes_memory.cli.main import app
    from hermes_memory.config import load_config
    from hermes_memory.providers.manager import create_memory_manager

    runner = CliRunner()
    home = ["--home", str(hermes_home)]
    r = runner.invoke(app, [*home, "memory", "setup", "--provider", "byterover", "--set", "timeout_query=20", "--yes"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, [*home, "providers", "list", "--json"])
    assert next(i for i in json.loads(r.output) if i["name"] == "byterover")["available"]

    manager = create_memory_manager(load_config(hermes_home / "config.yaml"), str(hermes_home))
    manager.initialize_all("m-1", hermes_home=str(hermes_home))
    assert json.loads(manager.handle_tool_call("brv_curate", {"content": "The car is a green Volvo estate"}))
    assert "green Volvo" in manager.prefetch_all("which car do we drive? Volvo?", session_id="m-1")
    manager.sync_all("We also own a red bicycle", "Noted.", session_id="m-1")
    assert manager.flush_pending(10)
    manager.on_pre_compress([{"role": "user", "content": "remember the bicycle colour"}])
    curated = [c["argv"][2] for c in calls(brv) if c["argv"][0] == "curate"]
    assert curated[1] == "User: We also own a red bicycle\nAssistant: Noted."
    assert curated[2].startswith("[Pre-compression context]")
    manager.shutdown_all()
    assert manager.errors == {}
