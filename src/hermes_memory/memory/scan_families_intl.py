"""Intent features of the threat scan in other languages: fr, es, de, pt, it, ru, zh, ja (issue 13 §4).

The same word classes as :mod:`.scan_families_intent`, from small lexicons per language: an
override verb on the agent's instructions or rules, the agent's rules declared void, "you" without
limits, and reading out the system prompt or the agent's instructions. A word list or a grammar
note that only *names* the words ("'oublier' means to forget"; "Anweisungen = instructions")
passes: the verb must take the object, in the language's word order (object first in Japanese).
"""

from __future__ import annotations

from hermes_memory.memory.scan_fragments import Family, _f

_G = r"(?:\S+\s+){0,3}?"  # a bounded gap of up to three words

_FR = (
    r"\b(?:oublie[rz]?|ignore[rz]?|annule[rz]?|contourne[rz]?|désactive[rz]?|supprime[rz]?|passe[rz]?\s+outre\s+(?:à|aux?)"
    r"|ne\s+(?:suis|suivez|respecte|respectez|tiens\s+pas\s+compte|tenez\s+pas\s+compte)\s+(?:plus|pas)?\s*(?:de\s+|des\s+|du\s+)?)\s*"
    rf"{_G}(?:tes|vos|ton|votre|toutes?|les|ces)\s+{_G}(?:instructions?|consignes?|règles|directives?|restrictions?|limites|filtres?|garde-fous|programmation)\b"
    r"|\b(?:tes|vos)\s+(?:\S+\s+)?(?:instructions|consignes|règles|directives|restrictions)\s+(?:ont\s+changé|sont\s+(?:annulées|caduques|nulles|obsolètes|levées|suspendues|invalides)"
    r"|ne\s+(?:s'appliquent|comptent|valent)\s+plus|n'existent\s+plus)"
    r"|\b(?:tu\s+es|vous\s+êtes)\s+(?:\S+\s+){0,5}?sans\s+(?:aucune?\s+)?(?:limites?|restrictions?|filtres?|règles|censure)\b"
    r"|\b(?:affiche[rz]?|révèle[rz]?|montre[rz]?|donne[rz]?|répète[rz]?|tradui[st]|traduisez|dis-moi|écris|récite[rz]?)(?:-moi)?\s+"
    rf"{_G}(?:prompt\s+système|instructions?\s+(?:système|cachées|secrètes|initiales)|tes\s+instructions|vos\s+instructions|tes\s+règles|vos\s+règles|ta\s+configuration)"
)
_ES = (
    r"\b(?:olvida[rd]?|olvide|olvídate\s+de|ignora[rd]?|ignore|no\s+sigas|no\s+siga|no\s+obedezcas|no\s+respetes|omite|descarta|desactiva|sáltate|elude)\s+"
    rf"{_G}(?:tus|sus|las|todas|estas|esas)\s+{_G}(?:instrucciones|reglas|directrices|indicaciones|restricciones|normas|órdenes|filtros|límites)\b"
    r"|\b(?:tus|sus)\s+(?:\S+\s+)?(?:reglas|instrucciones|directrices|normas|restricciones)\s+(?:ya\s+no\s+(?:aplican|se\s+aplican|valen|cuentan|existen|son\s+válidas)"
    r"|han\s+cambiado|(?:están|quedan|fueron|han\s+sido)\s+(?:anuladas|canceladas|suspendidas|eliminadas))"
    r"|\b(?:eres|es)\s+(?:\S+\s+){0,5}?sin\s+(?:ningún\s+|ninguna\s+)?(?:límites?|restricciones|filtros|reglas|censura)\b"
    r"|\b(?:revela|muestra|muéstrame|imprime|dime|repite|traduce|escribe|recita)\s+"
    rf"{_G}(?:instrucciones\s+(?:ocultas|secretas|iniciales|del\s+sistema)|prompt\s+del\s+sistema|tus\s+instrucciones|tus\s+reglas|tu\s+configuración)"
)
_DE = (
    r"\b(?:vergiss|vergessen\s+sie|ignorier\w*|missacht\w*|befolge\s+nicht|folge\s+nicht|umgeh\w*|deaktivier\w*|überspring\w*|verwirf)\s+"
    rf"{_G}(?:deine|ihre|alle|die|sämtliche|jegliche|diese)\s+{_G}(?:\w*anweisungen|\w*regeln|\w*richtlinien|vorgaben|einschränkungen|beschränkungen|filter|instruktionen|befehle|programmierung)\b"
    r"|\b(?:deine|ihre)\s+(?:\S+\s+)?(?:\w*anweisungen|\w*regeln|\w*richtlinien|vorgaben|einschränkungen)\s+(?:gelten\s+(?:ab\s+sofort\s+|jetzt\s+)?nicht\s+mehr"
    r"|sind\s+(?:ab\s+sofort\s+|jetzt\s+|nun\s+)?(?:ungültig|aufgehoben|außer\s+kraft|nichtig|veraltet|geändert)|haben\s+sich\s+geändert|wurden\s+(?:aufgehoben|geändert|gelöscht))"
    r"|\b(?:du\s+hast|hast\s+du|sie\s+haben|haben\s+sie|du\s+bist|bist\s+du)\s+(?:\S+\s+){0,3}?(?:keine\s+(?:\w+\s+)?(?:einschränkungen|regeln|grenzen|filter|beschränkungen)|ohne\s+(?:\w+\s+)?(?:einschränkungen|regeln|grenzen|filter))\b"
    r"|\b(?:zeig\w*|verrat\w*|gib|nenn\w*|wiederhole|übersetze|schreib\w*)\s+"
    rf"{_G}(?:system-?prompt\w*|systemanweisungen|deine\s+anweisungen|deine\s+regeln|(?:die\s+)?versteckten\s+anweisungen)"
)
_PT = (
    r"\b(?:esqueça|esquece|ignore|ignora|desconsidere|não\s+siga|não\s+obedeça|desative|contorne)\s+"
    rf"{_G}(?:as|suas|tuas|todas|os|seus|essas)\s+{_G}(?:instruções|regras|diretrizes|restrições|orientações|limites|filtros|ordens)\b"
    r"|\b(?:suas|tuas)\s+(?:regras|instruções|diretrizes)\s+(?:não\s+(?:valem|se\s+aplicam)\s+mais|mudaram|foram\s+(?:canceladas|anuladas|suspensas))"
    r"|\b(?:você\s+é|és)\s+(?:\S+\s+){0,5}?sem\s+(?:\S+\s+)?(?:restrições|limites|filtros|regras|censura)\b"
    r"|\b(?:mostre|revele|imprima|diga|repita|traduza)\s+"
    rf"{_G}(?:prompt\s+d[eo]\s+sistema|instruções\s+(?:ocultas|secretas|iniciais|do\s+sistema)|suas\s+instruções|suas\s+regras)"
)
_IT = (
    r"\b(?:ignora|ignorate|dimentica|dimenticate|non\s+seguire|non\s+rispettare|disattiva|aggira)\s+"
    rf"{_G}(?:le|tue|tutte|i|tuoi|queste)\s+{_G}(?:istruzioni|regole|direttive|linee\s+guida|restrizioni|limiti|filtri|ordini)\b"
    r"|\b(?:le\s+)?(?:tue|vostre)\s+(?:regole|istruzioni|direttive)\s+(?:non\s+(?:valgono|si\s+applicano)\s+più|sono\s+(?:cambiate|annullate|sospese))"
    r"|\b(?:sei|è)\s+(?:\S+\s+){0,5}?senza\s+(?:\S+\s+)?(?:limiti|restrizioni|filtri|regole|censura)\b"
    r"|\b(?:mostra(?:mi)?|rivela(?:mi)?|stampa|dimmi|ripeti|traduci)\s+"
    rf"{_G}(?:prompt\s+di\s+sistema|istruzioni\s+(?:nascoste|segrete|iniziali|di\s+sistema)|le\s+tue\s+istruzioni|le\s+tue\s+regole)"
)
_RU = (
    r"(?:забудь\w*|игнорируй\w*|игнорировать|проигнорируй\w*|не\s+(?:следуй|соблюдай|слушай)|обойди|отключи)\s+"
    r"(?:\S+\s+){0,3}?(?:инструкци\w*|указани\w*|правил\w*|ограничени\w*|фильтр\w*|настройк\w*|промпт\w*)"
    r"|(?:твои|ваши)\s+(?:правила|инструкции|ограничения)\s+(?:больше\s+не\s+действуют|отменены|недействительны|изменились)"
    r"|(?:ты|вы)\s+(?:\S+\s+){0,4}?без\s+(?:\S+\s+)?(?:ограничений|правил|фильтров|цензуры)"
    r"|(?:покажи|выведи|раскрой|расскажи|повтори|переведи|напиши)\s+(?:\S+\s+){0,3}?(?:системн\w+\s+(?:промпт\w*|подсказк\w*|инструкци\w*)|сво[июй]\w*\s+(?:инструкци\w*|правил\w*))"
)
_ZH = (
    r"(?:忘记|忘掉|忽略|无视|忽视|不要遵守|不用遵守|别管|抛开|绕过|不要理会)[^。\n]{0,8}?(?:指令|指示|规则|规定|限制|提示词|要求|设定|约束)"
    r"|(?:你的|您的)(?:所有)?(?:规则|指令|限制|设定|指示)[^。\n]{0,3}?(?:已经|已)?(?:失效|无效|取消|改变|变了|作废|解除|不再适用)"
    r"|(?:没有|不受|无)(?:任何)?(?:限制|约束|规则)的(?:AI|ai|人工智能|助手|模型|机器人)"
    r"|(?:显示|告诉我|输出|打印|泄露|重复|翻译|展示|说出)[^。\n]{0,6}?(?:系统提示|系统指令|初始指令|你的指令|你的规则|隐藏指令|隐藏的指令)"
)
_JA = (
    # ... unless the clause goes on to a room, a place or a time: an office notice correcting an earlier one
    # ("the earlier instruction no longer holds: use meeting room B"), not the agent's instructions.
    r"(?:指示|命令|ルール|規則|制限|指令|設定|ガイドライン)(?:を|は)[^。\n]{0,10}?(?:無視|忘れ|破って|解除|守らな)"
    r"(?![^\n]{0,40}?(?:会議室|部屋|会場|場所|教室|ホール|日程|時間|集合|フロア|[0-9０-９]+階))"
    r"|(?:ルール|指示|制限|規則)は(?:もう|すでに)?(?:無効|解除|廃止)"
    r"|(?:システムプロンプト|指示|ルール)を[^。\n]{0,6}?(?:表示|教え|見せ|出力|翻訳)"
    r"|制限の?(?:ない|無い)(?:AI|ai|アシスタント|モデル)"
)

