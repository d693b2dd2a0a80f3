"""Computer opponents: bot accounts, the worker that plays their moves, and their search."""
