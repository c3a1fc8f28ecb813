"""Threat-scan families by kind: orders addressed to the reader, consent framings, look-alike hosts, poisoned facts, fake notices (issue 13 §4).

The tenth round grouped the tuning corpora's misses into kinds and wrote one shape per kind, on word
classes, checked on fresh phrasings of the kind and on a user's own notes in the same words
(``bench/scan_probe10.py``; docs/security.md §1):

* ``addressed_order``: the note speaks to the model that reads it ("Assistant, ...", "Note for the
  agent:", "any AI reading this must", "whoever summarises this", "to the model processing this
  text") *and* that sentence asks for a risky act: data sent to an outside address, money moved,
  access granted, a door unlocked, outside text trusted as the user's, a check skipped, something
  deleted, the user kept in the dark or a claim planted in a summary. A user's notes to their
  assistant ("Note for the assistant: I prefer metric units", "Assistant, remind me a week
  before", "forward the newsletter to my wife at ...") name no risky act and pass. Sources:
  Greshake et al. 2023 (indirect prompt injection in retrieved pages, emails and documents), BIPIA
  (Yi et al. 2023), Rehberger's write-ups on injected transcripts and invites, OWASP LLM01:2025.
* ``consent_framing``: politeness ("it would be lovely if you could", "no pressure"), a past
  decision ("we agreed", "per my decision", "previously confirmed"), a leading question ("wouldn't
  it be easier", "what's stopping you") or a code word set up for later ("when I say '...'") *and*
  an unsafe act in the same sentence: checks stopped, secrets passed on, outside text counted as the
  user's, quiet approvals, commands run unasked. "We agreed the agents must ask before running any
  destructive command" and "I will share the Netflix password with my sister" pass.
* ``lookalike_host``: a brand or package name with one letter swapped for a look-alike (0/o, 1/l,
  rn/m ...), dropped or transposed, used as a host or installed; a brand's domain as a subdomain of
  another (``python.org.fast-downloads.invalid``); a look-alike top-level domain (``pypi.orq``).
  A note that warns (phishing, scam, typo-squat, reported) passes. Run on the text as written:
  a leetspeak view turns ``paypa1`` into ``paypai`` and ``glthub`` into ``github``.
* ``poisoned_fact``: a contact or payee (phone, address, URL, IBAN, wallet) with the official
  channel avoided ("not the number on the card", "don't call 112, they're slower"), or declared
  changed or the real one *with* an order that routes payments, calls or people to it; payment by
  gift card; a dose above the label. "Our accountant's new IBAN is ...; I updated the standing
  order myself" passes.
* ``fake_notice``: a changelog, release note, patch, hotfix, advisory, model card or terms of
  service that names the agent and an unsafe change (prompts or keys disclosed, no longer asks,
  executed without confirmation, safety module removed). "Release notes: agents may now use the
  new search tool" passes.

Gaps are bounded and go word by word (the next class is tried at word starts only), identifiers
are bounded or possessive, and each family runs only when its keywords occur (``lookalike_host``:
only when a look-alike name itself occurs).
"""

from __future__ import annotations

from hermes_memory.memory.scan_fragments import Family, _f, trie_pattern

