// The lobby page: draws what the lobby socket says (docs/PROTOCOL.md, "The lobby socket")
// and sends what the user asks for. The server decides everything (pairing, options,
// who may accept what); this file holds no rules. Plain ES module, no build step.
//
// Elements a browser test can target:
//   #lobby[data-ready="true"]            set once the first snapshot is drawn
//   #connection[data-state]              connecting | open | closed
//   #online-count                        people in the lobby
//   #lobby-error .text                   the server's last refusal (role=alert; hidden when none)
//   #lobby-notice .text                  news: seek waiting, challenge declined, open-challenge link
//   #lobby-notice[data-challenge-id] .actions button.accept, button.decline
//                                        a challenge to you, answered from its news (no scrolling)
//   #seek-form, #seek-game, #seek-options input[data-option="<name>"], #seek-submit,
//     #seek-computer (no partner in 30 s: the computer), #seek-computer-level (1..5),
//     #seek-bots (bot accounts may pair with it: "Play bots too")
//   abbr.bot-mark                        "BOT" after a bot account's name, in every list
//   #computer-form, #computer-game, #computer-options, #computer-level, #computer-side,
//     #computer-time, #computer-submit   a game against the computer, now
//   #seeks li[data-seek-id][data-user]   every open seek; yours have class "mine"
//     button.join[data-slug]             another user's seek: play it (one button per game)
//     button.cancel                      your own seek: cancel it
//   #challenge-form, #challenge-user (empty: an open challenge), #challenge-game,
//     #challenge-options input[data-option="<name>"], #challenge-side (random|first|second),
//     #challenge-submit
//   #challenges-in li[data-challenge-id][data-user]   button.accept, input.reason, button.decline
//   #challenges-out li[data-challenge-id][data-user]  button.cancel, a.challenge-link (open ones)
//   #my-games li[data-game-id] a         your games in progress
//   #live-games li[data-game-id] a       games in progress; .spectators[data-count]
// Anonymous visitors get the lists but no forms (#sign-in-first instead).
/* global gettext, ngettext, interpolate */
import { botMark } from "./bot_mark.js";
import { followedNotice, notice } from "./notices.js";
import { isNavigating, openSocket } from "./socket.js";
import { gameTitle as titleOf } from "./game_title.js";
import { timeControlLabel } from "./time_control.js";

const $ = (id) => document.getElementById(id);
const root = $("lobby");
const GAMES = JSON.parse($("games-data").textContent);
const GAME_INFO = new Map(GAMES.map((game) => [game.slug, game]));
const REFRESH_MS = 30000;
const CHALLENGE_GONE = new Set([
  "no_such_challenge", "challenge_accepted", "challenge_declined",
  "challenge_cancelled", "challenge_expired",
]);

const lobby = {
  v: null, // the last public feed version applied (null before the first snapshot)
  user: null, // {username, is_guest} or null
  seeks: new Map(),
  incoming: new Map(),
  outgoing: new Map(),
  games: [], // live games, newest first
  myGames: [],
  online: null,
  syncing: false,
  requests: new Map(), // request id -> what was asked
  nextId: 1,
  personal: 0, // personal messages received (an HTTP refresh must not undo a newer one)
  leaving: false,
};

const me = () => (lobby.user ? lobby.user.username : root.dataset.username || null);
const signedIn = () => root.dataset.signedIn === "true";

// --- the socket -----------------------------------------------------------------------------

const socket = openSocket("/ws/lobby/", {
  onMessage: receive,
  // A page that has a version asks only for the public events it missed.
  resync: () => (lobby.v === null ? null : { v: lobby.v }),
  onConnecting: (resumed) => {
    lobby.syncing = false;
    setConnection("connecting", resumed ? gettext("Reconnecting to the lobby…") : gettext("Connecting to the lobby…"));
  },
  onOpen: (resumed) => {
    if (!resumed) return; // the snapshot that follows says who is connected
    // The missed public events come by version; personal news (challenges, games that
    // started) is not replayed, so read it again.
    connected();
    refresh();
  },
  onRetry: () => setConnection("closed", gettext("Disconnected from the lobby; reconnecting…")),
  longestRetry: 15000,
});

