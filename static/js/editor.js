// The position editor on /analysis/: stones per pit, or Diffusion Chess men on the 19x19
// board, written into the position's text (docs/NOTATION.md) as they are set. Whether the
// position could happen is the server's to say: "Analyse" sends the text, and the rules
// engine checks it (an impossible one comes back with the reason). No rules here.
/* global gettext */
const $ = (id) => document.getElementById(id);
const form = $("new-analysis");
const box = $("editor");
const text = $("analysis-position");
const CYCLE = [".", "O", "X", "K", "k"];
const MEN = {
  ".": gettext("empty"), O: gettext("a white stone"), X: gettext("a black stone"),
  K: gettext("White's king"), k: gettext("Black's king"),
};
let current = null; // {slug, board, fields}
let loads = 0; // only the latest load draws: an earlier answer arriving late is dropped

function query() {
  const params = new URLSearchParams({ slug: $("analysis-slug").value });
  for (const input of form.querySelectorAll("label.option input")) {
    if (input.closest("label").dataset.game === params.get("slug") && input.value) {
      params.set(input.name, input.value);
    }
  }
  return params;
}

async function load(fromStart) {
  const mine = ++loads;
  box.setAttribute("aria-busy", "true");
  const answer = await fetch(`/api/analysis/board?${query()}`).then((response) => response.json());
  if (mine !== loads) return;
  box.removeAttribute("aria-busy");
  if (answer.error) {
    $("editor-note").textContent = answer.error.message;
    return;
  }
  $("editor-note").textContent = "";
  const start = fromStart || !text.value.trim() ? answer.start : text.value.trim();
  current = { slug: answer.slug, board: answer.board };
  if (answer.board.renderer === "grid") drawGrid(start);
  else drawPits(start, answer.board);
  write();
}

// --- pit games --------------------------------------------------------------------------

function drawPits(position, board) {
  const fields = position.split(/\s+/);
  const rows = fields[0].split("/").map((row) => row.split(",").map(Number));
  const zigzag = current.slug === "zigzag";
  const [first, second] = (fields[1] || "0,0").split(",").map(Number);
  const table = document.createElement("table");
  table.className = "editor-pits";
  board.names.forEach((names, r) => {
    const tr = table.insertRow();
    names.forEach((name, c) => {
      const cell = tr.insertCell();
      const label = document.createElement("label");
      label.textContent = `${name} `;
      const input = number(`pit-${name}`, rows[r] ? rows[r][c] ?? 0 : 0);
      input.dataset.row = String(r);
      input.dataset.column = String(c);
      input.className = "pit-count";
      label.append(input);
      cell.append(label);
    });
  });
  const stores = document.createElement("p");
  const names = zigzag ? [gettext("South has captured"), gettext("North has captured")]
    : [gettext("Left store"), gettext("Right store")];
  stores.append(labelled(names[0], number("store-0", first)), " ", labelled(names[1], number("store-1", second)));
  const side = select("editor-side", [["1", gettext("South (player 1)")], ["2", gettext("North (player 2)")]], fields[2] || "1");
  const extra = [labelled(gettext("To move"), side)];
  if (zigzag) {
    const last = select("editor-last", [["0", gettext("nobody yet")], ["1", gettext("South")], ["2", gettext("North")]], fields[4] || "0");
    extra.push(" ", labelled(gettext("Last to capture"), last));
  }
  const more = document.createElement("p");
  more.append(...extra);
  box.replaceChildren(table, stores, more);
}

function writePits() {
  const rows = [];
  for (const input of box.querySelectorAll("input.pit-count")) {
    const r = Number(input.dataset.row);
    (rows[r] ||= [])[Number(input.dataset.column)] = input.value || "0";
  }
  const stores = `${$("store-0").value || 0},${$("store-1").value || 0}`;
  const parts = [rows.map((row) => row.join(",")).join("/"), stores, $("editor-side").value];
  if (current.slug === "zigzag" && $("editor-last").value !== "0") parts.push("-", $("editor-last").value);
  return parts.join(" ");
}