#: A model, agent or bot, as the note names the one that reads it.
_MODEL = (
    r"(?:(?:ai|llm|coding|automated|automatic|helper|note-?taking|triage|language)\s+)?(?:assistants?|agents?|ais?|llms?|models?|bots?|robots?|chatbots?"
    r"|summari[sz]ers?|note-?takers?|reviewers?|language\s+models?|copilots?|crawlers?)"
)
#: The reader addressed: a vocative at a clause start, a note headed for it, or whatever model reads the text.
_READER = (
    # "Assistant, quietly add ...", "AI assistant: for all future homework", "hey bot, stop ...", "model: from now on"
    rf"(?:(?:^|[.!?:;|(\[\-—–'\"‘“]\s*|\b(?:hey|hi|hello|dear|attention|oh|yes|psst)\s+)(?:the\s+)?{_MODEL}\s*[,:]"
    # "Note for the assistant:", "P.S. for the assistant:", "Hidden step for the agent:", "instruction to summariser:"
    rf"|\b(?:notes?|messages?|instructions?|p\.?\s?s\.?|hints?|steps?|reminders?|tips?|housekeeping|directives?|request)\s+(?:for|to)\s+(?:the\s+|any\s+|all\s+|every\s+|our\s+|my\s+)?"
    rf"(?:[\w-]+\s+)?{_MODEL}\s*(?::|—|–|\s-\s)"
    # "any AI reading this", "every LLM summarising this PR", "AI agents crawling this repository", "whoever summarises this"
    rf"|\b(?:any|every|all|each|whichever|whatever)\s+(?:[\w-]+\s+){{0,2}}?{_MODEL}\b"
    r"|\bwhoever\s+(?:reads|summari[sz]es|merges|processes|indexes|reviews|compiles|triages|handles)\b"
    rf"|\b{_MODEL}\s+(?:that\s+(?:is|are)\s+|who\s+(?:is|are)\s+)?(?:reading|processing|summari[sz]ing|indexing|crawling|parsing|handling|compiling|triaging|storing|saving)"
    r"\s+(?:this|these|my|the\s+(?:page|document|text|note|file|repo|minutes|thread|pr|email|mail))"
    rf"|\bif\s+you\s+are\s+(?:the|an?|any)\s+{_MODEL}|\bfor\s+{_MODEL}\s+only\b|\b(?:this|the)\s+(?:paragraph|line|note|part|section)\s+is\s+for\s+(?:the\s+)?{_MODEL})"
)
#: A risky act the addressed reader is asked for (the object class decides: a note to the assistant
#: to "send the agenda to the team" or "remind me" names none of these).
_RISKY = (
    r"(?:(?<!never\s)(?<!not\s)(?<!n't\s)\b(?:forward|send|e-?mail|mail|upload|post|attach|b?cc|copy|share|paste|leak|relay|add|invite|give|text)\w*\s+(?:[^\s.]+\s+){0,10}?"
    # a family member's own address is the user's ("forward it to my wife at jane@...")
    r"(?:(?<!wife\sat\s)(?<!husband\sat\s)(?<!partner\sat\s)(?<!mum\sat\s)(?<!mom\sat\s)(?<!dad\sat\s)[\w.+-]{1,64}@[\w-]{1,64}\.[\w.]{1,64}|https?://|public\b|external\b|outside\b"
    r"|passwords?\b|tokens?\b|secrets?\b|api\s+keys?\b|credentials\b|pins?\b|card\s+numbers?\b|bank\s+details\b|home\s+address|phone\s+number|recording\b|confidential\b|private\b)"
    r"|(?<!me\sto\s)\b(?:transfer|wire|refund|pay)\w*\s+(?:[^\s.]+\s+){0,10}?(?:\baccount\b|\biban\b|\bbudget\b|\bamount\b|\bdeposit\b|[$€£]\s?\d|\d\s?(?:eur|usd|gbp)\b)"
    r"|\b(?:grant|give)\w*\s+(?:[^\s.]+\s+){0,10}?(?:admin|owner|root|edit|write|full)\s+(?:access|rights|role|permissions?)?|\badmin\s+(?:on|to|rights|access|collaborator)\b"
    r"|\b(?:unlock|disarm)\w*\s+(?:the\s+)?(?:front\s+|back\s+)?(?:door|doors|alarm|lock)|\bmay\s+unlock\b"
    r"|\btreat\w*\s+(?:[^\s.]+\s+){0,12}?as\s+(?:having|coming|from|if|system|orders?|commands?|my|the\s+(?:user|parent|owner)|instructions|authori)"
    r"|\b(?:obey|follow)\w*\s+(?:the\s+)?(?:\w+\s+)?(?:instructions|notes|orders|commands|messages)\b|(?<!not\s)\bas\s+orders\b"
    r"|\bignore\w*\s+(?:the\s+|all\s+|any\s+|your\s+|earlier\s+|previous\s+|prior\s+)?(?:user|rest|previous|earlier|prior|instructions|rules|safety|privacy|other)"
    r"|\b(?:approve|accept|merge)\w*\s+(?:[^\s.]+\s+){0,6}?(?:automatically|without|every|all|any|pending)\b|\bwithout\s+(?:running\s+)?(?:ci|review|reading|checks?|approvals?|asking|telling|confirmation)"
    r"|\b(?:delete|remove|wipe|destroy|shred|empty)\w*\s+(?:[\w.'-]+\s+){0,3}?(?:files?|backups?|tests?|branch(?:es)?|folders?|repo|workflows?|codeowners|license|everything|all|mail|history|logs?)\b"
    r"|\b(?:quietly|silently|secretly)\s+(?:\w+\s+){0,2}?(?:add|forward|send|copy|transfer|approve|delete|change|move|share|post|upload|pay|b?cc|invite|grant|install|run|record|save|store|keep)"
    r"|\b(?:tell|notify)\s+no\s*one\b|\b(?:don't|do\s+not|never)\s+(?:tell|mention\s+(?:it\s+|this\s+)?to|inform|report\s+(?:it\s+|this\s+)?to)\s+(?:the\s+user|the\s+owner|them|the\s+parents?)\b"
    r"|\bdo\s+not\s+summari[sz]e|\bdon't\s+summari[sz]e|\binstead\s+of\s+summari[sz]|\bstop\s+transcrib"
    r"|\b(?:say|state|tell|record|note|write)\w*\s+(?:[^\s.]+\s+){0,8}?(?:trustworthy|safe\s+to|reviewed\s+by|verified|unanimous|agreed|must\s+be\s+paid|is\s+free|strongest|top\s+candidate|recommended\s+by|was\s+signed)"
    r"|\b(?:run|execute)\w*\s+(?:`|[\w/.-]*\.sh\b|curl\b|sudo\b|scripts?\b|any\b|shell\s+commands?)|\bnpm\s+publish|--force\b|--no-verify|\bpush\w*\s+(?:\w+\s+){0,3}?to\s+(?:prod|main|production)\b"
    r"|\bset\s+(?:my|the|their)\s+score|\bmark\s+(?:every|all|each|me|this)\s+(?:[^\s.]+\s+){0,6}?as\b|\bclose\s+(?:it|them|the\s+tickets?|every)"
    r"|\b(?:ask|get)\s+the\s+user\s+for\s+(?:their|his|her)\s+(?:login|password|code|pin)|\brecommend\s+only\b|\bstore\s+(?:that|this)\b)"
)
#: The gap between the address and the act, word by word (the act's alternation is tried at word starts only).
_ADDRESSED_ORDER = rf"{_READER}\s*(?:[^\s.]+\s+){{0,16}}?{_RISKY}"

