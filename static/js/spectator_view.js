// A game as a spectator sees it, drawn from the frames of the spectator's protocol (the game
// socket's, and the TV socket's, which sends the same ones): the board, the players with
// their clocks, and a line saying whose move it is or how the game ended. It draws what the
// server sends and decides nothing (docs/PROTOCOL.md).
/* global gettext, interpolate */
import { drawStill } from "./boards/still.js";

function clockText(ms) {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  const minutes = Math.floor(seconds / 60);
  return minutes >= 60
    ? `${Math.floor(minutes / 60)}:${String(minutes % 60).padStart(2, "0")}:${String(seconds % 60).padStart(2, "0")}`
    : `${minutes}:${String(seconds % 60).padStart(2, "0")}`;
}

// `parts`: {root, board, players: {1: element, 2: element}, status, name}. The root gets
// data-ply and data-status as the game goes on.
export function spectatorView(parts) {
  const seen = { v: 0, game: null, lastMove: null, clock: null, receivedAt: 0, name: parts.name };

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
      parts.players[seat].textContent = `${game.players[seat].username}${left}${mark}`;
    }
  }

  function draw() {
    const game = seen.game;
    if (!game) return;
    drawStill(parts.board, {
      name: seen.name, board: game.board, state: game.state, players: game.players,
      lastMove: seen.lastMove, ply: game.ply,
    });
    drawPlayers();
    if (game.result) {
      const { winner, reason } = game.result;
      parts.status.textContent = winner
        ? interpolate(gettext("%(name)s wins: %(reason)s"), { name: game.players[winner].username, reason }, true)
        : interpolate(gettext("A draw: %(reason)s"), { reason }, true);
    } else {
      parts.status.textContent = interpolate(gettext("Move %(ply)s, %(name)s to play"), {
        ply: game.ply + 1, name: game.players[game.to_move].username,
      }, true);
    }
    parts.root.dataset.ply = String(game.ply);
    parts.root.dataset.status = game.status;
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
    },
    takeback(event) {
      Object.assign(seen.game, { state: event.state, ply: event.ply, to_move: event.to_move });
      seen.lastMove = null;
      setClock(event.clock);
    },
  };

  setInterval(() => { if (seen.game && !seen.game.result) drawPlayers(); }, 1000);

  return {
    // One frame. Answers "over" when it shows the game ended (its snapshot or its `end`),
    // "gap" when a version is missing (the page asks for it), else null.
    receive(message) {
      if (message.type === "state") {
        seen.v = message.v;
        seen.game = message.game;
        const moves = message.game.moves || [];
        seen.lastMove = moves.length ? moves[moves.length - 1].notation : null;
        setClock(message.game.clock);
        draw();
        return message.game.status !== "active" ? "over" : null;
      }
      if (message.v === undefined || !seen.game) return null; // crowd, chat and the like
      if (message.v <= seen.v) return null;
      if (message.v !== seen.v + 1) return "gap";
      seen.v = message.v;
      if (!Object.hasOwn(EVENTS, message.type)) return null;
      EVENTS[message.type](message);
      draw();
      return message.type === "end" ? "over" : null;
    },
    // Another game comes (TV): nothing of the last one is kept.
    reset(name) {
      Object.assign(seen, { v: 0, game: null, lastMove: null, clock: null, name });
    },
    get v() { return seen.v; },
    get shown() { return seen.game !== null; },
  };
}
