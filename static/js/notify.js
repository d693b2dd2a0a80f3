// News for the signed-in user on every page but the lobby (which has its own socket): a
// challenge to answer, a seek that paired, a challenge accepted. The server sends the same
// personal messages as on the lobby socket (docs/PROTOCOL.md, "The notification socket").
/* global gettext, interpolate */
import { gameTitle, pageGames } from "./game_title.js";
import { action, followedNotice, link, notice } from "./notices.js";
import { CLOSE, openSocket } from "./socket.js";

const box = document.getElementById("notices");
// The games' names and options' labels, in the page's language (templates/base.html).
const GAMES = pageGames();
// Refused: the page works without news, and asking again would only be refused again.
const giveUp = () => {};
const socket = openSocket("/ws/notify/", {
  onMessage: receive,
  stopOn: { [CLOSE.TOO_MANY_SOCKETS]: giveUp, [CLOSE.RATE_LIMITED]: giveUp },
  firstRetry: 1000,
  longestRetry: 30000,
});

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
    const shown = notice(interpolate(gettext("Your game %(id)s has started."), { id: message.game_id }, true),
      [link(gettext("Go to the game"), href)]);
    goOnceOver(shown, href);
  } else if (message.type === "challenge") {
    const challenge = message.challenge;
    if (challenge.status !== "pending" || challenge.challenged === null) return;
    if (challenge.challenger === document.body.dataset.username) return; // sent from another tab
    const what = gameTitle(GAMES, challenge.slug, challenge.options);
    notice(interpolate(gettext("%(name)s challenges you to %(game)s."), { name: challenge.challenger, game: what }, true), [
      action(gettext("Accept"), () => answer(challenge.id, "accept")),
      action(gettext("Decline"), () => answer(challenge.id, "decline")),
      link(gettext("Lobby"), "/"),
    ], challenge.id);
  } else if (message.type === "account_notice") {
    notice(message.text, []); // what a moderator did (docs/MODERATION.md)
  } else if (message.type === "followed") {
    followedNotice(message);
  } else if (message.type === "challenge_updated") {
    const challenge = message.challenge;
    const node = box.querySelector(`[data-challenge-id="${challenge.id}"]`);
    if (node && challenge.status !== "pending") node.remove();
  }
}

// The game here may be ending as the news comes (an arena pairs its players again as soon
// as their game is over, and that end can reach this page after the news): once it is over,
// the new game's clock is the one that matters, so go to it, unless the notice was dismissed.
function goOnceOver(shown, href) {
  const game = document.getElementById("game");
  if (!game || !shown) return;
  const watcher = new MutationObserver(() => {
    if (!shown.isConnected) watcher.disconnect();
    else if (game.dataset.playing !== "true") {
      watcher.disconnect();
      location.assign(href);
    }
  });
  watcher.observe(game, { attributes: true, attributeFilter: ["data-playing"] });
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
    notice(body.error ? body.error.message : gettext("That did not work."), []);
  } else if (body.game_id) {
    location.assign(`/games/${body.game_id}/`);
  }
}

if (box) socket.start();
