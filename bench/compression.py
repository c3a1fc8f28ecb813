"""Benchmark the ContextCompressor; prints one JSON object.

1. ``scale``: time to compress synthetic agent sessions of ~50K, ~200K and ~1M estimated tokens
   (LLM-free summary, so the figure is the compressor's own cost), median of N runs, and
   tokens after / before. The context length is set so each session sits at the threshold.
2. ``locomo``: on the LoCoMo dev conversations (``$HERMES_SHARED/data/locomo/locomo-dev.json``;
   Maharana et al., ACL 2024, CC BY-NC 4.0, evaluation only), each conversation is compressed
   once at its threshold with the LLM-free summary. For every (question, evidence turn) pair we
   take the turn's key terms: its up to 5 least frequent content words (lowercase, >= 4 letters,
   no stop words; frequency = number of turns of that conversation containing the word, so the
   terms are what distinguishes the turn) and check whether they still occur in summary + tail. Reported: the share of evidence turns with at
   least half / all of their key terms surviving, split into turns kept verbatim in the tail and
   turns that went through the summary, beside a "drop the middle" baseline (tail only).

Run: ``PYTHONPATH=src python bench/compression.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

from hermes_memory.config import CompressionConfig
from hermes_memory.context import (
    ContextCompressor,
    content_text,
    estimate_messages_tokens_rough,
    split_summary,
)

STOP = set(
    """about above after again against also among anyway around because been before being below between both