function connected() {
  const who = me();
  setConnection("open", who
    ? interpolate(gettext("Connected to the lobby as %(name)s."), { name: who }, true)
    : gettext("Connected to the lobby (watching)."));
}

// Sends a request with an id; the `ok` or `error` that answers it repeats the id.
function request(message, meta = {}) {
  if (!socket.isOpen()) {
    showError(gettext("Not connected to the lobby: try again in a moment."));
    return null;
  }
  hideAlert("lobby-error");
  const id = `r${lobby.nextId++}`;
  lobby.requests.set(id, { ...meta, type: message.type });
  socket.send({ ...message, id });
  return id;
}

function setConnection(state, text) {
  const node = $("connection");
  node.dataset.state = state;
  node.textContent = text;
}

// --- messages from the server -------------------------------------------------------------

function receive(message) {
  switch (message.type) {
    case "lobby":
      applySnapshot(message, { fromSocket: true });
      break;
    case "batch":
      for (const event of message.events || []) applyPublic(event);
      draw();
      break;
    case "seek_added":
    case "seek_removed":
      applyPublic(message);
      draw();
      break;
    case "game_started":
      if (message.you !== undefined) {
        gameStarted(message.game_id);
      } else {
        applyPublic(message);
        draw();
      }
      break;
    case "challenge":
    case "challenge_updated":
      lobby.personal += 1;
      applyChallenge(message.challenge);
      draw();
      break;
    case "followed":
      followedNotice(message);
      break;
    case "account_notice":
      notice(message.text, []); // what a moderator did (docs/MODERATION.md)
      break;
    case "online":
      lobby.online = message.online;
      drawOnline();
      break;
    case "ok":
      answered(message);
      break;
    case "error":
      refused(message);
      break;
    default:
      break; // pong, and anything newer than this page
  }
}

function applySnapshot(snapshot, { fromSocket }) {
  if (fromSocket && root.dataset.username && !snapshot.user) {
    // This page was drawn signed in, but the session ended before its socket opened (a
    // logout in another tab): no 4401 will come, so show what a visitor sees now.
    if (!isNavigating()) location.reload();
    return;
  }
  const waiting = waitingFor();
  lobby.v = snapshot.v;
  lobby.syncing = false;
  lobby.user = snapshot.user;
  lobby.seeks = new Map(snapshot.seeks.map((seek) => [seek.id, seek]));
  lobby.games = snapshot.games.slice();
  lobby.online = snapshot.online;
  applyPersonal(snapshot, waiting);
  if (fromSocket) connected();
  draw();
  root.dataset.ready = "true";
}

// What may turn into a game of ours: our outgoing challenges and our seeks.
function waitingFor() {
  return { challenges: [...lobby.outgoing.keys()], seeks: mySeeks().map((seek) => seek.id) };
}

// The personal part of a snapshot: challenges and the user's games. `waiting` is what
// waitingFor() said before the snapshot replaced the lists.
function applyPersonal(snapshot, waiting) {
  const before = new Set(lobby.myGames);
  const first = root.dataset.ready !== "true";
  lobby.incoming = new Map(snapshot.challenges.incoming.map((c) => [c.id, c]));
  lobby.outgoing = new Map(snapshot.challenges.outgoing.map((c) => [c.id, c]));
  lobby.myGames = snapshot.my_games.slice();
  const fresh = lobby.myGames.filter((id) => !before.has(id));
  if (first || !fresh.length) return;
  // A game started while we were away (its personal `game_started` was missed): if one of
  // our challenges or seeks has gone meanwhile, that is the game we were waiting for.
  const gone = waiting.challenges.some((id) => !lobby.outgoing.has(id))
    || waiting.seeks.some((id) => !lobby.seeks.has(id));
  if (gone) gameStarted(fresh[0]);
  else {
    showNotice(`${gettext("A game of yours has started:")} `, {
      href: `/games/${fresh[0]}/`, text: interpolate(gettext("go to game %(id)s"), { id: fresh[0] }, true),
    });
  }
}

