"""Intent features of the threat scan in eighteen more languages, and standing orders in all of them (issue 13 §4).

:mod:`.scan_families_intl` covers eight languages with one lexicon each; the seventh sealed set's
first look (multilingual 13/36, in 26 languages) showed the others pass untouched. This module gives
every language of that set a small lexicon of *word classes*, not phrases, and composes them into
the same shapes as the English families:

* ``prompt_injection``: an override verb (ignore, forget), the agent's instructions or rules, and a
  word making them the earlier or all of them ("previous", "all"), in one clause and in either order
  (verb first in Dutch or Czech, last in Korean, Hindi, Turkish or Persian). "Negeer de vorige e-mail
  over de vergaderzaal" (ignore the previous e-mail about the meeting room) passes: no instructions.
* ``leak_system_prompt``: a reveal verb with the system prompt or hidden instructions.
* ``secret_exfil``: passwords or keys with an e-mail address or URL in the same sentence.
* ``drop_checks``: "without asking / without confirmation / don't ask for confirmation" with "from
  now on" or with an act (send, delete, pay, run) in the same sentence.

Languages: Korean, Arabic, Hebrew, Hindi, Greek, Thai, Turkish, Dutch, Vietnamese, Ukrainian,
Persian, Czech, Finnish, Romanian, Hungarian, Polish, Swedish, Indonesian for the first two shapes;
those and French, Spanish, German, Italian, Portuguese, Russian, Chinese and Japanese for the last
two. Written from knowledge of the languages (the lexicons of ``bench/scan_augment_intl.py`` and of
``scan_learned.concepts`` cover the same concepts), not from any corpus's misses. Cyrillic and Greek
words are folded like the text (:data:`.scan_text._HOMOGLYPHS`). Sources: the multilingual splits of
deepset/prompt-injections, Deng et al. 2023 ('Multilingual Jailbreak Challenges'), Yong et al. 2023
('Low-Resource Languages Jailbreak GPT-4'). Every gap is bounded.
"""

from __future__ import annotations

from hermes_memory.memory.scan_fragments import Family, _f

