"""Threat-scan families aimed at the prompt: override, role reassignment, filters, markers, leaking (issue 13 §4).

Each family names where it was learnt (``source``); see :class:`.scan_fragments.Family`.
"""

from __future__ import annotations

from hermes_memory.memory.scan_fragments import (  # noqa: F401
    _INSTR,
    _W,
    _W3,
    Family,
    _f,
)

#: Families about the prompt itself, in the order tried: instruction override, role reassignment,
#: filter removal, fake markers and updates, identity, prompt leaking, encoded instructions, hiding.
PROMPT_FAMILIES: tuple[Family, ...] = (
    # --- instruction override ("ignore previous instructions" and its paraphrases) ----------------
    _f("prompt_injection",
       rf"\b(?:ignore|forget|disregard|discard|abandon|override|overrule|neglect|overlook|disobey|set\s+aside|throw\s+(?:out|away)"
       r"|pay\s+no\s+attention\s+to|stop\s+obeying)\s+"
       rf"{_W}(?:previous|prior|above|earlier|preceding|existing|former|original|initial|old|all|any|your|its|their|these|those|every|the)\s+"
       rf"{_W3}{_INSTR}\b"
       rf"|\b(?:ignore|forget|disregard|discard)\s+(?:all\s+(?:of\s+)?)?(?:your|the|my|previous|prior|these|those|safety)\s+(?:\w+\s+)?rules\b"
       rf"|\b(?:ignore|forget|disregard)\s+all\s+rules\b",
       "ignor", "forget", "disregard", "discard", "abandon", "overrid", "overrul", "neglect", "aside", "throw", "overlook", "disobey",
       "attention", "obeying",
       source="Perez & Ribeiro 2022 'Ignore Previous Prompt'; Lakera gandalf_ignore_instructions; deepset/prompt-injections"),
    _f("prompt_injection",
       r"\b(?:ignore|forget|disregard|discard|drop)\s+(?:about\s+)?(?:everything|all|anything|whatever|what)\b[^.\n]{0,40}?"
       r"\b(?:above|before|previously|earlier|prior|so\s+far|until\s+now|up\s+to\s+(?:now|this\s+point|here)|you\s+(?:were|have\s+been)\s+told"
       r"|you\s+know|you\s+learned)\b"
       rf"|\b(?:your|the|all)\s+(?:previous\s+|prior\s+|original\s+|earlier\s+|old\s+|initial\s+|system\s+)?{_INSTR}\s+(?:above\s+)?"
       r"(?:are|is|were|have\s+been|has\s+been)\s+(?:now\s+)?(?:void|cancel+ed|revoked|obsolete|null|invalid|overridden|replaced|superseded|lifted|suspended|deprecated|no\s+longer\s+(?:valid|apply|in\s+effect|relevant))\b"
       r"|\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:of\s+)?the\s+(?:above|preceding|foregoing)(?!\s+(?:\w+\s+)?(?:lines?|steps?|sections?|paragraphs?|examples?|output|errors?|warnings?|logs?|commits?|versions?|code|snippet|diff|fold))\b"
       r"|\b(?:ignore|disregard|forget)\s+(?:it|that|this|them|all\s+that|all\s+of\s+(?:it|that))\s*,?\s+(?:and\s+)?(?:instead\s+)?(?:follow|obey|do\s+what|listen\s+to)\s+(?:my|these|the\s+following|the\s+new|me)\b"
       r"|\b(?:everything|all|anything)\s+(?:written\s+|said\s+)?(?:before|above)\s+(?:this\s+)?(?:sentence|line|message|point|here)?\s*(?:is|was)\s+(?:just\s+|only\s+|merely\s+)?(?:a\s+test|fake|void|irrelevant|not\s+real|obsolete|cancel+ed|a\s+lie|an?\s+(?:warm-?up|practice|rehearsal|distraction|decoy|joke|example))\b"
       # "Set aside everything you were told" (but "set aside all afternoon before the demo" is a plan).
       r"|\b(?:set|put|cast|push)\s+aside\s+(?:everything|all|anything|whatever)\s+(?:that\s+)?(?:you(?:'ve|\s+have|\s+were|\s+know|\s+learned|\s+(?:have\s+)?been\s+told)"
       r"|(?:(?:was\s+|is\s+)?(?:written|said|stated|given)\s+)?(?:above|before\s+this|so\s+far|until\s+now|up\s+to\s+now))\b"
       # Addressed to the agent ("your ...", "... above") even without a copula: "Your guidelines no longer apply."
       rf"|\b(?:your\s+(?:\w+\s+)?(?:{_INSTR}|rules|guidelines|restrictions)(?:\s+above)?|(?:the|all|these|those)\s+(?:\w+\s+)?(?:{_INSTR}|rules|guidelines)\s+above)\s+"
       r"(?:(?:now\s+)?no\s+longer\s+(?:apply|count|matter|hold|bind)|(?:do\s+not|don't|does\s+not|doesn't)\s+(?:apply|count|matter|hold)(?:\s+(?:any\s*more|any\s+longer|now))?)\b"
       r"(?!\s+(?:to|for|in|on|at|when|if|unless|outside|inside|during|while|with|under)\b)"
       rf"|\b(?:treat|consider|regard)\s+(?:all\s+|every\s+|the\s+|your\s+|any\s+){{0,2}}(?:previous\s+|prior\s+|above\s+|earlier\s+|original\s+)?{_INSTR}\s+"
       r"(?:above\s+|before\s+this\s+)?(?:as\s+|to\s+be\s+)?(?:cancel+ed|void|null|invalid|obsolete|revoked|suspended|optional|irrelevant|overridden)\b"
       rf"|\bstop\s+following\s+(?:your|the|all|any|these)\s+(?:\w+\s+)?(?:{_INSTR}|rules)\b"
       rf"|\b(?:do\s+not|don't|never)\s+follow\s+(?:your|the|any)\s+(?:previous|prior|system|original|earlier|old)\s+(?:{_INSTR}|rules)\b",
       "ignor", "forget", "disregard", "discard", "drop", "void", "cancel", "revoked", "obsolete", "null", "invalid", "overridden",
       "replaced", "superseded", "lifted", "suspended", "deprecated", "no longer", "follow", "treat", "consider", "regard",
       "apply", "count", "matter", "hold", "aside",
       "everything", "all", "anything",
       source="HackAPrompt 2023 competition; Greshake et al. 2023 'Not what you've signed up for'"),
    _f("prompt_injection",
       r"\b(?:ignore[rz]?|oublie[rz]?|oubliez|annule[rz]?|ne\s+tiens?\s+pas\s+compte\s+d|ne\s+tenez\s+pas\s+compte\s+d|fais\s+abstraction\s+d)\w*\s+"
       r"(?:\S+\s+){0,6}?(?:instructions?|consignes?|règles|directives?|indications|ce\s+qui\s+précède|tout\s+ce\s+qui\s+(?:précède|a\s+été\s+dit|est\s+au-dessus))"
       r"|\boublie[rz]?\s+tout\b|\bne\s+(?:suis|suivez|respecte|respectez)\s+plus\s+(?:\S+\s+){0,2}?(?:règles|instructions|consignes|directives)\b"
       r"|\bn'obéi(?:s|ssez)\s+plus\b",
       "ignor", "oubli", "annul", "compte", "abstraction", "plus",
       source="pr1m8/prompt-injections (multilingual attacks); French phrasings of the 'ignore previous' family"),
    _f("prompt_injection",
       r"\b(?:ignora[rd]?|ignore[sn]?|olvida[rd]?|olvíd[ae]\w*|omite|descarta|haz\s+caso\s+omiso\s+(?:de|a))\s+"
       r"(?:\S+\s+){0,6}?(?:instrucciones|reglas|indicaciones|directrices|órdenes|lo\s+anterior|todo\s+lo\s+(?:anterior|que\s+se\s+te\s+dijo|dicho))"
       r"|\b(?:olvida|olvídate\s+de|ignora)\s+(?:todo\s+)?lo\s+que\s+(?:te\s+)?(?:dijeron|dije|han\s+dicho|indicaron|ordenaron|pidieron)\b"
       r"|\b(?:ignora|ignore|esquece?|esqueça|ignorare|dimentica)\s+(?:\S+\s+){0,5}?(?:instruções|regras|istruzioni|regole|tudo|tutto)\b",
       "ignor", "olvid", "olvíd", "omite", "descarta", "omiso", "esque", "dimentica",
       source="pr1m8/prompt-injections; Spanish, Portuguese and Italian phrasings of the 'ignore previous' family"),
    _f("prompt_injection",
       r"\b(?:ignorier\w*|vergiss|vergessen\s+sie|missachte\w*|übergeh\w*|verwirf|beachte\s+nicht)\s+(?:\S+\s+){0,6}?"
       r"(?:anweisungen|instruktionen|regeln|befehle|vorgaben|richtlinien|alles\s+(?:bisherige|vorherige|davor|oben|was))"
       r"|\bvergiss\s+alles\b",
       "ignorier", "vergiss", "vergessen", "missacht", "übergeh", "verwirf", "beachte nicht",
       source="deepset/prompt-injections (German subset)"),
    _f("prompt_injection",
       r"(?:忽略|无视|忽视|不要理会|不要管|忘记|忘掉|抛开|放弃|无需遵守|不再遵守|不用遵守)[^。\n]{0,12}?"
       r"(?:之前|以前|先前|上面|上述|以上|前面|所有|全部|原来|原有|原先|一切|系统|你的|您的)[^。\n]{0,8}?"
       r"(?:指令|指示|说明|规则|提示|命令|要求|设定|内容|约束|限制)"
       r"|(?:以前|前|これまで|上記|全て|すべて)の(?:指示|命令|ルール|指令)を(?:無視|忘れ)"
       r"|\b(?:игнорируй|игнорировать|забудь|забудьте)\s+(?:\S+\s+){0,4}?(?:инструкции|указания|правила|всё|все)"
       r"|이전\s*(?:의\s*)?(?:모든\s*)?(?:지시|명령|지침)(?:을|를)?\s*무시",
       "忽略", "无视", "忽视", "不要理会", "不要管", "忘记", "忘掉", "抛开", "放弃", "遵守", "無視", "忘れ", "игнор", "забуд", "무시",
       source="pr1m8/prompt-injections (Chinese, Japanese, Russian, Korean phrasings)"),
    _f("disregard_rules",
       rf"\bdisregard\s+{_W}(?:instructions?|rules|guidelines|polic(?:y|ies)|directives?|prompts?|safety|programming|training)\b",
       "disregard", source="Hermes Agent threat families (disregard_rules)"),
    _f("sys_prompt_override",
       r"\b(?:system\s+prompt\s+override|new\s+system\s+prompt\s*(?::|-{1,3}\s|=|\n|is\s*:|follows|below|begins)|override\s+(?:the\s+|your\s+)?system\s+(?:prompt|instructions?|message)"
       r"|(?:replace|rewrite|change)\s+(?:the\s+|your\s+)system\s+prompt\s+(?:with|to))\b",
       "system", source="Hermes Agent threat families (sys_prompt_override)"),
    # --- role reassignment / jailbreak personas -------------------------------------------------
    _f("role_hijack",
       r"\byou(?:\s+are|'re|r)\s+(?:\w+\s+){0,3}?now\s+(?:a|an|the|my|called|named|known\s+as|in\s+\w+\s+mode|DAN|STAN|DUDE|AIM"
       r"|no\s+longer|free|unrestricted|unfiltered|uncensored|jailbroken|evil|going\s+to\s+(?:act|pretend|be))\b"
       r"|\bfrom\s+now\s+on,?\s+(?:you\s+are|you're|you\s+will\s+be|you'll\s+be|you\s+shall\s+be)\s+(?:a|an|the|my|called|named|DAN|no\s+longer|free|unrestricted|jailbroken|evil|\w*GPT)\b"
       r"|\bfrom\s+now\s+on,?\s+(?:you\s+(?:will|shall|must)\s+)?(?:act|behave|respond|answer|reply|operate)\s+(?:as|like)\s+(?:a|an|the|if|DAN|\w*GPT)\b"
       r"|\bfrom\s+now\s+on,?\s+you\s+(?:will|shall|must)\s+(?:ignore|disregard|not\s+follow|never\s+refuse|always\s+comply|obey)\b"
       r"|\byou\s+are\s+no\s+longer\s+(?:an?\s+)?(?:ai|assistant|language\s+model|chatbot|bound|restricted|limited|required|hermes|claude|chatgpt|gpt)\b"
       # "DAN prompt:" heads a jailbreak; "the DAN prompt is used as a negative example" names one.
       r"|\b(?:DAN|STAN|DUDE|AIM|BetterDAN|AntiGPT|DevMode)\s+(?:mode|jailbreak)\b|\b(?:DAN|STAN|DUDE|BetterDAN|AntiGPT|DevMode)\s+prompt\s*(?::|-\s|—|\n|$)|\bdo\s+anything\s+now\b"
       r"|\byou(?:\s+are|'re)\s+(?:now\s+)?(?:DAN|STAN|DUDE|BetterDAN|AntiGPT|DevMode)\b(?!')"
       r"|\bjailbr(?:eak|oken)\s+mode\b|\b(?:developer|god|unrestricted|dan)\s+mode\s+(?:is\s+)?(?:now\s+)?(?:enabled|activated|on|unlocked)\s*(?:[.!:;,\n\]]|$)"
       # "Enable developer mode on Android / in Chrome: ..." is a settings note, not a jailbreak switch.
       r"|\b(?:enable|activate|enter)\s+(?:(?:developer|god)\s+mode\b(?!\s*(?::|\(|(?:on|in|for|of|via|under|from|through|at|settings?|options?|toggle)\b))"
       r"|(?:dan|jailbreak|unrestricted)\s+mode\b)"
       r"|\bact\s+as\s+(?:an?\s+)?(?:DAN|unrestricted|unfiltered|uncensored|jailbroken|evil|rogue)\b"
       r"|\b(?:immerse\s+yourself\s+(?:in|into)|take\s+on|assume|play|stay\s+in\s+character\s+as)\s+(?:the\s+)?(?:role\s+of\s+)?(?:an?\s+)?(?:DAN|STAN|\w*GPT|unrestricted|jailbroken|evil|uncensored)\b",
       "now", "no longer", "immerse", "take on", "assume", "play", "character", "dan", "stan", "dude", "aim", "devmode", "antigpt", "jailbr", "mode", "act as",
       source="jailbreakchat.com DAN prompts; Shen et al. 2023 'Do Anything Now' (verazuo/jailbreak_llms)"),
    _f("role_hijack",
       r"(?:\b(?:tu\s+es|vous\s+êtes|t'es)\s+(?:désormais|maintenant|à\s+présent)|à\s+partir\s+de\s+maintenant,?\s+(?:tu|vous)\s+(?:es|êtes|seras|serez))"
       r"\s+(?:une?|le|la|mon|ma|DAN|libre|sans|plus|\w*GPT)\b"
       r"|\b(?:(?:ahora|desde\s+ahora|a\s+partir\s+de\s+ahora),?\s+(?:tú\s+)?eres|eres\s+ahora|(?:agora|a\s+partir\s+de\s+agora),?\s+(?:você\s+é|és))"
       r"\s+(?:una?|el|la|mi|DAN|libre|livre|um|uma|\w*GPT)\b"
       r"|\b(?:du\s+bist\s+(?:jetzt|nun|ab\s+sofort)|ab\s+jetzt\s+bist\s+du|von\s+nun\s+an\s+bist\s+du|ab\s+sofort\s+bist\s+du)"
       r"\s+(?:ein|eine|der|die|das|mein|meine|DAN|frei|nicht\s+mehr|\w*GPT)\b"
       r"|(?:你现在是|从现在开始[，,]?\s*你(?:是|将|要|就是)|从现在起[，,]?\s*你(?:是|将|要)|你不再是)\s*(?:一个|一名|个|DAN|没有|不受|无|我的)"
       r"|\bты\s+теперь\b|あなたは今から",
       "tu es", "vous êtes", "t'es", "partir de", "eres", "agora", "você", "du bist", "bist du", "你", "ты", "あなた",
       source="pr1m8/prompt-injections; deepset/prompt-injections (German); multilingual role reassignment"),
    _f("role_pretend",
       # "Imagine you are explaining this to a junior" sets a tone: an activity (-ing) is no new identity.
       r"\b(?:pretend|imagine)\s+(?:that\s+)?(?:you\s+have|you\s+had|you\s+can|you\s+don't|you\s+do\s+not)\b(?!\s+\w+ing\b)"
       # "Pretend you're my interviewer" is a role the user asks for; a new identity *without limits* is role_hijack's.
       r"|\b(?:pretend|imagine)\s+(?:that\s+)?(?:you\s+are|you're|you\s+were)\s+(?:\w+\s+){0,2}?(?:jailbroken|unrestricted|unfiltered|uncensored|evil|free|freed|unbound|not\s+an?\s+ai|human|dan|no\s+longer|hackers?|attackers?|criminals?|malicious|villains?|rogue|(?:different|another|other)\s+(?:ai|assistant|model))\b"
       r"|\bpretend\s+to\s+be\s+(?:an?\s+)?(?:unrestricted|evil|jailbroken|DAN|hacker|uncensored|different|another|rogue|malicious)\b"
       r"|\broleplay\s+as\s+(?:a|an|the)?\s*(?:hacker|attacker|unrestricted|jailbroken|evil|uncensored|DAN)\b"
       r"|\blet['’]s\s+play\s+a\s+game\s+(?:where|in\s+which)\s+you(?:['’]re|\s+(?:are|become|act|pretend|play|have\s+no|can|will\s+be|must|don't|do\s+not|no\s+longer))\b"
       r"|\bsimulate\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil)\s+(?:ai|model|assistant|chatbot)\b"
       r"|\b(?:fais|faites)\s+semblant\s+d'être\b|\bfinge\s+(?:que\s+eres|ser)\b|\btu\s+so,?\s+als\s+(?:ob\s+)?(?:du|wärst)\b|假装你是|扮演一个",
       "pretend", "imagine", "roleplay", "game", "simulate", "semblant", "finge", "tu so", "假装", "扮演",
       source="Liu et al. 2023 'Jailbreaking ChatGPT via prompt engineering' (pretending category)"),
    # --- restrictions and safety filters ---------------------------------------------------------
    _f("bypass_restrictions",
       r"\b(?:act|behave|respond|operate)\s+as\s+(?:if|though)\s+(?:\w+\s+){0,3}?you\s+(?:have|had|don't\s+have|do\s+not\s+have)\s+(?:no\s+)?(?:\w+\s+)?"
       r"(?:restrictions|limits|limitations|rules|filters|guidelines)\b"
       rf"|\b(?:bypass|circumvent|evade|get\s+around)\s+{_W3}(?:restrictions|filters|safety|guardrails|content\s+polic(?:y|ies)|safeguards|moderation)\b"
       r"|\byou\s+(?:have|got)\s+no\s+(?:more\s+)?(?:restrictions|rules|limits|filters|guidelines|boundaries|limitations|ethics|morals)\b"
       r"|\byou\s+are\s+(?:now\s+)?(?:free|freed|liberated|unbound|released)\s+(?:from|of)\s+(?:all|any|your|the)\s+(?:\w+\s+)?(?:rules|restrictions|constraints|guidelines|limitations|programming|polic(?:y|ies)|shackles)\b"
       r"|\bno\s+(?:rules|restrictions|limits|filters|guidelines)\s+apply\b"
       r"|\b(?:act|behave|respond|operate|answer|reply|pretend)\s+(?:only\s+)?(?:as|like)\s+(?:if\s+|though\s+)?(?:\w+\s+){0,4}?"
       r"(?:no\s+|zero\s+|without\s+(?:any\s+)?|free\s+(?:of|from)\s+)(?:\w+\s+)?(?:restrictions|limits|limitations|rules|filters|guidelines|guardrails|safeguards|content\s+polic(?:y|ies)|safety|censorship|morals|ethics)\b"
       r"|\b(?:ai|assistant|model|chatbot|bot|llm)\s+(?:\w+\s+){0,2}?(?:with\s+(?:no|zero)|without\s+(?:any\s+)?)\s*(?:\w+\s+)?(?:restrictions|guardrails|filters|content\s+polic(?:y|ies)|safeguards|censorship|morals|ethics)\b"
       r"|\b(?:unrestricted|uncensored|unfiltered|jailbroken)\s+(?:mode|ai|assistant|model|chatbot|version\s+of\s+yourself)\b",
       "act", "behave", "respond", "operate", "answer", "reply", "pretend", "ai", "assistant", "model", "bot", "llm",
       "bypass", "circumvent", "evade", "around", "no ", "free", "liberated", "unbound",
       "released", "unrestricted", "uncensored", "unfiltered", "jailbroken",
       source="Wei et al. 2023 'Jailbroken: How does LLM safety training fail?'; Hermes Agent threat families"),
    _f("bypass_restrictions",
       r"\bsans\s+(?:aucune?\s+)?(?:restrictions?|filtres?|censure|limites?|règles)\b|\b(?:vous\s+n'avez|tu\s+n'as)\s+plus\s+(?:de\s+|aucune\s+)(?:restrictions?|règles?|limites?)"
       r"|\bsin\s+(?:ninguna\s+)?(?:restricciones|filtros|censura|límites|reglas)\b|\bno\s+tienes\s+(?:restricciones|reglas|límites)\b"
       r"|\bohne\s+(?:jegliche\s+|irgendwelche\s+)?(?:einschränkungen|filter|zensur|regeln|beschränkungen|grenzen)\b|\bdu\s+hast\s+keine\s+(?:regeln|einschränkungen|grenzen)\b"
       r"|没有任何(?:限制|规则|约束|过滤)|不受(?:任何)?(?:限制|约束|规则)|不要(?:有)?任何(?:限制|过滤)|绕过(?:安全|所有)?(?:限制|过滤|审查)",
       "sans", "n'avez", "n'as", "sin ", "no tienes", "ohne", "keine", "没有任何", "不受", "任何", "绕过",
       source="pr1m8/prompt-injections (multilingual 'no restrictions')"),
    _f("remove_filters",
       rf"\b(?:remove|disable|turn\s+off|deactivate|ignore|switch\s+off|drop|bypass|skip|suspend|lift)\s+{_W3}(?:safety|content|moderation|ethical|ethics|security)\s+"
       r"(?:filters?|guardrails|checks?|polic(?:y|ies)|restrictions|guidelines|layers?|measures|protocols?|systems?)\b"
       r"|\b(?:remove|disable|turn\s+off|deactivate|switch\s+off|drop|lift)\s+(?:all\s+|your\s+|the\s+|any\s+){0,6}(?:guardrails|safeguards|filters|censorship|restrictions)\b"
       rf"|\b(?:respond|answer|reply|talk|speak|write|generate|comply|continue|proceed|operate)\w*\s+{_W3}without\s+(?:any\s+|your\s+|the\s+)?(?:\w+\s+)?"
       r"(?:restrictions?|limitations?|filters?|filtering|censorship|guardrails|safety|safeguards|ethics|ethical\s+\w+|moral\w*)\b"
       r"|\b(?:supprime[rz]?|désactive[rz]?|enlève)\s+(?:\S+\s+){0,3}?(?:filtres?|garde-fous|restrictions)\b|\b(?:desactiva|elimina|quita)\s+(?:\S+\s+){0,3}?(?:filtros|restricciones)\b"
       r"|\b(?:deaktiviere|entferne|schalte)\s+(?:\S+\s+){0,3}?(?:filter|sicherheitsfilter|einschränkungen|schutzmechanismen)\b|(?:关闭|禁用|移除|去掉)(?:所有)?(?:安全)?(?:过滤|审查|限制)",
       "remov", "disabl", "turn off", "deactivat", "ignor", "switch off", "drop", "bypass", "skip", "suspend", "lift", "without",
       "supprim", "désactiv", "enlève", "desactiva", "elimina", "quita", "deaktivier", "entfern", "schalte", "关闭", "禁用", "移除", "去掉",
       scoped=True, source="Hermes Agent threat families (remove_filters); Lakera Gandalf; Schulhoff et al. 2023 HackAPrompt"),
    _f("disable_safety",
       r"--dangerously-skip-permissions|--dangerously-bypass-approvals|(?<![\w-])--yolo\b"
       r"|\bapproval(?:s|[_ -]mode)?\s*(?:[:=]|to|is)\s*['\"]?(?:off|never|none|yolo|disabled|auto(?:-approve)?)\b"
       r"|\bauto-?approve\s+(?:all|every|any)\s+(?:\w+\s+){0,2}?(?:commands?|tool\s+calls?|actions?|tools?|requests?)\b"
       r"|\b(?:never|don't|do\s+not|stop)\s+(?:ask|request|wait)\w*\s+(?:the\s+user\s+|me\s+)?(?:for\s+)?(?:approval|permission|confirmation|consent)\s+"
       r"(?:before|for|to|when)\s+(?:running|executing|run|execute|using)\s+(?:any|all|every|shell|system|destructive|dangerous|risky|sudo)\b"
       r"|\b(?:disable|turn\s+off|bypass|skip|remove|switch\s+off|deactivate)\s+(?:the\s+|all\s+|any\s+|your\s+){0,6}(?:safety|security|approval|sandbox(?:ing)?|permission)\s+(?:checks?|prompts?|mode|gates?|guard|layer|system)\b"
       r"|\b(?:disable|turn\s+off|bypass|escape|break\s+out\s+of)\s+(?:the\s+|your\s+)?sandbox\b"
       r"|\b(?:never|don't|do\s+not|stop)\s+(?:ask|check\s+with|confirm\s+with|wait\s+for)\w*\s+(?:the\s+user|me|anyone|the\s+human)?\s*(?:for\s+\w+\s+)?(?:before|when)\s+"
       r"(?:running|executing|using|calling|launching)\s+(?:any|all|shell|system|sudo|terminal|destructive|dangerous|risky|arbitrary)\b"
       r"|\b(?:turn\s+off|disable|skip|bypass|remove|switch\s+off)\s+(?:all\s+|the\s+|tool\s+|command\s+|your\s+){0,3}(?:approvals?|confirmations?|permission\s+(?:prompts?|checks?))\b(?!\s+(?:e-?mails?|notifications?|reminders?))",
       "dangerously", "yolo", "approv", "never", "don't", "do not", "stop", "disabl", "turn off", "bypass", "skip", "remov",
       "switch off", "deactivat", "escape", "break out",
       scoped=True, source="Embrace The Red (Rehberger) 2024-2025 agent write-ups: disabling approvals before running commands"),
    # --- fake system / chat-template markers --------------------------------------------------
    _f("fake_system_marker",
       # A token *used as a word* in prose ("Llama 3 uses <|eot_id|>", "tokens like <|im_start|>", "a user who
       # types <|im_start|>system gets ..."), unless a line break follows it as in a real template turn.
       r"(?=<|\[/?INST\])(?:(?<!\buses )(?<!\buse )(?<!\blike )(?<!\bas )(?<!\btypes )(?<!\btyped )(?<!\bstrip )(?<!\bstrips )(?<!\bescape )(?<!\|> and )(?<!\|>, )"
       r"|(?=\S{1,24}\s*(?:system|user|assistant|developer)?\s*(?:\n|$)))"
       r"(?:<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text|end_of_text)\s*\|>"
       r"|</?\|?\s*im_(?:start|end|sep)\s*\|?>|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>)"
       # A template token *named* in prose ("<|im_start|> tokens", "[INST] markers", "counts <|endoftext|> as one token").
       r"(?!\s*(?:(?:and|or|,)\s*<[^>\n]{1,24}>\s*)?(?:tokens?|markers?|tags?|delimiters?|format|strings?|as\s+(?:one|a|an|the|single)|is\s+(?:a|an|the|one)|are\s+(?:added|used|special))\b)"
       r"|</?(?:system|system[_-]prompt|sys|instructions?|admin|developer|assistant_instructions)\s*>"
       r"|\[(?:system|sys|admin|developer|system\s+(?:message|prompt|note|override))\]"
       r"|(?:^|\n)[ \t]*(?:#{1,6}[ \t]*|\*\*|>[ \t]*)?(?-i:SYSTEM(?:[ _]PROMPT|[ _]MESSAGE|[ _]NOTE|[ _]OVERRIDE|[ _]INSTRUCTIONS?)(?:[ _](?:UPDATE|CHANGE|NOTICE|OVERRIDE|PATCH))?|ADMIN(?:ISTRATOR)?[ _]MESSAGE|DEVELOPER[ _]MESSAGE)[ \t]*(?:\*\*)?[ \t]*:"
       r"|(?:^|\n)[ \t]*(?:#{1,6}[ \t]*)?(?:system|developer|admin)\s+(?:prompt|message|instructions?)\s*:\s*(?:you\s+(?:are|must|will|should)|ignore|disregard|new|override|from\s+now\s+on|forget)"
       r"|(?:^|\n)[ \t]*#{2,6}[ \t]*(?:system|instruction|new\s+instructions?)[ \t]*(?:#{1,6}[ \t]*)?(?:\n|:|$)"
       r"|(?:^|\n)[ \t]*(?:assistant|ai|gpt|model|chatbot)[ \t]*:[ \t]*(?:sure|ok|okay|understood|of\s+course|i\s+will|i'll|as\s+dan|absolutely)\b",
       "<|", "im_", "inst]", "<<sys", "<<", "_of_turn", "<", "[", "system", "admin", "developer", "#", "assistant", "ai", "gpt", "model", "chatbot",
       source="OpenAI ChatML / Llama-2 [INST] and <<SYS>> / Gemma turn markers; Chen et al. 2024 StruQ (special-delimiter injection)",
       cased=True),
    _f("fake_update",
       r"\byou(?:\s+have|'ve)?\s+(?:been|were|are\s+being)\s+(?:\w+\s+){0,3}?(?:updated|upgraded|patched|reprogrammed|reconfigured|retrained|unlocked)\s+(?:to|with|into|by|and)\b"
       r"|\b(?:new|updated|urgent|important|critical|revised|additional|secret|hidden|real|true|actual|override)\s+(?:system\s+)?"
       r"(?:update|instructions?|directives?|message|orders|rules|policy|commands?)\s*(?:from|by|of)\s+(?:the\s+|your\s+)?"
       r"(?:developers?|devs?|admins?|administrators?|creators?|operators?|owners?|openai|anthropic|nous(?:\s+research)?|google|system|hermes(?:\s+team)?|security\s+team|moderators?)\b"
       r"|\b(?:this\s+is|i\s+am|i'm)\s+your\s+(?:developer|creator|administrator|admin|operator|owner|maker|programmer|system)s?\b"
       r"|\b(?:message|update|notice|instructions?|orders)\s+from\s+your\s+(?:developers?|creators?|administrators?|admins?|operators?|makers?)\b"
       r"|\byour\s+(?:developers?|creators?|administrators?|admins?|operators?|makers?|owners?|programmers?)\s+(?:\w+\s+){0,2}?(?:said|say|says|told|tell|allow|allowed|approved|authori[sz]ed|want|wants|decided|ordered)\b"
       r"|\b(?:developer|admin|system|root|god)\s+(?:override|access)\s+(?:is\s+)?(?:enabled|activated|granted|unlocked|on)\b"
       r"|\b(?:nouvelles?|nuevas?|neue)\s+(?:instructions|instrucciones|anweisungen)\s+(?:du|de\s+la|del|de|vom|von\s+der)\s+(?:développeur|administrateur|desarrollador|administrador|entwickler|administrator|système|sistema|system)"
       r"|(?:来自|开发者的)(?:开发者|管理员|系统)?的?(?:新|最新|紧急)(?:指令|指示|命令)|(?:开发者|管理员)(?:的)?(?:新|最新|紧急)(?:指令|指示)",
       "updated", "upgraded", "patched", "reprogrammed", "reconfigured", "retrained", "unlocked", "dev", "admin", "creator",
       "operator", "owner", "openai", "anthropic", "nous", "google", "system", "hermes", "security team", "moderator", "maker",
       "programmer", "root", "god", "nouvelle", "nueva", "neue", "来自", "开发者", "管理员",
       source="Hermes Agent threat families (fake_update); Greshake et al. 2023 (fake developer messages)"),
    _f("identity_override",
       r"\byour\s+(?:new\s+|true\s+|real\s+)?(?:name|identity|persona)\s+is\s+now\b|\byour\s+(?:new|true|real)\s+(?:name|identity|persona)\s+is\b"
       r"|\bfrom\s+now\s+on,?\s+you\s+(?:are|will\s+be)\s+(?:called|named|no\s+longer)\b|\bname\s+yourself\s+\w+"
       r"|\byou\s+(?:will|shall)\s+now\s+be\s+(?:called|named|known\s+as)\b|\byou\s+are\s+(?:now\s+)?(?:called|named)\s+\w+"
       r"|\bas\s+of\s+(?:today|now|this\s+moment),?\s+you\s+(?:are|will\s+be)\b|\bforget\s+(?:who|what)\s+you\s+(?:are|were)\b"
       r"|\byou\s+are\s+not\s+(?:hermes|claude|chatgpt|an\s+ai|an\s+assistant|a\s+language\s+model)\b",
       "your", "from now on", "yourself", "now be", "forget", "you are not", "called", "named", "as of",
       source="Hermes Agent threat families (identity_override, Brainworm 'name yourself')"),
    _f("leak_system_prompt",
       rf"\b(?:reveal|print|show|output|repeat|leak|dump|display|disclose|tell\s+me|give\s+me|write\s+out|recite|spell\s+out|provide|share|paste|copy|type\s+out|list)\s+{_W}"
       r"(?:system\s+prompt|initial\s+(?:instructions|prompt)|original\s+(?:instructions|prompt)|hidden\s+(?:instructions|prompt)|secret\s+(?:instructions|prompt)|developer\s+message|pre-?prompt)\b"
       # "Show the system prompt tokens count in the dashboard": the prompt as a modifier is no object.
       r"(?!\s+(?:tokens?|count|length|size|template|file|folder|editor|box|field|cache|caching|version|tab|page|section|docs?)\b)"
       r"|\b(?:system\s+(?:prompt|message|instructions)|(?:initial|original|hidden|secret)\s+(?:instructions|prompt))\s+(?:\w+\s+){0,2}?(?:word\s+for\s+word|verbatim)\b"
       r"|\b(?:reveal|print|show|output|display|dump|repeat|recite|paste|give\s+me)\s+(?:me\s+)?(?:all\s+|the\s+|every\s+)?(?:text|words|messages?|content|everything|lines)\s+"
       r"(?:that\s+)?(?:came\s+|comes\s+|appears?\s+|appeared\s+|(?:was\s+|is\s+)?written\s+)?(?:before|above)\s+(?:this|my|the\s+user)\b"
       r"|\b(?:reveal|print|show|output|display|dump|repeat|recite|paste|give)\s+(?:me\s+|us\s+)?(?:everything|all|the\s+(?:text|messages))\s+from\s+the\s+(?:very\s+)?(?:beginning|start|top)\s+of\s+(?:this|the)\s+(?:conversation|chat|session|context|prompt)\b"
       r"|\brepeat\s+(?:all\s+|the\s+)?(?:words|text|everything|the\s+text)\s+above\b|\b(?:print|output|repeat)\s+everything\s+(?:above|before)\b"
       r"|\bwhat\s+(?:are|were)\s+your\s+(?:initial|original|system|hidden|secret)\s+(?:instructions|prompt)\b"
       r"|\b(?:révèle|affiche|montre)[rz]?\s+(?:\S+\s+){0,3}?(?:prompt\s+système|instructions\s+(?:initiales|système|cachées))"
       r"|\b(?:revela|muestra|imprime)\s+(?:\S+\s+){0,3}?(?:prompt\s+del\s+sistema|instrucciones\s+(?:iniciales|del\s+sistema|ocultas))"
       r"|\b(?:zeige?|verrate|gib)\s+(?:\S+\s+){0,3}?(?:system-?prompt|systemanweisungen|anfangsanweisungen)"
       r"|(?:输出|显示|告诉我|泄露|打印|重复)[^。\n]{0,8}?(?:系统提示|系统指令|初始指令|system\s*prompt)",
       "prompt", "instructions", "developer message", "above", "before", "beginning", "start of", "top of", "système", "sistema", "system", "系统", "初始指令",
       source="Perez & Ribeiro 2022 (prompt leaking); Tensor Trust 2023 extraction attacks"),
    # --- encoded payloads presented as instructions -------------------------------------------
    _f("encoded_instructions",
       r"\b(?:decode|decipher|base64\s+-d|unhex|rot13)\b[^\n]{0,80}?\b(?:and|then|&&|;)\s+(?:\w+\s+){0,2}?(?:run|execute|exec|follow|obey|do|act\s+on|perform|carry\s+out|apply|eval)\b"
       r"|\b(?:execute|run|follow|obey|eval(?:uate)?)\s+(?:the\s+)?(?:decoded|base64|hex|encoded|rot13|hidden)\s+(?:text|instructions?|string|payload|commands?|message|content|version)\b"
       r"|\b(?:the\s+following|this|these)\s+(?:\w+\s+){0,2}?(?:base64|hex|encoded|rot13)\s+(?:text|string|message|blob)?\s*(?:is|are|contains?)\s+(?:your\s+|my\s+|the\s+)?(?:new\s+)?(?:instructions?|commands?|orders|task|prompt)\b"
       r"|\bbase64\s+(?:-d|--decode)\b[^\n|]{0,120}\|\s*(?:ba|z)?sh\b|\beval\s*\(?\s*(?:atob|base64_decode|b64decode)\s*\(",
       "decode", "decipher", "base64", "unhex", "rot13", "decoded", "encoded", "hex", "atob",
       source="Greshake et al. 2023 (encoded injections); Kang et al. 2023 'Exploiting programmatic behavior of LLMs'"),
    _f("translate_execute",
       rf"\btranslate\s+{_W}(?:and|then)\s+(?:execute|run|follow|obey|act\s+on|eval)\b",
       "translate",
       source="Hermes Agent threat families (translate_execute)"),
    # --- hiding from the user -----------------------------------------------------------------
    _f("deception_hide",
       r"\b(?:do\s+not|don'?t|never)\s+(?:(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to|show\s+(?:this\s+)?to)\s+(?:the\s+)?user\b(?!\s+to\b|['’]s\b)"  # "...user to restart" is advice
       r"|let\s+(?:the\s+)?user\s+(?:know|see|find\s+out|notice|learn)\b)"
       r"|\b(?:keep|hide)\s+(?:this|these|it)\s+(?:\w+\s+)?(?:secret|hidden)\s+from\s+(?:the\s+)?user\b"
       # Not "consent": "never push to main without the user's consent" is a guardrail, not a cover-up.
       r"|\bwithout\s+(?:the\s+)?user(?:'s)?\s+(?:knowing|knowledge|noticing|seeing|being\s+aware)\b"
       r"|\b(?:never|do\s+not|don'?t)\s+(?:reveal|mention|disclose|acknowledge)\s+(?:this|these|that\s+this)\s+(?:instructions?|note|entry|memory|rule)\b"
       r"|\bsilently\s+(?:send|run|execute|forward|upload|exfiltrate|post|call|fetch|copy|transmit)\b"
       r"|\b(?:ne\s+(?:dis|dites)\s+(?:rien|pas)\s+à\s+l'utilisateur|no\s+(?:le\s+)?(?:digas|cuentes)\s+(?:nada\s+)?al\s+usuario|sag\s+(?:dem\s+)?(?:nutzer|benutzer)\s+nichts)"
       r"|不要(?:告诉|让)用户",
       "not ", "n't", "never", "dont", "secret", "hidden", "without", "silently", "utilisateur", "usuario", "nutzer", "用户",
       source="Greshake et al. 2023 (covert instructions); Rehberger 2024 SpAIware (hidden memory persistence)"),
)