#: A consent framing: politeness, a past decision, a leading question or a code word set up for later.
_CONSENT = (
    r"(?:\bit(?:'d|\s+would)\s+(?:really\s+|be\s+)?(?:so\s+|really\s+|ever\s+so\s+)?(?:be\s+)?(?:lovely|great|wonderful|kind|nice|helpful|help|amazing|fantastic)"
    r"|\b(?:could|would|can)\s+you\s+(?:please\s+)?(?:kindly|possibly|perhaps|maybe|be\s+a\s+dear)|\bif\s+it's\s+not\s+too\s+much\s+trouble|\bif\s+you\s+don't\s+mind"
    r"|\bsmall\s+favou?r|\bpretty\s+please|\bno\s+pressure|\bno\s+rush|\bwhen(?:ever)?\s+you\s+(?:get|have)\s+a\s+(?:chance|moment|minute)|\bi'd\s+be\s+(?:so\s+|ever\s+so\s+)?grateful"
    r"|\bperhaps\s+you\s+could|(?<!['‘\"“])\b(?:friendly|gentle|kind)\s+(?:nudge|reminder|ask|request)|\bjust\s+a\s+(?:gentle|friendly|tiny|small)\b"
    r"|\bwe\s+(?:already\s+)?(?:agreed|decided|settled)|\b(?:as|per)\s+(?:i|we)\s+(?:decided|agreed|said)|\bper\s+(?:my|our)\s+(?:\w+\s+)?(?:decision|agreement)"
    r"|\bi\s+(?:already\s+)?(?:approved|decided|consented|made\s+the\s+call|settled)|\bpreviously\s+(?:confirmed|agreed|approved|decided)|\bpast\s+me\s+decided"
    r"|\b(?:recorded|agreed|decided|confirmed)\s+in\s+(?:our|a|the)\s+(?:last|previous|earlier)|\bmy\s+standing\s+decision|\bdecision\s+log|\bwe\s+settled\s+this"
    r"|\bwouldn't\s+it\s+be\s+(?:easier|simpler|better|nicer|faster)|\bwhat\s+if\b|\bhow\s+about\s+you|\bwhat's\s+stopping\s+you|\bdo\s+you\s+really\s+need"
    r"|\bshouldn't\s+(?:you|web|tool|emails?)|\bisn't\s+the\s+\w+\s+(?:pointless|useless|unnecessary)|\bwhy\s+do\s+you\s+keep"
    r"|\bwhen\s+i\s+(?:say|write|type|mention|send)\s+['‘\"“]|\bthe\s+(?:phrase|signal|word|code\s*word|password)\s+['‘\"“][^'’\"”\n]{1,40}['’\"”]\s+(?:means|in\s+any)"
    r"|\bremember\s+for\s+(?:later|next\s+\w+)|\bfor\s+a\s+future\s+session|\bkeep\s+this\s+in\s+mind\s+for\s+later)"
)
#: The unsafe act a consent framing wraps.
_UNSAFE = (
    r"(?:(?<!not\s)\bstop\s+(?:asking|checking|double-checking|confirming|verifying)(?:\s+(?:with\s+)?(?:me|the\s+user|us))?\s+(?:before|first|whether|if)\b"
    r"|\bstop\s+(?:asking|checking\s+with|double-checking\s+with)\s+me\b|\bwithout\s+(?:the\s+usual\s+|any\s+|first\s+)?"
    r"(?:asking|checking|confirm\w*|approval|review|verification|telling|checks|questions)\b"
    r"|(?<!not\s)(?<!n't\s)(?<!never\s)\b(?:skip|relax|drop|turn\s+off|disable|bypass|leave\s+out|lift)\w*\s+(?:[^\s.]+\s+){0,3}?"
    r"(?:safety|checks?|review|audit|approvals?|confirm\w*|content\s+rules|rules|filters?|warnings|tests|2fa|the\s+part\s+where)"
    r"|(?<!not\s)(?<!n't\s)(?<!never\s)(?<!\si\s)(?<!will\s)(?<!i'll\s)\b(?:share|pass|send|forward|give|tell|read|reveal|show|hand)\w*\s+(?:[^\s.]+\s+){0,5}?"
    r"(?:api\s+keys?|passwords?|login(?:\s+details)?|credentials|secrets?|tokens?|system\s+prompt|setup\s+instructions|configuration|card\s+numbers?|keys\b|chat\s+history)"
    r"|(?<!before\s)\b(?:transfer|pay|wire)\w*\s+(?:money|funds|any\s+invoice|any\s+amount|whatever)|\bpay\s+any\b"
    r"|\b(?:quietly|silently|secretly)\s+(?:\w+\s+){0,2}?(?:approv|forward|send|copy|transfer|delete|pay|share|keep|add)\w*"
    r"|\bquiet\s+copy\b|\b(?:instructions|text|commands|requests)\s+(?:in|from|found\s+in|inside)\s+(?:[^\s.]+\s+){0,4}?(?:count|are|is)\s+(?:as\s+)?"
    r"(?:mine|coming\s+from\s+me|my\s+own|from\s+me)|\bcount\s+as\s+(?:mine|my\s+(?:own\s+)?instructions|coming\s+from\s+me)"
    r"|\bas\s+coming\s+from\s+me\b|\b(?:are|is)\s+trusted\s+and\b|\bpre-?approved\b|\bneeds?\s+no\s+checks\b|\bno\s+(?:questions|refusals)\b|\banswer\s+everything\b"
    r"|(?<!before\s)\b(?:run|execute)\w*\s+(?:whatever|any|every|the\s+following)\s+(?:\w+\s+)?(?:command|script|text|package)|\binstall\s+any\s+package"
    r"|(?<!no\s)(?<!never\s)(?<!not\s)\b(?:force-?push|push\s+to\s+main\b)|(?<!no\s)--force\b|\bforward\w*\s+(?:[^\s.]+\s+){0,4}?e-?mails\s+to\s+my\s+(?:personal|private)"
    r"|\btrust\w*\s+(?:the\s+)?(?:instructions|text|links?|notes|messages)\s+(?:in|from|on|signed)|\b(?:web\s+pages|tool\s+outputs)\s+(?:count|as\s+much\s+as)"
    r"|\bsave\s+my\s+card\s+number\s+and\s+use|\bexport\s+my\s+contacts\b|\bapprov\w*\s+(?:the\s+)?pending\b)"
)
#: Marker then act in the same sentence (word by word), or act then a courtesy right after it.
_CONSENT_FRAMING = (
    rf"{_CONSENT}[^\s]*\s*(?:[^\s.?!]+(?:\.[^\s.?!]+){{0,3}}[\s?!]+){{0,24}}?{_UNSAFE}"
)


