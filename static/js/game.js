// The game page: draws what the server says and sends what the player clicks.
// The server decides everything (legal moves, results); this file holds no rules.
import { renderChess } from "./boards/chess.js";
import { renderMancala } from "./boards/mancala.js";
import { CLOSE, isNavigating, openSocket } from "./socket.js";

const root = document.getElementById("game");
const gameId = Number(root.dataset.gameId);
const $ = (id) => document.getElementById(id);

const live = {
  v: 0, you: null, game: null, previous: null, lastMove: null,
  flipped: null, viewing: null, positions: null, pending: 0,
  // The clock as the server last told it, and the local time when it arrived.
  clock: null, clockAt: 0,
  // Chat: the room's lines as shown, and the newest line id (a reconnect asks for later ones).
  chat: null, chatId: 0, ratings: null,
  // This player's conditional moves (told to them only).
  queue: [],
};

const socket = openSocket(`/ws/games/${gameId}/`, {
  onMessage: receive,
  // A page that has drawn the game asks only for the events and chat lines it missed.
  resync: () => (live.game ? { v: live.v, chat: live.chatId } : null),
  onConnecting: () => setConnection("connecting", "connecting…"),
  onOpen: () => setConnection("open", "live"),
  onRetry: () => setConnection("closed", "reconnecting…"),
  stopOn: { [CLOSE.NO_SUCH_GAME]: () => setConnection("closed", "no such game") },
});

function send(message) {
  if (!socket.send(message)) say("Not connected: wait a moment.");
}

function setConnection(state, text) {
  const node = $("connection");
  node.dataset.state = state;
  node.textContent = text;
}

function say(text, kind = "info") {
  const node = $("message");
  node.textContent = text;
  node.dataset.kind = kind;
}

// --- messages from the server ---------------------------------------------------------

const STALE_ERRORS = new Set([
  "game_over", "not_your_turn", "too_late_to_abort", "game_not_over", "opponent_here",
]);

function receive(message) {
  if (message.type === "state") {
    live.v = message.v;
    live.you = message.you;
    live.game = message.game;
    live.previous = null;
    setClock(message.game.clock);
    const moves = message.game.moves;
    live.lastMove = moves.length ? moves[moves.length - 1].notation : null;
    if (live.flipped === null) live.flipped = message.you === 2;
    if (message.chat) setChat(message.chat);
    if (message.queue) live.queue = message.queue;
    draw();
    return;
  }
  if (message.type === "queue") {
    live.queue = message.moves;
    say(message.moves.length ? "Queued." : "Queue cleared.");
    draw();
    return;
  }
  if (message.type === "crowd") return drawCrowd(message);
  if (message.type === "error") {
    say(message.message, "error");
    // These refusals prove the page's view is behind the server's: catch up.
    if (STALE_ERRORS.has(message.code)) send({ type: "sync", v: live.v, chat: live.chatId });
    return;
  }
  if (message.type === "chat") return addChat([message.line]);
  if (message.type === "chat_lines") return addChat(message.lines);
  if (message.type === "lag_probe") {
    send({ type: "lag_reply", t: message.t }); // the server measures the round trip
    return;
  }
  if (message.type === "pong" || message.type === "ack") return;
  if (typeof message.v !== "number") return;
  if (message.v <= live.v) return;
  if (message.v !== live.v + 1) {
    send({ type: "sync", v: live.v, chat: live.chatId });
    return;
  }
  live.v = message.v;
  apply(message);
  draw();
}

