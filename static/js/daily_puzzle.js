// The puzzle of the day on the home page (docs/API.md, "Puzzles"): its game, its rating and
// its position, drawn small, linking to the puzzle. Nothing to play here.
/* global gettext, interpolate */
import { renderChess } from "./boards/chess.js";
import { renderMancala } from "./boards/mancala.js";

const card = document.getElementById("daily-puzzle");

async function show() {
  const answer = await (await fetch("/api/puzzles/daily")).json();
  const puzzle = answer.puzzle;
  if (!puzzle) return;
  document.getElementById("daily-puzzle-link").href = `/puzzles/${puzzle.id}/`;
  document.getElementById("daily-puzzle-name").textContent = interpolate(
    gettext("%(game)s, rated %(rating)s: find the move"), { game: puzzle.title, rating: puzzle.rating }, true,
  );
  const view = {
    name: puzzle.title,
    board: puzzle.board,
    state: puzzle.state,
    legal: [],
    previous: null,
    flipped: puzzle.to_move === 2,
    you: null,
    players: null,
    captured: puzzle.state.captured,
    lastMove: null,
    ply: 0,
    onMove: () => {},
    onDraft: () => {},
    onRefused: () => {},
    onExplain: () => {},
    infoContainer: null,
  };
  const board = document.getElementById("daily-puzzle-board");
  if (puzzle.board.renderer === "grid") renderChess(board, view);
  else renderMancala(board, view);
  card.hidden = false;
  card.dataset.puzzle = String(puzzle.id);
}

show();
