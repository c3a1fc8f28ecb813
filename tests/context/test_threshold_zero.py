"""``compression.threshold: 0`` (or below) means what it means to the Hermes Agent: compression
starts at its lowest trigger, it is neither "never" nor an error (``compression.enabled: false``
is how compression is turned off). Checked against the reference's own ``ContextCompressor``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hermes_memory.config import load_config
from hermes_memory.context import ContextCompressor
from hermes_memory.context.compressor import lowest_trigger_tokens
from tests import backends

WINDOWS = (16_000, 32_000, 75_000, 100_000, 128_000, 400_000, 511_999, 1_000_000)

_REFERENCE = """
import json, sys
from agent.context_compressor import ContextCompressor
out = {}
for window in json.loads(sys.argv[1]):
    for t in (0.0, -0.5):
        c = ContextCompressor(model="test/model", threshold_percent=t, config_context_length=window, quiet_mode=True)
        out[f"{window} {t}"] = c.threshold_tokens
print(json.dumps(out))
"""


def test_threshold_zero_or_below_compresses_where_the_reference_does(tmp_path: Path) -> None:
    python = backends.ensure("hermes-agent")
    proc = subprocess.run([str(python), "-c", _REFERENCE, json.dumps(WINDOWS)], capture_output=True, text=True,
                          timeout=180, env={"HERMES_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    reference = json.loads(proc.stdout.strip().splitlines()[-1])
    for raw in ("0", "0.0", "-0.5"):
        path = tmp_path / "config.yaml"
        path.write_text(f"compression:\n  threshold: {raw}\n", encoding="utf-8")
        cfg = load_config(path)
        assert cfg.compression.threshold == 0.0
        assert len(cfg.warnings) == 1 and "compression.threshold" in cfg.warnings[0]
        assert "enabled: false" in cfg.warnings[0]
        for window in WINDOWS:
            ours = ContextCompressor(window, cfg.compression).threshold_tokens
            assert ours == lowest_trigger_tokens(window) == reference[f"{window} 0.0"] == reference[f"{window} -0.5"]


@pytest.mark.parametrize("window", WINDOWS)
def test_the_lowest_trigger_is_inside_the_window(window: int) -> None:
    assert 0 < lowest_trigger_tokens(window) < window


def test_compression_enabled_false_is_still_how_to_turn_it_off(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("compression:\n  enabled: false\n  threshold: 0\n", encoding="utf-8")
    cfg = load_config(path)
    assert cfg.compression.enabled is False and cfg.compression.threshold == 0.0
