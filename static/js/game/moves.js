// The game page's move list: numbered moves, or, when a player makes several moves in a row
// (a Diffusion Chess turn), one line per turn with the player's side. Each move is a button
// that shows the position after it.
/* global gettext, ngettext, interpolate */

// `viewing` is the number of moves of the position shown (null: the game now); `onPick(ply)`
// asks for the position after `ply` moves.
export function renderMoves(list, game, { viewing, onPick }) {
  const link = (move, index) => moveButton(game, move, index, viewing === index + 1, onPick);
  const turns = byTurn(game.moves);
  const grouped = turns.length < game.moves.length;
  const items = grouped ? turnItems(game, turns, link) : moveItems(game.moves, link);
  markTakebacks(items, game.takebacks || [], grouped
    ? (moveIndex) => turns.findIndex((turn) => turn.moves.some(([, index]) => index === moveIndex))
    : (moveIndex) => moveIndex);
  list.classList.toggle("by-turn", grouped);
  list.replaceChildren(...items);
}

function moveButton(game, move, index, current, onPick) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "move-link";
  button.textContent = move.notation;
  button.title = interpolate(gettext("move %(n)s, %(player)s"), { n: index + 1, player: game.players[String(move.player)].username }, true);
  if (current) button.classList.add("viewing");
  button.addEventListener("click", () => onPick(index + 1));
  return button;
}

// Runs of moves by the same player, each move with its index in the game.
function byTurn(moves) {
  const turns = [];
  moves.forEach((move, index) => {
    const last = turns[turns.length - 1];
    if (last && last.player === move.player) last.moves.push([move, index]);
    else turns.push({ player: move.player, moves: [[move, index]] });
  });
  return turns;
}

function turnItems(game, turns, link) {
  const side = game.board.renderer === "grid"
    ? { 1: gettext("White"), 2: gettext("Black") } : { 1: gettext("South"), 2: gettext("North") };
  return turns.map((turn, number) => {
    const item = document.createElement("li");
    item.className = `turn player-${turn.player}`;
    const label = document.createElement("span");
    label.className = "ply";
    label.textContent = `${number + 1}. ${side[turn.player]}`;
    item.append(label, ...turn.moves.map(([move, index]) => link(move, index)));
    return item;
  });
}

function moveItems(moves, link) {
  return moves.map((move, index) => {
    const item = document.createElement("li");
    const number = document.createElement("span");
    number.className = "ply";
    number.textContent = `${index + 1}.`;
    item.append(number, link(move, index));
    return item;
  });
}

// Where moves were taken back: a mark after the move the game went back to. `itemOf` gives
// the list item that holds a move.
function markTakebacks(items, takebacks, itemOf) {
  for (const takeback of [...takebacks].reverse()) {
    const mark = document.createElement("li");
    mark.className = "takeback-mark";
    const undone = interpolate(ngettext("%(n)s move taken back", "%(n)s moves taken back", takeback.undone), { n: takeback.undone }, true);
    mark.textContent = `↶ ${undone}`;
    const at = takeback.ply === 0 ? -1 : itemOf(takeback.ply - 1);
    items.splice(at + 1, 0, mark);
  }
}
