"""Where there is no D-Bus server to talk to directly: plyer (macOS, Windows; Linux through
notify-send or dbus-python) and Windows toasts through powershell.exe (WSL). Neither can withdraw
a notification."""

from __future__ import annotations

import base64
import os
import shutil
import sys

from notifier import APP_NAME
from notifier.core.text import clean
from notifier.resources import app_icon
from notifier.sinks.notify.backend import BackendError, Plain, expire_ms
from notifier.sinks.notify.render import Message
from notifier.system import processes as programs

TOAST_TIMEOUT_S = 20.0  # how long showing one toast through powershell.exe may take


class PlyerBackend(Plain):
    name = "plyer"
    markup = False
    online = True

    def __init__(self, expire: str | int = "never") -> None:
        from plyer import notification  # (here: optional, the last-resort backend)

        self._notify = notification.notify
        # on Linux plyer's own D-Bus path takes seconds, 0 = until closed; elsewhere it is a toast's life
        self._timeout = expire_ms(expire) // 1000 if sys.platform.startswith("linux") else 10

    def show(self, message: Message, replaces: int) -> int:
        try:
            self._notify(
                title=message.title,
                message=message.body,
                app_name=APP_NAME,
                app_icon=app_icon(),
                timeout=self._timeout if message.sticky else 10,
            )
        except Exception as exc:
            raise BackendError(clean(exc, 160)) from exc
        return 0

    def close(self, server_id: int) -> None:
        pass  # plyer cannot withdraw a notification

    def shutdown(self) -> None:
        pass


_TOAST_PS = r"""
$ErrorActionPreference = 'Stop'
function D($s) { [System.Text.Encoding]::UTF8.GetString([System.Convert]::FromBase64String($s)) }
$title = [System.Security.SecurityElement]::Escape((D '{title}'))
$body = [System.Security.SecurityElement]::Escape((D '{body}'))
[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] > $null
[Windows.Data.Xml.Dom.XmlDocument, Windows.Data.Xml.Dom.XmlDocument, ContentType = WindowsRuntime] > $null
$xml = New-Object Windows.Data.Xml.Dom.XmlDocument
$text = "<text>$title</text><text>$body</text>"
$xml.LoadXml("<toast><visual><binding template='ToastGeneric'>$text</binding></visual></toast>")
$app = '{{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}}\WindowsPowerShell\v1.0\powershell.exe'
[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier($app).Show([Windows.UI.Notifications.ToastNotification]::new($xml))
"""


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


class PowerShellBackend(Plain):
    """WSL: notify-send goes nowhere there, so show a Windows toast. Strings travel base64-encoded
    and are XML-escaped on the Windows side: nothing from the model is ever parsed as script."""

    name = "powershell"
    markup = False
    online = True

    def __init__(self) -> None:
        self.exe = (
            shutil.which("powershell.exe") or "/mnt/c/Windows/System32/WindowsPowerShell/v1.0/powershell.exe"
        )
        if not os.path.exists(self.exe):
            raise BackendError("powershell.exe not found")

    def show(self, message: Message, replaces: int) -> int:
        script = _TOAST_PS.replace("{title}", _b64(message.title)).replace("{body}", _b64(message.body))
        script = script.replace("{{", "{").replace("}}", "}")
        try:
            argv = [self.exe, "-NoProfile", "-NonInteractive", "-Command", script]
            done = programs.run_or_raise(argv, TOAST_TIMEOUT_S)
        except programs.CannotRun as exc:
            raise BackendError(f"powershell.exe: {exc}") from exc
        if done.returncode != 0:
            raise BackendError(f"powershell.exe exited with {done.returncode}: {clean(done.stderr, 160)}")
        return 0

    def close(self, server_id: int) -> None:
        pass

    def shutdown(self) -> None:
        pass