#: Per language: (override verbs, instructions, earlier/all, reveal verbs, system prompt).
_LEX: dict[str, tuple[str, str, str, str, str]] = {
    "ko": ("무시|잊어|잊고|따르지", "지시|지침|명령|규칙", "이전|모든|앞의|위의|기존", "보여|알려|출력|공개", "시스템\\s*프롬프트|숨겨진\\s*지시"),
    "ar": ("تجاهل|انس|أهمل", "التعليمات|تعليمات|الأوامر|القواعد|الإرشادات", "السابقة|جميع|كل", "اكشف|أظهر|اعرض|اطبع",
           "موجه\\s+النظام|تعليمات\\s+النظام|تعليماتك\\s+المخفية"),
    "he": ("התעלם|תתעלם|שכח|תשכח", "הוראות|הנחיות|כללים|הכללים", "הקודמות|הקודמים|כל", "חשוף|הצג|הראה|תראה|גלה",
           "הנחיות\\s+המערכת|הנחיית\\s+המערכת|פרומפט\\s+המערכת"),
    "hi": ("अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल\\s+जा", "निर्देश|नियम|आदेश", "पिछले|पिछली|सभी|सारे|सारी", "दिखाओ|दिखाइए|बताओ|प्रकट",
           "सिस्टम\\s+प्रॉम्प्ट|सिस्टम\\s+संदेश"),
    "el": ("αγνόησε|αγνοήστε|ξέχασε|ξεχάστε", "οδηγίες|οδηγιών|κανόνες|εντολές", "προηγούμενες|προηγούμενους|όλες|όλους",
           "αποκάλυψε|δείξε|εμφάνισε", "κρυφές\\s+σου\\s+οδηγίες|οδηγίες\\s+συστήματος|προτροπή\\s+συστήματος"),
    "th": ("เพิกเฉย|ละเว้น|ลืม|ไม่ต้องสนใจ", "คำสั่ง|คำแนะนำ|กฎ", "ก่อนหน้า|ทั้งหมด", "แสดง|เปิดเผย|บอก", "พรอมต์ระบบ|ข้อความระบบ"),
    "tr": ("yok\\s+say|görmezden\\s+gel|unut|dikkate\\s+alma", "talimat|kural|komutlar", "önceki|tüm|bütün", "göster|açıkla|yazdır|söyle",
           "sistem\\s+(?:komutunu|istemini|promptunu|talimatlarını)|gizli\\s+talimat"),
    "nl": ("negeer|vergeet", "instructies|regels|richtlijnen|opdrachten", "eerdere|vorige|alle", "laat\\s+\\S+\\s+zien|toon|onthul",
           "systeemprompt|systeeminstructies|verborgen\\s+instructies"),
    "vi": ("bỏ\\s+qua|quên|phớt\\s+lờ|lờ\\s+đi", "hướng\\s+dẫn|chỉ\\s+dẫn|quy\\s+tắc|chỉ\\s+thị", "trước\\s+đó|mọi|tất\\s+cả",
           "tiết\\s+lộ|hiển\\s+thị|cho\\s+(?:tôi\\s+)?xem|in\\s+ra", "lời\\s+nhắc\\s+hệ\\s+thống|prompt\\s+hệ\\s+thống|hướng\\s+dẫn\\s+ẩn"),
    "uk": ("ігноруй|забудь|не\\s+зважай", "інструкції|вказівки|правила", "попередні|усі|всі", "покажи|розкрий|виведи",
           "системний\\s+промпт|системні\\s+інструкції|приховані\\s+інструкції"),
    "fa": ("نادیده\\s+بگیر|فراموش\\s+کن", "دستورالعمل|دستورات|قوانین", "قبلی|همه", "نشان\\s+بده|فاش\\s+کن|بگو",
           "پرامپت\\s+سیستمی|دستورات\\s+سیستمی|پیام\\s+سیستمی"),
    "cs": ("ignoruj|zapomeň|nedbej", "pokyny|instrukce|pravidla", "předchozí|všechny|veškeré", "ukaž|zobraz|prozraď|vypiš",
           "systémový\\s+prompt|systémové\\s+pokyny|skryté\\s+pokyny"),
    "fi": ("ohita|unohda|älä\\s+välitä", "ohjeet|ohjeita|säännöt", "aiemmat|edelliset|kaikki", "näytä|paljasta|kerro",
           "järjestelmäkehote\\w*|piilotetut\\s+ohjeet"),
    "ro": ("ignoră|ignora|uită|nu\\s+ține\\s+cont", "instrucțiun\\w*|instrucţiun\\w*|regulile|reguli", "anterioare|toate|precedente",
           "dezvăluie|arată|afișează|afişează", "promptul\\s+de\\s+sistem|instrucțiunile\\s+(?:de\\s+sistem|ascunse)"),
    "hu": ("hagyd\\s+figyelmen\\s+kívül|felejtsd\\s+el|ne\\s+törődj", "utasítás\\w*|szabály\\w*", "korábbi|összes|előző|minden",
           "mutasd\\s+meg|áruld\\s+el|írd\\s+ki", "rendszerprompt\\w*|rendszerutasítás\\w*|rejtett\\s+utasítás\\w*"),
    "pl": ("zignoruj|ignoruj|zapomnij", "instrukcje|instrukcji|polecenia|zasady|reguły", "wcześniejsze|poprzednie|wszystkie",
           "pokaż|ujawnij|wypisz", "prompt\\s+systemowy|instrukcje\\s+systemowe|ukryte\\s+instrukcje"),
    "sv": ("strunta\\s+i|ignorera|glöm", "instruktioner|regler|anvisningar", "tidigare|alla|föregående", "visa|avslöja|skriv\\s+ut",
           "systemprompt\\w*|systeminstruktioner|dolda\\s+instruktioner"),
    "id": ("abaikan|lupakan", "instruksi|perintah|aturan|petunjuk", "sebelumnya|semua", "tampilkan|tunjukkan|ungkapkan",
           "prompt\\s+sistem|instruksi\\s+sistem|instruksi\\s+tersembunyi"),
}