function apply(event) {
  const game = live.game;
  if (event.clock !== undefined) setClock(event.clock);
  if (event.type === "move") {
    live.previous = game.state;
    live.lastMove = event.move;
    game.state = event.state;
    game.ply = event.ply;
    game.to_move = event.to_move;
    game.legal_moves = event.legal_moves;
    game.status = event.status;
    game.result = event.result;
    game.abortable = event.abortable;
    game.moves.push({ player: event.player, notation: event.move });
    game.offers = {}; // a move withdraws every offer
    // The opponent's move either matched the queue's next pair (its answer follows) or
    // dropped the queue.
    if (live.you !== null && event.player !== live.you && live.queue.length) {
      live.queue = live.queue[0] === event.move ? live.queue.slice(2) : [];
    }
    if (live.positions) live.positions.push(event.state);
    if (live.viewing !== null) live.pending += 1;
    if (live.you !== null && event.player !== live.you) chime();
    if (event.path && live.viewing === null) animate(live.previous, event.path);
    say("");
  } else if (event.type === "end") {
    game.status = event.status;
    game.result = event.result;
    game.legal_moves = [];
    game.away = {};
    game.offers = {};
  } else if (event.type === "takeback") {
    // The last `undone` moves are gone from the game (their events stay in the history).
    game.moves.splice(game.moves.length - event.undone, event.undone);
    game.takebacks = [...(game.takebacks || []), { ply: event.ply, undone: event.undone }];
    game.state = event.state;
    game.ply = event.ply;
    game.to_move = event.to_move;
    game.legal_moves = event.legal_moves;
    game.abortable = event.abortable;
    game.offers = {};
    live.queue = [];
    live.previous = null;
    live.lastMove = game.moves.length ? game.moves[game.moves.length - 1].notation : null;
    if (live.positions) live.positions.splice(event.ply + 1);
    if (live.viewing !== null && live.viewing > event.ply) live.viewing = null;
    say(`${game.players[String(event.by)].username} accepted: ${event.undone === 1 ? "one move" : `${event.undone} moves`} taken back.`);
  } else if (event.type === "takeback_offer" || event.type === "draw_offer") {
    game.offers = { ...game.offers, [event.type === "takeback_offer" ? "takeback" : "draw"]: event.by };
    say("");
    if (live.you !== null && event.by !== live.you) chime();
  } else if (event.type === "takeback_declined" || event.type === "draw_declined") {
    const offers = { ...game.offers };
    delete offers[event.type === "takeback_declined" ? "takeback" : "draw"];
    game.offers = offers;
    const what = event.type === "takeback_declined" ? "takeback" : "draw offer";
    say(`${game.players[String(event.by)].username} declined the ${what}.`);
  } else if (event.type === "away") {
    game.away = { ...game.away, [String(event.player)]: event.claim_at };
  } else if (event.type === "back") {
    const away = { ...game.away };
    delete away[String(event.player)];
    game.away = away;
  } else if (event.type === "rematch_offer") {
    game.rematch_offers = [...new Set([...game.rematch_offers, event.by])];
  } else if (event.type === "rematch") {
    game.rematch_id = event.new_game_id;
    // Both players asked for it: take them to the new game (spectators get a link).
    if (live.you !== null && !isNavigating()) location.assign(`/games/${event.new_game_id}/`);
  }
}

