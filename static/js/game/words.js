// The game in words, for screen readers and anyone who wants it: the position described
// (one key, D, away on the board) and what happens announced through ARIA live regions.
// Drawing in words, as the boards draw in pictures: no rules here, only what the server said.

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
  const player = game.players[String(seat)];
  return `${player.username}${you === seat ? " (you)" : ""}`;
};

// "alice wins — by resignation", "Draw — by agreement", "Aborted — …".
export function resultText(result, players) {
  const { winner, reason, termination } = result;
  const who = winner ? `${players[String(winner)].username} wins` : termination === "abort" ? "Aborted" : "Draw";
  return `${who} — ${reason}`;
}

export function describe(game, state, you) {
  const lines = game.board.renderer === "grid" ? describeGrid(game, state, you) : describePits(game, state, you);
  if (game.result) lines.push(`Game over: ${resultText(game.result, game.players)}.`);
  else lines.push(`${sideName(game, game.to_move, you)} to move.`);
  return lines;
}

// Pit boards: row by row as South sees the board (North's side at the top), then the stores.
function describePits(game, state, you) {
  const { names, blocks } = game.board;
  const rows = state.rows;
  const lines = rows.map((row, r) => {
    const side = r === 0 ? `, North's side (${sideName(game, 2, you)})`
      : r === rows.length - 1 ? `, South's side (${sideName(game, 1, you)})` : "";
    const pits = row.map((count, c) => `${names[r][c]} ${count}`).join(", ");
    return `Row ${r + 1} of ${rows.length}${side}, left to right: ${pits}.`;
  });
  for (const block of blocks) {
    const [first, last] = block.columns;
    lines.push(`${block.label}, columns ${first + 1} to ${last + 1}: ${sideName(game, block.owner, you)}'s.`);
  }
  if (state.stores) lines.push(`Stores: left ${state.stores[0]}, right ${state.stores[1]}.`);
  if (state.captured) lines.push(`Captured: South ${state.captured[0]}, North ${state.captured[1]}.`);
  return lines;
}

// Diffusion Chess: each side's stones by file, its king, then where the turn stands.
function describeGrid(game, state, you) {
  const kings = state.kings || {};
  const order = (a, b) => a[0].localeCompare(b[0]) || Number(a.slice(1)) - Number(b.slice(1));
  const lines = [["white", 1], ["black", 2]].map(([colour, seat]) => {
    const stones = [...state[colour]].sort(order);
    const king = kings[colour] ? `; king on ${kings[colour]}` : "";
    return `${colour === "white" ? "White" : "Black"}, ${sideName(game, seat, you)}: ${stones.length} stones on ${stones.join(", ")}${king}.`;
  });
  if (!game.result) {
    lines.push(`Turn ${state.turn}, ${state.moves_left} move${state.moves_left === 1 ? "" : "s"} left in it.`);
  }
  return lines;
}
