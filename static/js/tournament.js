// A tournament's page: draws what the tournament socket says (docs/PROTOCOL.md, "The
// tournament socket") and sends join / withdraw over HTTP. The server pairs, scores and ranks;
// this file only draws. Each player is taken to their games by the notification socket
// (notify.js), as for any game that starts.
//
// Elements a browser test can target:
//   #tournament[data-ready="true"][data-v]   set once a snapshot is drawn, and each version
//   #tournament-status[data-status]          upcoming | running | finished | cancelled
//   #countdown                               time to the start (or an arena's end)
//   #join, #withdraw, #entry-error           entering and leaving
//   #standings tbody tr[data-name]           one line per player, best first; .points
//   #your-line                               the viewer's own line when not in the top
//   #pairings li[data-game-id]               games in play (a link to watch) and results
/* global gettext, ngettext, interpolate */
import { botMark } from "./bot_mark.js";
import { openSocket } from "./socket.js";

const $ = (id) => document.getElementById(id);
const root = $("tournament");
const id = root.dataset.tournamentId;
const arena = root.dataset.kind === "arena";
const page = { v: null, status: null, startsAt: null, endsAt: null, pairings: new Map() };

function text(tag, value, attributes = {}) {
  const node = document.createElement(tag);
  node.textContent = value;
  for (const [name, content] of Object.entries(attributes)) node.setAttribute(name, content);
  return node;
}

function drawRows(rows) {
  const body = $("standings").querySelector("tbody");
  body.replaceChildren(
    ...rows.map((row) => {
      const tr = document.createElement("tr");
      tr.dataset.name = row.name;
      if (row.name === document.body.dataset.username) tr.classList.add("mine");
      // data-label: the column's name, shown before each cell on a narrow screen (CSS).
      const name = text("td", "", { "data-label": gettext("Player") });
      const link = text("a", row.name, { href: `/@${encodeURIComponent(row.name)}/` });
      name.append(link);
      if (row.is_bot_account) name.append(" ", botMark());
      if (row.fire) name.append(text("span", " 🔥", { title: gettext("on fire: the next win counts double") }));
      if (row.withdrawn) name.append(text("small", ` ${gettext("(withdrawn)")}`));
      if (row.playing) name.append(text("small", ` ${gettext("(playing)")}`));
      tr.append(
        text("td", String(row.rank), { class: "number", "data-label": "#" }),
        name,
        text("td", String(row.rating), { class: "number", "data-label": gettext("Rating") }),
        text("td", arena ? String(row.points) : String(row.points / 2), {
          class: "number points", "data-label": gettext("Points"),
        }),
        text("td", row.sheet || "—", { class: "sheet", "data-label": gettext("Games") }),
      );
      if (!arena) tr.append(text("td", String(row.tiebreak), { class: "number", "data-label": gettext("Tie-break") }));
      return tr;
    }),
  );
}

function drawYou(row, top) {
  const line = $("your-line");
  if (!row || top.some((r) => r.name === row.name)) {
    line.hidden = true;
    return;
  }
  line.hidden = false;
  // The English singular is the plural, as it always was; other languages give both forms.
  line.textContent = interpolate(ngettext("You: #%(rank)s, %(points)s points after %(games)s games.",
    "You: #%(rank)s, %(points)s points after %(games)s games.", row.games), {
    rank: row.rank, points: arena ? row.points : row.points / 2, games: row.games,
  }, true);
}

const RESULTS = {
  "1": "1–0", "2": "0–1", draw: "½–½", bye: gettext("bye"), void: gettext("not counted"), "": gettext("playing"),
};

function drawPairings() {
  const list = $("pairings");
  const items = [...page.pairings.values()]
    .sort((a, b) => b.round - a.round || (b.game_id || 0) - (a.game_id || 0))
    .slice(0, 60)
    .map((p) => {
      const li = document.createElement("li");
      if (p.game_id) li.dataset.gameId = p.game_id;
      li.dataset.result = p.result;
      const game = `${p.first}${p.second ? ` – ${p.second}` : ""} (${RESULTS[p.result] ?? p.result})`;
      const label = arena ? game : interpolate(gettext("Round %(round)s: %(game)s"), { round: p.round, game }, true);
      if (p.game_id) {
        li.append(text("a", label, { href: `/games/${p.game_id}/` }));
      } else {
        li.textContent = label;
      }
      return li;
    });
  list.replaceChildren(...items);
}