could does doing down during each even ever every from further have having here hers herself himself into
itself just like made make many more most much must myself never only other ours ourselves over really same
should some such than that their theirs them themselves then there these they this those through under until
very want were what when where which while will with would your yours yourself yourselves that's it's i'm i've
you're don't didn't can't thanks thank great good yeah wow love glad sounds awesome amazing hope sure know
think feel always things thing something time going well been getting still lots keep""".split()
)
WORD = re.compile(r"[a-z0-9][a-z0-9'’-]*[a-z0-9]|[a-z0-9]")


def shared_dir() -> Path:
    env = os.environ.get("HERMES_SHARED")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared"


# --------------------------------------------------------------------------------------------- scale


def synthetic_session(target_tokens: int, seed: int = 7) -> list[dict]:
    """A tool-heavy agent session of about ``target_tokens`` estimated tokens (deterministic)."""
    rng = random.Random(seed)
    msgs: list[dict] = [{"role": "system", "content": "You are a coding agent. " * 200}]
    tokens = estimate_messages_tokens_rough(msgs)
    i = 0
    while tokens < target_tokens:
        turn = [{"role": "user", "content": f"Task {i}: fix module pkg/mod{i}.py so test_{i} passes. " * rng.randint(1, 4)}]
        for r in range(rng.randint(1, 3)):
            ids = [f"call_{i}_{r}_{k}" for k in range(rng.randint(1, 3))]
            calls = []
            for cid in ids:
                if rng.random() < 0.5:
                    fn = {"name": "terminal", "arguments": json.dumps({"command": f"pytest tests/test_{i}.py -k case{r}"})}
                else:
                    fn = {"name": "read_file", "arguments": json.dumps({"path": f"pkg/mod{i}.py", "offset": r * 100})}
                calls.append({"id": cid, "type": "function", "function": fn})
            turn.append({"role": "assistant", "content": None, "tool_calls": calls})
            for cid in ids:
                body = "\n".join(f"line {n} of output for {cid}: value={rng.randint(0, 10**6)}" for n in range(rng.randint(5, 150)))
                turn.append({"role": "tool", "tool_call_id": cid, "content": body + f"\nexit code: {rng.choice([0, 0, 1])}"})
        turn.append({"role": "assistant", "content": f"Fixed mod{i}. Decided to keep the API. " * rng.randint(1, 5)})
        msgs.extend(turn)
        tokens += estimate_messages_tokens_rough(turn)
        i += 1
    return msgs


def bench_scale(sizes: list[int], runs: int) -> list[dict]:
    rows = []
    for size in sizes:
        msgs = synthetic_session(size)
        before = estimate_messages_tokens_rough(msgs)
        ctx = int(before / 0.5) + 1  # at the default threshold (0.50)
        times = []
        out: list[dict] = []
        for _ in range(runs if size < 1_000_000 else max(1, runs // 2)):
            cc = ContextCompressor(ctx, CompressionConfig())
            t0 = time.perf_counter()
            out = cc.compress(msgs)
            times.append(time.perf_counter() - t0)
        after = estimate_messages_tokens_rough(out)
        rows.append({
            "target_tokens": size,
            "messages_before": len(msgs),
            "tokens_before": before,
            "messages_after": len(out),
            "tokens_after": after,
            "ratio_after_before": round(after / before, 4),
            "compress_seconds_median": round(statistics.median(times), 4),
            "runs": len(times),
            "context_length": ctx,
        })
    return rows


# --------------------------------------------------------------------------------------------- locomo


def key_terms(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if len(w) >= 4 and w not in STOP}


def locomo_messages(conv: dict) -> tuple[list[dict], dict[str, int]]:
    """Conversation -> messages (speaker_a = user, speaker_b = assistant); dia_id -> message index."""
    c = conv["conversation"]
    a = c["speaker_a"]
    msgs = [{"role": "system", "content": f"You are {c['speaker_b']}, chatting with {a}."}]
    index: dict[str, int] = {}
    sessions = sorted(int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k))
    for s in sessions:
        date = c.get(f"session_{s}_date_time", "")
        for n, turn in enumerate(c[f"session_{s}"]):
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            if n == 0 and date:
                text = f"[{date}] {text}"
            role = "user" if turn["speaker"] == a else "assistant"
            index[turn["dia_id"]] = len(msgs)
            msgs.append({"role": role, "content": text})
    return msgs, index


def survival(terms: set[str], text_terms: set[str]) -> float:
    return len(terms & text_terms) / len(terms) if terms else 1.0


def bench_locomo(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    pairs = {"tail": [], "summarised": [], "baseline_tail_only": []}
    skipped = {"malformed_evidence": 0, "no_evidence": 0, "no_key_terms": 0}
    per_conv = []
    for conv in data:
        msgs, index = locomo_messages(conv)
        before = estimate_messages_tokens_rough(msgs)
        cc = ContextCompressor(int(before / 0.5) + 1, CompressionConfig())
        plan = cc.plan(msgs)
        df: dict[str, int] = {}
        for m in msgs[1:]:
            for w in key_terms(m["content"]):
                df[w] = df.get(w, 0) + 1
        out = cc.compress(msgs)
        summary = "\n".join(content_text(m.get("content")) for m in out if split_summary(m)[0] is not None)
        kept = "\n".join(content_text(m.get("content")) for m in out)
        kept_terms = key_terms(kept)
        tail_terms = key_terms("\n".join(content_text(m.get("content")) for m in msgs[plan.tail_start:]) + "\n"
                               + "\n".join(content_text(m.get("content")) for m in msgs[: plan.head_end]))
        conv_rows = []
        for qa in conv["qa"]:
            evidence = qa.get("evidence") or []
            if not evidence:
                skipped["no_evidence"] += 1
                continue
            for ev in evidence:
                ev = ev.strip()
                if ev not in index:
                    skipped["malformed_evidence"] += 1
                    continue
                idx = index[ev]
                words = key_terms(msgs[idx]["content"].split(": ", 1)[-1])
                terms = set(sorted(words, key=lambda w: (df.get(w, 0), w))[:5])
                if not terms:
                    skipped["no_key_terms"] += 1
                    continue
                where = "tail" if idx >= plan.tail_start or idx < plan.head_end else "summarised"
                score = survival(terms, kept_terms)
                pairs[where].append(score)
                pairs["baseline_tail_only"].append(survival(terms, tail_terms))
                conv_rows.append(score)
        per_conv.append({
            "sample_id": conv.get("sample_id"),
            "messages": len(msgs) - 1,
            "tokens_before": before,
            "tokens_after": estimate_messages_tokens_rough(out),
            "summary_chars": len(summary),
            "summarised_messages": plan.tail_start - plan.head_end,
            "evidence_pairs": len(conv_rows),
        })

    def share(scores: list[float], cut: float) -> float | None:
        return round(sum(s >= cut for s in scores) / len(scores), 4) if scores else None

    all_scores = pairs["tail"] + pairs["summarised"]
    return {
        "conversations": len(data),
        "evidence_pairs": len(all_scores),
        "skipped": skipped,
        "share_half_terms_survive": share(all_scores, 0.5),
        "share_all_terms_survive": share(all_scores, 1.0),
        "mean_term_recall": round(statistics.mean(all_scores), 4) if all_scores else None,
        "summarised_pairs": len(pairs["summarised"]),
        "summarised_share_half_terms_survive": share(pairs["summarised"], 0.5),
        "summarised_mean_term_recall": round(statistics.mean(pairs["summarised"]), 4) if pairs["summarised"] else None,
        "tail_pairs": len(pairs["tail"]),
        "baseline_drop_middle_share_half_terms_survive": share(pairs["baseline_tail_only"], 0.5),
        "baseline_drop_middle_mean_term_recall": round(statistics.mean(pairs["baseline_tail_only"]), 4),
        "per_conversation": per_conv,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, one run (for a smoke test)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    sizes = [5_000, 20_000] if args.quick else [50_000, 200_000, 1_000_000]
    result: dict = {"bench": "compression", "summary": "LLM-free", "scale": bench_scale(sizes, 1 if args.quick else args.runs)}
    path = shared_dir() / "data" / "locomo" / "locomo-dev.json"
    if path.exists():
        result["locomo"] = bench_locomo(path)
    else:
        result["locomo"] = {"error": f"LoCoMo data not found at {path}; set HERMES_SHARED"}
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
