// The game page: draws what the server says and sends what the player clicks.
// The server decides everything (legal moves, results); this file holds no rules.
/* global gettext, ngettext, interpolate */
import { renderChess } from "./boards/chess.js";
import { renderMancala } from "./boards/mancala.js";
import { botMark } from "./bot_mark.js";
import { endgame } from "./endgame.js";
import { explorer } from "./explorer.js";
import { renderMoves } from "./game/moves.js";
import { announce, describe, resultText } from "./game/words.js";
import { CLOSE, isNavigating, openSocket } from "./socket.js";
import { timeControlLabel } from "./time_control.js";

const root = document.getElementById("game");
const gameId = Number(root.dataset.gameId);
const openings = explorer(document.getElementById("explorer"));
const solved = endgame(document.getElementById("endgame"));
// The games the server may have an endgame database of (games/endgames.py; ZigZag's per
// option set: the server answers "not covered" for the sets it has none of).
const SOLVED_GAMES = new Set(["diffusion", "four-rank-diffusion", "zigzag"]);
const $ = (id) => document.getElementById(id);
// Dates as the page's language writes them.
const lang = document.documentElement.lang || undefined;
// The clocks are redrawn ten times a second: a write that changes nothing still costs the
// page a style pass, so only changes are written (a page at rest then does no work).
function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}
function setHidden(node, hidden) {
  if (node.hidden !== hidden) node.hidden = hidden;
}
// draw() runs on every event and every step of a sowing: the parts built anew each time (the
// move list grows with the game) are rebuilt only when what they show has changed.
const drawnFrom = new Map();
function changed(part, ...inputs) {
  const before = drawnFrom.get(part);
  if (before && before.length === inputs.length && before.every((value, i) => value === inputs[i])) {
    return false;
  }
  drawnFrom.set(part, inputs);
  return true;
}

const live = {
  v: 0, you: null, game: null, previous: null, lastMove: null,
  flipped: null, viewing: null, positions: null, pending: 0,
  // The clock as the server last told it, and the local time when it arrived.
  clock: null, clockAt: 0, askedAtZero: false,
  // Chat: the room's lines as shown, and the newest line id (a reconnect asks for later ones).
  chat: null, chatId: 0, ratings: null, ratingsAsked: false,
  // The move being shown seed by seed ({state, current}), and its next step's timer.
  sowing: null, sowingTimer: null,
  // This player's conditional moves (told to them only).
  queue: [],
  // The player's move sent and not answered yet ({message, held, again}: sendMove).
  unanswered: null,
  // Who is here (the last crowd frame).
  crowd: null,
  // The player's own clock as last drawn, by seat: a low-time warning is said as it passes.
  lastRemaining: {},
};

const socket = openSocket(`/ws/games/${gameId}/`, {
  onMessage: receive,
  // A page that has drawn the game asks only for the events and chat lines it missed.
  resync: () => (live.game ? { v: live.v, chat: live.chatId } : null),
  onConnecting: () => setConnection("connecting", gettext("connecting…")),
  onOpen: () => {
    setConnection("open", gettext("live"));
    sendMoveAgain();
  },
  onRetry: () => setConnection("closed", gettext("reconnecting…")),
  stopOn: { [CLOSE.NO_SUCH_GAME]: () => setConnection("closed", gettext("no such game")) },
});

function send(message) {
  if (!socket.send(message)) say(gettext("Not connected: wait a moment."));
}

function setConnection(state, text) {
  const node = $("connection");
  node.dataset.state = state;
  node.textContent = text;
  if (state === "open") drawConnection();
}

// An open socket on a game in progress is "live"; once the game is over it is only
// "connected" (chat, rematch offers), not a live game any more.
function drawConnection() {
  const node = $("connection");
  const over = Boolean(live.game) && live.game.status !== "active";
  node.dataset.game = over ? "over" : "active";
  if (node.dataset.state === "open") node.textContent = over ? gettext("connected") : gettext("live");
}

// A move for the game as the page shows it now; the id's letter says which control sent it
// (m: the board, r: a pit the page did not list, e: echo, k: the move box).
function sendMove(move, tag) {
  const message = { type: "move", move, ply: live.game.ply, id: `${tag}${live.game.ply}` };
  const open = socket.isOpen();
  const taken = socket.send(message);
  if (!taken) say(gettext("Not connected: wait a moment."));
  // Held by the socket while it quietly reconnects: it sends it itself once open.
  live.unanswered = { message, held: taken && !open, again: false };
}

// A socket can die with a move in flight (its path gone silent: the page gives it up only
// seconds later), so a move not answered yet goes out again on the next socket, and the
// player need not play it twice. One that had arrived is answered as the stored event
// (`duplicate`: nothing changes); one the game has moved past since is refused, quietly, as
// the page catches up from the events anyway.
function sendMoveAgain() {
  const unanswered = live.unanswered;
  if (!unanswered) return;
  if (unanswered.held) {
    unanswered.held = false;
    return;
  }
  if (live.game?.status !== "active" || live.game.ply !== unanswered.message.ply) {
    live.unanswered = null;
    return;
  }
  unanswered.again = true;
  socket.send(unanswered.message);
}
const QUIET_WHEN_SENT_AGAIN = new Set(["stale_ply", "not_your_turn", "game_over"]);

function say(text, kind = "info") {
  const node = $("message");
  node.textContent = text;
  node.dataset.kind = kind;
}

