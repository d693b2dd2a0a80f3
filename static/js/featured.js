// The game on TV, on the home page: its position as a picture (/games/<id>.png at its ply),
// asked for again every few seconds (GET /api/tv), linking to /tv/. A picture, not a socket:
// the home page's visitors do not count as the game's spectators.
/* global gettext, interpolate */
const card = document.getElementById("featured");
const EVERY_MS = 5000;

async function show() {
  let game = null;
  try {
    game = (await (await fetch("/api/tv")).json()).game;
  } catch {
    game = null;
  }
  card.hidden = !game;
  if (game) {
    const name = interpolate(gettext("%(game)s, rated %(rating)s"), { game: game.title, rating: game.rating }, true);
    document.getElementById("featured-name").textContent = name;
    const board = document.getElementById("featured-board");
    board.alt = name;
    const source = `/games/${game.id}.png?ply=${game.ply}&width=360`;
    if (board.getAttribute("src") !== source) board.src = source;
    card.dataset.game = String(game.id);
    card.dataset.ply = String(game.ply);
  }
  setTimeout(show, EVERY_MS);
}

show();
