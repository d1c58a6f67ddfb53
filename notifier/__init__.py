"""pi-notifier: a desktop tray notifier for pi coding agent sessions waiting for an answer."""

__version__ = "0.1.0"
APP_NAME = "pi-notifier"
