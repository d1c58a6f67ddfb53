"""Best pairings in a weighted bipartite graph (pure): the search behind
:func:`notifier.core.owners.bind`, which says what the weights mean.

A pairing gives each left node (a session) at most one right node (a process) and each right node
to at most one left node; its weight is the sum of its pairs'. The graphs are small (a folder's
sessions and at most a few pis), so every best pairing is found exactly, by dynamic programming
over the sets of right nodes taken.
"""

from __future__ import annotations


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
