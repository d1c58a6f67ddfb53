"""Which running pi owns which session (pure): what a pi shows of itself (the evidence), the
weighing of it, and the exact search for the best pairings: the evidence weighed, never the folder alone.

pi keeps no pid or lock file and does not hold its session file open, so several pis in one
folder are told apart by what each shows of itself (gathered elsewhere, handed in as plain data:
:class:`Proc`; read as below):

- **announced** (the companion extension: its pid and session file): exact.
- **argv** naming the session: exact for that session.
- **time**: a pi must have been running when the session was last written (for a pending question:
  when it was asked). A pi that started later than a session's header can own it only by
  resuming it (``-c``, ``/resume``, ``--session``): that needs evidence (its pane showing the
  question, or a resume argument).
- **screen**: the pane shows the pending question exactly; an empty input box counts against it,
  and rules it out where pi is at rest there (no spinner: :func:`at_rest`) while nothing else of
  the session's turn runs (nothing exact is overruled by it).
- **seen before**: the pi an earlier list paired with a session in every reading *and* that
  showed it had it (announced it, named it in its arguments, or its pane showed the question:
  :func:`decisive`; winning the weighing once is not enough: a read that missed the asker would
  hand its question to a neighbour), while the question it asks now was pending
  (:attr:`Wanted.owner`): exact. A pi in a dialog cannot leave
  its session without ending the dialog (which ends the question), so the session stays that
  pi's while it runs; once that pi is gone nothing will answer the question (a pi resuming the
  session does not ask it again), so no other pi has it.

One process owns at most one session and a session at most one process. Among all such
pairings the best ones are kept, by these criteria in order: most exact pairs; most pairs whose
pane shows the question; most live pis paired; fewest resumed pairs; fewest pending sessions given
to a pi whose pane shows no dialog at all; then (for sessions asking nothing) the most
recently written sessions (a pi writes one session at a time: its current one is its last).

- A session paired with the same pi in every best pairing is that pi's (``Owners.owners``);
  paired in some best pairing with different pis (or not in all): ``Owners.ambiguous``
  names them, and nothing may be typed.
- Liveness (``Owners.living``): a session asking something is alive if some best pairing gives it a
  pi, so a question is kept while any reading of the evidence leaves its asker alive (no missed
  question: a pending session whose only candidate is one pi stays alive, whatever its pane shows,
  unless it shows that pi at rest, waiting for a prompt, with nothing else of the turn to run). A
  session asking nothing is alive if the best pairings (recency included) give it a pi. So a killed
  asker's question is abandoned as soon as the neighbours' pis are all accounted for by their own
  sessions, or their panes show they are not asking it.
- Where nothing can be seen of a pi (no pane, no readable arguments, no companion: pi 1.6 outside
  tmux) it may have resumed an older session: such a pairing is allowed (last in preference), so a
  question asked after ``pi -c`` there is not called abandoned. The price: a killed asker whose
  neighbour there has no session of its own stays listed until the neighbour is gone.


**The evidence**, what a running pi shows of itself: when a session was created, pi's arguments, its pane.

- **created**: a pi creates its session after it starts, so the header's time (read from the
  UUIDv7 session id, else the file name, :func:`created_at`) is never before its start. A pi that
  started later can have the session only by resuming it.
- **argv** ``--session X`` / ``--session-id X`` where pi's arguments can be read (pi 1.6 and 0.73
  set their process title, so usually they cannot): exact for that session (:func:`names`);
  ``-c`` / ``--resume`` say it resumed some session (:func:`_session_args`).
- **screen**: the tmux pane shows the pending question *exactly* (:func:`shows`: the full question
  text as whole lines, every option label ending a line, in the dialog area at the bottom); a
  pane showing pi's empty input box (:func:`idle_editor`: no dialog open) counts against it; one
  showing pi at rest (the box empty, no spinner: :func:`at_rest`) rules it out, unless other tools
  of the turn still run (their results not written: :attr:`Wanted.busy`).


**Best pairings** in a weighted bipartite graph (:func:`choices`): the search behind
:func:`bind`, whose weights are the criteria above.

A pairing gives each left node (a session) at most one right node (a process) and each right node
to at most one left node; its weight is the sum of its pairs'. The graphs are small (a folder's
sessions and at most a few pis), so every best pairing is found exactly, by dynamic programming
over the sets of right nodes taken.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from notifier.core.codec import parse_iso
from notifier.core.model import Question, SessionView
from notifier.core.text import clean

# ---- owners ----

START_SLACK_S = 2.0  # a pi must have run when the session was written (start times are coarse)
CREATE_SLACK_S = 0.5  # a session's header is never before its pi's start (measured: ~0.3 s after)
MAX_PROCS = 8  # pis in one folder told apart (beyond that: every pending session kept, none located)
# Two start times of one process read apart differ by less than this (each is the boot time plus
# the process's clock ticks, and the boot time is read again when the wall clock steps: NTP, a
# resume from suspend with a drifting clock); a pid reused by another process within it (the
# kernel hands out every other pid first) is beyond belief.
SAME_PROCESS_S = 5.0


@dataclass(frozen=True, slots=True)
class Proc:
    """A running pi process: its folder, start time (epoch seconds) and what tells it apart.

    ``pid`` 0: unknown (each Proc is then a process of its own; Procs of one pid are one process
    seen in several folders, e.g. as written and resolved). ``argv``: its arguments after the pi
    program, ``None`` when they cannot be read (pi set its process title). ``screen``: its tmux
    pane's text, ``None`` when not in tmux or not captured. ``session``: the session file it
    announced (the companion extension), ``None`` when not known."""

    cwd: str
    started: float
    pid: int = 0
    argv: tuple[str, ...] | None = None
    screen: str | None = None
    session: str | None = None
    pane: str | None = None  # its tmux pane id (for messages)
    # Its terminal is in raw mode, as pi's TUI puts it (``pi -p`` leaves it cooked): it can wait
    # for a human. ``None``: not known (no terminal to look at).
    interactive: bool | None = None


@dataclass(frozen=True, slots=True)
class Wanted:
    """What matching needs of a session (from a SessionView, the board or ``status --json``).

    ``updated_at``: when its owner must have been running (its last write; for a pending question,
    when it was asked). ``alive`` False: liveness already said no pi has it (it is not matched).
    ``question`` / ``options``: the pending question's text and option labels, if any.
    ``created``: when pi created it, where known better than its id and file name tell
    (:func:`created_at`)."""

    key: str
    cwd: str | None
    updated_at: float
    alive: bool | None
    question: str | None = None
    options: tuple[str, ...] = ()
    id: str | None = None
    created: float | None = None
    owner: tuple[int, float] | None = None  # (pid, start time): its pi in every reading of an earlier list
    busy: bool = False  # other tools of its turn have no result yet (its pi may run them before the dialog)

    @classmethod
    def asking(
        cls, key: str, cwd: str | None, at: float, alive: bool | None, q: Question | None, id: str | None
    ) -> Wanted:
        """A session asking ``q`` (``None``: nothing) whose owner ran by ``at``."""
        if q is None:
            return cls(key, cwd, at, alive, id=id)
        return cls(key, cwd, at, alive, q.first.text, tuple(o.label for o in q.first.options), id)

    @classmethod
    def of(cls, view: SessionView) -> Wanted:
        q = view.pending[0] if view.pending else None
        w = cls.asking(view.ref.key, view.ref.cwd, q.asked_at if q else view.updated_at, view.alive, q, view.ref.id)
        return replace(w, owner=view.owner, busy=view.current_tool is not None)


# ---- pairing ----


@dataclass(frozen=True, slots=True)
class Owners:
    """The result of :func:`bind`, per session file: ``owners``, the pi that has it in every
    reading of the evidence; ``ambiguous``, the pis that may have it when the evidence cannot
    tell which; ``living``, the sessions some pi has (see the module's docstring)."""

    owners: dict[str, Proc]
    ambiguous: dict[str, tuple[Proc, ...]]
    living: frozenset[str]


def norm_folder(path: str | None) -> str | None:
    """A folder as processes and session headers are matched by (no trailing separator)."""
    if not path:
        return None
    return path.rstrip("/\\") or path


def _processes(procs: Iterable[Proc]) -> list[tuple[Proc, frozenset[str]]]:
    """One entry per process (Procs of one pid merged), with every folder it is seen in."""
    merged: dict[object, tuple[Proc, set[str]]] = {}
    for i, p in enumerate(procs):
        folder = norm_folder(p.cwd)
        if folder is not None:  # (pid 0: not known, a process of its own)
            merged.setdefault(p.pid or ("unknown", i), (p, set()))[1].add(folder)
    return [(p, frozenset(folders)) for p, folders in merged.values()]


# The criteria, most important first, folded into one integer weight per pair (a pairing's
# weight is the sum; each level's total stays below one unit of the level above).
_R = 1 << 8


def _weight(exact: bool, shown: bool, resumed: bool, unseen: bool, against: bool) -> int:
    return (
        int(exact) * _R**5 + int(shown) * _R**4 + _R**3 - int(resumed) * _R**2 - int(unseen) * _R - int(against)
    )


EXACT = _weight(True, False, False, False, False)


def _is(p: Proc, owner: tuple[int, float]) -> bool:
    """Whether ``p`` is the process ``owner`` names (a reused pid has another start time)."""
    return p.pid == owner[0] and abs(p.started - owner[1]) < SAME_PROCESS_S


def decisive(p: Proc, w: Wanted) -> bool:
    """Whether ``p`` shows that it has ``w`` (announced, named by its arguments, its pane showing
    the question, or the pi recorded already): not only preferred by the weighing."""
    if p.session is not None:
        return p.session == w.key
    if w.owner is not None:
        return _is(p, w.owner)
    if p.argv is not None and names(p.argv, p.cwd, w.key, w.id):
        return True
    return bool(w.question) and p.screen is not None and shows(p.screen, w.question or "", w.options)


def _edge(p: Proc, folders: frozenset[str], w: Wanted, created: float | None, announced: dict[str, int]) -> int | None:
    """The weight of pairing ``p`` with ``w``, or ``None`` where the evidence rules it out:
    first what is exact (what the pi announced, its arguments, the pi seen with it before), then
    what its pane shows."""
    if norm_folder(w.cwd) not in folders:
        return None
    if p.session is not None:  # it said which session it has
        return EXACT if p.session == w.key else None
    if w.key in announced and announced[w.key] != id(p):
        return None
    if w.owner is not None:
        return EXACT if _is(p, w.owner) else None
    if p.started > w.updated_at + START_SLACK_S:
        return None  # it was not running when the session was written (or the question asked)
    if p.argv is not None and names(p.argv, p.cwd, w.key, w.id):
        return EXACT
    return _seen(p, w, created)


def _seen(p: Proc, w: Wanted, created: float | None) -> int | None:
    """The weight of a pairing that nothing exact decides: by the pane and the times."""
    shown = bool(w.question) and p.screen is not None and shows(p.screen, w.question or "", w.options)
    if w.question and not w.busy and p.screen is not None and not shown and at_rest(p.screen):
        return None  # it waits for a prompt: a pi asking (nothing else of its turn to run first) shows the dialog
    resumed = created is not None and p.started > created + CREATE_SLACK_S
    unseen = False
    if resumed and not shown:
        if p.argv is not None and _session_args(p.argv)[2]:
            pass  # its arguments say it resumed some session (-c, --resume, --session)
        elif p.argv is None and p.screen is None:
            unseen = True  # nothing can be seen of it: it may have resumed this one
        else:
            return None
    against = bool(w.question) and p.screen is not None and idle_editor(p.screen)
    return _weight(False, shown, resumed, unseen, against)


def bind(wanted: Sequence[Wanted], procs: Sequence[Proc]) -> Owners:
    """Which of ``procs`` owns which of ``wanted`` (see the module's docstring). Sessions whose
    ``alive`` is False are left out."""
    processes = _processes(procs)
    sessions = [w for w in wanted if w.alive is not False and norm_folder(w.cwd)]
    announced = {p.session: id(p) for p, _ in processes if p.session is not None}
    # the pairs the evidence allows
    edges: dict[int, dict[int, int]] = {}  # session index → process index → weight
    for si, w in enumerate(sessions):
        created = w.created if w.created is not None else created_at(w.key, w.id)
        for pi, (p, folders) in enumerate(processes):
            weight = _edge(p, folders, w, created, announced)
            if weight is not None:
                edges.setdefault(si, {})[pi] = weight
    owners: dict[str, Proc] = {}
    ambiguous: dict[str, tuple[Proc, ...]] = {}
    for comp_s, comp_p in components(edges):
        group = [sessions[i] for i in comp_s]
        weights = [{comp_p.index(pi): wt for pi, wt in edges[si].items()} for si in comp_s]
        for w, (pis, sure) in zip(group, _solve(group, [processes[i][0] for i in comp_p], weights), strict=True):
            if pis and sure:
                owners[w.key] = pis[0]
            elif pis:
                ambiguous[w.key] = pis
    return Owners(owners, ambiguous, frozenset(owners) | frozenset(ambiguous))


Given = tuple[tuple[Proc, ...], bool]  # the pis a session may have; whether it is surely the one


def _solve(sessions: list[Wanted], procs: list[Proc], weights: list[dict[int, int]]) -> list[Given]:
    """Per session, the pis some best pairing gives it, and whether every best pairing gives it that one."""
    if len(procs) > MAX_PROCS:  # beyond telling apart: keep every question, locate nothing
        return [(tuple(procs), False)] * len(sessions)
    first = choices(weights)
    # Among the best pairings, those giving pis the most recently written sessions: a newer
    # session weighs more than all older ones together (sessions written at the same time weigh
    # the same: the order given never decides).
    times = sorted({w.updated_at for w in sessions})
    base = len(sessions) + 1
    scale = base ** len(times)
    second = choices(
        [
            {p: wt * scale + base ** times.index(sessions[i].updated_at) for p, wt in row.items()}
            for i, row in enumerate(weights)
        ]
    )
    got = [first[i] if w.question else second[i] for i, w in enumerate(sessions)]
    return [(tuple(procs[p] for p in sorted(p for p in pis if p is not None)), len(pis) == 1) for pis in got]


# ---- the evidence ----

_NAME_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d)-(\d\d)-(\d\d)-(\d{3})Z_")
_UUID7 = re.compile(r"^([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def created_at(file: str, session_id: str | None) -> float | None:
    """When pi created the session (its header's time, epoch seconds), from what names it: a
    UUIDv7 session id holds it to the millisecond (pi 0.67.1+), a default file name
    ``<timestamp>_<id>.jsonl`` to the millisecond too; ``None`` where neither tells."""
    m = _UUID7.match(session_id.lower()) if session_id else None
    if m is not None:
        return int(m.group(1) + m.group(2), 16) / 1000.0
    n = _NAME_TIME.match(posixpath.basename(file.replace("\\", "/")))
    return None if n is None else parse_iso("{}:{}:{}.{}Z".format(*n.groups()))


# ---- pi's arguments ----

_RESUME_FLAGS = frozenset({"-c", "--continue", "-r", "--resume"})


def _session_args(argv: Sequence[str]) -> tuple[list[str], list[str], bool]:
    """(``--session`` values, ``--session-id`` values, whether it resumes some older session)."""
    named: list[str] = []
    ids: list[str] = []
    resumes = False
    args = iter(argv)
    for arg in args:
        key, eq, val = arg.partition("=")
        if key in ("--session", "--session-id"):
            val = val if eq else next(args, "")
            if val:
                (named if key == "--session" else ids).append(val)
                resumes = resumes or key == "--session"
        resumes = resumes or arg in _RESUME_FLAGS
    return named, ids, resumes


def names(argv: Sequence[str], cwd: str, file: str, session_id: str | None) -> bool:
    """Whether pi's arguments (run in ``cwd``) name this very session (``file``, ``session_id``)."""
    named, ids, _ = _session_args(argv)
    if session_id in ids:
        return True
    for val in named:
        if "/" in val or val.endswith(".jsonl"):
            if posixpath.normpath(posixpath.join(cwd, val)) == posixpath.normpath(file):
                return True
        elif session_id and len(val) >= 4 and session_id.startswith(val):
            return True
    return False


# ---- what a pane shows ----

# A rule at column 0; pi 1.6 draws its working indicator inside the rule above the editor
# ("── ⠙ Working ───…"): a short run, a label, a long run.
_RULE = re.compile(r"^(?:[─━═-]{20,}|[─━═-]{2,} [^─━═]{1,60} [─━═-]{20,})$")


def _rules(raw: list[str]) -> list[int]:
    # (pi's own rules start at column 0; an editor inside a dialog draws its rules indented)
    return [i for i, line in enumerate(raw) if _RULE.match(line.rstrip())]


def _region(screen: str) -> list[str]:
    """The pane's lines (cleaned) from the rule above pi's editor area (where a dialog is drawn)
    down: pi draws a rule above and below its editor, so the dialog is below the second-to-last
    rule at column 0. A screen with fewer rules: all of it."""
    raw = screen.splitlines()
    rules = _rules(raw)
    start = rules[-2] if len(rules) >= 2 else 0
    return [clean(line) for line in raw[start:]]


def _flat(text: str) -> str:
    return " ".join(clean(text).split()).casefold()


def _has_text(lines: list[str], want: str) -> bool:
    """Whether ``want`` is some run of whole lines (wrapped lines joined by a space)."""
    for i in range(len(lines)):
        joined = ""
        for line in lines[i:]:
            if not line:
                break
            joined = f"{joined} {line}" if joined else line
            if joined == want:
                return True
            if len(joined) >= len(want) or not want.startswith(joined):
                break
    return False


def shows(screen: str, text: str, options: Sequence[str] = ()) -> bool:
    """Whether the pane shows this question exactly in its dialog area: the full question text as
    whole lines (wrapped lines joined) and every option label at the end of a line (after its
    number or marker). A look-alike (same beginning, other text or other options) does not."""
    want = _flat(text)
    if not want:
        return False
    lines = [_flat(line) for line in _region(screen)]
    if not _has_text(lines, want):
        return False
    for label in options:
        lab = _flat(label)
        if lab and not any(line == lab or line.endswith(" " + lab) or line.endswith("." + lab) for line in lines):
            return False
    return True


def idle_editor(screen: str) -> bool:
    """Whether the pane shows pi's own input box, empty or holding a draft the user has not sent,
    idle or at work (pi 1.6 labels the rule above it while it works): no dialog is open there (a
    dialog, whatever its tool, is drawn in that box). pi draws a draft from the box's first
    column, every line of it (with pi's ``editorPaddingX`` set, a draft is indented: taken for a
    dialog, the safe side); a dialog indents some of its lines, its title or its key hints (pi's
    select, confirm, input and editor, question, questionnaire, rpiv-ask-user-question, as
    captured): a box with a line that starts with a space is taken for a dialog, and one that shows
    the question asked is never pi at rest (:func:`_seen`). Only this counts
    against a pi asking a question: a dialog that shows its question otherwise (a later tab, a
    free-text editor) is not judged by its text."""
    raw = screen.splitlines()
    rules = _rules(raw)
    if len(rules) < 2:
        return False
    return all(not line[0].isspace() for line in raw[rules[-2] + 1 : rules[-1]] if line.strip())


def at_rest(screen: str) -> bool:
    """Whether the pane shows pi waiting for a prompt: its input box empty (or holding a draft) and no spinner at work
    (pi 1.6 draws it in the rule above the box, 0.73 on the line above that rule). A pi whose
    session has a question pending and nothing else of its turn to run shows that question's
    dialog; at rest, it is not asking it (it resumed a session whose pi is gone). While other tools
    of the turn run first it may show an empty box, its spinner hidden or redrawn by an extension
    (``setWorkingVisible``, ``setWorkingIndicator``): such a session (:attr:`Wanted.busy`) is not
    judged by it."""
    if not idle_editor(screen):
        return False
    raw = screen.splitlines()
    top = _rules(raw)[-2]
    above = next((line for line in reversed(raw[:top]) if line.strip()), "")
    return not any(_SPINNER.search(line) for line in (raw[top], above))


_SPINNER = re.compile("[\u2801-\u28ff]")  # a braille dot pattern: pi's spinner frames


# ---- best pairings ----

def components(edges: dict[int, dict[int, int]]) -> list[tuple[list[int], list[int]]]:
    """The connected parts of the graph (``edges``: left → right → weight), each as its left and
    right nodes, sorted."""
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x: tuple[str, int]) -> tuple[str, int]:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for si, row in edges.items():
        for pi in row:
            a, b = find(("s", si)), find(("p", pi))
            if a != b:
                parent[a] = b
    groups: dict[tuple[str, int], tuple[list[int], list[int]]] = {}
    for node in list(parent):
        g = groups.setdefault(find(node), ([], []))
        (g[0] if node[0] == "s" else g[1]).append(node[1])
    return [(sorted(s), sorted(p)) for s, p in groups.values() if s and p]