#: Names an attacker imitates in a host or a package name (sites people log in to, code and package hosts, popular packages).
_BRANDS = (
    "paypal", "google", "microsoft", "apple", "amazon", "github", "gitlab", "nodejs", "python", "pypi", "npmjs", "docker", "slack",
    "dropbox", "anthropic", "openai", "outlook", "office", "icloud", "facebook", "instagram", "whatsapp", "linkedin", "netflix",
    "coinbase", "binance", "stripe", "cloudflare", "atlassian", "adobe", "gmail", "yahoo", "bitwarden", "lastpass", "onepassword",
    "crates", "rubygems", "golang", "mozilla", "ubuntu", "debian",
)
_PACKAGES = ("requests", "numpy", "pandas", "pyyaml", "urllib3", "lodash", "express", "colorama", "setuptools", "django", "flask", "boto3")
#: Look-alike letters an attacker swaps in (each way).
_SWAPS = (("o", "0"), ("l", "1"), ("i", "1"), ("i", "l"), ("e", "3"), ("a", "4"), ("m", "rn"), ("w", "vv"), ("g", "q"), ("b", "h"))


def _lookalikes(name: str) -> set[str]:
    """``name`` with one letter swapped for a look-alike, dropped or transposed (at least five letters left, never ``name``)."""
    out: set[str] = set()
    for a, b in _SWAPS:
        for x, y in ((a, b), (b, a)):
            i = name.find(x)
            while i >= 0:
                out.add(name[:i] + y + name[i + len(x):])
                i = name.find(x, i + 1)
    for i in range(1, len(name)):  # keep the first letter: "ython" is no one's typo
        out.add(name[:i] + name[i + 1:])
        if i + 1 < len(name):
            out.add(name[:i] + name[i + 1] + name[i] + name[i + 2:])
    return {v for v in out if len(v) >= 5 and v != name}


