"""The prompt-cache bench's claim, checked: a frozen snapshot keeps the cache warm."""

import importlib.util
from pathlib import Path

import pytest


def _load():
    path = Path(__file__).resolve().parents[2] / "bench" / "prompt_cache.py"
    spec = importlib.util.spec_from_file_location("bench_prompt_cache", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_frozen_snapshot_is_within_3_points_of_the_ideal_and_beats_rerendering():
    bench = _load()
    frozen = bench.run(rerender=False)
    rerender = bench.run(rerender=True)
    assert frozen["compressions"] == 1 and frozen["requests"] > 50
    assert frozen["ideal_bound_share"] - frozen["cached_share"] <= 0.03
    assert rerender["cached_tokens"] < frozen["cached_tokens"]


def test_prefix_cache_model_reads_only_written_prefixes():
    bench = _load()
    cache = bench.PrefixCache()
    big = 2000
    assert cache.request([("sys", big, True), ("u1", 10, True)]) == (big + 10, 0, 0)
    # same prefix + new message: the written prefix (sys+u1) is read
    assert cache.request([("sys", big, True), ("u1", 10, False), ("u2", 10, True)]) == (big + 20, big + 10, big + 10)
    # a changed system prompt misses everything
    assert cache.request([("sys2", big, True), ("u1", 10, True)])[1] == 0


def test_help_explains_instead_of_running_and_unknown_options_are_refused(capsys):
    # README: "run with .venv/bin/python bench/NAME.py --help for their options"; this bench used
    # to ignore its arguments and run the whole benchmark.
    bench = _load()
    with pytest.raises(SystemExit) as exc:
        bench.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage:") and '"bench"' not in out
    with pytest.raises(SystemExit) as exc:
        bench.main(["--bogus"])
    assert exc.value.code == 2