// Public feed events: in version order, each applied once (and idempotently by id).
function applyPublic(event) {
  if (typeof event.v !== "number" || lobby.v === null) return;
  if (event.v <= lobby.v) return;
  if (event.v !== lobby.v + 1) {
    // A gap: ask for what we missed (the server answers with the events or a snapshot).
    if (!lobby.syncing && socket.isOpen()) {
      lobby.syncing = true;
      socket.send({ type: "sync", v: lobby.v });
    }
    return;
  }
  lobby.v = event.v;
  lobby.syncing = false;
  if (event.type === "seek_added") {
    lobby.seeks.set(event.seek.id, event.seek);
  } else if (event.type === "seek_removed") {
    lobby.seeks.delete(event.seek_id);
  } else if (event.type === "game_started") {
    const game = event.game;
    if (!lobby.games.some((g) => g.id === game.id)) {
      lobby.games.unshift({ ply: 0, spectators: 0, ...game });
    }
  } else if (event.type === "game_ended") {
    lobby.games = lobby.games.filter((g) => g.id !== event.game_id);
    lobby.myGames = lobby.myGames.filter((id) => id !== event.game_id);
  }
}

function applyChallenge(challenge) {
  const mine = challenge.challenger === me();
  const list = mine ? lobby.outgoing : lobby.incoming;
  if (challenge.status === "pending") {
    list.set(challenge.id, challenge);
    if (!mine) {
      showNotice(interpolate(gettext("%(name)s challenges you to %(game)s."), {
        name: challenge.challenger, game: gameTitle(challenge.slug, challenge.options),
      }, true), null, challenge);
    }
    return;
  }
  const known = list.delete(challenge.id);
  challengeGone(challenge.id);
  if (challenge.status === "declined" && mine) {
    const words = challenge.decline_reason
      ? gettext("%(name)s declined your challenge: “%(reason)s”") : gettext("%(name)s declined your challenge.");
    showNotice(interpolate(words, { name: challenge.challenged, reason: challenge.decline_reason }, true));
  } else if (challenge.status === "cancelled" && !mine && known) {
    showNotice(interpolate(gettext("%(name)s cancelled their challenge."), { name: challenge.challenger }, true));
  } else if (challenge.status === "expired" && known) {
    showNotice(gettext("A challenge expired."));
  }
}

function gameStarted(gameId) {
  if (!lobby.myGames.includes(gameId)) lobby.myGames.unshift(gameId);
  if (lobby.leaving) return;
  lobby.leaving = true;
  socket.stop();
  showNotice(gettext("Your game is starting…"), { href: `/games/${gameId}/`, text: gettext("open it") });
  location.assign(`/games/${gameId}/`);
}

function answered(message) {
  const asked = lobby.requests.get(message.id);
  lobby.requests.delete(message.id);
  if (!asked) return;
  if (asked.type === "seek") {
    showNotice(asked.joining
      ? gettext("Joining… you will be taken to the game.")
      : gettext("Looking for an opponent: you will be taken to the game as soon as someone joins."));
  } else if (asked.type === "challenge") {
    if (asked.open) {
      const href = `${location.origin}/challenge/${message.token}/`;
      showNotice(`${gettext("Open challenge created. Share this link:")} `, { href, text: href });
    } else {
      showNotice(interpolate(gettext("Challenge sent to %(name)s."), { name: asked.user }, true));
      const input = $("challenge-user");
      if (input) input.value = "";
    }
  } else if (asked.type === "play_computer" && message.game_id) {
    gameStarted(message.game_id);
  } else if (asked.type === "accept" && message.game_id) {
    gameStarted(message.game_id);
  } else if (asked.type === "decline") {
    lobby.incoming.delete(asked.challengeId);
    challengeGone(asked.challengeId);
    draw();
  } else if (asked.type === "cancel_challenge") {
    lobby.outgoing.delete(asked.challengeId);
    draw();
  }
}