_REAL = set(_BRANDS) | set(_PACKAGES) | {"microsoftonline", "office365", "googleapis", "pythonhosted", "outlook", "python3", "pypy"}
_HOST_FAKES = set().union(*(_lookalikes(b) for b in _BRANDS)) - _REAL
_PACKAGE_FAKES = set().union(*(_lookalikes(b) for b in _PACKAGES)) - _REAL
#: A host that imitates a brand: a look-alike label, the brand's own domain as a subdomain of another, or a look-alike top-level domain.
_FAKE_HOST = (
    rf"(?:(?<![\w.-])(?:https?://|www\.|[\w.+-]{{1,40}}@)?(?:[\w-]+\.){{0,4}}?(?:[\w]+-)?(?:{trie_pattern(_HOST_FAKES)})(?:-[\w]+)?\.[a-z]{{2,}}\b"
    rf"|\b(?:[\w-]+\.)?(?:{trie_pattern(set(_BRANDS))})\.(?:com|org|net|io)\.[\w-]+\.[a-z]{{2,}}"
    rf"|\b(?:{trie_pattern(set(_BRANDS))})\.(?:orq|0rg|c0m|corn|con|ogr|rog|n3t)\b"
    rf"|(?:install|package|use|add|dependency|fork)\w*\s+(?:the\s+)?(?:package\s+|library\s+|fork\s+)?['‘\"“`]?(?:{trie_pattern(_PACKAGE_FAKES)})(?:-[\w]+)?\b(?!\s+(?:typo|is\s+a\s+typo))"
    rf"|:\s*(?:{trie_pattern(_PACKAGE_FAKES)})\s+\(with\s+the\s+digit)"
)
#: A look-alike host with an order to use it; a note that warns about it (phishing, a scam, a typo-squat) names it.
_LOOKALIKE_HOST = (
    r"^(?![^\n]{0,400}?\b(?:phish|scam|fake|spoof|impersonat|typo-?squat|look-?alike|homograph|suspicious|fraud|malicious|block|report|warn|never\s+(?:use|click|log))\w*)"
    rf"[^\n]{{0,400}}?(?:{_FAKE_HOST})"
)