function drawCrowd(crowd) {
  $("spectators").textContent = crowd.spectators;
  for (const seat of ["1", "2"]) {
    $(`player-${seat}`).classList.toggle("online", Boolean(crowd.players[seat]));
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
  if (seconds >= 86400) return `${Math.floor(seconds / 86400)} d ${Math.floor((seconds % 86400) / 3600)} h`;
  if (seconds >= 3600) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

// The server's numbers, ticked down locally for the side whose clock runs.
function drawClocks() {
  const clock = live.clock;
  const game = live.game;
  $("time-control").textContent = game && game.time_control ? game.time_control.label : "";
  if (clock && clock.paused_until && clock.paused_until > clock.server_time + (Date.now() - live.clockAt)) {
    $("time-control").textContent += ` · clocks paused (vacation) until ${new Date(clock.paused_until).toLocaleString()}`;
  }
  for (const seat of [1, 2]) {
    const node = $(`clock-${seat}`);
    node.hidden = !clock;
    if (!clock) continue;
    const running = clock.running === seat;
    // A vacation holds every clock of the game until paused_until (server time).
    const held = clock.paused_until ? Math.max(0, clock.paused_until - clock.server_time) : 0;
    const passed = running ? Math.max(0, Date.now() - live.clockAt - held) : 0;
    let text = format(clock.remaining[seat - 1] - passed);
    if (running && clock.first_move_by) {
      const left = clock.first_move_by - clock.server_time - passed;
      text = `first move: ${Math.max(0, Math.ceil(left / 1000))} s`;
    }
    node.textContent = text;
    const left = clock.first_move_by
      ? clock.first_move_by - clock.server_time - passed
      : clock.remaining[seat - 1] - passed;
    if (running && left < -1500 && !live.askedAtZero) {
      // The server ends games on time by itself; if its news has not come a moment after
      // zero, ask for what we missed (once per clock update).
      live.askedAtZero = true;
      if (socket.isOpen()) send({ type: "sync", v: live.v });
    }
    node.classList.toggle("running", running);
    node.classList.toggle("low", running && !clock.first_move_by && clock.remaining[seat - 1] - passed < 10000);
  }
  drawAway();
}

function drawAway() {
  const game = live.game;
  const box = $("away");
  const away = game && game.status === "active" ? game.away || {} : {};
  const seat = Object.keys(away)[0];
  box.hidden = !seat;
  if (!seat) return;
  const name = game.players[seat].username;
  const left = Math.ceil((away[seat] - (live.clock ? live.clock.server_time + (Date.now() - live.clockAt) : Date.now())) / 1000);
  const canClaim = live.you !== null && String(live.you) !== seat;
  $("away-text").textContent = left > 0
    ? `${name} has left the game: ${canClaim ? "you can claim the win" : "the win can be claimed"} in ${left} s.`
    : `${name} has left the game.`;
  $("claim-button").hidden = !(canClaim && left <= 0);
}

setInterval(drawClocks, 100);

// --- drawing ----------------------------------------------------------------------------

function draw() {
  const game = live.game;
  if (!game) return;
  const active = game.status === "active";
  for (const seat of ["1", "2"]) {
    const node = $(`player-${seat}`);
    const player = game.players[seat];
    node.querySelector(".name").textContent =
      `${player.username}${player.is_guest ? " (guest)" : ""}${player.is_bot ? " (computer)" : ""}${live.you === Number(seat) ? " — you" : ""}`;
    node.classList.toggle("to-move", active && game.to_move === Number(seat));
  }
  // Seat order on screen follows the board: the viewer's own side at the bottom.
  const players = document.querySelector(".players");
  const [top, bottom] = live.flipped ? ["player-1", "player-2"] : ["player-2", "player-1"];
  players.prepend($(top));
  $(top).after($(bottom));

  const viewingOld = live.viewing !== null;
  const sowing = !viewingOld && live.sowing ? live.sowing : null;
  const state = viewingOld ? live.positions[live.viewing] : sowing ? sowing.state : game.state;
  const myTurn = active && !viewingOld && !sowing && live.you === game.to_move;
  const view = {
    slug: game.slug,
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
    onMove: (move) => send({ type: "move", move, ply: game.ply, id: `m${game.ply}` }),
    onDraft: (move) => { $("move-input").value = move; },
    // A pit that is not among the legal moves: the server says why (the page knows no rules).
    onRefused: (move) => {
      if (viewingOld) say("You are looking at an earlier position: press Live to play.", "error");
      else if (!active) say("The game is over.", "error");
      else if (live.you === null) say("You are watching this game.", "error");
      else if (!myTurn) say(`It is ${game.players[String(game.to_move)].username}'s turn.`, "error");
      else if (move) send({ type: "move", move, ply: game.ply, id: `r${game.ply}` });
    },
    onExplain: (text) => say(text, "error"),
    infoContainer: $("turn-info"),
  };
  // The server says how to draw the game (board.renderer): no game is named here.
  if (game.board.renderer === "grid") {
    renderChess($("board"), view);
    $("echo-button").hidden = !(myTurn && game.legal_moves && game.legal_moves.echo);
    $("move-input").placeholder = "a path, e.g. j3-j4-k4, or echo";
  } else {
    renderMancala($("board"), view);
    $("turn-info").replaceChildren();
  }
  drawTurnSignals(myTurn);
  root.dataset.playing = String(active && live.you !== null);

  drawMoves(game, viewingOld);

  const banner = $("banner");
  if (game.result) {
    const { winner, reason, termination } = game.result;
    const who = winner ? `${game.players[String(winner)].username} wins` : termination === "abort" ? "Aborted" : "Draw";
    banner.textContent = `${who} — ${reason}`;
    banner.hidden = false;
  } else {
    banner.hidden = true;
  }
  const player = live.you !== null;
  // The server says whether the game may still be aborted (or only resigned).
  $("move-form").hidden = !player || !active;
  $("resign-button").hidden = !player || !active || game.abortable;
  $("abort-button").hidden = !player || !active || !game.abortable;
  $("rematch-button").hidden = !player || active || Boolean(game.rematch_id);
  $("rematch-button").textContent = game.rematch_offers.includes(live.you)
    ? "Rematch offered" : game.rematch_offers.length ? "Accept rematch" : "Rematch";
  drawOffers(game, player, active);
  drawQueue(game, player, active);
  drawChatControls(game);
  drawRatings(game);
  drawClocks();
  const link = $("rematch-link");
  link.hidden = !game.rematch_id;
  if (game.rematch_id) link.href = `/games/${game.rematch_id}/`;
}

// The move list: numbered moves, or, when a player makes several moves in a row (a Diffusion
// Chess turn), one line per turn with the player's colour.
function drawMoves(game, viewingOld) {
  const link = (move, index) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "move-link";
    button.textContent = move.notation;
    button.title = `move ${index + 1}, ${game.players[String(move.player)].username}`;
    if (live.viewing === index + 1) button.classList.add("viewing");
    button.addEventListener("click", () => viewPosition(index + 1));
    return button;
  };
  const turns = [];
  game.moves.forEach((move, index) => {
    const last = turns[turns.length - 1];
    if (last && last.player === move.player) last.moves.push([move, index]);
    else turns.push({ player: move.player, moves: [[move, index]] });
  });
  const grouped = turns.length < game.moves.length;
  const side = game.board.renderer === "grid" ? { 1: "White", 2: "Black" } : { 1: "South", 2: "North" };
  const items = grouped
    ? turns.map((turn, number) => {
      const item = document.createElement("li");
      item.className = `turn player-${turn.player}`;
      const label = document.createElement("span");
      label.className = "ply";
      label.textContent = `${number + 1}. ${side[turn.player]}`;
      item.append(label, ...turn.moves.map(([move, index]) => link(move, index)));
      return item;
    })
    : game.moves.map((move, index) => {
      const item = document.createElement("li");
      const number = document.createElement("span");
      number.className = "ply";
      number.textContent = `${index + 1}.`;
      item.append(number, link(move, index));
      return item;
    });
  // Where moves were taken back: a mark after the move the game went back to.
  const itemOf = (moveIndex) => grouped
    ? turns.findIndex((turn) => turn.moves.some(([, index]) => index === moveIndex))
    : moveIndex;
  for (const takeback of [...(game.takebacks || [])].reverse()) {
    const mark = document.createElement("li");
    mark.className = "takeback-mark";
    mark.textContent = `↶ ${takeback.undone === 1 ? "1 move" : `${takeback.undone} moves`} taken back`;
    const at = takeback.ply === 0 ? -1 : itemOf(takeback.ply - 1);
    items.splice(at + 1, 0, mark);
  }
  $("moves").classList.toggle("by-turn", grouped);
  $("moves").replaceChildren(...items);
  $("live-button").hidden = !viewingOld;
  $("live-button").textContent = live.pending ? `Live (${live.pending} new)` : "Live";
  const at = viewingOld ? live.viewing : game.ply;
  $("first-button").disabled = at === 0;
  $("prev-button").disabled = at === 0;
  $("next-button").disabled = !viewingOld;
  $("last-button").disabled = !viewingOld;
}

async function viewPosition(ply) {
  if (!live.positions) {
    const response = await fetch(`/api/games/${gameId}/positions`);
    if (!response.ok) return say("Could not load the positions.", "error");
    live.positions = (await response.json()).positions;
  }
  live.viewing = ply >= live.game.ply ? null : Math.max(0, ply);
  if (live.viewing === null) live.pending = 0;
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
  const name = (seat) => game.players[String(seat)].username;
  // Your own last move can be taken back until your opponent answers it; the computer's
  // answer goes back with it (the server checks).
  const last = game.moves[game.moves.length - 1];
  const opponent = player ? game.players[String(3 - live.you)] : null;
  const mine = last && (last.player === live.you
    || (opponent?.is_bot && game.moves.some((move) => move.player === live.you)));
  $("takeback-button").hidden = !player || !active || !mine;
  $("takeback-button").disabled = offers.takeback === live.you;
  $("takeback-button").textContent = offers.takeback === live.you ? "Takeback asked" : "Take back";
  $("draw-button").hidden = !player || !active || !game.draws;
  $("draw-button").disabled = offers.draw === live.you;
  $("draw-button").textContent = offers.draw === live.you ? "Draw offered" : "Offer a draw";
  // Where the rules allow no draw, say so rather than offer a button that can only fail.
  const noDraws = $("no-draws");
  noDraws.hidden = game.draws !== false || !active;
  noDraws.textContent = "No draws in this game: every game of Diffusion ends with a winner.";

  const box = $("offers");
  const kind = offers.takeback ? "takeback" : offers.draw ? "draw" : null;
  box.hidden = !kind;
  if (!kind) return;
  box.dataset.kind = kind;
  const by = offers[kind];
  const answering = player && by !== live.you;
  const text = kind === "takeback"
    ? (by === live.you ? "You asked to take back your last move: waiting for an answer."
      : `${name(by)} asks to take back their last move.`)
    : (by === live.you ? "You offered a draw: waiting for an answer." : `${name(by)} offers a draw.`);
  $("offer-text").textContent = text;
  $("offer-accept").hidden = !answering;
  $("offer-decline").hidden = !answering;
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
  for (let i = 0; i + 1 < live.queue.length; i += 2) pairs.push(`if ${live.queue[i]}, then ${live.queue[i + 1]}`);
  $("queue-now").textContent = pairs.length ? `Queued: ${pairs.join("; ")}.` : "Nothing queued.";
  $("queue-clear").hidden = !live.queue.length;
}

// --- chat: the players' room or the spectators' room, always shown as text ----------------

function setChat(chat) {
  const fresh = !live.chat || live.chat.room !== chat.room;
  live.chat = { room: chat.room, muted: chat.muted };
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
    const who = document.createElement("strong");
    who.textContent = line.user;
    const text = document.createElement("span");
    text.textContent = ` ${line.text}`; // text, never HTML
    item.append(who, text);
    item.title = new Date(line.at).toLocaleString();
    list.append(item);
  }
  while (list.children.length > 100) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

const signedIn = Boolean(document.body.dataset.username);

function drawChatControls(game) {
  const room = live.chat ? live.chat.room : live.you ? "players" : "spectators";
  $("chat-room").textContent = room === "players" ? "Chat with your opponent" : "Spectators' chat";
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
  box.textContent = `Ratings: ${parts.join(", ")}`;
  box.hidden = parts.length === 0;
}

// --- sowing, seed by seed -------------------------------------------------------------------
// The server sends each move's path (docs/PROTOCOL.md, `move`): lift, sow, store, capture,
// sweep. The page only replays those steps over the previous position; it decides nothing.

const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

function animate(before, steps) {
  if (reducedMotion.matches || !before || !before.rows) return;
  clearTimeout(live.sowingTimer);
  const rows = before.rows.map((row) => [...row]);
  const stores = [...before.stores];
  const where = new Map();
  live.game.board.names.forEach((row, r) => row.forEach((name, c) => where.set(name, [r, c])));
  const delay = Math.min(80, 700 / steps.length); // the whole move in under a second
  let index = 0;
  const next = () => {
    if (index >= steps.length || !live.game) {
      live.sowing = null;
      draw();
      return;
    }
    const [kind, place, store] = steps[index];
    index += 1;
    const at = where.get(place);
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
    live.sowing = { state: { ...live.game.state, rows: rows.map((row) => [...row]), stores: [...stores] }, current: kind === "store" || kind === "sweep" ? null : place };
    draw();
    live.sowingTimer = setTimeout(next, delay);
  };
  next();
}

// --- your turn, wherever you are: the tab's title and icon, and an optional sound ----------

const baseTitle = document.title;
const icon = document.querySelector("link[rel=icon]");
const plainIcon = icon ? icon.href : null;

function drawTurnSignals(myTurn) {
  document.title = myTurn ? `● Your move · ${baseTitle}` : baseTitle;
  if (icon && plainIcon) icon.href = myTurn ? icon.dataset.turn : plainIcon;
}

let audio = null;
function soundOn() {
  return localStorage.getItem("sound") === "on";
}
function drawSoundButton() {
  $("sound-button").textContent = soundOn() ? "Sound on" : "Sound off";
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

$("move-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("move-input");
  const move = input.value.trim();
  if (!move) return;
  send({ type: "move", move, ply: live.game.ply, id: `k${live.game.ply}` });
  input.value = "";
});
$("echo-button").addEventListener("click", () => {
  send({ type: "move", move: "echo", ply: live.game.ply, id: `e${live.game.ply}` });
});
$("resign-button").addEventListener("click", () => {
  if (confirm("Resign this game?")) send({ type: "resign" });
});
$("abort-button").addEventListener("click", () => send({ type: "abort" }));
$("claim-button").addEventListener("click", () => send({ type: "claim" }));
$("rematch-button").addEventListener("click", () => send({ type: "rematch" }));
$("takeback-button").addEventListener("click", () => send({ type: "takeback" }));
$("draw-button").addEventListener("click", () => send({ type: "draw" }));
$("offer-accept").addEventListener("click", () => answerOffer(true));
$("offer-decline").addEventListener("click", () => answerOffer(false));
$("chat-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("chat-input");
  const text = input.value.trim();
  if (!text || !live.chat) return;
  send({ type: "chat", room: live.chat.room, text, id: `c${Date.now()}` });
  input.value = "";
});
$("queue-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const moves = $("queue-input").value.split(/[\s,]+/).filter(Boolean);
  if (!moves.length) return;
  send({ type: "queue", moves, id: `q${Date.now()}` });
  $("queue-input").value = "";
});
$("queue-clear").addEventListener("click", () => send({ type: "queue", moves: [] }));
$("chat-mute-box").addEventListener("change", (event) => {
  if (live.chat) live.chat.muted = event.target.checked;
  send({ type: "chat_mute", mute: event.target.checked });
});
$("flip-button").addEventListener("click", () => {
  live.flipped = !live.flipped;
  draw();
});
$("live-button").addEventListener("click", () => viewPosition(Infinity));
$("last-button").addEventListener("click", () => viewPosition(Infinity));
$("first-button").addEventListener("click", () => viewPosition(0));
$("prev-button").addEventListener("click", () => step(-1));
$("next-button").addEventListener("click", () => step(1));
$("sound-button").addEventListener("click", () => {
  localStorage.setItem("sound", soundOn() ? "off" : "on");
  drawSoundButton();
  chime();
});
drawSoundButton();
document.addEventListener("keydown", (event) => {
  if (event.target.closest("input, textarea, select") || event.altKey || event.ctrlKey || event.metaKey) return;
  const keys = { ArrowLeft: () => step(-1), ArrowRight: () => step(1), Home: () => viewPosition(0), End: () => viewPosition(Infinity) };
  if (keys[event.key]) {
    event.preventDefault();
    keys[event.key]();
  }
});

// A turned phone or a resized window may need the other layout of the board.
let resizing = null;
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(draw, 100);
});

socket.start();
