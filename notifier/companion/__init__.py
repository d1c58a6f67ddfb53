"""The optional companion pi extension, seen from pi-notifier (issue 11).

- :mod:`notifier.companion.protocol` (pure): typed events from the extension's socket, requests to it
- :mod:`notifier.companion.sockets`: where the sockets are, :func:`~.sockets.list_sockets`
- :mod:`notifier.companion.channel`: connect to one socket (same user only), :func:`~.channel.answer_dialog`
- :mod:`notifier.companion.watcher`: finds sockets as pi processes start, one connection each

The extension itself ships as the folder ``notifier/resources/pi-extension/pi-notifier/`` (``index.ts``,
pi's entry point, and the modules it imports; docs/companion-extension.md); installing it is
:mod:`notifier.cli.install`.
"""