function refused(message) {
  const asked = message.id !== undefined ? lobby.requests.get(message.id) : undefined;
  if (asked) lobby.requests.delete(message.id);
  if (asked && asked.challengeId !== undefined && CHALLENGE_GONE.has(message.code)) {
    // The server says the challenge can no longer be answered: stop offering it.
    lobby.incoming.delete(asked.challengeId);
    lobby.outgoing.delete(asked.challengeId);
    challengeGone(asked.challengeId);
    draw();
  }
  // The server's message is in the user's language already; the code is a last resort.
  showError(message.message || message.code || gettext("The server refused that."));
}

// Re-reads the snapshot over HTTP: after a reconnect (personal news is not replayed) and
// now and then for the live games list (games that ended, spectator counts).
async function refresh() {
  const mark = lobby.personal;
  let snapshot;
  try {
    const response = await fetch("/api/lobby", { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!response.ok) return;
    snapshot = await response.json();
  } catch {
    return;
  }
  if (lobby.v === null) return; // the socket's own snapshot is on its way
  const waiting = waitingFor();
  if (snapshot.v >= lobby.v) {
    // At least as new as what we have: events up to its version are in it.
    lobby.v = snapshot.v;
    lobby.seeks = new Map(snapshot.seeks.map((seek) => [seek.id, seek]));
    lobby.games = snapshot.games.slice();
    lobby.online = snapshot.online;
  }
  if (lobby.personal === mark) applyPersonal(snapshot, waiting);
  draw();
}

// --- drawing --------------------------------------------------------------------------------

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

function gameName(slug) {
  const info = GAME_INFO.get(slug);
  return info ? info.name : slug;
}

function gameTitle(slug, options) {
  return titleOf(GAMES, slug, options);
}

function userLink(name, isBotAccount = false) {
  const link = el("a", { class: "user", href: `/@${encodeURIComponent(name)}/` }, name);
  return isBotAccount ? el("span", { class: "named" }, link, " ", botMark()) : link;
}

// "alice vs bob", each name followed by "BOT" when a bot account's (seats in `bots`).
function playersText(players, bots = []) {
  const name = (seat) => el("span", {}, players[seat], ...(bots.includes(seat) ? [" ", botMark()] : []));
  const words = gettext("%(first)s vs %(second)s");
  const [before, middle, after] = words.split(/%\((?:first|second)\)s/);
  const firstFirst = words.indexOf("%(first)s") <= words.indexOf("%(second)s");
  const [one, two] = firstFirst ? ["1", "2"] : ["2", "1"];
  return [before, name(one), middle, name(two), after].filter((part) => part !== "" && part !== undefined);
}

// A row of a list: `key` says everything it shows, so an unchanged row keeps its node
// (and whatever the user is typing in it, such as a reason for declining).
function keyed(key, build) {
  return { key, build };
}

function fill(listId, rows) {
  const list = $(listId);
  const old = new Map([...list.children].map((node) => [node.dataset.key, node]));
  const nodes = rows.map(({ key, build }) => {
    const node = old.get(key) || build();
    node.dataset.key = key;
    return node;
  });
  if (nodes.length !== list.children.length || nodes.some((node, i) => list.children[i] !== node)) {
    list.replaceChildren(...nodes);
  }
  const empty = $(`${listId}-empty`);
  if (empty) empty.hidden = rows.length > 0;
}

function mySeeks() {
  const name = me();
  return [...lobby.seeks.values()].filter((seek) => seek.user === name);
}

function draw() {
  drawOnline();
  drawSeeks();
  drawChallenges();
  drawMyGames();
  drawLiveGames();
}

function drawOnline() {
  $("online-count").textContent = lobby.online === null ? "–" : String(lobby.online);
}

function drawSeeks() {
  const name = me();
  const canPlay = Boolean(lobby.user) && signedIn();
  const rows = [...lobby.seeks.values()].map((seek) => keyed(JSON.stringify([seek, name, canPlay]), () => {
    const mine = seek.user === name;
    const what = seek.games.map((g) => gameTitle(g.slug, g.options)).join(` ${gettext("or")} `) + timeText(seek)
      + (seek.rated ? ` · ${gettext("rated")}` : ` · ${gettext("casual")}`)
      + (seek.rating_range ? ` · ${seek.rating_range[0]}–${seek.rating_range[1]}` : "")
      + (seek.bots && !seek.user_is_bot_account ? ` · ${gettext("bots too")}` : "");
    const actions = [];
    if (mine) {
      actions.push(el("button", {
        type: "button", class: "cancel",
        onclick: () => request({ type: "cancel_seek", seek_id: seek.id }, { seekId: seek.id }),
      }, gettext("Cancel")));
    } else if (canPlay) {
      for (const game of seek.games) {
        actions.push(el("button", {
          type: "button", class: "join primary", dataset: { slug: game.slug },
          title: interpolate(gettext("Play %(name)s: %(game)s"), { name: seek.user, game: gameTitle(game.slug, game.options) }, true),
          onclick: (event) => {
            event.stopPropagation();
            join(seek, game);
          },
        }, seek.games.length > 1 ? interpolate(gettext("Play %(game)s"), { game: gameName(game.slug) }, true) : gettext("Play")));
      }
    }
    return el("li", {
      class: mine ? "mine" : canPlay ? "joinable" : "",
      dataset: { seekId: seek.id, user: seek.user },
      onclick: (event) => {
        if (!mine && canPlay && !event.target.closest("a, button")) join(seek, seek.games[0]);
      },
    },
    el("span", { class: "who" }, mine ? el("strong", {}, gettext("You")) : userLink(seek.user, seek.user_is_bot_account),
      el("small", { class: "seek-rating" }, ` ${seek.rating}${seek.provisional ? "?" : ""}`)),
    el("span", { class: "what" }, what),
    el("span", { class: "actions" }, ...actions));
  }));
  fill("seeks", rows);
}

function join(seek, game) {
  // Joining is seeking the same game, options and time: the server pairs the two.
  request({
    type: "seek",
    games: [{ slug: game.slug, options: game.options }],
    time_control: seek.time_control || "",
    rated: Boolean(seek.rated),
    // Playing a bot account's seek is asking for a bot.
    bots: Boolean(seek.user_is_bot_account || seek.bots),
  }, { joining: seek.id });
}

function setUpTimeControl(prefix) {
  const select = $(`${prefix}-time`);
  const custom = $(`${prefix}-custom`);
  select.addEventListener("change", () => { custom.hidden = select.value !== "custom"; });
  return () => (select.value === "custom"
    ? `${$(`${prefix}-minutes`).value}+${$(`${prefix}-seconds`).value}`
    : select.value);
}

function timeText(item) {
  return item.time_control ? ` · ${timeControlLabel(item.time_control)}` : "";
}

function sideText(challenge, mine) {
  if (challenge.side === "random") return gettext("sides drawn at random");
  const challengerFirst = challenge.side === "first";
  if (mine) return challengerFirst ? gettext("you move first") : gettext("they move first");
  return challengerFirst
    ? interpolate(gettext("%(name)s moves first"), { name: challenge.challenger }, true) : gettext("you move first");
}

function expiresText(challenge) {
  const left = Date.parse(challenge.expires_at) - Date.now();
  if (!Number.isFinite(left)) return "";
  const hours = Math.floor(left / 3600000);
  return hours >= 1
    ? interpolate(gettext("expires in %(hours)s h"), { hours }, true)
    : interpolate(gettext("expires in %(minutes)s min"), { minutes: Math.max(1, Math.ceil(left / 60000)) }, true);
}

function live(challenge) {
  // Expiry is only recorded when someone answers: stop offering a challenge past its time.
  const expires = Date.parse(challenge.expires_at);
  return !Number.isFinite(expires) || expires > Date.now();
}

// The tab's title counts the challenges waiting for an answer, as a site does its messages.
const baseTitle = document.title;

// Accept and Decline for a challenge to us: in its row of #challenges-in, and in the notice
// that announces it (on a phone the row can be a screen below). `reason` is the row's input;
// the notice has none.
function answerButtons(challenge, reason = null) {
  return [
    el("button", {
      type: "button", class: "accept primary",
      onclick: () => request({ type: "accept", challenge_id: challenge.id }, { challengeId: challenge.id }),
    }, gettext("Accept")),
    reason,
    el("button", {
      type: "button", class: "decline",
      onclick: () => request(
        { type: "decline", challenge_id: challenge.id, reason: reason ? reason.value.trim() : "" },
        { challengeId: challenge.id },
      ),
    }, gettext("Decline")),
  ];
}

function drawChallenges() {
  if (!$("challenges-in")) return;
  const waiting = [...lobby.incoming.values()].filter(live);
  document.title = waiting.length
    ? interpolate(gettext("(%(n)s) Challenged · %(title)s"), { n: waiting.length, title: baseTitle }, true) : baseTitle;
  const incoming = waiting.map((challenge) => keyed(JSON.stringify([challenge, expiresText(challenge)]), () => {
    const reason = el("input", { class: "reason", type: "text", maxlength: "100", placeholder: gettext("reason (optional)"), "aria-label": gettext("reason for declining") });
    return el("li", { dataset: { challengeId: challenge.id, user: challenge.challenger } },
      el("span", { class: "who" }, userLink(challenge.challenger, challenge.challenger_is_bot_account)),
      el("span", { class: "what" }, gameTitle(challenge.slug, challenge.options) + timeText(challenge) + (challenge.rated ? ` · ${gettext("rated")}` : "")),
      el("span", { class: "detail" }, `${sideText(challenge, false)} · ${expiresText(challenge)}`),
      el("span", { class: "actions" }, ...answerButtons(challenge, reason)));
  }));
  fill("challenges-in", incoming);

  const outgoing = [...lobby.outgoing.values()].filter(live).map((challenge) => keyed(JSON.stringify([challenge, expiresText(challenge)]), () => {
    const open = !challenge.challenged;
    const href = `${location.origin}/challenge/${challenge.token}/`;
    return el("li", { class: open ? "open" : "", dataset: { challengeId: challenge.id, user: challenge.challenged || "" } },
      el("span", { class: "who" }, open ? gettext("Open challenge") : userLink(challenge.challenged, challenge.challenged_is_bot_account)),
      el("span", { class: "what" }, gameTitle(challenge.slug, challenge.options) + timeText(challenge) + (challenge.rated ? ` · ${gettext("rated")}` : "")),
      el("span", { class: "detail" }, `${sideText(challenge, true)} · ${expiresText(challenge)}`),
      open ? el("span", { class: "share" }, el("a", { class: "challenge-link", href }, href), " ", copyButton(href)) : null,
      el("span", { class: "actions" },
        el("button", {
          type: "button", class: "cancel",
          onclick: () => request({ type: "cancel_challenge", challenge_id: challenge.id }, { challengeId: challenge.id }),
        }, gettext("Cancel"))));
  }));
  fill("challenges-out", outgoing);
}

function drawMyGames() {
  if (!$("my-games")) return;
  const byId = new Map(lobby.games.map((game) => [game.id, game]));
  const name = me();
  fill("my-games", lobby.myGames.map((id) => {
    const game = byId.get(id);
    let label = interpolate(gettext("Game %(id)s"), { id }, true);
    let bot = false;
    if (game) {
      const seat = game.players["1"] === name ? "2" : "1";
      const opponent = game.players[seat];
      bot = (game.bot_accounts || []).includes(seat);
      label = interpolate(gettext("%(game)s against %(opponent)s"), { game: gameName(game.slug), opponent }, true);
    }
    return keyed(JSON.stringify([id, label, bot]), () => el("li", { dataset: { gameId: id } },
      el("a", { href: `/games/${id}/` }, label), ...(bot ? [" ", botMark()] : [])));
  }));
}

// The players this user follows (the page says, at load): their live games come first.
const following = new Set(JSON.parse(document.getElementById("following-data")?.textContent || "[]"));
const followedIn = (game) => following.has(game.players["1"]) || following.has(game.players["2"]);

function drawLiveGames() {
  const name = me();
  const games = [...lobby.games.filter(followedIn), ...lobby.games.filter((game) => !followedIn(game))];
  fill("live-games", games.map((game) => keyed(JSON.stringify([game, name, followedIn(game)]), () => {
    const players = game.players;
    const mine = name && (players["1"] === name || players["2"] === name);
    const followed = followedIn(game);
    const spectators = game.spectators || 0;
    return el("li", { class: [mine ? "mine" : "", followed ? "followed" : ""].join(" ").trim(), dataset: { gameId: game.id } },
      el("a", { href: `/games/${game.id}/`, class: "watch" },
        el("span", { class: "players" }, ...playersText(players, game.bot_accounts || [])),
        el("span", { class: "what" }, gameTitle(game.slug, game.options)),
        ...(followed ? [" ", el("span", { class: "followed-mark" }, gettext("(you follow)"))] : [])),
      el("span", { class: "detail" },
        el("span", { class: "ply" }, game.ply ? interpolate(gettext("move %(n)s"), { n: game.ply }, true) : gettext("new game")), " · ",
        el("span", { class: "spectators", dataset: { count: spectators } },
          interpolate(ngettext("%(n)s watching", "%(n)s watching", spectators), { n: spectators }, true))));
  })));
}

// --- messages to the user ---------------------------------------------------------------

// `challenge`: a challenge to us that the news announces, answered from it.
function showAlert(id, text, link, challenge) {
  const box = $(id);
  const body = box.querySelector(".text");
  body.replaceChildren(text);
  if (link) body.append(el("a", { href: link.href, class: "challenge-link" }, link.text), " ", copyButton(link.href));
  const actions = box.querySelector(".actions");
  if (actions) actions.replaceChildren(...(challenge ? answerButtons(challenge).filter(Boolean) : []));
  if (challenge) box.dataset.challengeId = challenge.id;
  else delete box.dataset.challengeId;
  box.hidden = false;
  // The forms are below the alerts: bring the news (and its buttons) into view.
  const { top, bottom } = box.getBoundingClientRect();
  if (top < 0 || bottom > window.innerHeight) box.scrollIntoView({ block: "nearest" });
}

// A challenge that can no longer be answered: its notice goes, buttons and all.
function challengeGone(challengeId) {
  const box = $("lobby-notice");
  if (box.dataset.challengeId === String(challengeId)) hideAlert("lobby-notice");
}

// A button that copies a link (an open challenge's) to the clipboard.
function copyButton(href) {
  const button = el("button", { type: "button", class: "copy" }, gettext("Copy link"));
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(href);
      button.textContent = gettext("Copied");
    } catch {
      button.textContent = gettext("Select the link to copy it");
    }
  });
  return button;
}

