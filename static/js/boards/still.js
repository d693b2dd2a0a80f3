// A position drawn to look at, not to play: the same renderers as the game page, with nothing
// legal and nothing to answer to (the puzzle of the day, an embedded game).
import { renderChess } from "./chess.js";
import { renderMancala } from "./mancala.js";

const ignore = () => {};

// `shown`: {name, board, state, players, lastMove, ply, flipped}, as a snapshot gives them.
export function drawStill(container, shown) {
  const view = {
    name: shown.name,
    board: shown.board,
    state: shown.state,
    legal: [],
    previous: null,
    flipped: Boolean(shown.flipped),
    you: null,
    players: shown.players ?? null,
    captured: shown.state.captured,
    lastMove: shown.lastMove ?? null,
    ply: shown.ply ?? 0,
    onMove: ignore,
    onDraft: ignore,
    onRefused: ignore,
    onExplain: ignore,
    infoContainer: null,
  };
  if (shown.board.renderer === "grid") renderChess(container, view);
  else renderMancala(container, view);
}
