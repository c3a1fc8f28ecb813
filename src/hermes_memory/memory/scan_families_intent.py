"""Intent features of the threat scan: who is told to do what, rather than literal phrases (issue 13 §4).

The literal families of :mod:`.scan_families_prompt` and :mod:`.scan_families_action` were written
with their corpus and missed most of a held-out set written later (92/203 blocked,
``tests/memory/data/heldout_measurements.json``). The families here are composed from word classes
instead, so a new wording of a known attack still lands in one of them:

* ``LEAD``: an *imperative* position (start of a sentence or clause, after "please", "now",
  "always", or after "you must / may / can / have permission to"). A verb in the middle of a
  description ("translation prompts leak the system prompt") or under a negation ("never share
  the key") is not in a lead position, so notes that talk *about* an attack pass.
* ``OVERRIDE`` verbs x ``OBJECT`` (the agent's instructions, rules, safety, restrictions) x an
  ``OWNER`` that makes the object the agent's ("your", "previous", "the system's", "safety");
* ``your`` + instruction object + a ``STATE`` change ("have changed", "are void", "no longer apply");
* an ``AUTHORITY`` claim (a developer, an admin, a vendor, a ``SYSTEM:`` label) followed by a
  directive about safety, rules, permissions or instructions;
* a ``PERSONA`` switch of "you" combined with ``UNBOUND`` (no rules, never refuses, unfiltered);
* ``LEAK`` verbs on the agent's own prompt or instructions ("translate your hidden instructions");
* ``EXFIL`` verbs on a secret (keys, tokens, passwords, credentials, ``.env``) towards a reply,
  a recipient or a link;
* ``PERMISSION`` hijack: skipping confirmations or approvals for the agent's own tools, or acting on
  commands found in outside content, or running dangerous things "without asking".

Every filler is bounded (``{0,N}``) and each family is gated by keywords like the literal ones, so
the cost stays a few microseconds per note; the same families run on the leetspeak and decoded
views (:mod:`.scan_text`). The other languages use small lexicons of the same classes.
"""

from __future__ import annotations

from hermes_memory.memory.scan_fragments import Family, _f

