// A game framed on another site (/embed/<id>/): the board, the players with their clocks and
// the result, kept live by the game's spectator socket (docs/PROTOCOL.md). It draws what the
// server sends and decides nothing.
/* global gettext */
import { CLOSE, openSocket } from "./socket.js";
import { spectatorView } from "./spectator_view.js";

const root = document.getElementById("embed");
const gameId = Number(root.dataset.gameId);
const view = spectatorView({
  root,
  board: document.getElementById("board"),
  players: { 1: document.getElementById("player-1"), 2: document.getElementById("player-2") },
  status: document.getElementById("embed-status"),
  name: root.dataset.name,
});

// The page that frames this one hears that the game is over (another site may do what it
// likes with it). Nothing else is said to it.
function tellTheFramingPage() {
  if (window.parent !== window) window.parent.postMessage({ type: "game-over", game: gameId }, "*");
}

function receive(message) {
  const said = view.receive(message);
  if (message.type === "state") root.dataset.ready = "true";
  if (said === "gap") socket.send({ type: "sync", v: view.v }); // the server sends what was missed
  else if (said === "over") tellTheFramingPage();
}

const socket = openSocket(`/ws/games/${gameId}/`, {
  onMessage: receive,
  resync: () => (view.shown ? { v: view.v } : null),
  stopOn: { [CLOSE.NO_SUCH_GAME]: () => { document.getElementById("embed-status").textContent = gettext("no such game"); } },
});
socket.start();