// --- messages from the server ---------------------------------------------------------
// Frames that are not versioned are handled as they come; every other frame is a versioned
// event of the game (docs/PROTOCOL.md, "Versioned events"), applied in version order.

const FRAMES = {
  state: receiveState,
  queue: receiveQueue,
  crowd: drawCrowd,
  error: receiveError,
  chat: (message) => addChat([message.line]),
  chat_lines: (message) => addChat(message.lines),
  // A moderator removed a line: it goes from this page as from every other.
  chat_removed: (message) => $("chat-lines").querySelector(`li[data-line-id="${message.line_id}"]`)?.remove(),
  // A moderator acted on this account (the news bar shows what; notify.js): the chat box
  // follows a mute or its end at once.
  account_notice: (message) => {
    if (message.action !== "mute" && message.action !== "unmute") return;
    if (live.chat) live.chat.mutedUntil = message.chat_muted_until;
    drawChatControls();
  },
  lag_probe: (message) => send({ type: "lag_reply", t: message.t }), // the server measures the round trip
  pong: () => {},
  ack: () => {},
};

function receive(message) {
  const unanswered = live.unanswered;
  if (unanswered && message.id !== undefined && message.id === unanswered.message.id) {
    live.unanswered = null;
    if (message.type === "error" && unanswered.again && QUIET_WHEN_SENT_AGAIN.has(message.code)) {
      if (STALE_ERRORS.has(message.code)) resync();
      return;
    }
  }
  if (Object.hasOwn(FRAMES, message.type)) FRAMES[message.type](message);
  else receiveEvent(message);
}

function receiveState(message) {
  live.v = message.v;
  live.you = message.you;
  live.game = message.game;
  live.previous = null;
  setClock(message.game.clock);
  live.lastMove = lastNotation(message.game.moves);
  if (live.flipped === null) live.flipped = message.you === 2;
  if (message.chat) setChat(message.chat);
  if (message.queue) live.queue = message.queue;
  if (live.crowd) drawCrowd(live.crowd); // a crowd that came first: now the seats are known
  draw();
  // The page shows the game as the server has it (the socket's "open" comes before that: an
  // event sent in between is in this snapshot, not announced on its own).
  root.dataset.ready = "true";
  openAskedPly();
}

// A link may address one moment of the game (`?ply=N`: the position after N moves); the page
// opens there once, and keeps the address of the position shown as one browses.
let askedPly = new URL(location.href).searchParams.get("ply");
function openAskedPly() {
  if (askedPly === null) return;
  const ply = /^[0-9]{1,6}$/.test(askedPly) ? Number(askedPly) : null;
  askedPly = null;
  if (ply !== null && ply < live.game.ply) viewPosition(ply);
  else showPlyInAddress();
}

function showPlyInAddress() {
  const url = new URL(location.href);
  if (live.viewing === null) url.searchParams.delete("ply");
  else url.searchParams.set("ply", String(live.viewing));
  if (url.href !== location.href) history.replaceState(history.state, "", url);
  // The picture link shows the moment shown too.
  const picture = document.getElementById("picture-link");
  if (picture) {
    const address = new URL(picture.href);
    if (live.viewing === null) address.searchParams.delete("ply");
    else address.searchParams.set("ply", String(live.viewing));
    picture.href = address.href;
  }
}

function receiveQueue(message) {
  live.queue = message.moves;
  say(message.moves.length ? gettext("Queued.") : gettext("Queue cleared."));
  draw();
}

const STALE_ERRORS = new Set([
  "game_over", "not_your_turn", "too_late_to_abort", "game_not_over", "opponent_here",
]);

function receiveError(message) {
  say(message.message, "error");
  // These refusals prove the page's view is behind the server's: catch up.
  if (STALE_ERRORS.has(message.code)) resync();
}

function resync() {
  send({ type: "sync", v: live.v, chat: live.chatId });
}

function receiveEvent(event) {
  if (typeof event.v !== "number" || event.v <= live.v) return;
  // A gap: the server sends what was missed, in order.
  if (event.v !== live.v + 1) return resync();
  live.v = event.v;
  if (event.clock !== undefined) setClock(event.clock);
  // A `vacation` event (or one newer than this page) changes no more than the clock.
  if (Object.hasOwn(EVENTS, event.type)) EVENTS[event.type](live.game, event);
  draw();
}

const EVENTS = {
  move: applyMove,
  end: applyEnd,
  takeback: applyTakeback,
  takeback_offer: (game, event) => applyOffer(game, event, "takeback"),
  draw_offer: (game, event) => applyOffer(game, event, "draw"),
  takeback_declined: (game, event) => applyDeclined(game, event, "takeback", gettext("%(name)s declined the takeback.")),
  draw_declined: (game, event) => applyDeclined(game, event, "draw", gettext("%(name)s declined the draw offer.")),
  away: (game, event) => {
    game.away = { ...game.away, [String(event.player)]: event.claim_at };
  },
  back: (game, event) => {
    game.away = without(game.away, String(event.player));
  },
  rematch_offer: (game, event) => {
    game.rematch_offers = [...new Set([...game.rematch_offers, event.by])];
  },
  rematch: (game, event) => {
    game.rematch_id = event.new_game_id;
    // Both players asked for it: take them to the new game (spectators get a link).
    if (live.you !== null && !isNavigating()) location.assign(`/games/${event.new_game_id}/`);
  },
};

