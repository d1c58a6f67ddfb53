"""What the user can do to a waiting pi from outside it: go to its terminal (:mod:`.goto`) and answer
its question (:mod:`.answer`: through the companion extension, :mod:`.answer_channel`, or by keys
into its tmux pane, :mod:`.answer_tmux`, checked step by step, :mod:`.answer_keys`, against the
session file, :mod:`.answer_session`); on another machine, through ssh (:mod:`.over_ssh`)."""
