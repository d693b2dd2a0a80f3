// A puzzle (docs/API.md, "Puzzles"): the server gives the position and the moves that may be
// played, judges the answer and rates it; this page draws the board and sends the move chosen.
// No rules here.
/* global gettext, interpolate */
import { renderChess } from "./boards/chess.js";
import { renderMancala } from "./boards/mancala.js";

const $ = (id) => document.getElementById(id);
const root = $("puzzle");
const page = { puzzle: null, answered: false };

function csrf() {
  const part = document.cookie.split("; ").find((item) => item.startsWith("csrftoken="));
  return part ? part.split("=")[1] : "";
}

function say(text, kind = "") {
  $("message").textContent = text;
  $("message").className = `message ${kind}`;
}

async function load() {
  const id = root.dataset.puzzle;
  const query = new URLSearchParams({ game: root.dataset.slug });
  if (root.dataset.theme) query.set("theme", root.dataset.theme);
  const url = id ? `/api/puzzles/${id}` : `/api/puzzles/next?${query}`;
  const answer = await (await fetch(url)).json();
  if (answer.error) {
    say(answer.error.message, "error");
    $("move-form").hidden = true;
    root.dataset.ready = "true";
    return;
  }
  show(answer);
}

function show(answer) {
  const puzzle = answer.puzzle;
  page.puzzle = puzzle;
  page.answered = false;
  root.dataset.puzzle = String(puzzle.id);
  root.dataset.answered = "false";
  $("result").hidden = true;
  $("move-form").hidden = false;
  $("move-input").value = "";
  say("");
  const player = puzzle.to_move;
  $("goal").textContent = interpolate(puzzle.goal === "save"
    ? gettext("Player %(n)s to move: find the one move that saves the game.")
    : gettext("Player %(n)s to move: find the one move that wins."), { n: player }, true);
  $("puzzle-rating").textContent = interpolate(gettext("Puzzle rated %(rating)s."), { rating: puzzle.rating }, true);
  drawRating(answer.you);
  drawBoard();
  root.dataset.ready = "true";
}

function drawRating(you) {
  $("your-rating").textContent = you
    ? interpolate(gettext("Your puzzle rating: %(rating)s%(mark)s."), { rating: you.rating, mark: you.provisional ? "?" : "" }, true)
    : gettext("Log in to be rated.");
}

function drawBoard(lastMove = null) {
  const puzzle = page.puzzle;
  const view = {
    name: puzzle.title,
    board: puzzle.board,
    state: puzzle.state,
    legal: page.answered ? [] : puzzle.legal,
    previous: null,
    flipped: puzzle.to_move === 2,
    you: puzzle.to_move,
    players: null,
    captured: puzzle.state.captured,
    lastMove,
    ply: 0,
    onMove: send,
    onDraft: (move) => { $("move-input").value = move; },
    onRefused: (move) => {
      if (page.answered) say(gettext("Answered: go on to the next puzzle."), "error");
      else if (move) send(move);
    },
    onExplain: (text) => say(text, "error"),
    infoContainer: $("turn-info"),
  };
  if (puzzle.board.renderer === "grid") {
    renderChess($("board"), view);
    $("echo-button").hidden = page.answered || !(puzzle.legal && puzzle.legal.echo);
  } else {
    renderMancala($("board"), view);
  }
}

async function send(move) {
  if (page.answered || !move) return;
  const response = await fetch(`/api/puzzles/${page.puzzle.id}/answer`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
    body: JSON.stringify({ move }),
  });
  const answer = await response.json();
  if (answer.error) {
    say(answer.error.message, "error");
    return;
  }
  page.answered = true;
  root.dataset.answered = "true";
  say("");
  $("move-form").hidden = true;
  $("result").hidden = false;
  $("result").className = `puzzle-result ${answer.correct ? "solved" : "missed"}`;
  $("result-title").textContent = answer.correct
    ? gettext("Solved!")
    : interpolate(gettext("Not this one: %(move)s does not do it."), { move: answer.move }, true);
  $("result-line").textContent = interpolate(gettext("The answer: %(move)s. The line: %(line)s."), {
    move: answer.solution, line: answer.line.join(" "),
  }, true);
  $("result-verified").textContent = answer.verified;
  $("result-rating").textContent = answer.rated
    ? interpolate(gettext("Your puzzle rating: %(rating)s (%(change)s)."), {
      rating: answer.you.rating, change: `${answer.change >= 0 ? "+" : "−"}${Math.abs(answer.change)}`,
    }, true)
    : (answer.you ? gettext("Answered before: not rated again.") : gettext("Log in to be rated."));
  drawRating(answer.you);
  const puzzle = page.puzzle;
  const link = new URL("/analysis/", location.origin);
  link.searchParams.set("slug", puzzle.slug);
  for (const [name, value] of Object.entries(puzzle.options)) link.searchParams.set(`option-${name}`, value);
  link.searchParams.set("position", puzzle.position);
  $("analyse-link").href = link.href;
  $("source-link").hidden = !puzzle.game;
  if (puzzle.game) $("source-link").href = `/games/${puzzle.game}/`;
  drawBoard(answer.solution);
  $("next-button").focus();
}

$("move-form").addEventListener("submit", (event) => {
  event.preventDefault();
  send($("move-input").value.trim());
});
$("echo-button").addEventListener("click", () => send("echo"));
$("next-button").addEventListener("click", () => {
  root.dataset.puzzle = "";
  root.dataset.ready = "false";
  load();
});
load();
