"""Endgame databases and the size of the games' spaces (dev-only; docs/ENDGAMES.md)."""
