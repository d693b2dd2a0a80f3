"""Tooling, apart from the product: benchmarks, load generators, the stack floor and the
fault-injection suite, with the servers they start.

Nothing of the product imports this package: it is installed only by its own settings
(devtools/settings.py, used by `python -m devtools ...`) and by the test settings. Its
commands run as `python -m devtools <command>` (loadtest, stackfloor, lobbybench, wsburst,
botbench, botapibench, chaos, and engine: the site's computer as a bot's engine); the pure
rules benchmark as `python -m devtools.rules_bench`.
"""
