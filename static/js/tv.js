// TV (/tv/, /tv/<game>/): the highest-rated live game, framed (/embed/<id>/, which follows it
// through the spectator socket); when it ends the frame says so and the page asks the server
// for the next one (GET /api/tv), announces it and switches. No game: it asks again every 10 s.
/* global gettext, interpolate */
const root = document.getElementById("tv");
const frame = document.getElementById("tv-frame");
const now = document.getElementById("tv-now");
const link = document.getElementById("tv-game-link");
const WAIT_MS = 10000;
// Once a game ends, its result stays on screen a moment before the next game comes.
const SHOW_RESULT_MS = 1500;
let asking = null;

async function next() {
  asking = null;
  const query = root.dataset.slug ? `?game=${encodeURIComponent(root.dataset.slug)}` : "";
  let game = null;
  try {
    game = (await (await fetch(`/api/tv${query}`)).json()).game;
  } catch {
    game = null;
  }
  if (!game || String(game.id) === root.dataset.game) {
    if (!game) now.textContent = gettext("No game is being played now: the next one will show here.");
    asking = setTimeout(next, WAIT_MS);
    return;
  }
  root.dataset.game = String(game.id);
  now.textContent = interpolate(gettext("Next game: %(game)s, rated %(rating)s"), { game: game.title, rating: game.rating }, true);
  frame.src = `/embed/${game.id}/`;
  frame.hidden = false;
  link.href = `/games/${game.id}/`;
  link.hidden = false;
}

window.addEventListener("message", (event) => {
  if (event.origin !== location.origin || event.source !== frame.contentWindow) return;
  if (event.data?.type !== "game-over" || String(event.data.game) !== root.dataset.game) return;
  now.textContent = gettext("The game is over: the next one comes.");
  if (asking) clearTimeout(asking);
  asking = setTimeout(next, SHOW_RESULT_MS);
});

if (!root.dataset.game) asking = setTimeout(next, WAIT_MS);