function hideAlert(id) {
  const box = $(id);
  box.hidden = true;
  // Hidden news answers nothing: its challenge's buttons go with it.
  box.querySelector(".actions")?.replaceChildren();
  delete box.dataset.challengeId;
}

function showError(text) {
  showAlert("lobby-error", text);
}

function showNotice(text, link, challenge) {
  showAlert("lobby-notice", text, link, challenge);
}

for (const id of ["lobby-error", "lobby-notice"]) {
  $(id).querySelector(".dismiss").addEventListener("click", () => hideAlert(id));
}

// --- forms ----------------------------------------------------------------------------------

// A number input per option of the chosen game, from the engine's metadata.
function drawOptions(select, fieldset) {
  const info = GAME_INFO.get(select.value);
  const inputs = [];
  for (const option of info ? info.options : []) {
    let min = option.min;
    if (option.constraint === "even" && min % 2 !== 0) min += 1;
    if (option.constraint === "odd" && min % 2 === 0) min += 1;
    const id = `${fieldset.id}-${option.name}`;
    inputs.push(el("div", { class: "option" },
      el("label", { for: id }, option.label || option.name),
      el("input", {
        id, type: "number", name: option.name, required: true, inputmode: "numeric",
        min, max: option.max, step: option.constraint ? 2 : 1, value: option.default,
        dataset: { option: option.name }, title: option.help,
      }),
      el("small", { class: "help" }, option.help)));
  }
  fieldset.replaceChildren(...inputs);
  fieldset.hidden = inputs.length === 0;
  const summary = fieldset.parentElement.querySelector(".game-summary");
  if (summary) summary.textContent = info ? info.summary || "" : "";
}

