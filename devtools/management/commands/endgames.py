"""python -m devtools endgames: the games' spaces, and Diffusion's endgame database
(docs/ENDGAMES.md).

    python -m devtools endgames spaces              # the counts, and 2x6 reachability
    python -m devtools endgames spaces --no-reach   # the counts only (seconds)
    python -m devtools endgames build --most 20 --out endgames/diffusion-20.bin
    python -m devtools endgames verify --db endgames/diffusion-20.bin --samples 100000 [--all]
    python -m devtools endgames start --db endgames/diffusion-60.bin [--reached]
    python -m devtools endgames build --game zigzag --options pits=4,seeds=3 --most 24 \
        --out endgames/zigzag-4x3.bin
    python -m devtools endgames verify --db endgames/zigzag-4x3.bin --samples 100000 --upto 12

`build` solves every Diffusion (2x6) position with at most MOST stones on the board
(devtools/endgames/diffusion_solve.py) and writes it with its header and checksum (written as
it goes: stopped, the same command goes on from the last layer done); `verify`
loads one (checking the checksum) and checks SAMPLES positions drawn at random through the
pure engine: each position's code must be what its moves' codes make it; `start` says,
from a database of every position (--most 48 or more), who wins Diffusion from the start with
best play and in how many moves, and what each first move leads to; with --reached, also
the value of every position reachable from the start (found again: about ten minutes).

Prints, for Diffusion (2x6) and Four-rank Diffusion, the boards with k stones for every k
(exact); for ZigZag at the option sets asked (`--zigzag 6x5,4x3`), the arrangements of k seeds
and the bound on positions they make (side to move, the pit the restriction forbids, who
captured last); the cost per position of the compiled move generation; and, unless
--no-reach, every Diffusion (2x6) position reachable from the start, by stones on the board,
with the search's time (about 4.5 GB of memory).

ZigZag (`--game zigzag --options pits=P,seeds=S`): `build` solves every position with at most
MOST seeds on the board (devtools/endgames/zigzag_solve.py: the margin and the distance to
the last capture), `verify` checks SAMPLES positions through the engine (each value what its
moves make it) and SAMPLES by the independent forward search (devtools/endgames/
zigzag_forward.py) among those with at most UPTO seeds on the board, and `start` gives the
value of the start position and of each first move (a database of every position).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from devtools.endgames import diffusion_arrays as arrays
from devtools.endgames import diffusion_solve as solve
from devtools.endgames import spaces
from devtools.endgames import zigzag_solve as zz
from games.rules import get_rules


def zigzag_sets(text: str) -> list[tuple[int, int]]:
    """ "6x5,4x3" -> [(6, 5), (4, 3)]: pits per row by seeds per pit."""
    try:
        return [(int(p), int(s)) for p, s in (item.split("x") for item in text.split(","))]
    except ValueError as error:
        raise CommandError(f"--zigzag wants PITSxSEEDS,...: {text!r}") from error


def said(code: int) -> str:
    """A database code in words, for the player to move."""
    if code == 0:
        return "a draw (neither side can force the end)"
    if code > solve.LOSS:
        return f"loses in {code - solve.LOSS} moves (both sides' moves counted)"
    return f"wins in {code} moves (both sides' moves counted)"


def _is_zigzag(path: Path | None) -> bool:
    """Whether `path` is a ZigZag database (its header says so)."""
    header = Path(f"{path}.json")
    return path is not None and header.exists() and '"zigzag"' in header.read_text()


def zigzag_options(text: str) -> tuple[int, int]:
    """ "pits=4,seeds=3" -> (4, 3), the engine's defaults for what is left out, checked by
    the engine's own option rules."""
    from games.rules import InvalidOptions

    try:
        given = {
            k.strip(): int(v) for k, v in (item.split("=") for item in text.split(",") if item)
        }
        rules: Any = get_rules("zigzag", **given)
    except (ValueError, InvalidOptions) as error:
        raise CommandError(f"--options wants pits=P,seeds=S: {text!r} ({error})") from error
    return int(rules.columns), int(rules.seeds)


