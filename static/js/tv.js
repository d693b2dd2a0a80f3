// TV (/tv/, /tv/<game>/): the highest-rated live game, followed through the TV socket
// (/ws/tv/, docs/PROTOCOL.md), which speaks the spectator's protocol of the game socket with
// one frame more: `tv` names the game shown, and comes again, with the next game's snapshot
// after it, as soon as a game ends. The page asks nothing: the server pushes the switch.
/* global gettext, interpolate */
import { openSocket } from "./socket.js";
import { spectatorView } from "./spectator_view.js";

const root = document.getElementById("tv");
const section = document.getElementById("tv-game");
const now = document.getElementById("tv-now");
const last = document.getElementById("tv-last");
const link = document.getElementById("tv-game-link");
const board = document.getElementById("board");
const status = document.getElementById("tv-status");
const view = spectatorView({
  root: section,
  board,
  players: { 1: document.getElementById("player-1"), 2: document.getElementById("player-2") },
  status,
  name: "",
});
let ended = false;

function show(game) {
  if (!game) {
    root.dataset.game = "";
    section.hidden = true;
    link.hidden = true;
    now.textContent = gettext("No game is being played now: the next one will show here.");
    return;
  }
  if (String(game.id) !== root.dataset.game) {
    // A new game: "next" after one ended here, "now" when it is the first this page shows.
    const text = ended
      ? gettext("Next game: %(game)s, rated %(rating)s")
      : gettext("Now: %(game)s, rated %(rating)s");
    now.textContent = interpolate(text, { game: game.title, rating: game.rating }, true);
  }
  ended = false;
  root.dataset.game = String(game.id);
  board.setAttribute("aria-label", game.title);
  view.reset(game.title);
  section.hidden = false;
  link.href = `/games/${game.id}/`;
  link.hidden = false;
}

function receive(message) {
  if (message.type === "tv") {
    show(message.game);
    return;
  }
  const said = view.receive(message);
  if (said === "gap") {
    // The server sends every version in order; should one be missing all the same, a new
    // socket starts again from a snapshot.
    socket.stop();
    socket.start();
  } else if (said === "over" && !ended && message.type === "end") {
    ended = true;
    last.textContent = interpolate(gettext("Previous game: %(result)s"), { result: status.textContent }, true);
    last.hidden = false;
    now.textContent = gettext("The game is over: the next one comes.");
  }
}

const socket = openSocket(root.dataset.slug ? `/ws/tv/${root.dataset.slug}/` : "/ws/tv/", { onMessage: receive });
socket.start();