function drawStatus() {
  const status = $("tournament-status");
  status.dataset.status = page.status;
  const words = {
    upcoming: gettext("Starts soon"), running: gettext("Running"), finished: gettext("Finished"),
    cancelled: gettext("Cancelled: too few players"),
  };
  const winner = page.winner ? ` · ${interpolate(gettext("winner: %(name)s"), { name: page.winner }, true)}` : "";
  const said = `${words[page.status] || page.status}${winner}`;
  // A live region: written only when it changes, or a screen reader says it again at every
  // game's result.
  if (status.textContent !== said) status.textContent = said;
}

function tick() {
  const target = page.status === "upcoming" ? page.startsAt : page.status === "running" && arena ? page.endsAt : null;
  const node = $("countdown");
  if (!target) {
    node.textContent = "";
    return;
  }
  const seconds = Math.max(0, Math.round((Date.parse(target) - Date.now()) / 1000));
  const clock = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
  node.textContent = interpolate(page.status === "upcoming" ? gettext("Starts in %(time)s") : gettext("Ends in %(time)s"), { time: clock }, true);
}

function snapshot(frame) {
  page.v = frame.v;
  page.status = frame.tournament.status;
  page.startsAt = frame.tournament.starts_at;
  page.endsAt = frame.tournament.ends_at;
  page.winner = frame.tournament.winner;
  page.pairings = new Map(frame.pairings.map((p) => [key(p), p]));
  drawRows(frame.standings);
  drawYou(frame.you, frame.standings);
  drawPairings();
  drawStatus();
  $("players-count").textContent = playersCount(frame.tournament.players);
  setJoined(frame.joined);
  root.dataset.v = frame.v;
  root.dataset.ready = "true";
}

// The English singular is the plural, as it always was; other languages give both forms.
function playersCount(count) {
  return interpolate(ngettext("(%(n)s players)", "(%(n)s players)", count), { n: count }, true);
}

function key(pairing) {
  return pairing.game_id ? `g${pairing.game_id}` : `r${pairing.round}-${pairing.first}`;
}

function update(frame) {
  if (page.v !== null && frame.v <= page.v) return; // seen already
  if (page.v === null || frame.v !== page.v + 1) {
    socket.send({ type: "sync" }); // something was missed: the snapshot again
    return;
  }
  page.v = frame.v;
  if (frame.status !== page.status && frame.status !== "upcoming") {
    // Started or ended: the times changed too; the snapshot has them.
    page.status = frame.status;
    socket.send({ type: "sync" });
  }
  page.winner = frame.winner;
  for (const p of frame.pairings) page.pairings.set(key(p), p);
  drawRows(frame.standings);
  const mine = frame.changed.find((row) => row.name === document.body.dataset.username);
  if (mine) drawYou(mine, frame.standings);
  drawPairings();
  drawStatus();
  $("players-count").textContent = playersCount(frame.players);
  root.dataset.v = frame.v;
}

const socket = openSocket(`/ws/tournaments/${id}/`, {
  onMessage(frame) {
    if (frame.type === "tournament") snapshot(frame);
    else if (frame.type === "tournament_update") update(frame);
  },
});

function setJoined(joined) {
  const join = $("join");
  const leave = $("withdraw");
  if (!join) return;
  join.hidden = joined || page.status === "finished" || page.status === "cancelled";
  leave.hidden = !joined || page.status === "finished" || page.status === "cancelled";
}

async function post(path, body) {
  const csrf = document.cookie.split("; ").find((part) => part.startsWith("csrftoken="));
  const response = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf ? csrf.split("=")[1] : "" },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  $("entry-error").textContent = response.ok ? "" : answer.error?.message || gettext("That did not work.");
  if (response.ok) setJoined(answer.joined);
}

$("join")?.addEventListener("click", () => post(`/api/tournaments/${id}/join`, { token: root.dataset.invite || "" }));
$("withdraw")?.addEventListener("click", () => post(`/api/tournaments/${id}/withdraw`, {}));

snapshot(JSON.parse($("tournament-snapshot").textContent));
socket.start();
setInterval(tick, 1000);
tick();