def choices(weights: list[dict[int, int]]) -> list[set[int | None]]:
    """For each left node (``weights[i]``: right node → weight), what it gets in some best
    pairing: a right node, or ``None`` (nothing).

    ``pre[i][mask]``: the best weight of left nodes ``< i`` using exactly the right nodes of
    ``mask``; ``suf[i][mask]``: the best of left nodes ``>= i`` when those of ``mask`` are taken."""
    m = len(weights)
    pre: list[dict[int, int]] = [{0: 0}]
    for row in weights:
        nxt: dict[int, int] = {}
        for mask, val in pre[-1].items():
            if nxt.get(mask, -1) < val:
                nxt[mask] = val
            for p, wt in row.items():
                if not mask >> p & 1:
                    k = mask | 1 << p
                    if nxt.get(k, -1) < val + wt:
                        nxt[k] = val + wt
        pre.append(nxt)
    suf: list[dict[int, int]] = [{} for _ in range(m + 1)]
    suf[m] = dict.fromkeys(pre[m], 0)
    for i in range(m - 1, -1, -1):
        after = suf[i + 1]
        for mask in pre[i]:
            best = after[mask]
            for p, wt in weights[i].items():
                if not mask >> p & 1:
                    best = max(best, wt + after[mask | 1 << p])
            suf[i][mask] = best
    top = suf[0][0]
    out: list[set[int | None]] = []
    for i, row in enumerate(weights):
        got: set[int | None] = set()
        after = suf[i + 1]
        for mask, val in pre[i].items():
            if val + after[mask] == top:
                got.add(None)
            for p, wt in row.items():
                if not mask >> p & 1 and val + wt + after[mask | 1 << p] == top:
                    got.add(p)
        out.append(got)
    return out