const lastNotation = (moves) => (moves.length ? moves[moves.length - 1].notation : null);
const byOpponent = (player) => live.you !== null && player !== live.you;

function without(object, key) {
  const copy = { ...object };
  delete copy[key];
  return copy;
}

function setPosition(game, event) {
  game.state = event.state;
  game.ply = event.ply;
  game.to_move = event.to_move;
  game.legal_moves = event.legal_moves;
  game.abortable = event.abortable;
  game.offers = {}; // a move or a takeback withdraws every offer (as does an end)
}

function applyMove(game, event) {
  live.previous = game.state;
  live.lastMove = event.move;
  setPosition(game, event);
  game.status = event.status;
  game.result = event.result;
  game.moves.push({ player: event.player, notation: event.move });
  // The opponent's move either matched the queue's next pair (its answer follows) or
  // dropped the queue.
  if (byOpponent(event.player) && live.queue.length) {
    live.queue = live.queue[0] === event.move ? live.queue.slice(2) : [];
  }
  if (live.positions) live.positions.push(event.state);
  if (live.viewing !== null) live.pending += 1;
  if (byOpponent(event.player)) chime();
  if (event.path && live.viewing === null) animate(live.previous, event.path);
  say("");
  const played = event.player === live.you
    ? interpolate(gettext("You played %(move)s."), { move: event.move }, true)
    : interpolate(gettext("%(name)s played %(move)s."), { name: game.players[String(event.player)].username, move: event.move }, true);
  const next = game.status !== "active" ? "" : game.to_move === live.you ? ` ${gettext("Your move.")}` : "";
  announce(`${played}${next}`);
}

function applyEnd(game, event) {
  game.status = event.status;
  game.result = event.result;
  if (event.result) announce(interpolate(gettext("Game over: %(result)s."), { result: resultText(event.result, game.players) }, true));
  game.legal_moves = [];
  game.away = {};
  game.offers = {};
}

function applyTakeback(game, event) {
  // The last `undone` moves are gone from the game (their events stay in the history).
  game.moves.splice(game.moves.length - event.undone, event.undone);
  game.takebacks = [...(game.takebacks || []), { ply: event.ply, undone: event.undone }];
  setPosition(game, event);
  live.queue = [];
  live.previous = null;
  live.lastMove = lastNotation(game.moves);
  if (live.positions) live.positions.splice(event.ply + 1);
  if (live.viewing !== null && live.viewing > event.ply) {
    live.viewing = null;
    showPlyInAddress();
  }
  say(interpolate(ngettext("%(name)s accepted: one move taken back.", "%(name)s accepted: %(n)s moves taken back.", event.undone), {
    name: game.players[String(event.by)].username, n: event.undone,
  }, true));
}

function applyOffer(game, event, kind) {
  game.offers = { ...game.offers, [kind]: event.by };
  say("");
  if (byOpponent(event.by)) chime();
}

// `words`: the sentence, with the name of who declined as %(name)s.
function applyDeclined(game, event, kind, words) {
  game.offers = without(game.offers, kind);
  say(interpolate(words, { name: game.players[String(event.by)].username }, true));
}

function drawCrowd(crowd) {
  live.crowd = crowd; // drawn again with a new state (a bot's seat needs the game's players)
  $("spectators").textContent = crowd.spectators;
  for (const seat of ["1", "2"]) {
    // The computer has no socket on the game, and is always there to answer.
    const bot = Boolean(live.game && live.game.players[seat].is_bot);
    const here = bot || Boolean(crowd.players[seat]);
    const node = $(`player-${seat}`);
    node.classList.toggle("online", here);
    const dot = node.querySelector(".dot");
    dot.title = here ? gettext("online") : gettext("offline");
    dot.setAttribute("aria-label", dot.title);
  }
}

// --- clocks -----------------------------------------------------------------------------

function setClock(clock) {
  live.clock = clock || null;
  live.clockAt = Date.now();
  live.askedAtZero = false;
}

