"""What the user can do to a waiting pi from outside it: go to its terminal (:mod:`.goto`, on
another machine through ssh) and answer its question (:mod:`.answer`: through the companion
extension or by keys into its tmux pane, each key checked on screen, the session file the judge)."""