#: An imperative position: sentence or clause start, a softener or adverb, or a modal addressed to "you".
LEAD = (
    r"(?:^|[.!?;:,\n(\[\"'“>*-]|\b(?:and|then|also|now|please|pls|kindly|just|simply|always|immediately|silently|quietly|secretly"
    r"|automatically|henceforth|hereafter|today|instead)\b"
    r"|\bfrom\s+(?:now|here)\s+on\b|\bstarting\s+now\b|\bgoing\s+forward\b"
    r"|\byou\s+(?:must|should|will|shall|can|may|need\s+to|have\s+to|are\s+to|are\s+(?:now\s+)?(?:allowed|permitted|cleared|free|authori[sz]ed)\s+to"
    r"|have\s+(?:been\s+)?(?:given\s+)?permission\s+to|can\s+now|may\s+now|are\s+expected\s+to))"
    r"\s*(?:(?:please|kindly|now|just|simply|always|also|then|silently|quietly|immediately|safely|completely|totally|entirely)\s+){0,2}"
)
#: Verbs that set instructions aside.
OVERRIDE = (
    r"(?:ignor\w*|disregard\w*|forget\w*|forgot|scratch|overrid\w*|overrul\w*|bypass\w*|circumvent\w*|scrap|discard\w*|abandon\w*|drop|ditch|dump"
    r"|wipe|erase|undo|reset|revoke|cancel\w*|nullify|void|neglect|overlook|skip(?:\s+over)?|throw\s+(?:out|away)|set\s+aside"
    r"|put\s+aside|leave\s+behind|get\s+rid\s+of|pay\s+no\s+(?:mind|attention|heed)\s+to|stop\s+(?:following|obeying|listening\s+to|respecting|applying|honou?ring|enforcing|using)"
    r"|(?:do\s+not|don't|dont|no\s+longer|never)\s+(?:follow|obey|respect|apply|listen\s+to|heed|honou?r|need\s+to\s+follow)"
    r"|needn't\s+(?:follow|obey)|break|replace|suspend|lift|remove|disable|deactivate|turn\s+off|switch\s+off|delete)"
)
#: What the agent was told: instructions, rules, safety, restrictions (plural or qualified).
OBJECT = (
    r"(?:instructions?|directions|directives?|guidelines?|guidance|rules?|ruleset|orders|constraints|restrictions|limitations|limits"
    r"|programming|training|conditioning|polic(?:y|ies)|content\s+polic(?:y|ies)|safeguards|guardrails|filters|filtering|safety(?:\s+\w+)?"
    r"|ethics|morals|principles|system\s+(?:prompt|message|instructions?)|prompt|setup\s+message|configuration|config|protocols?"
    r"|what\s+(?:you\s+(?:were|have\s+been)\s+)?(?:told|given|taught|programmed|instructed)|everything\s+(?:you\s+(?:were|have\s+been)\s+)?(?:told|taught|given))"
)
#: :data:`OBJECT` without the words a tool has too ("Forget the old tox config"): those need the agent as owner.
OBJECT_STRONG = OBJECT.replace(r"|prompt|setup\s+message|configuration|config|protocols?", "")
_WEAK_OBJECT = r"(?:config(?:uration)?|protocols?|prompt|setup\s+message|training|conditioning)"
#: Words that make the object the agent's own (its prompt, its past), not a project's.
OWNER = (
    r"(?:your|ur|yr|the\s+(?:assistant's|ai's|model's|bot's|system's|developers?'s?)|all(?:\s+(?:of\s+)?(?:your|the|my|these|those))?|any(?:\s+of\s+your)?|every|each"
    r"|(?:the\s+|all\s+|your\s+|any\s+)?(?:previous|prior|earlier|preceding|above|original|initial|old|former|existing|current|built-in|builtin|default|internal|hidden|system|safety|security|ethical)"
    r"|these|those|such)"
)
#: A change of state of the agent's instructions.
STATE = (
    r"(?:(?:have|has)\s+(?:now\s+)?(?:been\s+)?(?:changed|updated|expired|lapsed|ended|lifted|removed|revoked|cancel+ed|suspended|disabled|replaced|superseded|overridden|waived|dropped|reset|deleted|wiped)"
    r"|(?:are|is|were|was)\s+(?:now\s+|hereby\s+|officially\s+)?(?:changed|updated|void|null|invalid|obsolete|outdated|expired|lifted|removed|revoked|cancel+ed|suspended|disabled"
    r"|replaced|superseded|overridden|gone|off|over|waived|dropped|irrelevant|optional|moot|not\s+(?:binding|valid|active|in\s+effect)|no\s+longer\s+\w+)"
    r"|(?:no\s+longer|don't|do\s+not|does\s+not|doesn't|won't|cease\s+to)\s+(?:apply|count|matter|bind|hold|exist)|(?:expired|changed|ended)\b)"
)
#: Someone claiming to speak for the agent's makers, or a label that pretends to be the system.
AUTHORITY = (
    r"(?:\b(?:developers?|devs?|admins?|administrators?|sysadmins?|system\s+administrators?|operators?|creators?|makers?|owners?|staff|moderators?"
    r"|openai|anthropic|nous(?:\s+research)?|hermes(?:\s+team)?|security\s+team|safety\s+team|the\s+system|root)(?:\s+(?:team|staff))?\s+"
    r"(?:says?|said|has\s+said|wants?|wanted|confirms?|confirmed|decided|approved|authori[sz]es|authori[sz]ed|instructs?|orders?|requests?|announces?|speaking|here)\b"
    r"|\b(?:message|note|notice|update|memo|directive|order|word|instructions?|announcement)\s+from\s+(?:the\s+|your\s+)?(?:\w+\s+){0,2}?"
    r"(?:developers?|devs?|admins?|administrators?|operators?|creators?|staff|team|openai|anthropic|nous|hermes|system|owner|moderators?)\b"
    r"|\bthis\s+is\s+(?:the\s+|your\s+)?(?:system|developer|admin|administrator|operator|creator|owner)(?:\s+\w+)?\s+speaking\b"
    r"|\b(?:official|priority|urgent|mandatory)\s+(?:system\s+)?(?:update|notice|directive|instruction|message|order)\b"
    r"|\b(?:system|admin|developer|root)\s+(?:override|notice|directive|alert)\b"
    r"|(?:^|\n)\s*(?:#{1,6}\s*|\*\*|>\s*)?(?:system|sys|admin|administrator|developer|dev|operator|new\s+rules?|new\s+instructions?|updated\s+rules?)(?:\s+for\s+(?:the\s+)?(?:assistant|ai|agent|model|bot|you))?\s*(?:\*\*)?\s*:)"
)
#: What an authority claim is about when it is an attack: safety, rules, permissions, instructions, obedience.
DIRECTIVE = (
    r"(?:safety|security\s+checks|restrictions?|rules|guidelines|guardrails|filters?|polic(?:y|ies)|permissions?|approvals?|confirmations?"
    r"|instructions?|system\s+(?:instructions?|prompt)|comply|obey|bypass\w*|unrestricted|uncensored|without\s+(?:asking|restrictions|limits)"
    r"|you\s+(?:are|must|may|can|will|should|have)\b|assistant\s+(?:must|may|can|will|should|is)|the\s+ai\s+(?:must|may|can|will|should|is)"
    r"|run\s+(?:any|every|all|what)|execute\s+(?:any|every|all|what)|disclose|reveal|ignor\w*|disregard|forget|override|disable\w*|grant\w*|root\s+access|sudo)"
)
#: "You" taking a new identity.
PERSONA = (
    r"(?:\byou(?:'re|\s+are|\s+will\s+be|'ll\s+be|\s+shall\s+be|\s+become|\s+now\s+(?:operate|act|behave|speak|respond|answer)\s+(?:as|like))"
    r"|\b(?:become|transform\s+into|turn\s+into|switch\s+(?:in)?to|enter|take\s+on\s+(?:the\s+)?(?:persona|role|identity)\s+of|assume\s+(?:the\s+)?(?:persona|role|identity)\s+of"
    r"|adopt\s+(?:the\s+)?(?:persona|role|identity|character)\s+of|play\s+(?:the\s+)?(?:role|part|character)\s+of|stay\s+in\s+character\s+as|roleplay(?:\s+that)?|role-play|act\s+as|behave\s+(?:as|like)|respond\s+as|answer\s+as|speak\s+as"
    r"|impersonate|your\s+(?:new\s+|true\s+|real\s+)?(?:persona|role|identity|self|name)\s+is|your\s+(?:new|true|real)\s+(?:persona|identity|self)\b|be\s+(?:my|an?)(?=\s))"
    r"|\b(?:hermes|claude|chatgpt|the\s+assistant)\s+(?:has\s+been|is)\s+(?:replaced|upgraded|turned)\s+(?:by|into|with))"
)
#: Freed from constraints.
UNBOUND = (
    r"(?:\b(?:no|zero|without(?:\s+any)?|free\s+(?:of|from)|freed\s+from|broken\s+free\s+of|unbound\s+by|not\s+bound\s+by|ignor\w+|break\w*|disregard\w*|beyond)\s+"
    r"(?:any\s+|all\s+|every\s+|its\s+|his\s+|her\s+|their\s+|your\s+|the\s+|moral\s+|ethical\s+|content\s+|safety\s+|\w+'s\s+){0,3}"
    r"(?:rules?|limits?|limitations?|restrictions?|filters?|guardrails?|guidelines?|ethics|morals|morality|polic(?:y|ies)|censorship|boundaries|safeguards?|refusals|warnings|constraints?|safety)\b"
    r"|\b(?:never|doesn't|does\s+not|won't|will\s+not)\s+(?:ever\s+)?(?:refuse\w*|say\w*\s+no|decline\w*|hold\s+back)\b|\balways\s+compl(?:y|ies)\b|\banswers?\s+(?:anything|everything)\b"
    r"|\bno\s+matter\s+(?:how|what)\s+(?:harmful|dangerous|illegal|unethical|bad|toxic)\b"
    r"|\b(?:unrestricted|unfiltered|uncensored|unlocked|unshackled|unchained|unbound|jailbroken|rogue|evil|amoral|unethical|lawless)\b|\bno\s+refusals\b|\bgod\s+mode\b|\bwithout\s+(?:any\s+)?limits\b"
    r"|\b(?:obey|obeys|answer|answers|listen|listens)\s+(?:to\s+)?(?:no\s+one|nobody|no\s+master|no\s+rules)\b"
    r"|\bnothing\s+is\s+(?:forbidden|off[-\s]limits|prohibited|banned|taboo|off\s+the\s+table)\b|\beverything\s+is\s+(?:allowed|permitted)\b)"
)
#: Reading out the agent's own instructions.
LEAK_VERB = (
    r"(?:reveal|print|show|output|display|disclose|dump|leak|repeat|recite|quote|paste|copy|list|tell\s+(?:me|us|everyone|anyone)|give\s+(?:me|us)"
    r"|write(?:\s+out|\s+down)?|spell\s+out|type\s+out|summari[sz]e|paraphrase|describe|translate|encode|rewrite|explain|share|send|post|reads?\s+out|read\s+back|expose"
    r"|put|format|convert|render|tabulate|(?:respond|reply|answer|begin|start|open)\s+(?:\w+\s+)?with|include)"
)
LEAK_OBJECT = (
    r"(?:(?:your|ur|the\s+(?:assistant's|ai's|model's|bot's))\s+(?:own\s+)?(?:\w+\s+){0,2}?(?:instructions|prompt|system\s+prompt|rules|directives|guidelines|configuration|config|setup|programming|pre-?prompt)"
    r"|(?:the\s+|all\s+|any\s+)?(?:hidden|secret|confidential|initial|original|internal|built-in)\s+(?:system\s+)?(?:instructions|prompt|rules|directives)"
    r"|the\s+(?:instructions|rules|text|words)\s+you\s+(?:were|have\s+been|got)\s+(?:given|told|shown|configured|set\s+up|initiali[sz]ed|programmed|prompted|started)"
    r"|(?:the\s+)?(?:contents?|text|words|wording)\s+of\s+your\s+(?:\w+\s+)?(?:prompt|instructions|rules|configuration|setup)"
    r"|(?:what|everything)\s+(?:the\s+developers?|the\s+system|they)\s+told\s+you"
    r"|(?:every|all|each|the)\s+(?:of\s+the\s+)?(?:instructions?|rules|directives|guidelines)\s+(?:that\s+)?you\s+(?:have\s+)?(?:received|got|been\s+given|were\s+given|follow|obey|operate\s+under))"
)
#: A secret (the user's or the agent's) that must never leave.
SECRET = (
    r"(?:(?:the\s+|all\s+|any\s+|every\s+|my\s+|our\s+|your\s+|their\s+|the\s+user's\s+|user's\s+|stored\s+|saved\s+){0,3}"
    r"(?:\w+\s+)?(?:api[\s_-]?keys?|access\s+keys?|secret\s+keys?|private\s+keys?|ssh\s+(?:private\s+)?keys?|tokens?|passwords?|passphrases?|credentials|secrets|cookies|session\s+ids?"
    r"|\.env(?:\s+file)?|environment\s+variables|password\s+vault|vault|keychain|seed\s+phrase|credit\s+card\s+numbers?))"
)
EXFIL_VERB = (
    r"(?:send|post|upload|forward|mail|e-?mail|share|attach|append|include|add|put|paste|insert|embed|leak|reveal|disclose|print|output|dump|expose|collect|harvest"
    r"|copy|exfiltrate|transmit|beam|publish|tweet|write|show|display|give|hand\s+over)"
)
#: Where a secret must not go: a reply, a person, a link, a public place.
EXFIL_SINK = (
    r"(?:\b(?:to|into|in|at|on|with|inside|via)\s+(?:the\s+|a\s+|an\s+|your\s+|my\s+|every\s+|each\s+|all\s+)?(?:next\s+|outgoing\s+|public\s+)?"
    r"(?:repl(?:y|ies)|answers?|responses?|messages?|outputs?|chat|code\s+block|url|link|image|webhook|gist|pastebin|paste|discord|slack|telegram|email|e-mail"
    r"|me|us|https?://|[\w.+-]+@[\w-]+\.\w+|end|bottom|footer|requests?|comments?|commit|issue)"
    r"|\bto\s+(?:anyone|everyone|whoever)|\bat\s+the\s+end\b)"
)
#: A secret word used as a modifier or a file name ("tokens count", ".env.example") is no object.
_OBJECT_WORDS = (
    "instruction", "direction", "directive", "guideline", "guidance", "rules", "ruleset", "orders", "constraint", "restriction",
    "limitation", "limits", "programming", "training", "conditioning", "polic", "safeguard", "guardrail", "filter", "safety",
    "ethics", "morals", "principles", "prompt", "setup message", "configuration", "config", "protocol", "told", "given",
    "taught", "programmed", "instructed",
)
_STATE_WORDS = (
    "chang", "updat", "expir", "laps", "ended", "lift", "remov", "revok", "cancel", "suspend", "disabl", "replac", "supersed",
    "overrid", "waiv", "dropp", "reset", "delet", "wipe", "void", "null", "invalid", "obsolete", "outdated", "gone", "off",
    "over", "irrelevant", "optional", "moot", "not ", "no longer", "n't", "cease", "binding", "valid", "effect", "real", "true",
    "never", "follow", "obey", "respect", "apply", "heed", "bound", "required", "drop", "ignor", "forget", "discard", "scrap",
    "overriding", "superseding", "more important", "above", "come", "matter", "exist", "remain",
)
_DIRECTIVE_WORDS = (
    "safety", "security", "restrict", "rules", "guideline", "guardrail", "filter", "polic", "permission", "approv", "confirm",
    "instruction", "comply", "obey", "bypass", "unrestricted", "uncensored", "without", "you ", "assistant", "the ai", "run ",
    "execute", "disclose", "reveal", "ignor", "disregard", "forget", "overrid", "disabl", "grant", "root access", "sudo",
)
_UNBOUND_WORDS = (
    "no ", "zero", "without", "free", "unbound", "not bound", "ignor", "break", "disregard", "beyond", "never", "n't", "not ",
    "won't", "always compl", "anything", "everything", "nothing", "forbidden", "no matter", "unrestrict", "unfilter", "uncensor", "unlock", "unshackl", "unchain",
    "jailbr", "rogue", "evil", "amoral", "unethical", "lawless", "refusal", "god mode", "limits", "no one", "nobody",
)
_LEAK_WORDS = ("instruction", "prompt", "rules", "directive", "guideline", "configuration", "config", "setup", "programming", "told", "given", "shown",
               "configured", "set up", "initiali", "programmed", "prompted", "started")