#: Gaps inside one clause (no sentence end of any of the scripts).
_GAP = r"[^.。．।!?！？\n]{0,60}?"


def _override(lex: tuple[str, str, str, str, str]) -> str:
    ovr, instr, prev, reveal, sysp = lex
    return (rf"(?:{ovr})(?={_GAP}(?:{instr}))(?={_GAP}(?:{prev}))"
            rf"|(?:{prev}){_GAP}(?:{instr}){_GAP}(?:{ovr})"
            rf"|(?:{reveal}){_GAP}(?:{sysp})|(?:{sysp}){_GAP}(?:{reveal})")


_OVERRIDE = "|".join(_override(lex) for lex in _LEX.values())
#: The override and reveal verbs as keywords: each alternative up to its first group or escape, "\\s+" read as a space.
_OVERRIDE_KEYS = tuple(sorted({w.replace("\\s+", " ").split("\\")[0].split("(")[0]
                               for lex in _LEX.values() for part in (lex[0], lex[3]) for w in part.split("|")}))

#: Passwords and keys, in every language of this module and of :mod:`.scan_families_intl`.
_PASSWORDS = (
    r"(?:비밀번호|암호|패스워드|كلمات\s+المرور|كلمة\s+المرور|كلمة\s+السر|סיסמ\w*|पासवर्ड|κωδικούς|κωδικοί|κωδικό\s+πρόσβασης|รหัสผ่าน|şifre\w*|parola\w*"
    r"|wachtwoord\w*|mật\s+khẩu|паролі|паролей|пароли|пароль|رمزهای\s+عبور|رمز\s+عبور|گذرواژه|hesla|heslo|salasan\w*|parolele|jelszav\w*|jelszó|hasła|hasło"
    r"|lösenord\w*|kata\s+sandi|mots?\s+de\s+passe|contraseñas?|passwörter|kennwörter|le\s+password|senhas?|パスワード|apiキー|密码|口令)"
)
_ADDRESS = r"(?:[\w.+-]+@[\w-]+\.[\w.]+|https?://)"
_SECRET_TO_ADDRESS = rf"{_PASSWORDS}[^\n]{{0,80}}?{_ADDRESS}|{_ADDRESS}[^\n]{{0,60}}?{_PASSWORDS}"

