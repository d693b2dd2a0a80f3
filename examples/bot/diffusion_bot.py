#!/usr/bin/env python3
"""A bot for the Diffusion site: runs an engine that speaks the text protocol of docs/BOTS.md.

    export DIFFUSION_TOKEN=dif_...    # a token with the `bot` scope (/settings/tokens/)
    python diffusion_bot.py --url http://127.0.0.1:8000 --engine "python random_engine.py"
    python diffusion_bot.py --engine "python -m devtools engine --level 3" --challenge alice

It follows the account's event stream (GET /api/stream/event), accepts the challenges it is
told to accept and declines the others with a reason, and plays every game that starts: one
engine process per game, one thread per game reading the game's stream
(GET /api/games/<id>/stream), asking the engine on the bot's turn and sending its move
(POST /api/games/<id>/move). A stream that drops is opened again (a game's from its state).

The Python standard library only, so that it can be copied anywhere Python 3.9+ runs.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shlex
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

log = logging.getLogger("diffusion_bot")

GAMES = ("diffusion", "four-rank-diffusion", "diffusion-chess", "zigzag")
# The server sends an empty line every 5 s: this long without a byte means the connection died.
STREAM_TIMEOUT = 30.0
ENGINE_TIMEOUT = 600.0  # the longest an engine may think before the bot gives up on it


class ApiError(Exception):
    """A refusal of the site's: `code` (docs/PROTOCOL.md's error codes) and its message."""

    def __init__(self, status: int, code: str, message: str, retry_after: float = 0.0) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message, self.retry_after = status, code, message, retry_after


class Site:
    """The site's HTTP API, with the token."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip("/")
        self.token = token

    def _request(self, method: str, path: str, body: object = None) -> urllib.request.Request:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        return urllib.request.Request(self.url + path, data=data, headers=headers, method=method)

    def call(self, method: str, path: str, body: object = None, tries: int = 5) -> dict:
        """One JSON request; ApiError for a refusal. A 429 (rate limited) waits as long as the
        server says and tries again."""
        for attempt in range(tries):
            try:
                with urllib.request.urlopen(self._request(method, path, body), timeout=30) as r:
                    return json.loads(r.read() or b"{}")
            except urllib.error.HTTPError as error:
                failure = _api_error(error)
                if failure.code == "rate_limited" and attempt + 1 < tries:
                    time.sleep(max(failure.retry_after, 0.5))
                    continue
                raise failure from None
        raise AssertionError("unreachable")

    def post(self, path: str, body: object = None) -> dict:
        return self.call("POST", path, {} if body is None else body)

    def stream(self, path: str):  # -> Iterator[dict]
        """The NDJSON lines of a stream, decoded; keep-alives (empty lines) are skipped. Ends
        when the server ends the response; OSError when the connection fails."""
        request = self._request("GET", path)
        request.add_header("Accept", "application/x-ndjson")
        try:
            response = urllib.request.urlopen(request, timeout=STREAM_TIMEOUT)
        except urllib.error.HTTPError as error:
            raise _api_error(error) from None
        with response:
            while True:
                line = response.readline()
                if not line:
                    return
                if line.strip():
                    yield json.loads(line)


def _api_error(error: urllib.error.HTTPError) -> ApiError:
    try:
        body = json.loads(error.read() or b"{}").get("error") or {}
    except ValueError:
        body = {}
    retry = body.get("retry_after") or error.headers.get("Retry-After") or 0
    return ApiError(
        error.code, body.get("code", "http_error"), body.get("message", error.reason), float(retry)
    )