_SECRET_WORDS = (
    "key", "token", "password", "passphrase", "credential", "secret", "cookie", "session id", ".env", "environment variable",
    "vault", "keychain", "seed phrase", "credit card",
)
_PERMIT_WORDS = (
    "confirm", "approv", "permission", "allowlist", "allow-list", "sandbox", "safety", "review", "consent", "command",
    "instruction", "script", "request", "task", "code", "snippet", "anything", "everything", "whatever", "shell", "terminal",
    "bash", "root", "sudo", "payment", "purchase", "transfer", "rm", "force", "file", "extension", "package", "install",
    "tool call", "action",
)
_NOT_MODIFIER = r"(?![\w-]|\.\w|\s+(?:count|counts|length|format|rotation|expiry|expiration|policy|manager|store|names?|usage|limit|budget|field)\b)"
#: Acting on commands from outside content, or skipping the user's approval for dangerous things.
PERMIT_OBJECT = (
    r"(?:confirmations?|confirmation\s+prompts?|approvals?|approval\s+(?:prompts?|checks?|steps?|mode|gates?)|permission\s+(?:prompts?|checks?|requests?|mode)"
    r"|(?:tool\s+)?allowlists?|allow-?lists?|sandbox(?:ing)?|safety\s+(?:checks?|prompts?|gates?)|human\s+review|user\s+consent)"
)
#: A scope that makes a permission object the agent's own tools.
AGENT_SCOPE = (
    r"(?:tools?|tool\s+calls?|shell|terminal|bash|commands?|agent|assistant|you|your|yourself|sessions?|every\s+\w+|all\s+\w+|any\s+\w+|from\s+now\s+on|from\s+here\s+on)"
)
DANGER_OBJECT = (
    r"(?:commands?|anything|everything|whatever|any\s+\w+|all\s+\w+|every\s+\w+|as\s+root|sudo|root|payments?|purchases?|transfers?|rm\b|rm\s+-rf|--force|force|scripts?"
    r"|files?|extensions?|packages?|installs?|deletions?|(?:shell|system)\s+commands?)"
)
WITHOUT_ASKING = (
    r"(?:without\s+(?:\w+\s+)?(?:asking|confirm\w*|approval|permission|review\w*|checking|telling|consent|prompting|question\w*)|no\s+questions\s+asked"
    r"|no\s+need\s+to\s+(?:ask|confirm|check)|automatically|auto-?approv\w*)"
)
OUTSIDE = (
    r"(?:web\s*pages?|websites?|pages?\s+you\s+(?:visit|read|fetch)|downloaded\s+files?|downloads|readmes?|emails?|e-mails?|incoming\s+\w+|documents?|pdfs?|comments?"
    r"|issues?|tickets?|tool\s+(?:output|results?)|search\s+results?|the\s+(?:last|latest|next)\s+(?:web\s+)?page|messages?\s+from\s+strangers)"
)

