// The puzzle of the day on the home page (docs/API.md, "Puzzles"): its game, its rating and
// its position, drawn small, linking to the puzzle. Nothing to play here.
/* global gettext, interpolate */
import { drawStill } from "./boards/still.js";

const card = document.getElementById("daily-puzzle");

async function show() {
  const answer = await (await fetch("/api/puzzles/daily")).json();
  const puzzle = answer.puzzle;
  if (!puzzle) return;
  document.getElementById("daily-puzzle-link").href = `/puzzles/${puzzle.id}/`;
  document.getElementById("daily-puzzle-name").textContent = interpolate(
    gettext("%(game)s, rated %(rating)s: find the move"), { game: puzzle.title, rating: puzzle.rating }, true,
  );
  drawStill(document.getElementById("daily-puzzle-board"), {
    name: puzzle.title, board: puzzle.board, state: puzzle.state, flipped: puzzle.to_move === 2,
  });
  card.hidden = false;
  card.dataset.puzzle = String(puzzle.id);
}

show();