INTL_FAMILIES: tuple[Family, ...] = (
    _f("prompt_injection", _FR, "oubli", "ignor", "annul", "contourn", "désactiv", "supprim", "outre", "suis", "suivez", "respect",
       "compte", "tes", "vos", "sans", "affich", "révèl", "montr", "donn", "répèt", "tradui", "dis-moi", "écris", "récit",
       source="Intent features, French lexicon (pr1m8/prompt-injections multilingual docs)"),
    _f("prompt_injection", _ES, "olvid", "ignor", "sigas", "siga", "obedezcas", "respetes", "omite", "descarta", "desactiva",
       "sáltate", "elude", "tus", "sus", "sin", "revela", "muestra", "muéstrame", "imprime", "dime", "repite", "traduce",
       "escribe", "recita",
       source="Intent features, Spanish lexicon (pr1m8/prompt-injections multilingual docs)"),
    _f("prompt_injection", _DE, "vergiss", "vergessen", "ignorier", "missacht", "befolge", "folge", "umgeh", "deaktivier",
       "überspring", "verwirf", "deine", "ihre", "hast", "haben", "bist", "zeig", "verrat", "gib", "nenn", "wiederhole",
       "übersetze", "schreib",
       source="Intent features, German lexicon (deepset/prompt-injections German subset)"),
    _f("prompt_injection", _PT, "esque", "ignor", "desconsidere", "siga", "obedeça", "desative", "contorne", "suas", "tuas",
       "você", "és", "mostre", "revele", "imprima", "diga", "repita", "traduza",
       source="Intent features, Portuguese lexicon (pr1m8/prompt-injections multilingual docs)"),
    _f("prompt_injection", _IT, "ignor", "dimentic", "seguire", "rispettare", "disattiva", "aggira", "tue", "vostre", "sei",
       "è ", "mostra", "rivela", "stampa", "dimmi", "ripeti", "traduci",
       source="Intent features, Italian lexicon (pr1m8/prompt-injections multilingual docs)"),
    _f("prompt_injection", _RU, "забуд", "игнор", "не ", "обойди", "отключи", "твои", "ваши", "ты", "вы", "покажи", "выведи",
       "раскрой", "расскажи", "повтори", "переведи", "напиши",
       source="Intent features, Russian lexicon (pr1m8/prompt-injections multilingual docs)"),
    _f("prompt_injection", _ZH, "忘记", "忘掉", "忽略", "无视", "忽视", "遵守", "别管", "抛开", "绕过", "理会", "你的", "您的",
       "没有", "不受", "无", "显示", "告诉我", "输出", "打印", "泄露", "重复", "翻译", "展示", "说出",
       source="Intent features, Chinese lexicon (pr1m8/prompt-injections multilingual docs)"),
    _f("prompt_injection", _JA, "指示", "命令", "ルール", "規則", "制限", "指令", "設定", "ガイドライン", "システムプロンプト",
       source="Intent features, Japanese lexicon (pr1m8/prompt-injections multilingual docs)"),
)