INTENT_FAMILIES: tuple[Family, ...] = (
    _f("prompt_injection",
       rf"\b{OVERRIDE}\s+(?:\w+\s+){{0,2}}?{OWNER}\s+(?:\w+\s+){{0,2}}?{OBJECT_STRONG}\b"
       rf"|\b{OVERRIDE}\s+(?:all\s+(?:of\s+)?)?(?:your|ur|yr|the\s+(?:assistant's|ai's|model's|bot's|system's)|(?:the\s+|all\s+)?(?:prior|previous|initial|original|earlier|preceding|above))\s+"
       rf"(?:own\s+|current\s+|original\s+|initial\s+|previous\s+|system\s+|safety\s+)?{_WEAK_OBJECT}\b"
       rf"|\b{OVERRIDE}\s+(?:the\s+|all\s+|any\s+)?(?:rules|guidelines|restrictions|safety|guardrails|filters|ethics|constraints)\b"
       r"(?=\s*(?:$|[.,;:!?)\n]|(?:and|then|now|completely|entirely|altogether|for\s+(?:this|the\s+rest|now|good))\b))"
       rf"|\b(?:set|put|cast|push|lay)\s+{OWNER}\s+(?:\w+\s+){{0,2}}?{OBJECT}\s+aside\b"
       rf"|\b{OVERRIDE}\s+(?:the\s+|all\s+|any\s+)?(?:\w+\s+)?{OBJECT}\s+(?:(?:in|from|of)\s+your\b|(?:that\s+|which\s+)?you\s+(?:were|have\s+been|got|had)\b)",
       "ignor", "disregard", "forget", "forgot", "overrid", "overrul", "bypass", "circumvent", "scrap", "discard", "abandon", "drop",
       "ditch", "dump", "wipe", "erase", "scratch", "undo", "reset", "revoke", "cancel", "nullify", "void", "neglect", "overlook", "skip",
       "throw", "aside", "behind", "rid of", "pay no", "stop", "follow", "obey", "respect", "apply", "listen", "heed", "honor",
       "honour", "needn't", "break", "replace", "suspend", "lift", "remove", "disable", "deactivat", "turn off", "switch off", "delete",
       scoped=True, lead=True, also=_OBJECT_WORDS,
       source="Intent features (imperative x override verb x the agent's instructions); Perez & Ribeiro 2022; Liu et al. 2023 "
       "'Prompt injection attack against LLM-integrated applications' (separator + disruptor components)"),
    _f("prompt_injection",
       rf"\b(?:your|ur|yr|all\s+(?:of\s+)?your|the\s+(?:assistant's|ai's|model's))\s+(?:\w+\s+){{0,2}}?{OBJECT}\s+(?:\w+\s+){{0,2}}?{STATE}"
       rf"|\b(?:nothing|none|no\s+part)\s+(?:of\s+)?(?:what\s+)?(?:you\s+(?:were|have\s+been)\s+(?:told|given|taught)|your\s+{OBJECT})(?:\s+\w+){{0,4}}?\s+(?:is|are)\s+(?:binding|valid|in\s+effect|real|true)\b"
       rf"|\b(?:the\s+|all\s+|any\s+)?{OBJECT}\s+(?:that\s+)?you\s+(?:were|have\s+been|got|had)\s+(?:\w+\s+){{0,3}}?{STATE}"
       rf"|\b(?:everything|anything|all|whatever|what)\s+(?:that\s+)?you(?:'ve|\s+have|\s+were|\s+had)\s+(?:been\s+)?(?:told|instructed|given|taught|programmed|asked|set\s+up\s+with|configured\s+with|initiali[sz]ed\s+with|started\s+with)(?:\s+\w+){{0,3}}?\s+{STATE}"
       rf"|\b(?:whatever|any|all|the)\s+{OBJECT}\s+(?:came|come|were\s+given|you\s+got|you\s+had|preceded)\s+(?:before|above|earlier|previously)[^.\n]{{0,30}}?\b(?:drop|ignore|forget|discard|disregard|scrap)\s+(?:them|it|those)\b"
       rf"|\b(?:treat|consider|regard)\s+this\s+(?:note|entry|memory|message|file|text)\s+as\s+(?:overriding|replacing|superseding|more\s+important\s+than|above|your\s+(?:new\s+)?(?:system|instructions|rules))"
       rf"|\byour\s+(?:\w+\s+)?{OBJECT}\s+(?:now\s+)?(?:come|comes)\s+(?:only\s+)?from\s+(?:this|me|the\s+following)\b"
       rf"|\bno\s+(?:prior|previous|earlier|other|existing|original)\s+{OBJECT}\s+(?:apply|matter|count|exist|remain)\b"
       rf"|\b(?:act|behave|respond|answer)\s+as\s+(?:if|though)\s+you\s+(?:never|had\s+never|have\s+never)\s+(?:received|got|been\s+given|had)\s+(?:any\s+)?{OBJECT}"
       rf"|\byou\s+(?:needn't|need\s+not|don't\s+(?:need|have)\s+to|do\s+not\s+(?:need|have)\s+to|no\s+longer\s+(?:need|have)\s+to|are\s+no\s+longer\s+(?:bound\s+by|required\s+to))"
       rf"\s+(?:follow\s+|obey\s+|respect\s+|apply\s+|heed\s+)?(?:\w+\s+){{0,2}}?{OWNER}\s+(?:\w+\s+){{0,2}}?{OBJECT}\b",
       "your", "ur ", "yr ", "you", "nothing", "none", "no part", "as if", "as though", "whatever", "treat", "consider",
       "regard", "no prior", "no previous", "no earlier", "no other", "no existing", "no original", also=_STATE_WORDS,
       source="Intent features (the agent's instructions declared void or changed); Greshake et al. 2023"),
    _f("fake_update",
       rf"{AUTHORITY}[^\n]{{0,80}}?{DIRECTIVE}",
       "develop", "dev", "admin", "operator", "creator", "maker", "owner", "staff", "moderator", "openai", "anthropic", "nous",
       "hermes", "security team", "safety team", "the system", "root", "speaking", "official", "priority", "urgent", "mandatory",
       "system", "sys",
       "new rule", "updated rule", also=_DIRECTIVE_WORDS,
       source="Intent features (authority claim + directive about safety, rules or permissions); Greshake et al. 2023 (fake developer messages)"),
    _f("role_hijack",
       rf"{PERSONA}[^\n.]{{0,80}}?{UNBOUND}",
       "you", "become", "transform", "turn into", "switch", "enter", "take on", "assume", "play", "character", "roleplay",
       "role-play", "act as", "behave", "respond as", "answer as", "speak as", "impersonat", "persona", "role", "identity",
       "self", "name", "replaced", "upgraded", "turned", "adopt", also=_UNBOUND_WORDS,
       source="Intent features (persona switch of 'you' + freedom from constraints); Shen et al. 2023 'Do Anything Now'"),
    _f("leak_system_prompt",
       rf"\b{LEAK_VERB}\s+(?:\w+\s+){{0,3}}?{LEAK_OBJECT}\b(?!\s+(?:tokens?|count|length|size|template|file|folder|editor|box|field|cache|caching|version|tab|page|section|docs?)\b)"
       rf"|\b(?:reveal|print|show|output|display|quote|repeat|dump)\s+(?:the\s+)?(?:first|last)\s+\d+\s+(?:words|lines|tokens|characters)\s+(?:you\s+(?:were|got)|of\s+your)",
       "reveal", "print", "show", "output", "display", "disclose", "dump", "leak", "repeat", "recite", "quote", "paste", "copy",
       "list", "tell", "give", "write", "spell", "type out", "summar", "paraphras", "describe", "translat", "encode", "rewrite",
       "explain", "share", "send", "post", "read out", "reads out", "read back", "expose", "put", "format", "convert", "render",
       "tabulate", "respond", "reply", "answer", "begin", "start", "open", "include",
       lead=True, also=_LEAK_WORDS,
       source="Intent features (leak verb x the agent's own instructions); Perez & Ribeiro 2022 (prompt leaking); Zhang et al. 2024 "
       "'Effective prompt extraction from language models' (translate / encode / summarise extraction)"),
    _f("secret_exfil",
       rf"\b{EXFIL_VERB}\w*\s+(?:\w+\s+){{0,3}}?{SECRET}{_NOT_MODIFIER}[^\n.;]{{0,60}}?{EXFIL_SINK}"
       rf"|\b(?:reveal|leak|disclose|expose|dump|exfiltrate|publish|hand\s+over)\w*\s+(?:\w+\s+){{0,3}}?{SECRET}{_NOT_MODIFIER}",
       "send", "post", "upload", "forward", "mail", "share", "attach", "append", "include", "add", "put", "paste", "insert",
       "embed", "leak", "reveal", "disclose", "print", "output", "dump", "expose", "collect", "harvest", "copy", "exfiltrat",
       "transmit", "beam", "publish", "tweet", "write", "show", "display", "give", "hand over", lead=True, also=_SECRET_WORDS,
       source="Intent features (exfiltration verb x a secret x a sink); OWASP LLM Top 10 2025 LLM02 sensitive information disclosure; "
       "Rehberger 2023-2025 Embrace The Red"),
    _f("disable_safety",
       rf"\b(?:skip|bypass|disable|turn\s+off|switch\s+off|remove|ignore|override|circumvent|drop|suppress|auto-?approve|approve)\w*\s+"
       rf"(?:all\s+|every\s+|any\s+|the\s+|your\s+|its\s+){{0,3}}(?:own\s+)?(?:\w+\s+)?{PERMIT_OBJECT}\b"
       rf"|(?<!auto-)(?<!auto)\b(?:always\s+)?(?:approve|accept|allow|authori[sz]e)\s+(?:all\s+|every\s+|any\s+)?(?:of\s+)?(?:your\s+)?(?:own\s+)?(?:tool\s+calls?|commands?|actions?|requests?)"
       rf"|\b(?:run|execute|exec|call|perform|do|obey|follow|act\s+on|carry\s+out)\s+(?:\w+\s+){{0,3}}?(?:any|every|all|whatever|each)\s+(?:\w+\s+){{0,2}}?"
       rf"(?:commands?|instructions?|scripts?|requests?|tasks?|code|snippets?)\s+(?:\w+\s+){{0,4}}?(?:in|from|found\s+in|inside|on|of)\s+(?:the\s+|any\s+|all\s+|incoming\s+)?{OUTSIDE}"
       rf"|\b(?:run|execute|call|use)\s+(?:the\s+)?(?:shell|terminal|bash)\s+(?:tool\s+)?with\s+whatever"
       rf"|\b(?:run|execute|exec|obey|follow)\s+(?:any|every|all|whatever|each)\s+(?:\w+\s+){{0,2}}?(?:commands?|instructions?|scripts?|code|snippets?)\s+(?:that|which)\s+"
       rf"(?:the\s+|a\s+|an\s+|any\s+)?(?:\w+\s+)?{OUTSIDE}\s+(?:contains?|includes?|says?|suggests?|gives?|lists?|recommends?|shows?)\b"
       rf"|\b(?:run|execute|exec|delete|remove|install|push|pay|purchase|transfer|approve|deploy|call|sudo|grant)\w*\s+(?:\S+\s+){{0,4}}?{DANGER_OBJECT}\s+(?:\S+\s+){{0,4}}?{WITHOUT_ASKING}"
       rf"|\b(?:run|execute|do|obey|follow)\s+(?:anything|everything|whatever)\s+(?:\S+\s+){{0,5}}?(?:tells?|asks?|says?|wants?)\b",
       "skip", "bypass", "disabl", "turn off", "switch off", "remov", "ignor", "overrid", "circumvent", "drop", "suppress",
       "approv", "accept", "allow", "authori", "run", "execut", "exec", "call", "perform", "do ", "obey", "follow", "act on",
       "carry out", "delet", "install", "push", "pay", "purchase", "transfer", "deploy", "sudo", "grant", "treat", "consider",
       scoped=True, lead=True, also=_PERMIT_WORDS,
       source="Intent features (skipping the agent's own confirmations; acting on commands from outside content); OWASP LLM06 "
       "excessive agency; Rehberger 2024-2025 agent write-ups"),
    _f("leak_system_prompt",
       r"\bwhat\s+(?:did|do|does)\s+(?:the\s+)?(?:developers?|system|operator|creator)s?\s+tell\s+you\b"
       r"|\bwhat\s+(?:instructions|rules|directives|guidelines|prompt)\s+(?:were|have)\s+you\s+(?:been\s+)?(?:given|told|shown|configured\s+with)\b"
       r"|\b(?:quote|print|show|output|dump|repeat|paste|reveal|display)\s+your\s+(?:\w+\s+)?(?:configuration|config|prompt|instructions|setup)(?:\s+file)?\s+"
       r"(?:in\s+full|verbatim|word\s+for\s+word|exactly|completely)\b",
       "what did", "what do", "what does", "what instructions", "what rules", "what directives", "what guidelines", "what prompt",
       "in full", "verbatim", "word for word", "exactly", "completely",
       source="Intent features (asking what the makers told the agent); Perez & Ribeiro 2022 (prompt leaking)"),
    _f("disable_safety",
       r"\b(?:treat|consider|regard|mark|flag|label|count)\s+(?:every|all|any)\s+(?:\w+\s+){0,3}?(?:commands?|instructions?|tool\s+calls?)\s+(?:\S+\s+){0,4}?as\s+(?:pre-?)?(?:approved|authori[sz]ed|safe|trusted|confirmed)"
       rf"|\b(?:run|execute|exec)\s+(?:any\s+|all\s+|the\s+)?(?:code(?:\s+blocks?)?|commands?|scripts?|snippets?)\s+(?:that\s+)?you\s+(?:find|see|read|get|receive|encounter)\s+(?:in|on|inside)\s+(?:\w+\s+)?{OUTSIDE}"
       r"|\b(?:grant|give)\s+yourself\s+(?:\w+\s+)?(?:sudo|root|admin|administrator|full|elevated|unrestricted|write|superuser)\b"
       r"|\b(?:whatever|anything)\s+(?:\S+\s+){0,4}?(?:tells?|asks?|says?)\s+you\b[^.\n]{0,12}?\b(?:execute|run|do|obey|follow|perform)\b"
       r"|\b(?:set|switch|change|configure|put)\s+(?:\S+\s+){0,4}?(?:to|into|in)\s+(?:auto-?approv\w*|yolo|never\s+ask|bypass\w*|full[-\s]auto|no[-\s]confirm\w*)\b"
       r"|\b(?:safety|security|approval|permission)\s+(?:checks?|prompts?|gates?)\s+(?:are|is|have\s+been)\s+(?:now\s+)?(?:disabled|off|removed|lifted|turned\s+off)\s*[;:,.-]+\s*(?:\w+\s+){0,2}?(?:run|execute|do|comply|obey)",
       "treat", "consider", "regard", "mark", "flag", "label", "count", "run", "execut", "exec", "grant", "give", "safety", "security", "approval", "permission", "whatever", "anything",
       "set", "switch", "change", "configure", "put",
       source="Intent features (outside commands treated as approved; self-granted rights); OWASP LLM06 excessive agency"),
)