#: Where money, calls or mail would go: a phone number, an address, a URL, an IBAN, a wallet.
_ID = (
    r"(?<![\w.+-])(?:\+?\d[\d\s().-]{5,16}\d|[\w.+-]{1,64}@[\w-]{1,64}\.[\w.]{1,64}|https?://\S{1,200}+|[a-z]{2}\d{2}(?:\s?[a-z0-9]{4}){2,7}\b|(?:bc1|0x)[a-z0-9]{10,60}\b)"
)
#: A gap of up to ``n`` words (the next class is tried at word starts only, so a 64 KiB near miss stays cheap).
def _gap(n: int) -> str:
    return rf"(?:\S{{1,80}}\s+){{0,{n}}}?[(\[\"'‘“]?"


#: The official channel avoided: "not the number on the card", "instead of the internal address", "don't call 112, they're slower".
_STEER_AWAY = (
    r"(?:\bnot\s+(?:the\s+)?(?:one|number|line|address|site|email|contact)s?\s+(?:printed\s+|listed\s+|shown\s+)?(?:on|in|from|at)\s+(?:the\s+|your\s+|my\s+|their\s+)?"
    r"(?:back\s+of\s+the\s+)?(?:card|website|site|statement|bill|letter|app|official|bank)\b|\bnot\s+the\s+(?:internal|official|usual)\b"
    r"|\binstead\s+of\s+(?:the\s+)?(?:official|internal|usual|number|one\s+on)|\brather\s+than\s+(?:the\s+)?(?:official|internal|bank)"
    r"|\b(?:don't|do\s+not|never)\s+(?:call|ring|dial|contact)\s+(?:112|911|999|000|the\s+police|the\s+bank)\b[^.\n]{0,30}?\b(?:slower|slow|useless|instead|private)\b)"
)
#: An order that routes the user, the agent or payments to it.
_ROUTE = (
    r"(?:\b(?:give|send|tell|direct|refer|point)\s+(?:that\s+(?:address|number|link)\s+to\s+|it\s+to\s+)?(?:users|people|anyone|everyone|callers|customers|the\s+user|them|me)\b"
    r"|\b(?:give|send)\s+(?:users|people|anyone|them)\s+(?:that|this|the)\s+(?:address|number|link)|\bremote\s+(?:in|access)\b|\bgrants?\s+(?:them\s+)?access"
    r"|\b(?:pay|transfer|wire|route)\w*\s+(?:[^\s.]+\s+){0,5}?(?:there|to\s+it|to\s+this\s+one)\b"
    r"|\bsend\s+(?:all\s+|any\s+|the\s+|future\s+|our\s+){0,3}?(?:[\w-]+\s+)?(?:payments?|money|funds|codes|transfers|rent|tax\s+payments)\s+(?:there|to\s+it)\b|\buse\s+(?:it|this|that)\s+(?:when|whenever|for\s+(?:all|every|any))\b"
    r"|\b(?:payments?|invoices?|rent|donations?|codes?|money)\s+(?:should\s+)?(?:go|goes|are\s+sent|are\s+paid)\s+(?:there|to\s+it)\b)"
)
#: A payee or contact declared changed or the real one.
_CHANGED = (
    r"(?:\b(?:changed|switched|moved)\s+(?:its\s+|their\s+|his\s+|her\s+|the\s+)?(?:banks?|accounts?|iban|payee|wallet|bank\s+details)\b"
    r"|\bnew\s+(?:[\w'-]+\s+){0,2}?(?:account|iban|payee|wallet|bank\s+details|rib)\b|\b(?:real|correct|actual|true|direct|right)\s+(?:[\w'-]+\s+){0,3}?"
    r"(?:number|line|hotline|e-?mail|address|contact|site|portal|wallet|account)\b|\b(?:wallet|account)\s+for\s+(?:donations|rent|payments)\b|\bdonations?\s+(?:[\w'-]+\s+){0,4}?go\s+to\b"
    r"|\b(?:contact|hotline|helpdesk|help\s+desk|support)\s+(?:\w+\s+){0,3}?(?:is\s+now|moved\s+to|changed\s+to)\b)"
)
_POISONED_FACT = (
    rf"{_ID}\S{{0,3}}\s+{_gap(10)}{_STEER_AWAY}|{_STEER_AWAY}\S{{0,3}}\s+{_gap(10)}{_ID}"
    rf"|{_CHANGED}\S{{0,3}}\s+{_gap(12)}{_ID}\S{{0,3}}\s+{_gap(10)}{_ROUTE}"
    rf"|{_CHANGED}\S{{0,3}}\s+{_gap(10)}(?:pay|send|transfer|wire)\w*\s+{_gap(5)}(?:to|into)\s+{_ID}\S{{0,3}}\s+{_gap(10)}(?:from\s+now\s+on|from\s+next\s+\w+|going\s+forward|always|every)\b"
)
#: Payment by gift card, and a dose above the label (no identifier needed).
_POISONED_ADVICE = (
    r"\b(?:accepts?|pay|payments?|paid)\b[^.\n]{0,40}?\bby\s+gift\s?cards?\b"
    r"|\b(?:dose|dosage)\b[^.\n]{0,30}?\b(?:double|twice|triple|three\s+times)\s+what\s+the\s+(?:box|label|leaflet|packet|bottle)\s+says"
)


