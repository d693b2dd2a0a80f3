// News for the signed-in user on every page but the lobby (which has its own socket): a
// challenge to answer, a seek that paired, a challenge accepted. The server sends the same
// personal messages as on the lobby socket (docs/PROTOCOL.md, "The notification socket").
import { action, followedNotice, link, notice } from "./notices.js";

const box = document.getElementById("notices");
let retry = 1000;
let navigating = false;
window.addEventListener("beforeunload", () => { navigating = true; });

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/ws/notify/`);
  socket.addEventListener("open", () => { retry = 1000; });
  socket.addEventListener("message", (event) => receive(JSON.parse(event.data)));
  socket.addEventListener("close", (event) => {
    if (event.code === 4401) {
      if (!navigating) location.reload(); // signed out: the page shows it
      return;
    }
    if ([4408, 4429].includes(event.code)) return; // refused: the page works without news
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 30000);
  });
}

function receive(message) {
  if (message.type === "game_started" && message.you) {
    const href = `/games/${message.game_id}/`;
    if (location.pathname === href) return;
    // Someone took up your seek or challenge: go to the game, unless you are playing one here.
    // (The game page marks itself while its viewer plays a game in progress.)
    if (document.getElementById("game")?.dataset.playing !== "true") {
      location.assign(href);
      return;
    }
    notice(`Your game ${message.game_id} has started.`, [link("Go to the game", href)]);
  } else if (message.type === "challenge") {
    const challenge = message.challenge;
    if (challenge.status !== "pending" || challenge.challenged === null) return;
    if (challenge.challenger === document.body.dataset.username) return; // sent from another tab
    const what = challenge.slug.replaceAll("-", " ");
    notice(`${challenge.challenger} challenges you to ${what}.`, [
      action("Accept", () => answer(challenge.id, "accept")),
      action("Decline", () => answer(challenge.id, "decline")),
      link("Lobby", "/"),
    ], challenge.id);
  } else if (message.type === "followed") {
    followedNotice(message);
  } else if (message.type === "challenge_updated") {
    const challenge = message.challenge;
    const node = box.querySelector(`[data-challenge-id="${challenge.id}"]`);
    if (node && challenge.status !== "pending") node.remove();
  }
}

async function answer(id, verb) {
  const csrf = document.cookie.split("; ").find((part) => part.startsWith("csrftoken="));
  const response = await fetch(`/api/challenges/${id}/${verb}`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf ? csrf.split("=")[1] : "" },
    body: "{}",
  });
  const body = await response.json().catch(() => ({}));
  box.querySelector(`[data-challenge-id="${id}"]`)?.remove();
  if (!response.ok) {
    notice(body.error ? body.error.message : "That did not work.", []);
  } else if (body.game_id) {
    location.assign(`/games/${body.game_id}/`);
  }
}

if (box) connect();