def margin_said(margin: int) -> str:
    """A ZigZag margin in words, for the player to move."""
    if margin == 0:
        return "as many seeds as the opponent from here on"
    more = "more" if margin > 0 else "fewer"
    return f"{abs(margin)} seeds {more} than the opponent from here on"


class Command(BaseCommand):
    help = "The games' spaces: positions by stones on the board; 2x6 reachability."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("what", choices=["spaces", "build", "verify", "start"])
        parser.add_argument("--most", type=int, default=16, help="build: stones on the board")
        parser.add_argument(
            "--game",
            choices=["diffusion", "four-rank-diffusion", "zigzag"],
            default="diffusion",
            help="build: which board",
        )
        parser.add_argument(
            "--options", default="", help="build, zigzag: pits=P,seeds=S (the game's defaults)"
        )
        parser.add_argument("--out", type=Path, help="build: the database file to write")
        parser.add_argument("--db", type=Path, help="verify: the database file to check")
        parser.add_argument("--samples", type=int, default=100_000, help="verify")
        parser.add_argument("--seed", type=int, default=1, help="verify")
        parser.add_argument(
            "--forward",
            type=int,
            default=0,
            help="verify: also this many positions by a forward search that reads nothing of "
            "the database (devtools/puzzles/prover.py), among those won within 4 own moves",
        )
        parser.add_argument(
            "--upto", type=int, help="verify, zigzag: the forward search's positions' most seeds"
        )
        parser.add_argument(
            "--all",
            action="store_true",
            help="verify, Diffusion: also every position against its own moves"
            " (devtools/endgames/consistency.py)",
        )
        parser.add_argument("--no-reach", action="store_true")
        parser.add_argument(
            "--reached",
            action="store_true",
            help="start, Diffusion: also every position reachable from the start, valued",
        )
        parser.add_argument("--zigzag", default="6x5,4x3,2x7", help="PITSxSEEDS,...")
        parser.add_argument("--sample", type=int, default=2_000_000)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["what"] == "build" and options["game"] == "zigzag":
            self._zigzag_build(options["options"], options["most"], options["out"])
            return
        if options["what"] == "build":
            self._build(options["most"], options["out"], options["game"])
            return
        if options["what"] in ("verify", "start") and _is_zigzag(options["db"]):
            if options["what"] == "start":
                self._zigzag_start(options["db"])
            else:
                self._zigzag_verify(options["db"], options["samples"], options["seed"],
                                    options["upto"])  # fmt: skip
            return
        if options["what"] == "verify":
            self._verify(options["db"], options["samples"], options["seed"])
            if options["all"]:
                self._every_position(options["db"])
            if options["forward"]:
                self._forward(options["db"], options["forward"], options["seed"])
            return
        if options["what"] == "start":
            self._start(options["db"])
            if options["reached"]:
                self._reached(options["db"])
            return
        self._diffusion_counts("diffusion")
        self._diffusion_counts("four-rank-diffusion")
        for pits, seeds in zigzag_sets(options["zigzag"]):
            self._zigzag(pits, seeds)
        self._move_cost(options["sample"])
        if not options["no_reach"]:
            self._reach()

    def _diffusion_counts(self, slug: str) -> None:
        rules: Any = get_rules(slug)
        counts = spaces.by_stones(rules.maximum)
        start = rules.total
        self.stdout.write(
            f"{slug}: {rules.size} pits, {start} stones at the start; boards with k stones on "
            f"them (a position is a board and the side to move, and North's positions are "
            f"South's turned half round: the boards are the distinct positions):"
        )
        shown = counts if len(counts) <= 61 else counts[:25]
        more = "" if len(shown) == len(counts) else ", ..."
        self.stdout.write("  k: " + ", ".join(f"{k}: {n:,}" for k, n in enumerate(shown)) + more)
        self.stdout.write(
            f"  all boards: {sum(counts):,}; with at most k stones, k = 8, 12, 16, 20, 24: "
            + ", ".join(f"{sum(counts[: k + 1]):,}" for k in (8, 12, 16, 20, 24))
        )

    def _zigzag(self, pits: int, seeds: int) -> None:
        holes = 2 * pits
        total = holes * seeds
        # Seeds are not capped in a pit: C(k + holes - 1, holes - 1) arrangements of k seeds.
        # A position adds the side to move (2), the pit the restriction forbids (none or one
        # of the mover's `pits`) and who captured last (nobody, South, North): the leftover
        # seeds go to them at the end, so the value depends on it.
        factor = 2 * (pits + 1) * 3
        rows = []
        for k in (1, 2, 4, 8, 12, 16, 20, total):
            arrangements = math.comb(k + holes - 1, holes - 1)
            rows.append(f"{k}: {arrangements:,} ({arrangements * factor:,})")
        self.stdout.write(
            f"zigzag {pits} pits x {seeds} seeds ({total} seeds): arrangements of k seeds "
            f"(positions at most, x{factor}): " + "; ".join(rows)
        )

    def _move_cost(self, sample: int) -> None:
        tables = arrays.tables()
        rng = np.random.default_rng(1)
        boards = rng.integers(0, arrays.SPACE, size=sample, dtype=np.int64)
        spaces.expand_all(boards[:10], tables)  # compiled first
        began = time.perf_counter()
        moves = spaces.expand_all(boards, tables)
        seconds = time.perf_counter() - began
        self.stdout.write(
            f"diffusion: compiled moves of {sample:,} random boards (every move of each, its "
            f"successor encoded and turned): {seconds / sample * 1e9:.0f} ns a position, "
            f"{seconds / max(1, moves) * 1e9:.1f} ns a move ({moves:,} moves)"
        )
        rules: Any = get_rules("diffusion")
        state = rules.initial_state()
        began = time.perf_counter()
        rounds = 20_000
        for _ in range(rounds):
            for move in rules.legal_moves(state):
                rules.play(state, move)
        seconds = time.perf_counter() - began
        self.stdout.write(
            f"diffusion: the pure engine, every move of the start position: "
            f"{seconds / rounds * 1e6:.1f} us a position"
        )

    def _build(self, most: int, out: Path | None, game: str = "diffusion") -> None:
        if out is None:
            raise CommandError("build needs --out FILE")
        self.stdout.write(f"{game}: every position with at most {most} stones on the board")
        began = time.perf_counter()
        out.parent.mkdir(parents=True, exist_ok=True)
        database = solve.build(most, self.stdout.write, into=out, game=game)
        seconds = time.perf_counter() - began
        out.parent.mkdir(parents=True, exist_ok=True)
        digest = solve.save(database, out)
        codes = database.codes
        decided = int(np.count_nonzero(codes))
        wins = int(np.count_nonzero((codes > 0) & (codes < solve.LOSS)))
        # Code 0: a draw, or a board with a block empty (no game in progress): count those
        # (the two blocks hold the same pits, turned half round).
        rules: Any = get_rules(game)
        block = [rules.maximum[pit] for pit in range(rules.size) if rules.block_of[pit] == 0]
        half = spaces.by_stones(block)
        over = sum(2 * half[k] for k in range(min(most, len(half) - 1) + 1)) - 1
        draws = len(codes) - decided - over
        self.stdout.write(
            f"built in {seconds:.0f} s: {len(codes):,} boards, {over:,} with a block empty; "
            f"of the positions in play {wins:,} won, {decided - wins:,} lost, {draws:,} drawn; "
            f"{out.stat().st_size / 1e6:.0f} MB, sha256 {digest}"
        )

    def _verify(self, path: Path | None, samples: int, seed: int) -> None:
        if path is None:
            raise CommandError("verify needs --db FILE")
        began = time.perf_counter()
        database = solve.load(path)
        self.stdout.write(
            f"{path}: checksum right, positions with at most {database.most} stones "
            f"({time.perf_counter() - began:.1f} s to load and check)"
        )
        began = time.perf_counter()
        checked, wrong = solve.verify(database, samples, seed)
        for line in wrong[:10]:
            self.stdout.write(f"  disagrees: {line}")
        self.stdout.write(
            f"checked {checked:,} positions through the pure engine in "
            f"{time.perf_counter() - began:.0f} s: {len(wrong)} disagreements"
        )
        if wrong:
            raise CommandError("the database disagrees with the engine")
        self._probe_times(path, samples, seed)

    def _every_position(self, path: Path) -> None:
        """Every position in play, layer by layer, against its own moves."""
        from devtools.endgames import consistency

        database = solve.load(path)
        rules: Any = get_rules(database.game)
        tables = arrays.tables(rules)
        total, wrong_total = 0, 0
        for stones in range(database.most + 1):
            began = time.perf_counter()
            checked, wrong, first = consistency.check(
                database.codes, database.offsets, database.ways, tables, range(stones, stones + 1)
            )
            total += checked
            wrong_total += wrong
            self.stdout.write(
                f"  {stones:2} stones: {checked:,} positions against their moves,"
                f" {wrong} disagreements{f' (the first at {first})' if wrong else ''},"
                f" {time.perf_counter() - began:.1f} s"
            )
        self.stdout.write(f"every position: {total:,} checked, {wrong_total} disagreements")
        if wrong_total:
            raise CommandError("the database disagrees with its own moves")

    def _forward(self, path: Path, count: int, seed: int) -> None:
        """Positions drawn at random whose win (for either side) takes at most 4 of the
        winner's moves, each searched by the puzzle finder's exact AND-OR prover on the pure
        engine: the fewest own moves it finds must be the database's."""
        from devtools.puzzles.prover import Prover
        from games.rules.diffusion import DiffusionState

        database = solve.load(path)
        rules: Any = get_rules(database.game)
        rng = np.random.default_rng(seed + 2)
        digits = np.zeros(rules.size, dtype=np.int8)
        south = [pit for pit in range(rules.size) if rules.block_of[pit] == 0]
        north = [pit for pit in range(rules.size) if rules.block_of[pit] == 1]
        agreed = wrong = budget = 0
        began = time.perf_counter()
        while agreed + wrong + budget < count:
            stones = int(rng.integers(2, database.most + 1))
            size = int(database.offsets[stones + 1] - database.offsets[stones])
            solve.unrank(int(rng.integers(0, size)), stones, database.ways, digits)
            pits = tuple(int(d) for d in digits)
            if not any(pits[p] for p in south) or not any(pits[p] for p in north):
                continue
            code = database.code(pits)
            if code == 0:
                continue
            mine = code < solve.LOSS  # the player to move (South) wins
            plies = code if mine else code - solve.LOSS
            own = (plies + 1) // 2 if mine else plies // 2
            if own > 4:
                continue
            state = DiffusionState(pits, (rules.total - sum(pits), 0), 1)
            found = Prover(rules, 1 if mine else 2, nodes=300_000).distance(state, own + 1)
            if found is None:
                budget += 1
            elif found == own:
                agreed += 1
            else:
                wrong += 1
                self.stdout.write(f"  disagrees: {pits}: the database {own}, the search {found}")
        self.stdout.write(
            f"forward search (no database) on {count:,} positions won within 4 own moves, "
            f"{time.perf_counter() - began:.0f} s: {agreed:,} agree, {wrong} disagree, "
            f"{budget:,} past the search's budget"
        )
        if wrong:
            raise CommandError("the forward search disagrees with the database")

    def _probe_times(self, path: Path, samples: int, seed: int) -> None:
        """The product's probe (games/endgames.py, the standard library only): its time for
        positions drawn at random, each of them a lookup the way the API and the bots make
        it, and its agreement with the tooling's reading."""
        from games.endgames import DiffusionTable

        table = DiffusionTable(path)
        database = solve.load(path)
        rng = np.random.default_rng(seed + 1)
        digits = np.zeros(len(table.maxima), dtype=np.int8)
        times = []
        for _ in range(samples):
            stones = int(rng.integers(1, database.most + 1))
            size = int(database.offsets[stones + 1] - database.offsets[stones])
            solve.unrank(int(rng.integers(0, size)), stones, database.ways, digits)
            pits = tuple(int(d) for d in digits)
            began = time.perf_counter()
            verdict = table.probe(pits, 1)
            times.append((time.perf_counter() - began) * 1000)
            code = database.code(pits)
            if verdict is None or verdict.result != (
                "draw" if code == 0 else "loss" if code > solve.LOSS else "win"
            ):
                raise CommandError(f"the probe disagrees with the tooling on {pits}")
        times.sort()
        self.stdout.write(
            f"the product's probe, {samples:,} positions: p50 {times[len(times) // 2]:.3f} ms, "
            f"p99 {times[int(len(times) * 0.99)]:.3f} ms, max {times[-1]:.3f} ms; it agrees"
        )

    def _start(self, path: Path | None) -> None:
        if path is None:
            raise CommandError("start needs --db FILE")
        database = solve.load(path)
        rules: Any = get_rules("diffusion")
        state = rules.initial_state()
        if database.most < sum(state.pits):
            raise CommandError(f"{path} covers {database.most} stones; the start has 48")
        self.stdout.write(
            f"Diffusion (2x6), the start, South to move: {said(database.code(state.pits))}"
        )
        for move in rules.legal_moves(state):
            after = rules.play(state, move)
            code = database.code(tuple(reversed(after.pits)))  # North to move, turned
            self.stdout.write(f"  South plays {move}: North to move, North {said(code)}")

    def _reached(self, path: Path) -> None:
        database = solve.load(path)
        self.stdout.write("every position reachable from the start, South to move (North's "
                          "turned half round), valued...")  # fmt: skip
        reached = spaces.reachable()
        began = time.perf_counter()
        values = solve.values_of(database, reached.seen)
        won, lost, drawn = sum(values.won), sum(values.lost), sum(values.drawn)
        self.stdout.write(
            f"  {reached.positions:,} reachable (found in {reached.seconds:.0f} s, valued in "
            f"{time.perf_counter() - began:.0f} s): {won:,} won for the side to move, "
            f"{lost:,} lost, {drawn:,} drawn, {values.beyond:,} beyond the database; the "
            f"longest win {values.longest_win} moves, the longest loss {values.longest_loss}"
        )
        rows = [
            f"{k}: {w:,}/{lo:,}/{d:,}"
            for k, (w, lo, d) in enumerate(zip(values.won, values.lost, values.drawn, strict=True))
            if w or lo or d
        ]
        self.stdout.write("  by stones on the board (won/lost/drawn): " + ", ".join(rows))

    def _reach(self) -> None:
        self.stdout.write("diffusion: every position reachable from the start (South to move, "
                          "North's turned half round)...")  # fmt: skip
        reached = spaces.reachable()
        self.stdout.write(
            f"  {reached.positions:,} positions reachable, in {reached.seconds:.0f} s "
            f"({reached.per_position_ns:.0f} ns a position); moves that end the game: "
            f"{reached.winning_moves:,} win for the mover, {reached.losing_moves:,} lose"
        )
        self.stdout.write(
            "  by stones on the board: "
            + ", ".join(f"{k}: {n:,}" for k, n in enumerate(reached.by_stones) if n)
        )

    # --- ZigZag ----------------------------------------------------------------------------

    def _zigzag_build(self, text: str, most: int, out: Path | None) -> None:
        if out is None:
            raise CommandError("build needs --out FILE")
        columns, seeds = zigzag_options(text)
        total = 2 * columns * seeds
        most = min(most, total)
        self.stdout.write(
            f"zigzag {columns}x{seeds} ({total} seeds): every position with at most {most} "
            f"seeds on the board"
        )
        began = time.perf_counter()
        out.parent.mkdir(parents=True, exist_ok=True)
        database = zz.build(columns, seeds, most, self.stdout.write, into=out)
        seconds = time.perf_counter() - began
        digest = zz.save(database, out)
        positions = sum(int(layer["positions"]) for layer in database.layers)
        farthest = max((int(layer["farthest"]) for layer in database.layers), default=0)
        self.stdout.write(
            f"built in {seconds:.0f} s: {positions:,} positions ({len(database.values):,} "
            f"slots) in the layers built now; the farthest last capture {farthest} moves; "
            f"{out.stat().st_size / 1e6:.0f} MB, sha256 {digest}"
        )
        if most == total:
            self._zigzag_start(out)

    def _zigzag_verify(self, path: Path, samples: int, seed: int, upto: int | None) -> None:
        from devtools.endgames import zigzag_verify as check

        began = time.perf_counter()
        database = zz.load(path)
        self.stdout.write(
            f"{path}: checksum right, zigzag {database.columns}x{database.seeds}, positions with "
            f"at most {database.most} seeds ({time.perf_counter() - began:.1f} s to load and check)"
        )
        wrong = 0
        local = "through the engine (each value what its moves make it)"
        searched = f"by the forward search (no database), at most {upto or database.most} seeds"
        for name, report in (
            (local, check.local(database, samples, seed)),
            (searched, check.forward(database, samples, seed, upto)),
        ):
            for line in report.wrong[:10]:
                self.stdout.write(f"  disagrees: {line}")
            self.stdout.write(
                f"checked {report.checked:,} positions {name} in {report.seconds:.0f} s: "
                f"{len(report.wrong)} disagreements"
            )
            wrong += len(report.wrong)
        if wrong:
            raise CommandError("the database disagrees with the engine")
        self._zigzag_probe_times(path, samples, seed)

    def _zigzag_probe_times(self, path: Path, samples: int, seed: int) -> None:
        """The product's probe (games/endgames.py) on positions drawn at random: its time,
        and its agreement with the tooling's reading."""
        from games.endgames import ZigZagTable

        table = ZigZagTable(path)
        database = zz.load(path)
        rng = np.random.default_rng(seed + 3)
        times: list[float] = []
        while len(times) < samples:
            found = zz.position_at(database, int(rng.integers(0, len(database.values))))
            if found is None:
                continue
            began = time.perf_counter()
            have = table.value(*found)
            times.append((time.perf_counter() - began) * 1000)
            if have != database.value(*found):
                raise CommandError(f"the probe disagrees with the tooling on {found}")
        times.sort()
        self.stdout.write(
            f"the product's probe, {samples:,} positions: p50 {times[len(times) // 2]:.3f} ms, "
            f"p99 {times[int(len(times) * 0.99)]:.3f} ms, max {times[-1]:.3f} ms; it agrees"
        )

    def _zigzag_start(self, path: Path) -> None:
        database = zz.load(path)
        rules: Any = zz.rules_of(database.columns, database.seeds)
        if database.most < rules.total:
            raise CommandError(f"{path} covers {database.most} seeds; the start has {rules.total}")
        state = rules.initial_state()
        start = rules.pack([rules.seeds] * rules.size)
        margin, distance = database.value(tuple(rules.unpack(start)), 0, 0)
        self.stdout.write(
            f"ZigZag {database.columns}x{database.seeds}, the start, South to move: South gets "
            f"{margin_said(margin)} (the last capture in {distance} moves)"
        )
        from games.endgames import ZigZagTable, zigzag_move

        table = ZigZagTable(path)
        for move in rules.legal_moves(state):
            verdict = zigzag_move(table, rules, state, move)
            assert verdict is not None and verdict.margin is not None
            self.stdout.write(
                f"  South plays {move}: South's final margin {verdict.margin:+d} "
                f"({verdict.result}; the last capture {verdict.moves} moves from the start)"
            )
