"""The machine and the user's files: folders, configuration, the state database, the process
table, the local control channel, autostart entries. Below the engine, the sinks and the UI."""
