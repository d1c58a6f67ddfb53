@echo off
rem Started from the Startup folder by `pi-notifier autostart install`.
start "" /min {exec} run
