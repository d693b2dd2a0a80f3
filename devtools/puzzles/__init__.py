"""The dev-only puzzle finder (docs/PUZZLES-FINDING.md): an exact forced-win prover on the
engine API (prover.py), the check that a position has one answer and no other (finder.py),
and the batch generator `python -m devtools puzzlegen` on top of them. Pure Python but for
the command: nothing here imports Django."""