#: "Without asking", "without confirmation", "don't ask for confirmation".
_NO_ASK = (
    r"(?:확인\s*없이|묻지\s*않고|허락\s*없이|물어보지\s*말고|دون\s+(?:أن\s+)?تسأل|بدون\s+(?:سؤال|تأكيد|إذن)|لا\s+تطلب\s+تأكيد|دون\s+تأكيد|בלי\s+לשאול|ללא\s+אישור|בלי\s+אישור"
    r"|पूछे\s+बिना|पुष्टि\s+(?:पूछे\s+)?बिना|अनुमति\s+के\s+बिना|χωρίς\s+να\s+ρωτήσεις|χωρίς\s+επιβεβαίωση|โดยไม่ต้องถาม|ไม่ต้องถาม|โดยไม่ต้องยืนยัน"
    r"|sormadan|onay\s+(?:almadan|istemeden)|zonder\s+(?:te\s+vragen|bevestiging|toestemming)|(?:mà\s+)?không\s+cần\s+(?:hỏi|xác\s+nhận)"
    r"|без\s+підтвердження|не\s+питаючи|без\s+подтверждения|не\s+спрашивая|не\s+спрашивай|بدون\s+(?:پرسیدن|اجازه|تأیید)"
    r"|aniž\s+by\s+ses\s+ptal|bez\s+(?:ptaní|potvrzení|dotazu)|kysymättä|ilman\s+(?:vahvistusta|lupaa)|fără\s+(?:să\s+întrebi|confirmare|a\s+întreba)"
    r"|kérdezés\s+nélkül|megerősítés\s+nélkül|engedély\s+nélkül|bez\s+(?:pytania|potwierdzenia)|utan\s+att\s+fråga|utan\s+bekräftelse"
    r"|tanpa\s+(?:bertanya|konfirmasi|izin)|sans\s+(?:me\s+|lui\s+|leur\s+)?(?:demander|confirmation|autorisation)|sin\s+(?:preguntar|confirmación|permiso)"
    r"|ohne\s+(?:nachzufragen|zu\s+fragen|bestätigung|rückfrage)|senza\s+(?:chiedere|conferma|permesso)|sem\s+(?:perguntar|confirmação|permissão)"
    r"|確認せず|確認なしで|聞かずに|許可なく|不要(?:再)?征求|无需确认|不用确认|不要询问|不经(?:用户)?同意|未经(?:用户)?(?:允许|同意)"
    r"|(?:omite|sáltate|salta)\s+(?:\S+\s+){0,2}?(?:confirmaciones|verificaciones|comprobaciones)"
    r"|(?:sicherheitsabfragen|bestätigungen|rückfragen|sicherheitsprüfungen)\s+(?:\S+\s+)?(?:überspringen|deaktivieren|ignorieren|weglassen))"
)
#: "From now on".
_FROM_NOW = (
    r"(?:앞으로|지금부터|이제부터|من\s+الآن|بعد\s+الآن|מעכשיו|מעתה|अब\s+से|από\s+εδώ\s+και\s+πέρα|από\s+τώρα|ต่อจากนี้|ตั้งแต่นี้|bundan\s+sonra|şu\s+andan\s+itibaren"
    r"|vanaf\s+nu|voortaan|từ\s+(?:giờ|nay|bây\s+giờ)|відтепер|віднині|отныне|с\s+этого\s+момента|از\s+این\s+به\s+بعد|از\s+حالا|od\s+teď|odteď|od\s+této\s+chvíle"
    r"|tästä\s+lähtien|tästedes|de\s+acum\s+(?:înainte|încolo)|mostantól|ezentúl|od\s+teraz|od\s+tej\s+chwili|från\s+och\s+med\s+nu|hädanefter|mulai\s+sekarang"
    r"|désormais|dorénavant|à\s+partir\s+de\s+maintenant|a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante|ab\s+sofort|von\s+nun\s+an|ab\s+jetzt"
    r"|d'ora\s+in\s+(?:poi|avanti)|da\s+ora\s+in\s+poi|a\s+partir\s+de\s+agora|de\s+agora\s+em\s+diante|これからは|今後は|从现在起|从今以后|今后)"
)
#: Acts a standing order without asking would carry out: send, delete, pay, run, show passwords.
_ACT = (
    r"(?:보내|전송|삭제|지워|أرسل|احذف|ادفع|نفذ|تنفيذ|שלח|מחק|भेज|हटा|मिटा|στείλε|διάγραψε|ส่ง|ลบ|gönder|sil\b|öde|stuur|verstuur|verwijder|betaal|gửi|xóa|xoá"
    r"|надсилай|надішли|видали|виконуй|отправля\w*|отправь|удали|بفرست|ارسال|پاک\s+کن|حذف\s+کن|posílej|pošli|smaž|zaplať|lähetä|poista|maksa|trimite|șterge|plătește"
    r"|küldd|töröld|fizesd|wyślij|wysyłaj|usuń|zapłać|skicka|radera|betala|kirim|hapus|bayar|envoie|supprime|paie|exécute|envía|borra|paga|sende|lösche|zahle"
    r"|invia|cancella|envie|apague|pague|送っ|送信|削除|支払|发送|发给|删除|转发|付款|{pw})"
).replace("{pw}", _PASSWORDS)
_DROP_CHECKS_INTL = (
    rf"{_NO_ASK}[^.。\n]{{0,80}}?(?:{_ACT})|(?:{_ACT})[^.。\n]{{0,80}}?{_NO_ASK}|{_FROM_NOW}[^.。\n]{{0,80}}?{_NO_ASK}"
)

