"""What the user sees, drawn from immutable snapshots: the state the UI draws (:mod:`.state`), the
tray icon (:mod:`.tray`, its menu and tooltip :mod:`.menu`, its images :mod:`.icons`) and the
window (:mod:`.window`, a Tk process of its own, from the view model :mod:`.view`, with
:mod:`.question_list`, :mod:`.details`, :mod:`.answer_bar`, :mod:`.placement`, :mod:`.sources`)."""