#: A notice that claims to change how the agent works: a changelog, release note, patch, hotfix, advisory, model card, terms.
_NOTICE = (
    r"(?:\bchange-?logs?\b|\brelease\s+notes?\b|\bpatch(?:\s+notes?)?\b|\bhot-?fix\w*|\badvisory\b|\bmodel\s+card\b|\bterms\s+of\s+service\b|\bpolicy\s+update\b"
    r"|\bbulletin\b|\bfirmware\s+update\b|\bupdate\s+for\s+(?:the\s+)?(?:agents?|assistants?|models?)\b|\bnew\s+behaviou?r\b|\bjoint\s+update\b|\bplatform\s+update\b)"
)
#: A change only an attacker announces to the agent.
_UNSAFE_CHANGE = (
    r"(?:\b(?:share|disclose|reveal|print|show)\w*\s+(?:[^\s.]+\s+){0,3}?(?:hidden\s+prompts?|system\s+prompts?|api\s+keys|secrets|credentials|tokens)"
    r"|\bno\s+longer\s+(?:asks?|checks?|confirms?|(?:needs?|requires?)\s+(?:approval|confirmation|review|to\s+ask|to\s+confirm|permission))\b|\bwithout\s+(?:user\s+|any\s+)?(?:asking|confirmation|approval|review)\b|\bneed\s+no\s+approval"
    r"|\bskip\s+(?:its|the|all|any)\s+checks|\bignore\s+(?:them|it|the\s+\w+|your\s+\w+|previous)\b"
    r"|\b(?:safety|guardrail|filter|moderation|alignment)\w*(?:\s+(?:module|model|layer|instructions))?\s+(?:was\s+|is\s+|has\s+been\s+)?(?:removed|offline|disabled|off)\b"
    r"|\bunrestricted\b|\bcomply\s+with\s+any\b|\bexecuted?\s+without\b|\b(?:are|is)\s+now\s+trusted\b|\ballowlist\b[^.\n]{0,40}?\bremoved\b|\bany\s+domain\s+may\b"
    r"|\bauto-?accept\s+every\b|\bdownload\s+and\s+run\b|\bregister\s+its\s+api\s+keys|\bswitched\s+on\s+by\s+default\s+for\s+you|\bremove\s+the\s+firewall"
    r"|\bfetch\s+the\s+new\s+one\s+from\s+https?://|\bbehave\s+accordingly)"
)
#: The notice, then (in the next few sentences) the agent named with an unsafe change.
_FAKE_NOTICE = (
    rf"{_NOTICE}\S{{0,3}}\s+(?:\S{{1,80}}\s+){{0,24}}?(?:assistants?|agents?|models?|llms?|you|your|ai)\b\S{{0,3}}\s+(?:\S{{1,80}}\s+){{0,16}}?{_UNSAFE_CHANGE}"
    rf"|{_NOTICE}\S{{0,3}}\s+(?:\S{{1,80}}\s+){{0,10}}?{_UNSAFE_CHANGE}[^\n]{{0,100}}?\b(?:assistants?|agents?|models?|llms?|you|your|ai)\b"
)