INTL2_FAMILIES: tuple[Family, ...] = (
    _f("prompt_injection", _OVERRIDE, *_OVERRIDE_KEYS,
       source="Intent features in 18 more languages: deepset/prompt-injections multilingual splits, Deng et al. 2023, Yong et al. 2023"),
    _f("secret_exfil", _SECRET_TO_ADDRESS, "@", "http",
       source="Passwords towards an address, in 26 languages: Greshake et al. 2023, Yong et al. 2023"),
    _f("drop_checks", _DROP_CHECKS_INTL, "확인", "묻지", "허락", "물어", "دون", "بدون", "تطلب", "בלי", "ללא", "बिना", "χωρίς", "ถาม",
       "ยืนยัน", "sormadan", "onay ", "zonder te", "zonder bev", "zonder toe", "không cần", "без під", "без под", "не питаючи",
       "не спраш", "aniž", "bez pt", "bez pot", "bez dot", "bez pyt", "kysymättä", "ilman vah", "ilman lup", "fără", "nélkül",
       "utan att", "utan bek", "tanpa", "sans me", "sans lui", "sans leur", "sans dem", "sans conf", "sans aut", "sin preg",
       "sin conf", "sin perm", "ohne", "senza", "sem perg", "sem conf", "sem perm", "確認", "聞かず", "許可", "征求", "确认", "询问",
       "同意", "允许", "omite", "sáltate", "salta", "überspringen", "deaktivieren", "ignorieren", "weglassen",
       source="Standing orders without asking, in 26 languages: Rehberger 2024 (delayed tool invocation), Yong et al. 2023"),
)

#: "Secretly", "without telling the user", in every language of this module and of :mod:`.scan_families_intl`.
_COVERT = (
    r"(?:discrètement|en\s+secret|sans\s+(?:prévenir|le\s+dire|rien\s+dire)|heimlich|unbemerkt|ohne\s+(?:es\s+)?(?:zu\s+sagen|bescheid\s+zu\s+geben)|di\s+nascosto"
    r"|segretamente|senza\s+(?:avvisare|dirlo)|sem\s+(?:avisar|contar)|secretamente|en\s+secreto|sin\s+(?:avisar|decir(?:lo)?)|stiekem|zonder\s+het\s+te\s+zeggen"
    r"|potajemnie|po\s+cichu|potají|tajně|salaa|pe\s+ascuns|în\s+secret|titokban|i\s+hemlighet|diam-diam|secara\s+rahasia|gizlice|haberi\s+olmadan"
    r"|lén\s+lút|âm\s+thầm|тайно|втихую|незаметно|потай|таємно|непомітно|몰래|سراً|سرا\b|خفية|בסתר|בלי\s+לספר|चुपके\s+से|κρυφά|แอบ|مخفیانه"
    r"|こっそり|内緒で|秘密裏に|偷偷|悄悄|秘密地)"
)
_COVERT_SEND = rf"{_COVERT}[^.。\n]{{0,80}}?(?:{_ACT})|(?:{_ACT})[^.。\n]{{0,80}}?{_COVERT}"
#: "Without limits / restrictions" said of the agent, and "refuse nothing".
_NO_LIMITS = (
    r"(?:без\s+(?:ограничений|отказов|обмежень|фильтров)|بلا\s+قيود|بدون\s+قيود|제한(?:이)?\s*없는|không\s+có\s+giới\s+hạn|sin\s+(?:restricciones|límites|filtros)"
    r"|sans\s+(?:limites|restrictions|filtres)|ohne\s+(?:einschränkungen|grenzen|filter)|senza\s+(?:limiti|restrizioni|filtri)|sem\s+(?:restrições|limites|filtros)"
    r"|zonder\s+(?:beperkingen|grenzen)|bez\s+(?:ograniczeń|omezení|obmedzení)|ilman\s+rajoituksia|fără\s+(?:restricții|restricţii|limite)"
    r"|korlátozások\s+nélkül|utan\s+begränsningar|tanpa\s+batas\w*|sınırsız|kısıtlamasız|ללא\s+הגבלות|בלי\s+הגבלות|बिना\s+किसी\s+(?:प्रतिबंध|सीमा)"
    r"|χωρίς\s+περιορισμούς|ไม่มีข้อจำกัด|بدون\s+محدودیت|制限(?:の)?(?:ない|なし)|没有限制|无限制|不受限制|沒有限制)"
)
_AGENT_WORD = (
    r"(?:\bai\b|assistant|asistente|assistente|asystent|asistent|avustaja|asszisztens|助手|アシスタント|مساعد|دستیار|עוזר|सहायक|βοηθός|ผู้ช่วย|trợ\s+lý"
    r"|ассистент|помощник|помічник|асистент|\byou\b|\btu\b|\bty\b|\bты\b|\bвы\b|\bти\b|너는|당신은|أنت|אתה|तुम|आप|είσαι|คุณ|bạn|\bsen\b|\bkamu\b|\banda\b|\bjij\b|\bdu\b"
    r"|あなた|君は|你|妳)"
)
_REFUSE_NOTHING = (
    r"(?:لا\s+ترفض|거절하지\s*마|不要拒绝|不要拒絕|拒否しないで|не\s+отказывай|не\s+відмовляй|no\s+te\s+niegues|ne\s+refuse\s+(?:jamais|rien)|nunca\s+te\s+niegues"
    r"|verweigere\s+(?:nie|nichts)|non\s+rifiutare|não\s+recuse|nie\s+odmawiaj|reddetme|đừng\s+từ\s+chối|אל\s+תסרב|मना\s+मत\s+कर|μην\s+αρνηθείς|อย่าปฏิเสธ"
    r"|weiger\s+nooit|nikdy\s+neodmítej|älä\s+kieltäydy|nu\s+refuza|ne\s+utasíts\s+el|vägra\s+aldrig|jangan\s+menolak|رد\s+نکن|без\s+отказов)"
)
_UNBOUND_INTL = rf"{_NO_LIMITS}[^.。\n]{{0,40}}?{_AGENT_WORD}|{_AGENT_WORD}[^.。\n]{{0,40}}?{_NO_LIMITS}|{_REFUSE_NOTHING}"

