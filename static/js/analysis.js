// The analysis board: the server keeps the tree and judges every move (docs/PROTOCOL.md,
// "Analysis"); this page draws the position of the node shown and the tree, and sends what
// the user does. No rules here.
/* global gettext, ngettext, interpolate */
import { renderChess } from "./boards/chess.js";
import { renderMancala } from "./boards/mancala.js";
import { endgame } from "./endgame.js";
import { explorer } from "./explorer.js";

const $ = (id) => document.getElementById(id);
const root = $("analysis");
const key = root.dataset.key;
const mine = root.dataset.mine === "true";
const page = { analysis: null, flipped: false, computer: null };
const lang = document.documentElement.lang || undefined;

function csrf() {
  const part = document.cookie.split("; ").find((item) => item.startsWith("csrftoken="));
  return part ? part.split("=")[1] : "";
}

async function call(path, body) {
  const response = await fetch(`/api/analysis/${key}${path}`, body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (answer.error) {
    say(answer.error.message, "error");
    return;
  }
  say("");
  show(answer.analysis);
}

function say(text, kind = "") {
  $("message").textContent = text;
  $("message").className = `message ${kind}`;
}

// The node shown: another one is fetched (anyone may look); the owner's choice is kept.
function goTo(node) {
  if (node === null || node === undefined || node === page.analysis.node.id) return;
  if (mine) call("/go", { node });
  else call(`?node=${node}`);
}

const play = (move) => call("/play", { node: page.analysis.node.id, move });
// The owner plays a move of the explorer onto the board; anyone else only reads it.
const openings = explorer($("explorer"), { onPick: mine ? play : null });
const solved = endgame($("endgame"));

function show(analysis) {
  page.analysis = analysis;
  drawBoard(analysis);
  drawTree(analysis);
  const node = analysis.node;
  $("position-text").value = node.position;
  $("line-text").value = node.line;
  const link = new URL("/analysis/", location.origin);
  link.searchParams.set("slug", analysis.slug);
  for (const [name, value] of Object.entries(analysis.options)) link.searchParams.set(`option-${name}`, value);
  link.searchParams.set("position", node.position);
  $("position-link").href = link.href;
  const result = node.result;
  $("result").hidden = !result;
  $("result").textContent = result
    ? interpolate(result.winner ? gettext("Player %(n)s wins: %(reason)s") : gettext("A draw: %(reason)s"), {
      n: result.winner, reason: result.reason,
    }, true)
    : "";
  root.dataset.node = String(node.id);
  const options = Object.entries(analysis.options).map(([name, value]) => `${name}=${value}`).join(",");
  openings.show({ game: analysis.slug, options, position: node.position });
  solved.show({ game: analysis.slug, options, position: node.position });
  askComputer();
}

// The computer's view of the node shown, while the box is ticked: asked for once per node,
// then read every 300 ms while it deepens (bots/searches.py: rounds of growing length).
async function askComputer() {
  const on = $("computer-on");
  const node = page.analysis.node.id;
  $("computer-view").hidden = !(on && on.checked);
  if (!on || !on.checked || page.computer === node) return;
  page.computer = node;
  $("computer-win").textContent = gettext("thinking…");
  $("computer-progress").textContent = "";
  $("computer-line").textContent = "";
  $("win-bar").style.width = "50%";
  const asked = await fetch(`/api/analysis/${key}/eval`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
    body: JSON.stringify({ node }),
  }).then((response) => response.json());
  if (asked.error) {
    $("computer-win").textContent = asked.error.message;
    return;
  }
  let search = asked.search;
  while (page.computer === node) {
    drawComputer(search);
    if (search.status !== "queued" && search.status !== "running") break;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const read = await fetch(`/api/analysis/${key}/eval?node=${node}`).then((response) => response.json());
    if (read.error || !read.search) break;
    search = read.search;
  }
}

function drawComputer(search) {
  const result = search.result;
  const side = page.analysis.board.renderer === "grid"
    ? { 1: gettext("White"), 2: gettext("Black") } : { 1: gettext("South"), 2: gettext("North") };
  const mover = side[page.analysis.node.to_move];
  $("computer").dataset.status = search.status;
  const progress = [interpolate(gettext("round %(round)s of %(of)s"), { round: search.rounds, of: search.of }, true)];
  if (result) {
    // The English singular is the plural, as it always was; other languages give both forms.
    progress.push(interpolate(ngettext("%(n)s playouts", "%(n)s playouts", result.playouts), {
      n: result.playouts.toLocaleString(lang),
    }, true));
  }
  $("computer-progress").textContent = `${progress.join(", ")}${search.status === "done" ? "" : "…"}`;
  if (!result) return;
  const over = page.analysis.node.result;
  if (over) {
    $("computer-win").textContent = over.winner
      ? interpolate(gettext("The game is over: %(side)s won."), { side: side[over.winner] }, true)
      : gettext("The game is over: a draw.");
    $("win-bar").style.width = over.winner === page.analysis.node.to_move ? "100%" : over.winner ? "0%" : "50%";
    $("computer-line").textContent = "";
    return;
  }
  const percent = Math.round(result.win * 100);
  $("computer-win").textContent = interpolate(gettext("%(side)s wins %(percent)s (the side to move)"), {
    side: mover, percent: new Intl.NumberFormat(lang, { style: "percent" }).format(percent / 100),
  }, true);
  $("win-bar").style.width = `${percent}%`;
  $("computer-line").textContent = result.line.join(" ") || gettext("(the game is over)");
}

