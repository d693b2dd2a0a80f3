// The game in words, for screen readers and anyone who wants it: the position described
// (one key, D, away on the board) and what happens announced through ARIA live regions.
// Drawing in words, as the boards draw in pictures: no rules here, only what the server said.
/* global gettext, ngettext, interpolate */

import { blockLabel } from "../boards/svg.js";

const $ = (id) => document.getElementById(id);

// Said once, politely (moves, the end), or at once (the player's own clock running low).
export function announce(text, urgent = false) {
  const log = $(urgent ? "announce-urgent" : "announce");
  if (!log || !text) return;
  const line = document.createElement("p");
  line.textContent = text;
  log.append(line);
  while (log.children.length > 5) log.firstElementChild.remove();
}

const sideName = (game, seat, you) => {
  const name = game.players[String(seat)].username;
  return you === seat ? interpolate(gettext("%(name)s (you)"), { name }, true) : name;
};

// "alice wins — by resignation", "Draw — by agreement", "Aborted — …".
export function resultText(result, players) {
  const { winner, reason, termination } = result;
  const words = winner ? gettext("%(name)s wins — %(reason)s")
    : termination === "abort" ? gettext("Aborted — %(reason)s") : gettext("Draw — %(reason)s");
  return interpolate(words, { name: winner ? players[String(winner)].username : "", reason }, true);
}

export function describe(game, state, you) {
  const lines = game.board.renderer === "grid" ? describeGrid(game, state, you) : describePits(game, state, you);
  if (game.result) lines.push(interpolate(gettext("Game over: %(result)s."), { result: resultText(game.result, game.players) }, true));
  else lines.push(interpolate(gettext("%(name)s to move."), { name: sideName(game, game.to_move, you) }, true));
  return lines;
}

// Pit boards: row by row as South sees the board (North's side at the top), then the stores.
function describePits(game, state, you) {
  const { names, blocks } = game.board;
  const rows = state.rows;
  const lines = rows.map((row, r) => {
    const words = r === 0 ? gettext("Row %(row)s of %(rows)s, North's side (%(player)s), left to right: %(pits)s.")
      : r === rows.length - 1 ? gettext("Row %(row)s of %(rows)s, South's side (%(player)s), left to right: %(pits)s.")
        : gettext("Row %(row)s of %(rows)s, left to right: %(pits)s.");
    const player = r === 0 ? sideName(game, 2, you) : sideName(game, 1, you);
    const pits = row.map((count, c) => `${names[r][c]} ${count}`).join(", ");
    return interpolate(words, { row: r + 1, rows: rows.length, player, pits }, true);
  });
  for (const block of blocks) {
    const [first, last] = block.columns;
    lines.push(interpolate(gettext("%(block)s, columns %(first)s to %(last)s: %(player)s's."), {
      block: blockLabel(block.label), first: first + 1, last: last + 1, player: sideName(game, block.owner, you),
    }, true));
  }
  if (state.stores) {
    lines.push(interpolate(gettext("Stores: left %(left)s, right %(right)s."), { left: state.stores[0], right: state.stores[1] }, true));
  }
  if (state.captured) {
    lines.push(interpolate(gettext("Captured: South %(south)s, North %(north)s."), {
      south: state.captured[0], north: state.captured[1],
    }, true));
  }
  return lines;
}

// Diffusion Chess: each side's stones by file, its king, then where the turn stands.
function describeGrid(game, state, you) {
  const kings = state.kings || {};
  const order = (a, b) => a[0].localeCompare(b[0]) || Number(a.slice(1)) - Number(b.slice(1));
  const lines = [["white", 1], ["black", 2]].map(([colour, seat]) => {
    const stones = [...state[colour]].sort(order);
    const values = {
      side: colour === "white" ? gettext("White") : gettext("Black"),
      player: sideName(game, seat, you), count: stones.length, cells: stones.join(", "), king: kings[colour],
    };
    // The English singular says "stones" as it always did; other languages give both forms.
    const words = kings[colour]
      ? ngettext("%(side)s, %(player)s: %(count)s stones on %(cells)s; king on %(king)s.",
        "%(side)s, %(player)s: %(count)s stones on %(cells)s; king on %(king)s.", stones.length)
      : ngettext("%(side)s, %(player)s: %(count)s stones on %(cells)s.",
        "%(side)s, %(player)s: %(count)s stones on %(cells)s.", stones.length);
    return interpolate(words, values, true);
  });
  if (!game.result) {
    lines.push(interpolate(ngettext("Turn %(turn)s, %(n)s move left in it.", "Turn %(turn)s, %(n)s moves left in it.", state.moves_left), {
      turn: state.turn, n: state.moves_left,
    }, true));
  }
  return lines;
}
