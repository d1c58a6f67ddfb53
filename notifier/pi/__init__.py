"""What pi writes, read (pure): its entries as events (:mod:`.entries`), which lines can matter
(:mod:`.lines`), the question tools (:mod:`.catalog`, :mod:`.extraction`, :mod:`.outcomes`;
docs/question-tools.md), the keys that answer each tool's dialog (:mod:`.keymaps`) and the checks
around them (:mod:`.answer_checks`), a dialog read off a terminal screen (:mod:`.screens`), and which
extensions open dialogs the session file does not show (:mod:`.extensions`). docs/pi-sessions.md
is the record of the facts relied on."""