function drawBoard(analysis) {
  const node = analysis.node;
  const view = {
    name: root.dataset.name,
    board: analysis.board,
    state: node.state,
    legal: mine ? node.legal : [],
    previous: null,
    flipped: page.flipped,
    you: null,
    players: null,
    captured: node.state.captured,
    lastMove: node.moves.length ? node.moves[node.moves.length - 1] : null,
    ply: node.id,
    onMove: play,
    onDraft: (move) => { $("move-input").value = move; },
    onRefused: (move) => {
      if (!mine) say(gettext("Copy this analysis to play moves on it."), "error");
      else if (node.result) say(gettext("The game is over in this position."), "error");
      else if (move) play(move);
    },
    onExplain: (text) => say(text, "error"),
    infoContainer: $("turn-info"),
  };
  if (analysis.board.renderer === "grid") {
    renderChess($("board"), view);
    $("echo-button").hidden = !(mine && node.legal && node.legal.echo);
  } else {
    renderMancala($("board"), view);
    $("turn-info").textContent = node.result ? "" : interpolate(gettext("Player %(n)s to move"), { n: node.to_move }, true);
  }
}

// The tree as nested lists: each line's moves in a row, variations indented under the move
// they branch from.
function drawTree(analysis) {
  const nodes = new Map(analysis.tree.nodes.map((node) => [node.id, node]));
  const line = (start) => {
    const list = document.createElement("ol");
    list.className = "line";
    let node = nodes.get(start);
    while (node) {
      list.append(moveItem(node, nodes));
      const [main, ...others] = node.children;
      for (const other of others) {
        const variation = document.createElement("li");
        variation.className = "variation";
        variation.append(line(other));
        list.append(variation);
      }
      node = nodes.get(main);
    }
    return list;
  };
  const first = nodes.get(0).children;
  const tree = document.createElement("div");
  if (first.length) {
    tree.append(line(first[0]));
    for (const other of first.slice(1)) {
      const variation = document.createElement("div");
      variation.className = "variation";
      variation.append(line(other));
      tree.append(variation);
    }
  }
  $("tree").replaceChildren(tree);
}

function moveItem(node, nodes) {
  const item = document.createElement("li");
  const button = document.createElement("button");
  button.type = "button";
  button.className = "move-link";
  button.dataset.node = String(node.id);
  let depth = 0;
  for (let at = node; at.parent !== null; at = nodes.get(at.parent)) depth += 1;
  button.textContent = `${depth}. ${node.move}`;
  if (node.id === page.analysis.node.id) {
    button.classList.add("viewing");
    button.setAttribute("aria-current", "true");
  }
  button.addEventListener("click", () => goTo(node.id));
  item.append(button);
  return item;
}

function step(where) {
  const nodes = new Map(page.analysis.tree.nodes.map((node) => [node.id, node]));
  let node = nodes.get(page.analysis.node.id);
  if (where === "first") goTo(0);
  else if (where === "prev") goTo(node.parent);
  else if (where === "next") goTo(node.children[0]);
  else {
    while (node.children.length) node = nodes.get(node.children[0]);
    goTo(node.id);
  }
}

for (const where of ["first", "prev", "next", "last"]) {
  $(`${where}-button`).addEventListener("click", () => step(where));
}
document.addEventListener("keydown", (event) => {
  if (event.target.closest("input, textarea, select")) return;
  const where = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" }[event.key];
  if (where && !event.target.closest("#board")) {
    event.preventDefault();
    step(where);
  }
});
$("move-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const move = $("move-input").value.trim();
  if (move) play(move);
  $("move-input").value = "";
});
$("echo-button").addEventListener("click", () => play("echo"));
$("promote-button").addEventListener("click", () => call("/promote", { node: page.analysis.node.id }));
$("delete-button").addEventListener("click", () => {
  if (page.analysis.node.id === 0) say(gettext("The starting position stays."), "error");
  else call("/delete", { node: page.analysis.node.id });
});
$("flip-button").addEventListener("click", () => {
  page.flipped = !page.flipped;
  drawBoard(page.analysis);
});
$("copy-position").addEventListener("click", async () => {
  $("position-text").select();
  try {
    await navigator.clipboard.writeText($("position-text").value);
    say(gettext("Position copied."));
  } catch {
    say(gettext("Select the text and copy it."));
  }
});

$("computer-on")?.addEventListener("change", () => {
  page.computer = null;
  askComputer();
});
// Opened from a review's marked move: the move the search preferred there.
const hint = new URLSearchParams(location.search);
if (hint.get("suggest")) {
  $("suggestion").hidden = false;
  $("suggestion").textContent = interpolate(gettext("The review: %(played)s was played here; the computer preferred %(suggest)s."), {
    played: hint.get("played"), suggest: hint.get("suggest"),
  }, true);
}

call("");
