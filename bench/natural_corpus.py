"""A corpus of natural English chat for the session benchmarks, generated fast and deterministically.

Real chat histories are not random words: a few people, places and events come back again and
again, and the words of a question ("When did Caroline go to the pottery class?") are common ones.
This corpus has:

* a Zipf-distributed vocabulary (exponent 1.07): about 900 English words in rough frequency order,
  function words first, then a long tail of 20,000 rarer word-like tokens;
* :data:`NAMES`: twelve people, each named in 7-15 % of messages (a fixed share per name);
* :data:`EVENTS`: 240 recurring events (two words, "pottery class") mentioned in 30 % of messages,
  Zipf over events; :data:`PLACES`: 120 places in 18 % of messages, Zipf over places;
* 6-45 words per message, 50 messages per session, user and assistant turns alternating.

Everything comes from one ``numpy`` generator seeded by ``seed`` (same seed, same corpus, on every
machine); 1M messages take about 20 s to generate on one core. Questions and two-word queries are
drawn from the same names, events, places and mid-frequency words.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

FUNCTION = (
    "the i to and a you of it that in is was for my we on but so me with this have just be at "
    "they what not are like he she do all about if our out had up his her no get one there when "
    "can your been from as know think really would or were them go how did some going now will "
    "then time good yeah oh more could because back got want people well too also much very "
    "something any said by an its than even over still here after who which into why their"
).split()
WORDS = (
    "day week year night morning weekend today tomorrow yesterday month summer winter spring "
    "family friend friends kids mom dad sister brother husband wife son daughter baby dog cat "
    "work job team boss office project meeting plan idea book books music song movie game class "
    "school college course art painting photo picture camera trip travel car house home room "
    "garden kitchen dinner lunch breakfast food coffee tea cake bread pizza recipe restaurant "
    "city park beach lake mountain river forest road street store shop market church library "
    "hospital doctor health run race bike walk hike swim yoga gym training practice lesson "
    "love hope feel felt happy excited proud glad sad tired busy nervous amazing great nice "
    "fun hard easy new old big small little long short first last next best better different "
    "important beautiful awesome wonderful special favorite own whole free real sure right "
    "make made take took give gave see saw look looked find found tell told ask asked try tried "
    "start started finish finished help helped work worked play played read write wrote paint "
    "painted cook cooked bake baked buy bought sell sold meet met visit visited join joined "
    "learn learned teach taught move moved change changed keep kept leave left bring brought "
    "call called talk talked share shared show showed watch watched listen enjoy enjoyed "
    "support community group club volunteer charity event party festival concert show wedding "
    "birthday holiday vacation camping adventure experience memory moment story life world "
    "thing stuff place way part kind lot bit side end point reason question answer problem "
    "money price gift present letter card message news word name number hour minute "
    "support passion dream goal career future past journey change growth balance energy "
    "mind heart body voice hand eyes face head hair smile laugh tears hug "
    "piano guitar violin drums dance dancing singing drawing pottery sculpture poetry novel "
    "journal blog podcast video channel app phone computer laptop website online social media "
    "interview promotion salary client customer company business startup shop product design "
    "garden plants flowers roses trees vegetables tomatoes bees birds horses puppy kitten "
    "ocean sunset sunrise stars rain snow weather storm wind sun sky "
    "paris london tokyo rome california texas florida canada mexico spain italy france sweden"
).split()
EVENT_A = (
    "pottery painting yoga dance cooking baking art music poetry writing charity support "
    "camping hiking running cycling swimming book film photo science coding chess garden "
    "family school church community volunteer birthday wedding graduation holiday career "
    "mentoring counseling adoption pride marathon"
).split()
EVENT_B = "class workshop meetup group festival session retreat fair show concert party race trip camp".split()
NAMES = ("Caroline", "Melanie", "Jon", "Gina", "John", "Maria", "Joanna", "Nate", "Tim", "Audrey", "Andrew",
         "Deborah")
NAME_SHARES = (0.15, 0.14, 0.13, 0.12, 0.11, 0.10, 0.10, 0.09, 0.09, 0.08, 0.08, 0.07)
"""Share of messages naming each person (issue 15: each name in 7-15 % of messages)."""
PLACE_WORDS = (
    "beach park lake museum library cafe gym studio mall hospital school church theater stadium "
    "bakery market garden zoo pier harbor airport station bookstore gallery center"
).split()
CITIES = "paris london tokyo rome boston seattle denver austin chicago miami portland dublin".split()
EVENT_SHARE, PLACE_SHARE = 0.30, 0.18
PER_SESSION = 50
TAIL_WORDS = 20_000
ZIPF_S = 1.07


def _tail(n: int, rng: np.random.Generator) -> list[str]:
    """``n`` distinct word-like tokens (English-like syllables): the rare words of a history."""
    onset = "b c d f g h j k l m n p r s t v w br cr dr fl gr pl st tr sh ch th".split()
    vowel = "a e i o u ai ea ou oo".split()
    coda = "n r s t l m nd st ck ng ll rt".split()
    out: set[str] = set()
    while len(out) < n:
        k = int(rng.integers(1, 3))
        parts = [onset[int(rng.integers(len(onset)))] + vowel[int(rng.integers(len(vowel)))] for _ in range(k)]
        out.add("".join(parts) + coda[int(rng.integers(len(coda)))])
    return sorted(out)


class NaturalCorpus:
    """Deterministic natural-English chat: ``messages(n)`` yields ``n`` message texts."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = np.random.default_rng(seed)
        core = list(dict.fromkeys(FUNCTION + WORDS))
        self.vocab = np.array(core + [w for w in _tail(TAIL_WORDS, self.rng) if w not in set(core)])
        ranks = np.arange(1, len(self.vocab) + 1)
        p = 1.0 / ranks**ZIPF_S
        self.p = p / p.sum()
        self.events = [f"{a} {b}" for a in EVENT_A for b in EVENT_B]
        order = self.rng.permutation(len(self.events))[:240]
        self.events = [self.events[i] for i in order]
        self.places = [f"the {p}" for p in PLACE_WORDS] + [f"{c} {p}" for c in CITIES for p in PLACE_WORDS[:8]]
        self.places = self.places[:120]
        self.ev_p = _zipf(len(self.events))
        self.pl_p = _zipf(len(self.places))
        self.shares = np.array(NAME_SHARES)

    def messages(self, n: int, batch: int = 50_000) -> Iterator[str]:
        """``n`` message texts, generated in vectorised batches of ``batch``."""
        done = 0
        while done < n:
            k = min(batch, n - done)
            yield from self._batch(k)
            done += k

    def _batch(self, k: int) -> list[str]:
        rng = self.rng
        lens = rng.integers(6, 46, size=k)
        words = self.vocab[rng.choice(len(self.vocab), size=int(lens.sum()), p=self.p)].tolist()
        has_name = rng.random((k, len(NAMES))) < self.shares
        ev = np.where(rng.random(k) < EVENT_SHARE, rng.choice(len(self.events), size=k, p=self.ev_p), -1)
        pl = np.where(rng.random(k) < PLACE_SHARE, rng.choice(len(self.places), size=k, p=self.pl_p), -1)
        cuts = np.concatenate([[0], np.cumsum(lens)]).tolist()
        pos = rng.random((k, 3)).tolist()
        names_of = [[NAMES[j] for j in np.flatnonzero(row)] for row in has_name] if k else []
        ev_l, pl_l = ev.tolist(), pl.tolist()
        out = []
        for i in range(k):
            body = words[cuts[i]:cuts[i + 1]]
            extra = names_of[i]
            if ev_l[i] >= 0:
                extra.append("the " + self.events[ev_l[i]])
            if pl_l[i] >= 0:
                extra.append("at " + self.places[pl_l[i]])
            p = pos[i]
            for j, piece in enumerate(extra):
                body.insert(int(p[j % 3] * (len(body) + 1)), piece)
            text = " ".join(body)
            out.append(text[0].upper() + text[1:] + ("?" if p[0] < 0.2 else "."))
        return out

    def mid_word(self, rng: np.random.Generator) -> str:
        """A word of the English core past the function words (common, but informative)."""
        return str(self.vocab[int(rng.integers(len(FUNCTION) + 20, len(FUNCTION) + 600))])

    def questions(self, n: int, seed: int) -> list[str]:
        """``n`` natural-language questions about the corpus' people, events and places."""
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(n):
            a, b = (NAMES[int(i)] for i in rng.choice(len(NAMES), size=2, replace=False))
            ev = self.events[int(rng.choice(len(self.events), p=self.ev_p))]
            pl = self.places[int(rng.choice(len(self.places), p=self.pl_p))]
            w1, w2 = self.mid_word(rng), self.mid_word(rng)
            templates = [
                f"When did {a} go to the {ev}?",
                f"What did {a} say about the {w1} at {pl}?",
                f"How did {a} and {b} feel after the {ev}?",
                f"Where did {a} buy the {w1} {w2}?",
                f"What does {a} like to do at {pl} with {b}?",
                f"Why did {a} start the {ev} last {w1}?",
            ]
            out.append(templates[int(rng.integers(len(templates)))])
        return out

    def two_words(self, n: int, seed: int) -> list[str]:
        """``n`` two-word keyword queries (a name or common word with an event or common word)."""
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(n):
            first = NAMES[int(rng.integers(len(NAMES)))] if rng.random() < 0.5 else self.mid_word(rng)
            ev = self.events[int(rng.choice(len(self.events), p=self.ev_p))].split()
            second = ev[int(rng.integers(2))] if rng.random() < 0.5 else self.mid_word(rng)
            out.append(f"{first} {second}")
        return out


def _zipf(n: int) -> np.ndarray:
    p = 1.0 / np.arange(1, n + 1) ** ZIPF_S
    return p / p.sum()
