"""A seeded, deterministic chat history for comparing search on SQLite and PostgreSQL: sessions of
user/assistant turns about everyday and technical topics, written from templates, with a few CJK
sessions, tool rows and punctuated identifiers. The same seed gives the same rows on both."""

from __future__ import annotations

import random
from typing import Any

TOPICS: dict[str, list[str]] = {
    "kafka": ["kafka consumer lag", "partition rebalance", "broker timeout", "topic retention", "offset commit"],
    "docker": ["docker compose file", "network bridge", "image layer cache", "container restart loop", "volume mount"],
    "deploy": ["deploy pipeline", "staging rollout", "canary release", "rollback plan", "blue green switch"],
    "garden": ["tomato seedlings", "compost heap", "raised beds", "watering schedule", "aphids on the roses"],
    "travel": ["train to Lisbon", "hotel booking", "passport renewal", "airport lounge", "rental car insurance"],
    "cooking": ["sourdough starter", "risotto recipe", "cast iron pan", "spice cabinet", "slow cooker chili"],
    "fitness": ["marathon training", "knee injury", "interval runs", "protein intake", "yoga stretches"],
    "music": ["guitar lessons", "jazz chords", "concert tickets", "vinyl collection", "piano practice"],
    "finance": ["tax return", "mortgage rate", "index funds", "budget spreadsheet", "credit card fees"],
    "reading": ["mystery novel", "book club", "library card", "poetry collection", "audiobook subscription"],
}
USER = ["How do I fix the {a}?", "I keep having trouble with the {a} and the {b}.", "Can you explain the {a}?",
        "What should I do about the {a} before Friday?", "Remind me what we said about the {a}.",
        "My {a} is acting up again, any ideas?", "Is the {a} related to the {b}?"]
ASSISTANT = ["Start by checking the {a}; the {b} is often the cause.", "The {a} usually needs a careful look at the {b}.",
             "Try changing the {a} first, then watch the {b} for a day.", "I would write down the {a} steps and compare them with the {b}.",
             "For the {a}, a simple plan works: measure, change one thing, measure again."]
CJK = ["记忆断裂的问题已经修复", "会议讨论了排期和预算", "东京的酒店已经预订好了", "数据库迁移完成了", "서울에서 회의가 있습니다"]
EXTRA = ["edit gateway/run.py before the release", "mail user@host.example for access", "the battery dropped to 50% overnight",
         "see ticket #123 for details", "upgrade node.js before the release", "the chat-send endpoint is ready",
         "ubuntu 20.04 works fine", "it's a trap, she said", "the db migration failed at step 2", "UI polish for the dashboard"]


def seed(db: Any, sessions: int = 40, turns: int = 12, seed_value: int = 16) -> int:
    """Write the corpus into ``db`` (any session store); returns the number of messages."""
    rnd = random.Random(seed_value)
    topics = sorted(TOPICS)
    n = 0
    t = 1_700_000_000.0
    for s in range(sessions):
        topic = topics[s % len(topics)]
        other = topics[(s * 7 + 3) % len(topics)]
        sid = f"sess{s:03d}"
        db.create_session(sid, source="telegram" if s % 5 == 0 else "cli", started_at=t, title=f"{topic} notes {s}")
        for i in range(turns):
            a = rnd.choice(TOPICS[topic])
            b = rnd.choice(TOPICS[other] if rnd.random() < 0.3 else TOPICS[topic])
            template = rnd.choice(USER if i % 2 == 0 else ASSISTANT)
            db.append_message(sid, "user" if i % 2 == 0 else "assistant", template.format(a=a, b=b), timestamp=t)
            t += 60.0
            n += 1
        if s % 4 == 0:
            db.append_message(sid, "user", CJK[(s // 4) % len(CJK)], timestamp=t)
            n += 1
        if s % 3 == 0:
            db.append_message(sid, "user", EXTRA[(s // 3) % len(EXTRA)], timestamp=t)
            n += 1
        if s % 6 == 0:
            db.append_message(sid, "tool", f"exit 0: checked the {rnd.choice(TOPICS[topic])}", tool_name="run_check", timestamp=t)
            n += 1
        t += 3600.0
    return n


QUERIES = [
    "kafka consumer lag", "How do I fix the broker timeout?", "docker network bridge", "what did we say about the rollback plan",
    "canary release", "tomato seedlings watering", "aphids", "train to Lisbon", "passport", "sourdough starter recipe",
    "cast iron", "marathon knee injury", "jazz chords guitar", "concert tickets", "tax return mortgage",
    "index funds budget", "mystery novel book club", '"book club"', "deploy*", "retention OR offset",
    "gateway/run.py", "user@host.example", "50%", "#123", "node.js", "chat-send", "ubuntu 20.04", "it's",
    "记忆断裂", "排期", "회의", "db migration", "UI", "run_check", "Remind me about the hotel booking",
    "any ideas about the slow cooker chili?", "interval runs protein", "vinyl collection piano practice",
]
"""Natural questions, keywords, phrases, a prefix, punctuated identifiers, CJK and short words."""