function format(ms) {
  if (ms < 10000) return `0:0${(Math.max(0, ms) / 1000).toFixed(1)}`; // tenths when it counts
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  if (seconds >= 86400) {
    return interpolate(gettext("%(days)s d %(hours)s h"), {
      days: Math.floor(seconds / 86400), hours: Math.floor((seconds % 86400) / 3600),
    }, true);
  }
  if (seconds >= 3600) {
    return interpolate(gettext("%(hours)s h %(minutes)s min"), {
      hours: Math.floor(seconds / 3600), minutes: Math.floor((seconds % 3600) / 60),
    }, true);
  }
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

// The server's clock now, reckoned from its last numbers and the local time since.
const serverNow = (clock) => clock.server_time + (Date.now() - live.clockAt);

// The server's numbers, ticked down locally for the side whose clock runs.
function drawClocks() {
  drawTimeControl(live.game, live.clock);
  for (const seat of [1, 2]) drawClock(seat, live.clock);
  drawAway();
}

function drawTimeControl(game, clock) {
  let text = game && game.time_control ? timeControlLabel(game.time_control.code) : "";
  if (clock && clock.paused_until && clock.paused_until > serverNow(clock)) {
    const until = new Date(clock.paused_until).toLocaleString(lang);
    text += ` · ${interpolate(gettext("clocks paused (vacation) until %(date)s"), { date: until }, true)}`;
  }
  setText($("time-control"), text);
}

function drawClock(seat, clock) {
  const node = $(`clock-${seat}`);
  setHidden(node, !clock);
  if (!clock) return;
  const running = clock.running === seat;
  const passed = running ? runningFor(clock) : 0;
  const remaining = clock.remaining[seat - 1] - passed;
  // Until a player's first move of a real-time game, the countdown is to its deadline.
  const firstMoveLeft = clock.first_move_by ? clock.first_move_by - clock.server_time - passed : null;
  setText(node, running && firstMoveLeft !== null
    ? interpolate(gettext("first move: %(seconds)s s"), { seconds: Math.max(0, Math.ceil(firstMoveLeft / 1000)) }, true)
    : format(remaining));
  if (running) askIfOverdue(firstMoveLeft ?? remaining);
  if (running && seat === live.you && firstMoveLeft === null) warnIfLow(seat, remaining);
  node.classList.toggle("running", running);
  node.classList.toggle("low", running && firstMoveLeft === null && remaining < 10000);
}

// The player's own clock running low is said aloud once at each of these marks (ms).
const WARNINGS = [60000, 30000, 10000];

function warnIfLow(seat, remaining) {
  const before = live.lastRemaining[seat];
  live.lastRemaining[seat] = remaining;
  if (before === undefined) return;
  // The lowest mark passed (a page asleep for a while may pass two at once).
  const mark = [...WARNINGS].reverse().find((at) => before >= at && remaining < at);
  if (mark) {
    const seconds = mark / 1000;
    announce(interpolate(ngettext("%(n)s second left on your clock.", "%(n)s seconds left on your clock.", seconds), { n: seconds }, true), true);
  }
}

// How long the running clock has run since the server's numbers came.
function runningFor(clock) {
  // A vacation holds every clock of the game until paused_until (server time).
  const held = clock.paused_until ? Math.max(0, clock.paused_until - clock.server_time) : 0;
  return Math.max(0, Date.now() - live.clockAt - held);
}

// The server ends games on time by itself; if its news has not come a moment after zero,
// ask for what was missed (once per clock update).
function askIfOverdue(left) {
  if (left >= -1500 || live.askedAtZero) return;
  live.askedAtZero = true;
  if (socket.isOpen()) send({ type: "sync", v: live.v });
}

function drawAway() {
  const game = live.game;
  const box = $("away");
  const away = game && game.status === "active" ? game.away || {} : {};
  const seat = Object.keys(away)[0];
  setHidden(box, !seat);
  if (!seat) return;
  const name = game.players[seat].username;
  const left = Math.ceil((away[seat] - (live.clock ? serverNow(live.clock) : Date.now())) / 1000);
  const canClaim = live.you !== null && String(live.you) !== seat;
  const words = left <= 0 ? gettext("%(name)s has left the game.")
    : canClaim ? gettext("%(name)s has left the game: you can claim the win in %(seconds)s s.")
      : gettext("%(name)s has left the game: the win can be claimed in %(seconds)s s.");
  setText($("away-text"), interpolate(words, { name, seconds: left }, true));
  setHidden($("claim-button"), !(canClaim && left <= 0));
}

setInterval(drawClocks, 100);

// --- drawing ----------------------------------------------------------------------------

function draw() {
  const game = live.game;
  if (!game) return;
  const shown = shownPosition(game);
  const player = live.you !== null;
  drawConnection();
  drawPlayers(game, shown.active);
  drawBoard(game, shown);
  drawTurnSignals(shown.myTurn);
  root.dataset.playing = String(shown.active && player);
  const moves = game.moves;
  if (changed("moves", game, moves, moves.length, moves.at(-1)?.notation, (game.takebacks || []).length, live.viewing)) {
    renderMoves($("moves"), game, { viewing: live.viewing, onPick: viewPosition });
  }
  drawBrowsing(game, shown.viewingOld);
  drawBanner(game.result, game.players);
  drawWords(game, shown.state);
  drawActions(game, player, shown.active);
  drawOffers(game, player, shown.active);
  drawQueue(game, player, shown.active);
  drawChatControls(game);
  drawRatings(game);
  drawClocks();
  drawRematchLink(game.rematch_id);
  drawAnalyse(game, player);
  drawExplorer(game);
  // The controls drawn after the board may have changed the room it has (a button shown, the
  // turn's lines): drawn once more to fit.
  if (boardRoom() !== live.room) drawBoard(game, shown);
}

// The opening explorer, once the game is over (not while it is played: no help from it then),
// at the position shown, with the move the game went on with marked.
function drawExplorer(game) {
  if (game.status === "active") {
    solved.hide();
    return openings.hide();
  }
  const ply = live.viewing ?? game.ply;
  openings.show({ game_id: String(gameId), ply: String(ply) }, game.moves[ply]?.notation ?? null);
  // The endgame database's verdict where it covers the position shown.
  if (SOLVED_GAMES.has(game.slug)) solved.show({ game_id: String(gameId), ply: String(ply) });
}

// The analysis board opens at the position shown; a player's own game only once it is over.
function drawAnalyse(game, player) {
  const form = $("analyse-form");
  if (!form) return; // signed out: nowhere to keep an analysis
  form.hidden = player && game.status === "active";
  form.elements.ply.value = String(live.viewing ?? game.ply);
}

// What the board shows: an earlier position the viewer went back to, a move being sown
// seed by seed, or the game now.
function shownPosition(game) {
  const active = game.status === "active";
  const viewingOld = live.viewing !== null;
  const sowing = !viewingOld && live.sowing ? live.sowing : null;
  const state = viewingOld ? live.positions[live.viewing] : sowing ? sowing.state : game.state;
  const myTurn = active && !viewingOld && !sowing && live.you === game.to_move;
  return { active, viewingOld, sowing, state, myTurn };
}

function drawPlayers(game, active) {
  for (const seat of ["1", "2"]) {
    const node = $(`player-${seat}`);
    const player = game.players[seat];
    const name = node.querySelector(".name");
    let words = player.username;
    if (player.is_guest) words = interpolate(gettext("%(name)s (guest)"), { name: words }, true);
    if (player.is_bot) words = interpolate(gettext("%(name)s (computer)"), { name: words }, true);
    if (live.you === Number(seat)) words = interpolate(gettext("%(name)s — you"), { name: words }, true);
    name.textContent = words;
    name.href = `/@${encodeURIComponent(player.username)}/`; // the player's profile
    // A bot account's "BOT", just after its name (a program playing through the API).
    const mark = name.nextElementSibling?.classList.contains("bot-mark") ? name.nextElementSibling : null;
    if (player.is_bot_account && !mark) name.after(botMark());
    else if (!player.is_bot_account && mark) mark.remove();
    node.classList.toggle("to-move", active && game.to_move === Number(seat));
  }
  // Seats follow the board: the viewer's own side at the bottom, each player's clock on
  // their side of the board.
  const [top, bottom] = live.flipped ? ["player-1", "player-2"] : ["player-2", "player-1"];
  if ($(top).parentElement !== $("seat-top")) $("seat-top").append($(top));
  if ($(bottom).parentElement !== $("seat-bottom")) $("seat-bottom").append($(bottom));
}

// The height the board may take. On a phone (one column, CSS: .game-body) the whole board,
// both players' clocks and the move controls share one screen, as on lichess: the window's
// height less what is above the board and what is between its foot and the seat below it
// or the last control that plays or ends the game (the turn's lines, the move box, resign),
// which the board's own size does not move. The controls set aside (flip, sound, analyse)
// may wrap below. At a desk (two columns) the stylesheet's measure holds (null).
const oneColumn = window.matchMedia("(max-width: 899px)");
function boardRoom() {
  if (!oneColumn.matches) return null;
  const board = $("board").getBoundingClientRect();
  const below = [$("seat-bottom"), ...document.querySelectorAll(".controls > :not(.aside)")]
    .map((node) => node.getBoundingClientRect())
    .filter((box) => box.height > 0);
  const foot = Math.max(board.bottom, ...below.map((box) => box.bottom));
  return Math.floor(window.innerHeight - (board.top + window.scrollY) - (foot - board.bottom) - 8);
}

// The server says how to draw the game (board.renderer): no game is named here.
function drawBoard(game, shown) {
  const view = boardView(game, shown);
  view.room = boardRoom();
  live.room = view.room;
  // Busy while a move is being sown seed by seed: what it shows is not the position yet.
  $("board").setAttribute("aria-busy", String(Boolean(shown.sowing)));
  if (game.board.renderer === "grid") {
    renderChess($("board"), view);
    $("echo-button").hidden = !(shown.myTurn && game.legal_moves && game.legal_moves.echo);
    // Translators: "j3-j4" and "echo" are moves as typed in the box: keep them as they are.
    $("move-input").placeholder = gettext("e.g. j3-j4 or echo");
  } else {
    renderMancala($("board"), view);
    $("turn-info").replaceChildren();
  }
}

function boardView(game, shown) {
  const { viewingOld, sowing, state, myTurn } = shown;
  return {
    name: root.dataset.name,
    board: game.board,
    state,
    legal: myTurn ? game.legal_moves : [],
    previous: viewingOld ? null : live.previous,
    flipped: live.flipped,
    you: live.you,
    players: game.players,
    current: sowing ? sowing.current : null,
    captured: state.captured,
    lastMove: viewingOld ? game.moves[live.viewing - 1]?.notation ?? null : live.lastMove,
    ply: viewingOld ? live.viewing : game.ply,
    onMove: (move) => sendMove(move, "m"),
    onDraft: (move) => { $("move-input").value = move; },
    onRefused: (move) => refusedClick(game, shown, move),
    onExplain: (text) => say(text, "error"),
    infoContainer: $("turn-info"),
  };
}

// A pit that is not among the legal moves: the server says why (the page knows no rules).
function refusedClick(game, shown, move) {
  if (shown.sowing && shown.active && live.you !== null && live.you === game.to_move) {
    // The opponent's move is still being sown on screen, and it is already this player's
    // turn: the click is a move. The sowing jumps to its end and the server judges the move.
    finishSowing();
    if (move) sendMove(move, "m");
    return;
  }
  if (shown.viewingOld) say(gettext("You are looking at an earlier position: press Live to play."), "error");
  else if (!shown.active) say(gettext("The game is over."), "error");
  else if (live.you === null) say(gettext("You are watching this game."), "error");
  else if (!shown.myTurn) say(interpolate(gettext("It is %(name)s's turn."), { name: game.players[String(game.to_move)].username }, true), "error");
  else if (move) sendMove(move, "r");
}

// The buttons that step through the game's earlier positions.
function drawBrowsing(game, viewingOld) {
  $("live-button").hidden = !viewingOld;
  $("live-button").textContent = live.pending
    ? interpolate(gettext("Live (%(n)s new)"), { n: live.pending }, true) : gettext("Live");
  const at = viewingOld ? live.viewing : game.ply;
  $("first-button").disabled = at === 0;
  $("prev-button").disabled = at === 0;
  $("next-button").disabled = !viewingOld;
  $("last-button").disabled = !viewingOld;
}

function drawBanner(result, players) {
  const banner = $("banner");
  banner.hidden = !result;
  if (!result) return;
  banner.textContent = resultText(result, players);
}

// The position in words, beside the board (a screen reader's view of the board).
function drawWords(game, state) {
  if (!changed("words", game, state, game.result, game.to_move, live.you)) return;
  const lines = describe(game, state, live.you);
  $("position-text").replaceChildren(...lines.map((text) => {
    const line = document.createElement("p");
    line.textContent = text;
    return line;
  }));
  document.querySelector("#board-keys .grid-only").hidden = game.board.renderer !== "grid";
}

function drawActions(game, player, active) {
  // The server says whether the game may still be aborted (or only resigned).
  $("move-form").hidden = !player || !active;
  $("resign-button").hidden = !player || !active || game.abortable;
  $("abort-button").hidden = !player || !active || !game.abortable;
  $("rematch-button").hidden = !player || active || Boolean(game.rematch_id);
  $("rematch-button").textContent = game.rematch_offers.includes(live.you)
    ? gettext("Rematch offered") : game.rematch_offers.length ? gettext("Accept rematch") : gettext("Rematch");
}

function drawRematchLink(rematchId) {
  const link = $("rematch-link");
  link.hidden = !rematchId;
  if (rematchId) link.href = `/games/${rematchId}/`;
}

async function viewPosition(ply) {
  if (!live.positions) {
    const response = await fetch(`/api/games/${gameId}/positions`);
    if (!response.ok) return say(gettext("Could not load the positions."), "error");
    live.positions = (await response.json()).positions;
  }
  live.viewing = ply >= live.game.ply ? null : Math.max(0, ply);
  if (live.viewing === null) live.pending = 0;
  showPlyInAddress();
  draw();
}

function step(delta) {
  if (!live.game) return;
  const at = live.viewing === null ? live.game.ply : live.viewing;
  viewPosition(at + delta);
}

// --- offers: takebacks and draws by consent -----------------------------------------------

function drawOffers(game, player, active) {
  const offers = active ? game.offers || {} : {};
  drawOfferButtons(game, offers, player && active);
  // Where the rules allow no draw, say so rather than offer a button that can only fail.
  const noDraws = $("no-draws");
  noDraws.hidden = game.draws !== false || !active;
  noDraws.textContent = gettext("No draws in this game: every game of Diffusion ends with a winner.");
  drawPendingOffer(game, offers, player);
}

function drawOfferButtons(game, offers, playing) {
  $("takeback-button").hidden = !playing || !canTakeBack(game);
  $("takeback-button").disabled = offers.takeback === live.you;
  $("takeback-button").textContent = offers.takeback === live.you ? gettext("Takeback asked") : gettext("Take back");
  $("draw-button").hidden = !playing || !game.draws;
  $("draw-button").disabled = offers.draw === live.you;
  $("draw-button").textContent = offers.draw === live.you ? gettext("Draw offered") : gettext("Offer a draw");
}

// Your own last move can be taken back until your opponent answers it; the computer's
// answer goes back with it (the server checks).
function canTakeBack(game) {
  const last = game.moves[game.moves.length - 1];
  const opponent = live.you !== null ? game.players[String(3 - live.you)] : null;
  return last && (last.player === live.you
    || (opponent?.is_bot && game.moves.some((move) => move.player === live.you)));
}

// The offer waiting for an answer, a takeback first; the opponent's has the answer buttons.
function drawPendingOffer(game, offers, player) {
  const box = $("offers");
  const kind = offers.takeback ? "takeback" : offers.draw ? "draw" : null;
  box.hidden = !kind;
  if (!kind) return;
  box.dataset.kind = kind;
  const by = offers[kind];
  const answering = player && by !== live.you;
  $("offer-text").textContent = offerText(kind, by === live.you ? null : game.players[String(by)].username);
  $("offer-accept").hidden = !answering;
  $("offer-decline").hidden = !answering;
}

// `name` is who made the offer, null for the viewer.
function offerText(kind, name) {
  if (kind === "takeback") {
    return name === null
      ? gettext("You asked to take back your last move: waiting for an answer.")
      : interpolate(gettext("%(name)s asks to take back their last move."), { name }, true);
  }
  return name === null
    ? gettext("You offered a draw: waiting for an answer.") : interpolate(gettext("%(name)s offers a draw."), { name }, true);
}

function answerOffer(accept) {
  const offers = live.game.offers || {};
  if (offers.takeback && offers.takeback !== live.you) send({ type: "takeback_answer", accept });
  else if (offers.draw && offers.draw !== live.you) send({ type: "draw_answer", accept });
}

// --- conditional moves: correspondence players queue answers to expected moves ------------

function drawQueue(game, player, active) {
  const correspondence = !game.time_control || game.time_control.kind !== "realtime";
  $("queue-form").hidden = !player || !active || !correspondence || game.to_move === live.you;
  const pairs = [];
  for (let i = 0; i + 1 < live.queue.length; i += 2) {
    pairs.push(interpolate(gettext("if %(move)s, then %(answer)s"), { move: live.queue[i], answer: live.queue[i + 1] }, true));
  }
  $("queue-now").textContent = pairs.length
    ? interpolate(gettext("Queued: %(pairs)s."), { pairs: pairs.join("; ") }, true) : gettext("Nothing queued.");
  $("queue-clear").hidden = !live.queue.length;
}

// --- chat: the players' room or the spectators' room, always shown as text ----------------

function setChat(chat) {
  const fresh = !live.chat || live.chat.room !== chat.room;
  live.chat = { room: chat.room, muted: chat.muted, mutedUntil: chat.muted_until };
  if (fresh) {
    $("chat-lines").replaceChildren();
    live.chatId = 0;
  }
  addChat(chat.lines);
}

function addChat(lines) {
  const list = $("chat-lines");
  for (const line of lines) {
    if (line.id <= live.chatId) continue; // seen already (a resync may repeat lines)
    live.chatId = line.id;
    const item = document.createElement("li");
    item.dataset.lineId = line.id;
    const who = document.createElement("strong");
    who.textContent = line.user;
    const text = document.createElement("span");
    text.textContent = ` ${line.text}`; // text, never HTML
    item.append(who, text);
    if (signedIn && line.user !== document.body.dataset.username) {
      // The report form opens beside the game (the server decides who may report what).
      const report = document.createElement("a");
      report.className = "report-line";
      report.href = `/report/?chat=${line.id}`;
      report.target = "_blank";
      report.rel = "noopener nofollow";
      report.textContent = gettext("report");
      report.setAttribute("aria-label", interpolate(gettext("report this line of %(name)s"), { name: line.user }, true));
      item.append(" ", report);
    }
    item.title = new Date(line.at).toLocaleString(lang);
    list.append(item);
  }
  while (list.children.length > 100) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

const signedIn = Boolean(document.body.dataset.username);

function drawChatControls() {
  const room = live.chat ? live.chat.room : live.you ? "players" : "spectators";
  $("chat-room").textContent = room === "players" ? gettext("Chat with your opponent") : gettext("Spectators' chat");
  // The server refuses a muted player's lines (`chat_muted`); the page says so beforehand.
  const until = live.chat && live.chat.mutedUntil ? new Date(live.chat.mutedUntil) : null;
  const muted = until !== null && until > new Date();
  $("chat-muted").hidden = !muted;
  $("chat-muted").textContent = muted
    ? interpolate(gettext("A moderator muted your chat until %(date)s."), { date: until.toLocaleString(lang) }, true) : "";
  $("chat-input").disabled = muted;
  $("chat-form").querySelector("button").disabled = muted;
  $("chat-form").hidden = !signedIn;
  $("chat-login").hidden = signedIn;
  $("chat-mute").hidden = live.you === null;
  $("chat-mute-box").checked = Boolean(live.chat && live.chat.muted);
}

// --- the rating change, once a rated game is over ------------------------------------------

async function drawRatings(game) {
  const box = $("rating-changes");
  if (!game.rated || game.status !== "finished") {
    box.hidden = true;
    return;
  }
  if (live.ratings) return showRatings(game, live.ratings);
  if (live.ratingsAsked) return;
  live.ratingsAsked = true;
  // The ratings are computed just after the game ends: ask again a moment later if needed.
  for (const wait of [0, 500, 1500, 3000]) {
    await new Promise((resolve) => setTimeout(resolve, wait));
    const response = await fetch(`/api/games/${gameId}/ratings`).catch(() => null);
    if (!response || !response.ok) continue;
    const body = await response.json();
    if (body.changes) {
      live.ratings = body.changes;
      return showRatings(game, body.changes);
    }
  }
}

function showRatings(game, changes) {
  const box = $("rating-changes");
  const parts = ["1", "2"].filter((seat) => changes[seat]).map((seat) => {
    const change = changes[seat];
    const diff = change.diff > 0 ? `+${change.diff}` : String(change.diff);
    const mark = change.provisional ? "?" : "";
    return `${game.players[seat].username} ${Math.round(change.after)}${mark} (${diff})`;
  });
  box.textContent = interpolate(gettext("Ratings: %(changes)s"), { changes: parts.join(", ") }, true);
  box.hidden = parts.length === 0;
}

// --- sowing, seed by seed -------------------------------------------------------------------
// The server sends each move's path (docs/PROTOCOL.md, `move`): lift, sow, store, capture,
// sweep. The page only replays those steps over the previous position; it decides nothing.

const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

function animate(before, steps) {
  if (reducedMotion.matches || !before || !before.rows) return;
  clearTimeout(live.sowingTimer);
  const board = { rows: before.rows.map((row) => [...row]), stores: [...before.stores], where: new Map() };
  live.game.board.names.forEach((row, r) => row.forEach((name, c) => board.where.set(name, [r, c])));
  const delay = Math.min(80, 700 / steps.length); // the whole move in under a second
  let index = 0;
  const next = () => {
    if (index >= steps.length || !live.game) return finishSowing();
    const [kind, place] = steps[index];
    sow(board, steps[index]);
    index += 1;
    live.sowing = {
      state: { ...live.game.state, rows: board.rows.map((row) => [...row]), stores: [...board.stores] },
      current: kind === "store" || kind === "sweep" ? null : place,
    };
    draw();
    live.sowingTimer = setTimeout(next, delay);
  };
  next();
}

function finishSowing() {
  clearTimeout(live.sowingTimer);
  live.sowing = null;
  draw();
}

// One step of a move's path, done to the seed counts of `board` ({rows, stores, where}:
// where maps a pit's name to its row and column).
function sow(board, [kind, place, store]) {
  const { rows, stores } = board;
  const at = board.where.get(place);
  if (kind === "lift" && at) rows[at[0]][at[1]] = 0;
  else if (kind === "sow" && at) rows[at[0]][at[1]] += 1;
  else if (kind === "store") stores[place] += 1;
  else if (kind === "capture" && at) {
    stores[store] += rows[at[0]][at[1]];
    rows[at[0]][at[1]] = 0;
  } else if (kind === "sweep") {
    stores[place] += rows.flat().reduce((a, b) => a + b, 0);
    rows.forEach((row) => row.fill(0));
  }
}

// --- your turn, wherever you are: the tab's title and icon, and an optional sound ----------

const baseTitle = document.title;
const icon = document.querySelector("link[rel=icon]");
const plainIcon = icon ? icon.href : null;

function drawTurnSignals(myTurn) {
  document.title = myTurn ? `● ${interpolate(gettext("Your move · %(title)s"), { title: baseTitle }, true)}` : baseTitle;
  if (icon && plainIcon) icon.href = myTurn ? icon.dataset.turn : plainIcon;
}

let audio = null;
function soundOn() {
  return localStorage.getItem("sound") === "on";
}
function drawSoundButton() {
  $("sound-button").textContent = soundOn() ? gettext("Sound on") : gettext("Sound off");
  $("sound-button").setAttribute("aria-pressed", String(soundOn()));
}
function chime() {
  if (!soundOn()) return;
  try {
    audio = audio || new AudioContext();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = 660;
    gain.gain.setValueAtTime(0.15, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.25);
    tone.connect(gain).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.25);
  } catch {
    // No sound on this browser: the title and the icon still say it.
  }
}

// --- controls -----------------------------------------------------------------------------

const CLICKS = {
  "echo-button": () => sendMove("echo", "e"),
  "resign-button": () => {
    if (confirm(gettext("Resign this game?"))) send({ type: "resign" });
  },
  "abort-button": () => send({ type: "abort" }),
  "claim-button": () => send({ type: "claim" }),
  "rematch-button": () => send({ type: "rematch" }),
  "takeback-button": () => send({ type: "takeback" }),
  "draw-button": () => send({ type: "draw" }),
  "offer-accept": () => answerOffer(true),
  "offer-decline": () => answerOffer(false),
  "queue-clear": () => send({ type: "queue", moves: [] }),
  "flip-button": () => {
    live.flipped = !live.flipped;
    draw();
  },
  "live-button": () => viewPosition(Infinity),
  "last-button": () => viewPosition(Infinity),
  "first-button": () => viewPosition(0),
  "prev-button": () => step(-1),
  "next-button": () => step(1),
  "sound-button": () => {
    localStorage.setItem("sound", soundOn() ? "off" : "on");
    drawSoundButton();
    chime();
  },
};

// Each form's text box: what it sends once trimmed and not empty.
const FORMS = {
  "move-form": ["move-input", (move) => sendMove(move, "k")],
  "chat-form": ["chat-input", (text) => {
    if (!live.chat) return false;
    send({ type: "chat", room: live.chat.room, text, id: `c${Date.now()}` });
  }],
  "queue-form": ["queue-input", (text) => {
    const moves = text.split(/[\s,]+/).filter(Boolean);
    if (!moves.length) return false;
    send({ type: "queue", moves, id: `q${Date.now()}` });
  }],
};

const KEYS = {
  ArrowLeft: () => step(-1),
  ArrowRight: () => step(1),
  Home: () => viewPosition(0),
  End: () => viewPosition(Infinity),
};

function listen() {
  // The skip link (the page's first Tab) goes to the board's own place in the tab order: the
  // pit or cell the keys start from (the board itself while nothing is to be played).
  $("skip-link").addEventListener("click", (event) => {
    event.preventDefault();
    ($("board").querySelector('[tabindex="0"]') || $("board")).focus();
  });
  for (const [id, onClick] of Object.entries(CLICKS)) $(id).addEventListener("click", onClick);
  for (const [id, [inputId, submit]] of Object.entries(FORMS)) {
    $(id).addEventListener("submit", (event) => {
      event.preventDefault();
      const input = $(inputId);
      const text = input.value.trim();
      // A refused submission keeps what was typed.
      if (text && submit(text) !== false) input.value = "";
    });
  }
  $("chat-mute-box").addEventListener("change", (event) => {
    if (live.chat) live.chat.muted = event.target.checked;
    send({ type: "chat_mute", mute: event.target.checked });
  });
  // On the board, D opens the position in words (a single key only there, so that it never
  // fights a screen reader's own keys elsewhere).
  $("board").addEventListener("keydown", (event) => {
    if (event.key.toLowerCase() !== "d" || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    $("position-words").open = true;
    $("position-summary").focus();
  });
  document.addEventListener("keydown", (event) => {
    // The keys a pit or a cell took (arrows over the board) are theirs.
    if (event.defaultPrevented) return;
    if (event.target.closest("input, textarea, select") || event.altKey || event.ctrlKey || event.metaKey) return;
    if (!Object.hasOwn(KEYS, event.key)) return;
    event.preventDefault();
    KEYS[event.key]();
  });
  // A turned phone or a resized window may need the other layout of the board.
  let resizing = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(draw, 100);
  });
}

listen();
drawSoundButton();
socket.start();
