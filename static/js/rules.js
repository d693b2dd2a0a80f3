// The "How to play" pages: draws the diagrams with the game page's own board renderers.
// Every position was computed by the server's rule engine from the moves the diagram names
// (games/rules_pages.py); this file only draws them. Diagrams are pictures: nothing on them
// can be played (no legal moves are given to the renderers).
import { renderChess } from "./boards/chess.js";
import { renderMancala } from "./boards/mancala.js";

const nothing = () => {};
// The game's name, which every diagram's board is labelled with.
const gameName = document.getElementById("rules").dataset.name;

function draw(container, diagram) {
  const view = {
    name: gameName,
    board: diagram.board,
    state: diagram.state,
    legal: [],
    previous: diagram.previous,
    flipped: diagram.flipped,
    captured: diagram.state.captured,
    lastMove: diagram.lastMove,
    ply: diagram.ply,
    // The rules describe the board as it lies in front of South ("the pit on its right"):
    // pit boards are drawn lying flat on every screen, never turned upright.
    layout: "flat",
    onMove: nothing,
    onDraft: nothing,
  };
  // The server says how to draw the game (board.renderer), as on the game page.
  if (diagram.board.renderer === "grid") {
    renderChess(container, view);
  } else {
    renderMancala(container, view);
  }
  container.dataset.drawn = "true";
}

const data = document.getElementById("diagrams-data");
const diagrams = data ? JSON.parse(data.textContent) : [];
diagrams.forEach((diagram, index) => {
  const container = document.querySelector(`.rules-board[data-diagram="${index}"]`);
  if (container) draw(container, diagram);
});