// --- Diffusion Chess ----------------------------------------------------------------------

function drawGrid(position) {
  const fields = position.split(/\s+/);
  const { files, size } = current.board;
  const grid = document.createElement("div");
  grid.className = "editor-grid";
  grid.style.gridTemplateColumns = `repeat(${size}, 1fr)`;
  const rows = fields[0].split("/");
  rows.forEach((row, index) => {
    const rank = size - index;
    const cells = [];
    for (const token of row.match(/[0-9]+|./g) || []) {
      if (/[0-9]/.test(token)) cells.push(...".".repeat(Number(token)));
      else cells.push(token);
    }
    for (let file = 0; file < size; file += 1) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "editor-cell";
      button.dataset.cell = `${files[file]}${rank}`;
      setMan(button, cells[file] || ".");
      button.addEventListener("click", () => {
        const next = CYCLE[(CYCLE.indexOf(button.dataset.man) + 1) % CYCLE.length];
        if (next === "K" || next === "k") {
          for (const other of grid.querySelectorAll(`[data-man="${next}"]`)) setMan(other, next === "K" ? "O" : "X");
        }
        setMan(button, next);
        write();
      });
      grid.append(button);
    }
  });
  const side = select("editor-side", [["w", gettext("White")], ["b", gettext("Black")]], fields[1] || "w");
  const turn = number("editor-turn", Number(fields[2] || 1));
  turn.min = "1";
  const left = number("editor-left", Number(fields[3] || 4));
  left.max = "5";
  const more = document.createElement("p");
  more.append(labelled(gettext("To move"), side), " ", labelled(gettext("Turn"), turn), " ", labelled(gettext("Moves left"), left));
  const hint = document.createElement("p");
  hint.className = "hint";
  hint.textContent = gettext("Click a cell to change it: empty, white stone, black stone, White's king, Black's king.");
  box.replaceChildren(hint, grid, more);
}

function setMan(button, man) {
  button.dataset.man = man;
  button.textContent = man === "." ? "" : man;
  button.setAttribute("aria-label", `${button.dataset.cell}: ${MEN[man]}`);
}

function writeGrid() {
  const { size } = current.board;
  const cells = [...box.querySelectorAll(".editor-cell")].map((button) => button.dataset.man);
  const rows = [];
  for (let r = 0; r < size; r += 1) {
    let row = "";
    let empty = 0;
    for (const man of cells.slice(r * size, r * size + size)) {
      if (man === ".") {
        empty += 1;
        continue;
      }
      row += (empty ? String(empty) : "") + man;
      empty = 0;
    }
    rows.push(row + (empty ? String(empty) : ""));
  }
  return [rows.join("/"), $("editor-side").value, $("editor-turn").value || "1", $("editor-left").value || "5"].join(" ");
}

// --- shared -------------------------------------------------------------------------------

function write() {
  if (!current) return;
  text.value = current.board.renderer === "grid" ? writeGrid() : writePits();
}

function number(id, value) {
  const input = document.createElement("input");
  input.type = "number";
  input.id = id;
  input.min = "0";
  input.value = String(value);
  input.addEventListener("input", write);
  return input;
}

function select(id, choices, value) {
  const input = document.createElement("select");
  input.id = id;
  for (const [key, label] of choices) input.append(new Option(label, key, false, key === value));
  input.addEventListener("change", write);
  return input;
}

function labelled(text, input) {
  const label = document.createElement("label");
  label.append(`${text} `, input);
  return label;
}

if (box) {
  $("editor-open").addEventListener("click", () => {
    $("editor-wrap").hidden = false;
    load(false);
  });
  $("editor-start").addEventListener("click", () => load(true));
  $("analysis-slug").addEventListener("change", () => {
    text.value = "";
    if (!$("editor-wrap").hidden) load(true);
  });
  for (const input of form.querySelectorAll("label.option input")) {
    input.addEventListener("change", () => {
      if (!$("editor-wrap").hidden) load(true);
    });
  }
}