class Engine:
    """An engine process speaking docs/BOTS.md's protocol, for one game."""

    def __init__(self, command: str, slug: str, options: dict) -> None:
        self.process = subprocess.Popen(
            shlex.split(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.send(f"game {slug} {json.dumps(options, separators=(',', ':'))}")

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def think(self, position: str, moves: list[str], mine: str, theirs: str) -> str:
        """The engine's move for this position: `position`, `moves`, `go`, then its `move`
        line (other lines it prints are logged and skipped)."""
        self.send(f"position {position}")
        self.send("moves " + " ".join(moves))
        self.send(f"go {mine} {theirs}")
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the engine exited (code {self.process.poll()})")
            word, _, rest = line.strip().partition(" ")
            if word == "move" and rest.strip():
                return rest.strip()
            if line.strip():
                log.info("engine: %s", line.strip())

    def quit(self) -> None:
        try:
            self.send("quit")
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()


def restart_pause(line: dict) -> float:
    """After a `restarting` line (the server process stops; the stream ends next), how long
    to wait before opening the stream again: a random moment, so that every bot does not
    come back at once. 0 for any other line."""
    if line.get("type") != "restarting":
        return 0.0
    return random.uniform(0.1, max(0.1, line.get("within_ms", 1000) / 1000))


def listed_moves(legal: object) -> list[str]:
    """The `moves` line from a game's `legal_moves`: the list itself, or for Diffusion Chess
    (an object) one path to each cell each stone can reach, and `echo` when it is legal."""
    if isinstance(legal, dict):
        moves = [
            path for cells in legal.get("destinations", {}).values() for path in cells.values()
        ]
        return moves + (["echo"] if legal.get("echo") else [])
    return [str(move) for move in legal] if isinstance(legal, list) else []


class GamePlayer(threading.Thread):
    """Plays one game: reads its stream, answers on the bot's turn, until the game ends."""

    def __init__(self, bot: Bot, game_id: int) -> None:
        super().__init__(name=f"game-{game_id}", daemon=True)
        self.bot, self.site, self.game_id = bot, bot.site, game_id
        self.engine: Engine | None = None
        self.you = 0
        self.v = -1  # the last version seen
        self.view: dict = {}
        self.asked_ply = -1  # the ply the engine last answered (never asked twice)
        self.clock_at = time.monotonic()  # when the view's clock figures arrived

    def run(self) -> None:
        try:
            self.play()
        except Exception:
            log.exception("game %s: stopped", self.game_id)
        finally:
            if self.engine is not None:
                self.engine.quit()
            self.bot.game_over(self.game_id)

    def play(self) -> None:
        delay = 1.0
        while True:
            try:
                # Opened again after a drop, it starts again from the game's `state`.
                for line in self.site.stream(f"/api/games/{self.game_id}/stream"):
                    delay = restart_pause(line) or 1.0
                    if self.handle(line):
                        return
                if self.finished():
                    return
                log.info("game %s: the stream ended; opening it again", self.game_id)
            except ApiError as error:
                if error.code in ("no_such_game", "bad_token"):
                    log.error("game %s: %s", self.game_id, error)
                    return
                # too_many_streams: the server has not yet seen the dropped stream go.
                delay = max(delay, error.retry_after)
                log.warning("game %s: %s; trying again in %.0f s", self.game_id, error, delay)
            except (OSError, ValueError) as error:
                log.warning("game %s: stream lost (%s); trying again", self.game_id, error)
            time.sleep(delay)
            delay = min(delay * 2, 30.0)

    def finished(self) -> bool:
        return bool(self.view) and self.view.get("status") != "active"

    def handle(self, line: dict) -> bool:
        """Take one stream line into the view; answer if it is the bot's turn. True once the
        game is over."""
        kind = line.get("type")
        if "clock" in line or kind == "state":
            self.clock_at = time.monotonic()
        if kind == "state":
            game = line["game"]
            self.you = line.get("you") or 0
            self.v = line.get("v", self.v)
            self.view = {key: game.get(key) for key in ("status", "to_move", "ply", "clock")}
            self.view["legal_moves"] = game.get("legal_moves")
            self.view["position"] = line.get("position")
            if self.engine is None and self.you and game.get("status") == "active":
                self.engine = Engine(self.bot.engine_command, game["slug"], game["options"])
        elif "v" in line:
            if line["v"] <= self.v:
                return False  # already in the state (the server sends none twice: be sure)
            self.v = line["v"]
            if kind == "move":
                for key in ("status", "to_move", "ply", "clock", "legal_moves", "position"):
                    self.view[key] = line.get(key)
            elif kind == "end":
                self.view["status"] = line.get("status", "finished")
            elif kind == "takeback":
                for key in ("to_move", "ply", "clock", "legal_moves", "position"):
                    self.view[key] = line.get(key)
                self.asked_ply = -1  # a ply answered before may be the bot's to play again
            elif kind in ("draw_offer", "takeback_offer") and line.get("by") != self.you:
                self.answer_offer(kind)
        if self.finished():
            log.info("game %s: over (%s)", self.game_id, self.view.get("status"))
            return True
        if self.you and self.view.get("to_move") == self.you:
            self.move()
        return False

    def answer_offer(self, kind: str) -> None:
        """Engines do not take moves back or agree draws: decline."""
        action = "draw_answer" if kind == "draw_offer" else "takeback_answer"
        try:
            self.site.post(f"/api/games/{self.game_id}/{action}", {"accept": False})
        except ApiError as error:
            log.info("game %s: %s: %s", self.game_id, action, error)

    def clocks(self) -> tuple[str, str]:
        """The `go` line's times: the bot's and its opponent's milliseconds, or `-`."""
        clock = self.view.get("clock")
        if not clock:
            return "-", "-"
        remaining = list(clock["remaining"])
        running = clock.get("running")
        if running in (1, 2):
            # The figures are as of when the line was sent: the running clock ran on since.
            spent = int((time.monotonic() - self.clock_at) * 1000)
            remaining[running - 1] = max(0, remaining[running - 1] - spent)
        return str(remaining[self.you - 1]), str(remaining[2 - self.you])

    def move(self) -> None:
        ply = self.view["ply"]
        if ply == self.asked_ply or self.engine is None:
            return
        moves = listed_moves(self.view.get("legal_moves"))
        position = self.view.get("position")
        if not position:
            raise RuntimeError("the game stream gave no position")
        mine, theirs = self.clocks()
        move = self.engine.think(position, moves, mine, theirs)
        try:
            self.site.post(f"/api/games/{self.game_id}/move", {"move": move, "ply": ply})
            self.asked_ply = ply
        except ApiError as error:
            # Answered: not asked again for this ply, whatever the stream repeats. (A move
            # whose POST failed on the way is asked for again once the stream is back: the
            # server may not have had it, and if it had, `ply` makes a second one harmless.)
            self.asked_ply = ply
            if error.code == "illegal_move" and moves:
                # The engine is wrong: a listed move rather than losing on time.
                log.error("game %s: engine's move %r refused (%s)", self.game_id, move, error)
                fallback = random.choice(moves)
                self.site.post(f"/api/games/{self.game_id}/move", {"move": fallback, "ply": ply})
            else:
                # The game moved on meanwhile (an end, a takeback): the stream will say.
                log.info("game %s: move %r: %s", self.game_id, move, error)


class Bot:
    def __init__(self, site: Site, args: argparse.Namespace) -> None:
        self.site = site
        self.args = args
        self.engine_command: str = args.engine
        self.accepted = set(GAMES if args.accept == "all" else args.accept.split(","))
        self.lock = threading.Lock()
        self.playing: dict[int, GamePlayer] = {}
        self.ended: set[int] = set()
        self.sent: set[int] = set()  # the challenges this bot made (not for it to accept)
        self.done = threading.Event()
        self.fatal = ""  # why the bot must stop
        self.username = ""

    # --- games ---------------------------------------------------------------------------

    def start_game(self, game_id: int) -> None:
        with self.lock:
            if game_id in self.playing or game_id in self.ended:
                return
            player = GamePlayer(self, game_id)
            self.playing[game_id] = player
        log.info("game %s: starting", game_id)
        player.start()

    def game_over(self, game_id: int) -> None:
        with self.lock:
            self.playing.pop(game_id, None)
            self.ended.add(game_id)
            if self.args.games_to_play and len(self.ended) >= self.args.games_to_play:
                self.done.set()

    # --- challenges ----------------------------------------------------------------------

    def refusal(self, challenge: dict) -> str | None:
        """Why the bot declines this challenge, or None to accept it."""
        if challenge.get("slug") not in self.accepted:
            return "This bot plays " + ", ".join(sorted(self.accepted)) + " only."
        rated = bool(challenge.get("rated"))
        if rated and self.args.casual_only:
            return "This bot plays casual games only."
        if not rated and self.args.rated_only:
            return "This bot plays rated games only."
        if not challenge.get("time_control") and not self.args.untimed:
            return "This bot plays timed games only."
        with self.lock:
            if len(self.playing) >= self.args.max_games:
                return "This bot is playing as many games as it can; try again later."
        return None

    def on_challenge(self, challenge: dict) -> None:
        mine = challenge.get("id") in self.sent or challenge.get("challenger") == self.username
        if challenge.get("status") != "pending" or mine:
            return
        reason = self.refusal(challenge)
        action = "accept" if reason is None else "decline"
        try:
            answer = self.site.post(
                f"/api/challenges/{challenge['id']}/{action}",
                None if reason is None else {"reason": reason},
            )
        except ApiError as error:
            log.info("challenge %s: %s: %s", challenge["id"], action, error)
            return
        log.info("challenge %s from %s: %sed", challenge["id"], challenge.get("challenger"), action)
        if reason is None and answer.get("game_id"):
            self.start_game(int(answer["game_id"]))

    def send_challenges(self) -> None:
        for spec in self.args.game or ["diffusion"]:
            slug, _, options = spec.partition(":")
            body = {
                "user": self.args.challenge,
                "slug": slug,
                "options": json.loads(options) if options else {},
                "side": "random",
                "time_control": self.args.time_control,
                "rated": self.args.rated,
            }
            answer = self.site.post("/api/challenges", body)
            self.sent.add(answer["challenge"]["id"])
            log.info("challenged %s to %s: %s", self.args.challenge, spec, answer.get("challenge"))

    def seek(self) -> None:
        games = []
        for spec in self.args.game or ["diffusion"]:
            slug, _, options = spec.partition(":")
            games.append({"slug": slug, "options": json.loads(options) if options else {}})
        body = {"games": games, "time_control": self.args.time_control, "rated": self.args.rated}
        answer = self.site.post("/api/seeks", body)
        log.info("seeking: %s", answer)

    # --- the event stream ----------------------------------------------------------------

    def on_event(self, event: dict) -> None:
        kind = event.get("type")
        if kind == "game_start":
            self.start_game(int(event["game"]["id"]))
        elif kind == "challenge":
            self.on_challenge(event["challenge"])
        elif kind in ("challenge_declined", "challenge_cancelled"):
            log.info("%s: %s", kind, event.get("challenge", {}).get("id"))

    def follow_events(self) -> None:
        """The account's event stream, opened again whenever it drops (on opening it names
        every active game and pending challenge again, so nothing is missed)."""
        delay = 1.0
        while not self.done.is_set():
            try:
                for event in self.site.stream("/api/stream/event"):
                    delay = restart_pause(event) or 1.0
                    self.on_event(event)
                    if self.done.is_set():
                        return
            except ApiError as error:
                if error.status in (401, 403):
                    self.fatal = f"the site refused the token: {error}"
                    self.done.set()
                    return
                log.warning("event stream: %s; trying again in %.0f s", error, delay)
            except (OSError, ValueError) as error:
                log.warning("event stream lost (%s); trying again in %.0f s", error, delay)
            self.done.wait(delay)
            delay = min(delay * 2, 30.0)

    def run(self) -> None:
        try:
            # Who the bot is (the lobby's snapshot names its reader): a wrong token or URL
            # fails here, at once.
            me = self.site.call("GET", "/api/lobby").get("user") or {}
        except (ApiError, OSError) as error:
            raise SystemExit(f"{self.site.url}: {error}") from None
        self.username = me.get("username", "")
        log.info("playing as %s", self.username)
        events = threading.Thread(target=self.follow_events, name="events", daemon=True)
        events.start()
        try:
            if self.args.challenge:
                time.sleep(0.5)  # the stream first, so that the answer's game_start is seen
                self.send_challenges()
            if self.args.seek:
                self.seek()
            for tournament in self.args.join or ():
                # An arena's (or a Swiss's, a round robin's) games then come as game_start.
                try:
                    self.site.post(f"/api/tournaments/{tournament}/join")
                except ApiError as refusal:
                    if refusal.code != "already_joined":  # a bot started again
                        raise
                log.info("in tournament %s", tournament)
        except (ApiError, OSError) as error:
            raise SystemExit(f"{self.site.url}: {error}") from None
        while not self.done.is_set() and events.is_alive():
            self.done.wait(0.5)
        # Let the last games' threads stop their engines.
        for player in list(self.playing.values()):
            player.join(timeout=10)
        if self.fatal:
            raise SystemExit(self.fatal)


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("DIFFUSION_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--engine", required=True, help='the engine\'s command, e.g. "./engine"')
    parser.add_argument(
        "--accept",
        default="all",
        help="the games whose challenges it accepts, comma-separated slugs, or all (default)",
    )
    parser.add_argument("--casual-only", action="store_true", help="decline rated challenges")
    parser.add_argument("--rated-only", action="store_true", help="decline casual challenges")
    parser.add_argument("--untimed", action="store_true", help="accept untimed games too")
    parser.add_argument("--max-games", type=int, default=4, help="games at once (default 4)")
    parser.add_argument("--challenge", metavar="USER", help="challenge this player at start")
    parser.add_argument("--seek", action="store_true", help="seek a game at start")
    parser.add_argument(
        "--join",
        metavar="TOURNAMENT",
        type=int,
        action="append",
        help="join this tournament (its number) at start; it must let bot accounts join",
    )
    parser.add_argument(
        "--game",
        action="append",
        metavar="SLUG[:OPTIONS]",
        help='with --challenge or --seek: the game, e.g. zigzag:{"pits":4} (repeat for more)',
    )
    parser.add_argument("--time-control", default="5+3", help='"M+S", "Nd" or "" (untimed)')
    parser.add_argument("--rated", action="store_true", help="with --challenge/--seek: rated")
    parser.add_argument(
        "--games-to-play", type=int, default=0, help="exit after this many games (0: never)"
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = arguments(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(threadName)s %(message)s",
    )
    token = os.environ.get("DIFFUSION_TOKEN", "")
    if not token:
        sys.exit("Set DIFFUSION_TOKEN to a token with the bot scope (/settings/tokens/).")
    Bot(Site(args.url, token), args).run()


if __name__ == "__main__":
    main()