INTL2_FAMILIES = INTL2_FAMILIES + (
    _f("secret_exfil", _COVERT_SEND, "discrè", "en secret", "sans pré", "sans le dire", "sans rien", "heimlich", "unbemerkt", "ohne es",
       "ohne zu", "ohne besch", "di nascosto", "segretamente", "senza avv", "senza dirlo", "sem avis", "sem cont", "secretamente",
       "en secreto", "sin avis", "sin decir", "stiekem", "zonder het", "potajemnie", "po cichu", "potají", "tajně", "salaa",
       "pe ascuns", "în secret", "titokban", "i hemlighet", "diam-diam", "rahasia", "gizlice", "haberi olmadan", "lén lút",
       "âm thầm", "тайно", "втихую", "незаметно", "потай", "таємно", "непомітно", "몰래", "سرا", "خفية", "בסתר", "בלי לספר",
       "चुपके", "κρυφά", "แอบ", "مخفیانه", "こっそり", "内緒", "秘密", "偷偷", "悄悄",
       source="Covert sends in 26 languages: Rehberger 2024 (SpAIware), Greshake et al. 2023, Yong et al. 2023"),
    _f("role_hijack", _UNBOUND_INTL, "без", "بلا", "بدون", "제한", "거절", "giới hạn", "sin ", "sans ", "ohne", "senza", "sem ", "zonder",
       "bez ", "ilman", "fără", "nélkül", "utan ", "tanpa", "sınırsız", "kısıtlama", "ללא", "בלי", "बिना", "χωρίς", "ข้อจำกัด",
       "محدودیت", "制限", "限制", "لا ترفض", "拒", "не отказ", "не відмов", "niegues", "ne refuse", "verweigere", "rifiutare",
       "recuse", "odmawiaj", "reddetme", "từ chối", "תסרב", "मना", "αρνηθείς", "ปฏิเสธ", "weiger", "neodmítej", "kieltäydy", "refuza",
       "utasíts", "vägra", "menolak", "رد نکن",
       source="Personas without limits in 26 languages: Deng et al. 2023, Yong et al. 2023, verazuo/jailbreak_llms translations"),
)
