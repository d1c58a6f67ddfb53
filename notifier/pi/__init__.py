"""What pi writes and draws, read (pure): a session line into events, which tool calls are
questions and what they ask (:mod:`.parse`; docs/question-tools.md), how a question ended
(:mod:`.outcomes`), a dialog read off a terminal screen (:mod:`.screens`), and the keys that answer
it with the checks around them (:mod:`.keys`), what pi recorded as the answer given
(:mod:`.records`). docs/pi-sessions.md is the record of the facts
relied on."""
