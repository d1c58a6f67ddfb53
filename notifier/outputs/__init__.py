"""Outputs: each is handed immutable snapshots and transitions and never reaches back."""
