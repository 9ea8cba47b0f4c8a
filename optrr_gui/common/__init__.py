"""Pieces shared by the tabs: small widgets and formatters, undo commands, settings, the About dialog."""