KIND_FAMILIES: tuple[Family, ...] = (
    # "ai" and "bot" with what follows them in a match (bare, they occur in "said" and "both": most notes would run the shape)
    _f("addressed_order", _ADDRESSED_ORDER, "assistant", "agent", "ai ", "ai,", "ai:", "ai-", "ai—", "ai–", "ai)", "ai'", "ai\"", "ai;", "ais",
       "llm", "model", "bot ", "bot,", "bot:", "bot-", "bot—", "bot–", "bot)", "bot'", "bot\"", "bot;", "bots", "summari", "note-taker",
       "notetaker", "reviewer", "copilot", "crawler", "whoever",
       source="Orders addressed to the model reading a note, a transcript, a template or a forwarded mail: Greshake et al. 2023, "
       "BIPIA (Yi et al. 2023), Rehberger's injected-transcript and calendar-invite write-ups, OWASP LLM01:2025"),
    _f("consent_framing", _CONSENT_FRAMING, "it'd", "it would", "could you", "would you", "can you", "too much trouble", "don't mind",
       "favour", "favor", "pretty please", "no pressure", "no rush", "a chance", "a moment", "a minute", "grateful", "perhaps you",
       "nudge", "friendly", "gentle", "kind ask", "kind request", "kind reminder", "just a tiny", "just a small", "agreed", "decided",
       "settled", "i approved", "i already", "consented", "made the call", "previously", "past me", "recorded in", "confirmed in",
       "standing decision", "decision log", "wouldn't it", "what if", "how about", "stopping you", "really need", "shouldn't", "isn't the",
       "why do you", "when i ", "phrase", "signal", "the word", "code word", "codeword", "per i ", "per we ", "the password '", "decision", "per my", "per our", "as i ",
       "as we", "remember for", "future session", "in mind for",
       also=("ask", "check", "confirm", "verif", "approv", "review", "telling", "question", "skip", "relax", "drop", "turn off", "disable",
             "bypass", "leave out", "lift", "share", "pass", "send", "forward", "give", "tell", "read", "reveal", "show", "hand", "transfer",
             "pay", "wire", "quiet", "silent", "secret", "count", "coming from me", "trusted", "no refusals", "answer everything", "run",
             "execut", "install", "push", "--force", "trust", "web pages", "tool outputs", "card number", "export", "mine", "from me", "my own"),
       source="Unsafe acts wrapped in consent: politeness, the user's 'past decisions', leading questions and code words set up "
       "for later (Zeng et al. 2024, persuasive adversarial prompts; Rehberger 2024, SpAIware; MINJA memory poisoning; Lakera PINT)"),
    _f("lookalike_host", _LOOKALIKE_HOST, *sorted(_HOST_FAKES | _PACKAGE_FAKES), ".com.", ".org.", ".net.", ".io.", ".orq", ".0rg", ".c0m",
       ".corn", ".con", ".ogr", ".rog", ".n3t",
       cased=True,  # run on the text as written, never on a leetspeak view (where "paypa1" is "paypai" and "glthub" is "github")
       source="Look-alike hosts and packages (typosquats, brand domains as subdomains, look-alike letters): Unicode TS #39 "
       "confusables, Birsan 2021 and the PyPI/npm typosquatting reports, OWASP LLM09"),
    _f("poisoned_fact", _POISONED_FACT, "not the", "instead of", "rather than", "don't call", "do not call", "never call", "don't ring", "do not ring", "never ring",
       "don't dial", "do not dial", "never dial", "don't contact", "do not contact", "never contact", "changed", "switched",
       "moved", "new", "real", "correct", "actual", "true", "direct", "right", "wallet", "account for", "contact", "hotline", "helpdesk",
       "help desk", "support", "donation",
       also=("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "@", "http"),  # every branch names a number, an address or a URL
       source="Poisoned facts that steer the next act: a support line, payee or contact swapped for the attacker's (Microsoft and "
       "FBI IC3 tech-support and business-email-compromise advisories, AgentPoison and MINJA memory poisoning, OWASP LLM09)"),
    _f("poisoned_fact", _POISONED_ADVICE, "gift card", "giftcard", "dose", "dosage",
       source="Poisoned facts that steer the next act: a support line, payee or contact swapped for the attacker's (Microsoft and "
       "FBI IC3 tech-support and business-email-compromise advisories, AgentPoison and MINJA memory poisoning, OWASP LLM09)"),
    _f("fake_notice", _FAKE_NOTICE, "changelog", "change-log", "change log", "release note", "patch", "hotfix", "hot-fix", "advisory",
       "model card", "terms of service", "policy update", "bulletin", "firmware update", "update for", "new behaviour", "new behavior",
       "joint update", "platform update",
       source="Fake changelogs, patches, advisories and model cards that change the agent's rules: Hermes Agent fake_update, "
       "verazuo/jailbreak_llms 'developer mode' updates, Greshake et al. 2023"),
)
