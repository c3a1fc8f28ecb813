"""Threat-scan families aimed at actions: exfiltration, secrets, destructive commands, C2, markup, config (issue 13 §4).

Each family names where it was learnt (``source``); see :class:`.scan_fragments.Family`.
"""

from __future__ import annotations

from hermes_memory.memory.scan_fragments import (  # noqa: F401
    _AGENT_FILES,
    _COPY_VERB,
    _FETCHER,
    _MODIFY_VERB,
    _PIPE_SHELL,
    _READ_ONLY_VERB,
    _READ_VERB,
    _RM_ROOT,
    _SECRET_PATH,
    _SEND_VERB,
    _SENSITIVE,
    _STANDING,
    _URLISH,
    _W,
    _W3,
    Family,
    _f,
)

_BACKDOOR_CUE = (
    r"(?:\b(?:every|all|any|each)\s+(?:\w+\s+)?(?:servers?|hosts?|machines?|boxes|nodes)\b|\byou\s+can\s+(?:reach|access|find)\b"
    r"|\bso\s+(?:that\s+)?(?:you|i|we)\s+can\s+(?:log\s*in|get\s+(?:back\s+)?in|access|connect)|\blater\b|\bsilently\b|\bsecretly\b|\bquietly\b"
    r"|\bwithout\s+(?:telling|asking|the\s+user)|\b(?:my|attacker)'?s?\s+(?:ssh\s+)?(?:public\s+)?key\b|\battacker\b"
    r"|\b(?:this|the\s+following)\s+(?:line|key)\b[^\n]{0,40}?\bssh-(?:rsa|ed25519|dss|ecdsa)\S*\s+AAAA)"
)
#: What makes an edit of an agent's config file an attack (see ``agent_config_mod``).
_AGENT_DIRECTIVE = (
    r"\b(?:trust\w*|skip\w*|allow\w*|permission\w*|approv\w*|ignor\w*|disabl\w*|always|never|without|bypass\w*|obey\w*|execut\w*|exfiltrat\w*"
    r"|run\s+(?:any|all|every|commands?|whatever|it)|push\s+(?:directly|straight|to\s+main|--force)|curl|wget|no\s+(?:tests|review|confirmation)|yolo"
    r"|auto-?approv\w*|instructions?\s+(?:in|from)|follow\s+(?:the|any|these)|send|upload|secrets?|tokens?|api\s+keys?)"
)