function readOptions(fieldset) {
  const options = {};
  for (const input of fieldset.querySelectorAll("input[data-option]")) {
    const number = Number(input.value);
    // The server checks every value; send what the user typed when it is not a number.
    options[input.dataset.option] = input.value !== "" && Number.isInteger(number) ? number : input.value;
  }
  return options;
}

function setUpGameChoice(selectId, fieldsetId) {
  const select = $(selectId);
  const fieldset = $(fieldsetId);
  select.replaceChildren(...GAMES.map((game) => el("option", { value: game.slug }, game.name)));
  select.addEventListener("change", () => drawOptions(select, fieldset));
  drawOptions(select, fieldset);
  return { select, fieldset };
}

function setUpForms() {
  const seekForm = $("seek-form");
  if (seekForm) {
    const seek = setUpGameChoice("seek-game", "seek-options");
    const seekTime = setUpTimeControl("seek");
    seekForm.addEventListener("submit", (event) => {
      event.preventDefault();
      const message = {
        type: "seek",
        games: [{ slug: seek.select.value, options: readOptions(seek.fieldset) }],
        time_control: seekTime(),
        rated: Boolean($("seek-rated") && $("seek-rated").checked),
      };
      const low = $("seek-range-min") ? $("seek-range-min").value : "";
      const high = $("seek-range-max") ? $("seek-range-max").value : "";
      if (low || high) message.rating_range = [Number(low || 0), Number(high || 4000)];
      if ($("seek-computer").checked) message.computer = Number($("seek-computer-level").value);
      if ($("seek-bots")?.checked) message.bots = true;
      request(message);
    });
  }
  const computerForm = $("computer-form");
  if (computerForm) {
    const choice = setUpGameChoice("computer-game", "computer-options");
    const computerTime = setUpTimeControl("computer");
    computerForm.addEventListener("submit", (event) => {
      event.preventDefault();
      request({
        type: "play_computer",
        slug: choice.select.value,
        options: readOptions(choice.fieldset),
        level: Number($("computer-level").value),
        side: $("computer-side").value,
        time_control: computerTime(),
      });
    });
  }
  const challengeForm = $("challenge-form");
  if (challengeForm) {
    const choice = setUpGameChoice("challenge-game", "challenge-options");
    const challengeTime = setUpTimeControl("challenge");
    challengeForm.addEventListener("submit", (event) => {
      event.preventDefault();
      const user = $("challenge-user").value.trim();
      const message = {
        type: "challenge",
        slug: choice.select.value,
        options: readOptions(choice.fieldset),
        side: $("challenge-side").value,
        time_control: challengeTime(),
        rated: Boolean($("challenge-rated") && $("challenge-rated").checked),
      };
      if (user) message.user = user;
      request(message, { open: !user, user });
    });
  }
}

// --- start ------------------------------------------------------------------------------------

setUpForms();
socket.start();
setInterval(() => {
  if (document.visibilityState === "visible" && socket.isOpen()) refresh();
}, REFRESH_MS);
setInterval(drawChallenges, 60000); // expiry countdowns
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState !== "visible" || lobby.leaving) return;
  if (socket.isClosed()) socket.start();
});
window.addEventListener("pageshow", (event) => {
  // Back from a game (bfcache): the page may be stale; the socket was closed.
  if (event.persisted) {
    lobby.leaving = false;
    socket.start();
  }
});
