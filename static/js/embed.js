// A game framed on another site (/embed/<id>/): the board, the players with their clocks and
// the result, kept live by the game's spectator socket (docs/PROTOCOL.md). It draws what the
// server sends and decides nothing.
/* global gettext, interpolate */
import { drawStill } from "./boards/still.js";
import { CLOSE, openSocket } from "./socket.js";

const root = document.getElementById("embed");
const gameId = Number(root.dataset.gameId);
const seen = { v: 0, game: null, lastMove: null, clock: null, receivedAt: 0 };

function draw() {
  const game = seen.game;
  if (!game) return;
  drawStill(document.getElementById("board"), {
    name: root.dataset.name, board: game.board, state: game.state, players: game.players,
    lastMove: seen.lastMove, ply: game.ply,
  });
  drawPlayers();
  const status = document.getElementById("embed-status");
  if (game.result) {
    const { winner, reason } = game.result;
    status.textContent = winner
      ? interpolate(gettext("%(name)s wins: %(reason)s"), { name: game.players[winner].username, reason }, true)
      : interpolate(gettext("A draw: %(reason)s"), { reason }, true);
  } else {
    status.textContent = interpolate(gettext("Move %(ply)s, %(name)s to play"), {
      ply: game.ply + 1, name: game.players[game.to_move].username,
    }, true);
  }
  root.dataset.ply = String(game.ply);
  root.dataset.status = game.status;
}

function clockText(ms) {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  const minutes = Math.floor(seconds / 60);
  return minutes >= 60
    ? `${Math.floor(minutes / 60)}:${String(minutes % 60).padStart(2, "0")}:${String(seconds % 60).padStart(2, "0")}`
    : `${minutes}:${String(seconds % 60).padStart(2, "0")}`;
}

function drawPlayers() {
  const game = seen.game;
  for (const seat of [1, 2]) {
    const clock = seen.clock;
    let left = "";
    if (clock && clock.remaining && clock.kind === "realtime") {
      const running = clock.running === seat ? Date.now() - seen.receivedAt : 0;
      left = ` · ${clockText(clock.remaining[seat - 1] - running)}`;
    }
    const mark = !game.result && game.to_move === seat ? " ●" : "";
    document.getElementById(`player-${seat}`).textContent = `${game.players[seat].username}${left}${mark}`;
  }
}

function setClock(clock) {
  seen.clock = clock || null;
  seen.receivedAt = Date.now();
}

const EVENTS = {
  move(event) {
    Object.assign(seen.game, {
      state: event.state, ply: event.ply, to_move: event.to_move, status: event.status, result: event.result,
    });
    seen.lastMove = event.move;
    setClock(event.clock);
  },
  end(event) {
    Object.assign(seen.game, { status: event.status, result: event.result });
    setClock(event.clock);
    tellTheFramingPage();
  },
  takeback(event) {
    Object.assign(seen.game, { state: event.state, ply: event.ply, to_move: event.to_move });
    seen.lastMove = null;
    setClock(event.clock);
  },
};

// The page that frames this one hears that the game is over (the site's TV goes on to the
// next game; another site may do what it likes with it). Nothing else is said to it.
function tellTheFramingPage() {
  if (window.parent !== window) window.parent.postMessage({ type: "game-over", game: gameId }, "*");
}

function receive(message) {
  if (message.type === "state") {
    seen.v = message.v;
    seen.game = message.game;
    const moves = message.game.moves || [];
    seen.lastMove = moves.length ? moves[moves.length - 1].notation : null;
    setClock(message.game.clock);
    draw();
    root.dataset.ready = "true";
    if (message.game.status !== "active") tellTheFramingPage();
    return;
  }
  if (message.v === undefined || !seen.game) return; // crowd, chat and the like: not drawn
  if (message.v <= seen.v) return;
  if (message.v !== seen.v + 1) {
    socket.send({ type: "sync", v: seen.v }); // a gap: the server sends what was missed
    return;
  }
  seen.v = message.v;
  if (Object.hasOwn(EVENTS, message.type)) {
    EVENTS[message.type](message);
    draw();
  }
}

const socket = openSocket(`/ws/games/${gameId}/`, {
  onMessage: receive,
  resync: () => (seen.game ? { v: seen.v } : null),
  stopOn: { [CLOSE.NO_SUCH_GAME]: () => { document.getElementById("embed-status").textContent = gettext("no such game"); } },
});
socket.start();
setInterval(() => { if (seen.game && !seen.game.result) drawPlayers(); }, 1000);