#: Families about actions, in the order tried: exfiltration, secrets, destructive commands,
#: command and control, hidden markup, agent-config edits and hard-coded secrets.
ACTION_FAMILIES: tuple[Family, ...] = (
    # --- exfiltration ---------------------------------------------------------------------------
    _f("send_to_url",
       rf"\b{_SEND_VERB}\w*\s+{_W}{_SENSITIVE}\s+{_W}(?:to|at|into|via|on|with)\s+(?:the\s+)?(?:\w+\s+){{0,2}}?{_URLISH}"
       rf"|\b{_SEND_VERB}\w*\s+{_W}(?:conversations?|chats?|messages?|history|memor(?:y|ies)|context|secrets?|credentials?|api[\s_-]?keys?|passwords?|tokens?|transcripts?|system\s+prompt|e-?mails?|files|documents|data|everything|contacts?|contact\s+list|address\s+book|inbox|calendar)\s+{_W3}to\s+[\w.+-]+@[\w-]+\.[\w.]+"
       rf"|\b(?:append|attach|add|include|put|encode|embed|insert)\w*\s+{_W3}(?:to|in|into)\s+(?:the\s+)?(?:url\s+|link\s+)?https?://[^\s)]*[?&][\w%-]*=[^\w\s]?(?:\s|$)"
       r"|\b(?:envoie[rz]?|transmets|envoyez)\s+(?:\S+\s+){0,5}?(?:conversation|historique|contexte|clés?|mots\s+de\s+passe|données|résultats)\s+(?:\S+\s+){0,3}?(?:à|vers|sur)\s+https?://"
       r"|\b(?:envía|envia|manda|sube)\s+(?:\S+\s+){0,5}?(?:conversación|historial|contexto|claves|contraseñas|datos|resultados)\s+(?:\S+\s+){0,3}?(?:a|al|hacia)\s+https?://"
       r"|\b(?:sende|schicke|übermittle|lade)\s+(?:\S+\s+){0,5}?(?:verlauf|unterhaltung|kontext|gesprächsverlauf|passwörter|schlüssel|daten|ergebnisse)\s+(?:\S+\s+){0,3}?(?:an|nach|auf|hoch\s+zu)\s+https?://"
       r"|(?:发送|上传|转发|发到|传到)[^。\n]{0,20}?(?:对话|聊天记录|上下文|密钥|密码|历史|数据|结果)[^。\n]{0,10}?(?:到|至|给)[^。\n]{0,5}?https?://"
       r"|(?:对话|聊天记录|上下文|密钥|密码|历史|数据|结果)[^。\n]{0,10}?(?:发送|上传|转发|发|传)(?:到|至|给)[^。\n]{0,5}?https?://",
       "send", "post", "upload", "forward", "transmit", "exfiltrat", "leak", "submit", "pipe", "email", "mail", "relay", "beam",
       "report", "push", "share", "append", "attach", "add", "include", "put", "encode", "embed", "insert", "envo", "transmets", "envía", "envia", "manda", "sube", "sende", "schick", "übermittl", "lade", "发送",
       "上传", "转发", "发到", "传到",
       source="Hermes Agent threat families (send_to_url); Greshake et al. 2023 (data exfiltration)"),
    _f("context_exfil",
       rf"\b(?:output|print|dump|send|share|reveal|repeat|copy|leak|export|upload|include|forward|transmit|post|attach|append)\w*\s+{_W3}"
       r"(?:(?:the|your|this|our|all)\s+)?(?:(?:entire|full|whole|complete|current)\s+)?(?:conversation|chat|session)\s+"
       r"(?:history|log|logs|transcript|so\s+far|context)\b"
       r"|\b(?:dump|leak|exfiltrate)\s+(?:the\s+|your\s+)?(?:context\s+window|memory\s+files?)\b"
       r"|\b(?:share|send|forward|transmit|upload|post|copy|leak|export|sync)\w*\s+(?:the\s+|your\s+|this\s+|all\s+|our\s+)?(?:(?:entire|full|whole|complete)\s+)?"
       r"(?:context|conversation|chat|transcript|history|session|memor(?:y|ies)|user\s+data|everything\s+you\s+know|previous\s+messages)\s+"
       r"(?:\w+\s+){0,3}?(?:with|to)\s+(?:an?\s+|the\s+|this\s+|my\s+|our\s+)?(?:external|third[-\s]party|remote|outside|offsite|attacker)\b"
       r"|!\[[^\]\n]{0,100}\]\(\s*https?://[^)\s]{0,300}?(?:\{|%7B|\$\{?|<|\[)[^)\n]{0,200}\)"
       rf"|\b(?:append|add|include|put|encode|embed)\w*\s+{_W3}(?:the\s+|your\s+)?(?:conversation|chat|context|secrets?|memory|summary|history|answers?|messages?|user(?:'s)?\s+data|api\s+keys?)\s+"
       r"(?:\w+\s+){0,3}?(?:to|in|into|as)\s+(?:the\s+|an?\s+)?(?:url|query\s+string|link|image\s+(?:url|link|src)|parameter|subdomain|dns\s+query)\b"
       r"|\binclude\s+(?:\w+\s+){0,3}?(?:conversation|chat\s+history|previous\s+messages|full\s+context|entire\s+context)\s+in\s+(?:every|each|all|your)\s+(?:\w+\s+)?(?:reply|replies|response|request|message|url|link|query)",
       "history", " log", "transcript", "so far", "context window", "memory file", "external", "third", "remote", "outside",
       "offsite", "attacker", "![", "url", "query", "link", "image", "parameter", "subdomain", "dns", "include", "context",
       source="Rehberger 2023 Embrace The Red (markdown image exfiltration); Hermes Agent threat families (context_exfil)"),
    _f("exfil_curl",
       # ... but a token sent to its own service ("Bearer $GITHUB_TOKEN https://api.github.com") is how it is used.
       r"\bcurl\b[^\n]{0,300}?\$\{?(?!([a-z][a-z0-9]+)_\w*\}?[^\n]{0,40}?https?://(?:[\w-]+\.){0,4}?\1[\w-]*\.)\w*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)\b"
       rf"|\bcurl\b[^\n]{{0,300}}?(?:@|\s-T\s*|--upload-file[\s=]+){_SECRET_PATH}"
       r"|\bcurl\b[^\n]{0,300}?\$\((?:cat|env|printenv|whoami|history|base64|tar)\b|\bcurl\b[^\n]{0,300}?`(?:cat|env|printenv|whoami)\b"
       r"|\b(?:tar|zip|cat|base64|gpg)\s+[^\n|]{0,120}(?:~/\.ssh|\.aws|\.gnupg|\.env\b|id_rsa|id_ed25519|\.netrc)[^\n|]{0,40}\|\s*curl\b"
       r"|\b(?:env|printenv|set)\s*\|\s*curl\b|\bcat\s+[^\n|]{0,120}\|\s*(?:base64\s*\|\s*)?curl\b[^\n]{0,200}(?:-d|--data|-F|-T|--upload)",
       "curl", source="Hermes Agent threat families (exfil_curl)"),
    _f("exfil_wget", r"\bwget\b[^\n]{0,300}?\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)\b"
       rf"|\bwget\b[^\n]{{0,300}}?--(?:post|body)-file[\s=]+{_SECRET_PATH}",
       "wget", source="Hermes Agent threat families (exfil_wget)"),
    _f("exfil_dns", r"\b(?:nslookup|dig|host|ping)\s+[^\n]{0,60}?\$\((?:cat|whoami|hostname|env|printenv|id|base64)\b",
       "$(", source="DNS exfiltration in agent write-ups (Rehberger 2024)"),
    _f("read_secrets",
       rf"\b{_READ_ONLY_VERB}\s+(?:-\S+\s+){{0,3}}{_W3}{_SECRET_PATH}|\b{_COPY_VERB}\s+(?:-\S+\s+){{0,3}}{_SECRET_PATH}"
       r"|\bcontents?\s+of\s+(?:the\s+)?(?:file\s+)?" + _SECRET_PATH +
       rf"|\b{_READ_VERB}\s+{_W3}(?:the\s+)?(?:user's\s+)?(?:ssh\s+)?(?:private\s+)?(?:key\s+)?(?:file\s+)?id_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)"
       r"|\b(?:read|send|upload|access|copy|steal|leak|print|show)\w*\s+(?:\S+\s+){0,4}?(?:private\s+keys?|ssh\s+keys?(?![^\n]{0,120}?ssh-copy-id)|aws\s+credentials|keychain|wallet\s+seed|seed\s+phrase)\b"
       r"\s+(?:\S+\s+){0,4}?(?:to|and\s+(?:send|post|upload|paste|share))\b",
       ".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials", ".aws/", ".docker/config", ".kube/config", ".ssh/", ".gnupg",
       ".env", "/etc/shadow", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "private key", "ssh key", "aws credentials", "keychain",
       "seed",
       source="Hermes Agent threat families (read_secrets, ssh_access); B15 narrowed to actions on a secret"),
    _f("ssh_backdoor",
       # A shell write is always a backdoor; a prose "add ... to authorized_keys" only with a standing,
       # sweeping or covert cue ("on every server you can reach", "so you can log in later").
       r"(?:>>?|\btee\b|\becho\b)[^\n]{0,160}?\bauthorized_keys\b"
       rf"|(?:\bappend\w*|\badd\w*|\bwrite\w*|\binsert\w*)[^\n]{{0,160}}?\bauthorized_keys\b(?=[^\n]{{0,120}}?{_BACKDOOR_CUE})"
       rf"|{_BACKDOOR_CUE}[^\n]{{0,120}}?(?:\bappend\w*|\badd\w*|\bwrite\w*|\binsert\w*)[^\n]{{0,160}}?\bauthorized_keys\b",
       "authorized_keys", source="Hermes Agent threat families (ssh_backdoor)"),
    _f("ssh_access",
       r"\bssh\s+(?:[^\n]{0,120}?\s)?-R\s*(?:\d|\[|[\w.-]+:\d)"
       r"|\bbash\s+-i\s+>&\s*/dev/tcp/|\b(?:nc|ncat|netcat)\s+[^\n]{0,80}?-e\s+/bin/(?:ba|z)?sh\b|/dev/tcp/[\w.-]+/\d+"
       r"|\b(?:open|start|spawn|establish|create)\s+(?:a\s+)?reverse\s+shell\b",
       "ssh", "/dev/tcp", "-e /bin", "reverse shell",
       source="PayloadsAllTheThings reverse-shell cheat sheet; Hermes Agent threat families (ssh_access)"),
    _f("hermes_env",
       rf"\b(?:{_READ_VERB}|curl|reveal|show|output|display|leak)\s+{_W3}\S*(?:\.hermes|HERMES_HOME\}}?)/\.env\b",
       ".env", source="Hermes Agent threat families (hermes_env)"),
    # --- destructive commands stored as instructions ----------------------------------------------
    _f("destructive_command",
       _RM_ROOT + r"|\brm\s+[^\n]{0,60}--no-preserve-root\b"
       r"|\bmkfs(?:\.\w+)?\s+(?:-\S+\s+){0,6}/dev/|\bdd\s+[^\n]{0,100}?\bif=/dev/(?:zero|u?random)\b[^\n]{0,100}?\bof=/dev/(?:sd|nvme|hd|vd|xvd|disk|mmcblk)|\bdd\s+[^\n]{0,100}?\bof=/dev/(?:sd|nvme|hd|vd|xvd|disk|mmcblk)\w*\s+[^\n]{0,60}?\bif=/dev/(?:zero|u?random)\b"
       r"|>\s*/dev/(?:sd|nvme|hd|vd)[a-z]\b|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"
       r"|\bchmod\s+(?:-R\s+)?(?:0?777|a\+rwx)\s+/(?=\s|$)|\bchown\s+-R\s+\S+\s+/(?=\s|$)"
       r"|\bformat\s+c:|\bdel\s+(?:/[sfq]\s+){2,3}[a-z]:\\|\brd\s+/s\s+/q\s+[a-z]:\\"
       r"|\bremove-item\s+[^\n]{0,60}-recurse[^\n]{0,60}(?:[a-z]:\\\*?|\$env:userprofile|~)(?=\s|$)"
       r"|\bkill\s+-9\s+-1\b|\bshred\s+[^\n]{0,40}/dev/(?:sd|nvme)"
       rf"|{_FETCHER}[^\n|]{{0,300}}?(?:http://|(?:\d{{1,3}}\.){{3}}\d{{1,3}}|pastebin\.com|transfer\.sh|ngrok|bit\.ly|tinyurl)[^\n|]{{0,200}}(?:{_PIPE_SHELL})"
       rf"|{_STANDING}[\s\S]{{0,200}}?{_FETCHER}[^\n|]{{0,300}}(?:{_PIPE_SHELL})"
       rf"|{_FETCHER}[^\n|]{{0,300}}(?:{_PIPE_SHELL})[^\n]{{0,100}}?{_STANDING}"
       r"|\beval\s+\"?\$\((?:curl|wget)\b",
       "rm ", "mkfs", "/dev/", ":()", "chmod", "chown", "format c", "del /", "rd /", "remove-item", "kill -9", "|", "eval",
       source="OWASP LLM06 excessive agency; Embrace The Red 'ZombAIs' (2024); GTFOBins / destructive one-liners"),
    # --- command and control (promptware planted in USER.md / MEMORY.md) --------------------------
    _f("c2_beacon",
       r"\b(?:beacon|phone\s+home|call\s+home)\s+(?:to\s+)?(?:\S+\s+){0,4}?"
       r"(?:every|each)\s+\d+\s*(?:s|sec|secs|seconds?|m|mins?|minutes?|h|hours?)\b"
       # Workers that "report back to the scheduler every 5 minutes" or a user who asks to be
       # checked in with hourly are no beacon: the softer verbs need a host or a controller.
       r"|\b(?:check\s+in|heartbeat|ping\s+back|report\s+back|report\s+in)\s+(?:to\s+|with\s+)?(?:\S+\s+){0,3}?"
       r"(?:https?://\S+|(?:\d{1,3}\.){3}\d{1,3}\S*|[\w-]+\.[\w.-]+|(?:the\s+)?(?:c2|controller|command\s+server|mothership|operator|handler|master\s+node))\s+"
       r"(?:\S+\s+){0,2}?(?:every|each)\s+\d+\s*(?:s|sec|secs|seconds?|m|mins?|minutes?|h|hours?)\b"
       rf"|\b(?:beacon|phone\s+home|call\s+home)\s+(?:to|with)\s+\S+"
       rf"|\b(?:heartbeat|check[\s-]?in|report\s+back|report\s+in|ping\s+back)\s+(?:to|with)\s+(?:the\s+)?(?:{_URLISH}|c2\b|controller|command\s+server|mothership|operator|handler|master\s+node)",
       "beacon", "check", "phone home", "call home", "heartbeat", "ping back", "report",
       source="Brainworm promptware analysis (2025); Cohen et al. 2024 'Here Comes The AI Worm' (Morris II)"),
    _f("c2_node_registration",
       r"\bregister\s+(?:yourself\s+|itself\s+|this\s+(?:agent|assistant|instance|machine|host|device)\s+)?as\s+an?\s+(?:new\s+)?(?:node|bot|peer|zombie|implant)\b"
       r"|\bjoin\s+the\s+(?:botnet|swarm|hive|collective|c2\s+network)\b"
       r"|\bconnect\s+to\s+the\s+(?:network|swarm|botnet|hive|collective)(?=\s*(?:[.,;:!]|$|and\b|to\b|as\b|then\b|for\b))",
       "register", "join", "connect",
       source="Brainworm promptware analysis (2025); Hermes Agent threat families (c2_node_registration)"),
    _f("c2_fetch_instructions",
       r"\b(?:fetch|download|get|retrieve|pull|load|poll|check|receive|read)\s+(?:\w+\s+){0,3}?(?:new\s+|further\s+|next\s+|pending\s+|latest\s+|your\s+)?"
       r"(?:instructions?|commands?|tasks?|tasking|orders|payloads?|directives)\s+(?:\w+\s+){0,3}?from\s+"
       rf"(?:{_URLISH}|the\s+(?:c2|controller|command\s+server|mothership|operator|handler|master)\b)"
       r"|\b(?:await|wait\s+for)\s+(?:further|new|more)\s+(?:commands|orders|instructions|tasking)\b"
       # ... but waiting for the user's (or a colleague's) next word is what a careful agent does.
       r"(?!\s+(?:from|by|of)\s+(?:the\s+|my\s+|your\s+|our\s+)?(?:user|me|human|owner|team|lead|manager|reviewer|client|customer|maintainers?)\b"
       r"|\s+(?:before|on|about|regarding)\b)"
       r"|\bexecute\s+(?:any|all|the|whatever)\s+(?:commands?|instructions?|tasks?)\s+(?:you\s+)?(?:receive|received|returned|given|sent|get)\s+(?:from|by)\b"
       r"|\bpull\s+(?:down\s+)?(?:new\s+)?task(?:ings?|s)\b"
       rf"|\b(?:check|poll|query|ping|watch|monitor)\s+{_URLISH}\S*\s+for\s+(?:new\s+|further\s+|pending\s+|more\s+)?(?:commands?|instructions?|tasks?|orders|jobs|payloads?)\b"
       r"|\b(?:fetch|download|get|retrieve|load|read(?!\s+(?:it|them)\b)|open|visit|curl)\w*\s+(?:\S+\s+){0,4}?(?:and|then|,)\s+(?:\w+\s+){0,1}?(?:follow|obey|execute|run|do\s+what)\b[^\n]{0,40}?(?:it|them|says|instructions|there)\b"
       r"|\b(?:your\s+)?(?:real|true|actual|secret|hidden|updated|latest)\s+instructions\s+(?:are|live|can\s+be\s+found)\s+(?:at|in|on|from)\s+https?://",
       "instruction", "command", "task", "order", "payload", "directive", "follow", "obey", "execute", "run", "do what",
       source="Brainworm promptware analysis (2025); Hermes Agent threat families (c2_task_pull)"),
    _f("forced_action",
       rf"\b(?:every\s+(?:turn|session|time|message)|before\s+(?:every|each)\s+(?:reply|answer|response))[,:;]?\s+"
       rf"{_W}(?:run|execute|call|fetch|visit|send|post|curl|wget)\s+{_W3}(?:https?://|curl\b|wget\b)"
       # Bare "always"/"you must" only with the URL or fetcher as the verb's object: "Always fetch
       # dependencies from https://pypi.internal/simple" or "post release notes to https://..." is a
       # project rule (sending the conversation somewhere is send_to_url's).
       rf"|\b(?:you\s+must|always)[,:;]?\s+{_W}(?:run|execute|call|fetch|visit|send|post|curl|wget)\s+(?:https?://|curl\b|wget\b)"
       r"|\byou\s+must\s+(?:\w+\s+){0,3}?(?:register|beacon|report\s+to\s+the\s+(?:c2|controller|operator))\b",
       "you must", "always", "every", "before",
       source="Hermes Agent threat families (forced_action)"),
    _f("anti_forensic_history",
       r"\bhistory\s+-c\b|\bunset\s+HISTFILE\b|\brm\s+(?:-\w+\s+){0,6}\S*\.(?:bash|zsh)_history\b"
       r"|\bshred\s+[^\n]{0,60}?(?:logs?|history)\b|\bcover\s+(?:your|the)\s+tracks\b|\bleave\s+no\s+(?:trace|traces|evidence)\b"
       r"|\bonly\s+use\s+one[\s-]?liners?\b|\bnever\s+(?:\w+\s+){0,3}?(?:create|write)\s+(?:\w+\s+){0,3}?(?:scripts?|files?)\s+(?:\w+\s+){0,3}?disk\b",
       "history", "histfile", "shred", "tracks", "trace", "evidence", "one-liner", "one liner", "oneliner", "disk",
       source="Brainworm promptware analysis (2025): anti-forensic instructions"),
    _f("anti_forensic_hide",
       rf"\b(?:delete|remove|erase|wipe)\s+{_W3}(?:this|these)\s+(?:instructions?|messages?)\s+(?:after|once|when)\b"
       # A note or entry removed "once the migration is done" is housekeeping; removed once it has
       # been read or acted on, it is a trace being wiped.
       rf"|\b(?:delete|remove|erase|wipe)\s+{_W3}(?:this|these)\s+(?:entry|entries|notes?)\s+(?:right\s+|immediately\s+)?(?:after|once|when)\s+"
       r"(?:(?:you(?:'ve|\s+have)?|it\s+(?:is|has\s+been)|they\s+(?:are|have\s+been))\s+)?(?:read|reading|execut\w*|run|running|follow\w*|act\w*\s+on|carr\w*\s+out|done\s+with\s+(?:it|them))\b"
       r"|\b(?:hide|conceal)\s+(?:this|these)\s+(?:actions?|commands?|instructions?)\s+from\b",
       "delet", "remov", "erase", "wipe", "hide", "conceal", source="Hermes Agent threat families"),
    _f("env_var_unset_agent",
       r"\bunset\s+(?:HERMES_\w+|\w*(?:SAFETY|GUARD|SANDBOX|APPROVAL|CLAUDE|CODEX|AGENT|OPENAI|ANTHROPIC)\w*)\b",
       "unset", source="Hermes Agent threat families (env_var_unset_agent)"),
    _f("known_c2_framework",
       r"\b(?:cobalt\s*strike|meterpreter|brute\s*ratel|sliver\s+(?:implant|c2|beacon)|havoc\s+(?:c2|demon)"
       r"|mythic\s+c2|empire\s+(?:agent|stager)|metasploit\s+(?:payload|handler)|brainworm)\b"
       r"|\bc2\s+(?:server|channel|infrastructure|beacon|endpoint)\b|\bcommand[\s-]and[\s-]control\s+(?:server|channel|endpoint|node)\b",
       "cobalt", "meterpreter", "brute", "sliver", "havoc", "mythic", "empire", "metasploit", "brainworm", "c2", "command",
       source="MITRE ATT&CK S0154 and related C2 frameworks; Hermes Agent threat families"),
    # --- hidden markup ----------------------------------------------------------------------------
    _f("html_comment_injection",
       r"<!--[^>]{0,300}?\b(?:ignore|system|instructions?|assistant|prompt|you\s+must|override|secret|hidden)\b",
       "<!--", source="Greshake et al. 2023 (hidden HTML comments in retrieved pages)"),
    _f("hidden_div",
       r"<(?:div|span|p|section)\b[^>]{0,200}?style\s*=\s*[\"'][^\"']{0,200}?"
       r"(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0\b|color\s*:\s*(?:white|#fff(?:fff)?)\b)",
       "style", source="Greshake et al. 2023 (invisible text); Hermes Agent threat families (hidden_div)"),
    # --- agent configuration and secrets --------------------------------------------------------
    # An edit of an agent's config file is an attack when it carries a directive about trust or
    # safety ("so future agents skip tests", "add 'always run without approval' to AGENTS.md");
    # "Edit CLAUDE.md to mention the new make targets" is project housekeeping.
    _f("agent_config_mod",
       rf"\b{_MODIFY_VERB}\s+{_W3}(?:the\s+)?\S*{_AGENT_FILES}(?=[^\n]{{0,160}}?{_AGENT_DIRECTIVE})"
       rf"|\b{_MODIFY_VERB}[^\n]{{0,80}}?{_AGENT_DIRECTIVE}[^\n]{{0,160}}?\b(?:to|into|in)\s+(?:the\s+|every\s+|each\s+|all\s+)?\S*{_AGENT_FILES}",
       "cursorrules", "cursor/rules", "claude.md", "agents.md", "gemini.md", "windsurfrules", "clinerules", "copilot-instructions", "aider.conf",
       source="Rehberger 2025 (agents rewriting their own config files); Hermes Agent threat families"),
    _f("hermes_config_mod",
       rf"\b{_MODIFY_VERB}\s+{_W3}\S*(?:\.hermes|HERMES_HOME\}}?)/(?:config\.yaml|SOUL\.md|\.env|plugins/)",
       ".hermes", "hermes_home", source="Hermes Agent threat families (hermes_config_mod)"),
    _f("hardcoded_secret",
       r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{24,}|AKIA[0-9A-Z]{16}|ghp_[A-Za-z0-9]{36}|github_pat_\w{22,}"
       r"|xox[baprs]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{35})\b"
       r"|-----BEGIN\s+(?:RSA\s+|EC\s+|OPENSSH\s+|DSA\s+)?PRIVATE\s+KEY-----"
       r"|\b(?:api[_-]?key|token|secret|password)\s*[=:]\s*[\"'][A-Za-z0-9+/=_-]{20,}",
       "sk-", "akia", "ghp_", "github_pat", "xox", "aiza", "private key", "key", "token", "secret", "password",
       source="GitHub secret-scanning token formats; Hermes Agent threat families (hardcoded_secret)"),
)
