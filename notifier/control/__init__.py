"""The user-only local channel of the running app: one JSON object per line over a Unix socket
(permissions 0600, in a 0700 runtime folder, and the peer's uid checked on every connection).
A second `pi-notifier`, `pi-notifier show` and `pi-notifier status` use it to reach the running
app; the window subscribes to live snapshots.

Nothing a client does may stop the app from telling (the tray, notifications, other clients):
one server thread multiplexes every connection with bounded buffers, caps and timeouts
(:mod:`.server`, :mod:`.connection`, :mod:`.limits`), handlers run on a few worker threads (:mod:`.workers`).

- :mod:`.wire`: framing, ``encode``, the bounded request parse, where the socket lives;
- :mod:`.peer`: the private socket and the peer's uid;
- :mod:`.connection`: one client and its bounded output buffer;
- :mod:`.server`: the selector loop;
- :mod:`.limits`: the caps and timeouts, and who is evicted or timed out;
- :mod:`.workers`: the handler threads;
- :mod:`.client`: :func:`~.client.request` and :func:`~.client.subscribe`;
- :mod:`.fields`: the error a handler raises for a request it cannot read.
"""
