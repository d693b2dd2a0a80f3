// The position editor on /analysis/: the position's text (docs/NOTATION.md) set up field by
// field, as the server describes the fields of the game chosen (GET /api/analysis/board,
// `editor.fields`: docs/PROTOCOL.md, "Analysis"), so that no game is named here; a new game
// needs no code in this file. Whether the position could happen is the server's to say:
// "Analyse" sends the text, and the rules engine checks it (an impossible one comes back
// with the reason). No rules here.
const $ = (id) => document.getElementById(id);
const form = $("new-analysis");
const box = $("editor");
const text = $("analysis-position");
let current = null; // {board, fields, readers: [() => the field's text]}
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
  current = { board: answer.board, fields: answer.editor.fields, readers: [] };
  draw(start);
  write();
}

// Each field of the text, drawn from its value (`parts`: the editor's blocks, one under the
// other; `line`: the short fields, side by side): returns what reads the field's text back.
const KINDS = {
  pits: drawPits,
  numbers: drawNumbers,
  choice: (field, value, parts, line) => {
    const input = select(`editor-${field.name}`, field.choices, value);
    line.push(labelled(field.label, input));
    return () => input.value;
  },
  number: (field, value, parts, line) => {
    const input = number(`editor-${field.name}`, value);
    input.min = String(field.min ?? 0);
    if (field.max !== undefined) input.max = String(field.max);
    line.push(labelled(field.label, input));
    return () => input.value || input.min;
  },
  fixed: (field) => () => field.value,
  grid: drawGrid,
};

function draw(position) {
  const values = position.split(/\s+/);
  const parts = [];
  const line = [];
  current.readers = current.fields.map((field, i) => {
    const value = values[i] ?? field.usual ?? (field.choices ? field.choices[0].value : "");
    return KINDS[field.kind](field, value, parts, line);
  });
  const more = document.createElement("p");
  line.forEach((node, i) => more.append(...(i ? [" ", node] : [node])));
  box.replaceChildren(...parts, more);
}

function write() {
  if (!current) return;
  const parts = current.readers.map((read) => read());
  // A field at its usual value is left off the end, as the server writes positions.
  while (parts.length && current.fields[parts.length - 1].usual === parts[parts.length - 1]) parts.pop();
  text.value = parts.join(" ");
}

// --- pits: a count per pit, the rows as the board names them ----------------------------

function drawPits(field, value, parts) {
  const rows = value.split("/").map((row) => row.split(",").map(Number));
  const table = document.createElement("table");
  table.className = "editor-pits";
  const inputs = [];
  current.board.names.forEach((names, r) => {
    const tr = table.insertRow();
    inputs.push(names.map((name, c) => {
      const label = document.createElement("label");
      label.textContent = `${name} `;
      const input = number(`${field.name}-${name}`, rows[r] ? rows[r][c] ?? 0 : 0);
      label.append(input);
      tr.insertCell().append(label);
      return input;
    }));
  });
  parts.push(table);
  return () => inputs.map((row) => row.map((input) => input.value || "0").join(",")).join("/");
}

// Counts joined by commas, each with its label ("the left store", "the right store").
function drawNumbers(field, value, parts) {
  const counts = value.split(",");
  const inputs = field.labels.map((label, i) => number(`${field.name}-${i}`, Number(counts[i] || 0)));
  const line = document.createElement("p");
  inputs.forEach((input, i) => line.append(...(i ? [" "] : []), labelled(field.labels[i], input)));
  parts.push(line);
  return () => inputs.map((input) => input.value || "0").join(",");
}

// --- a grid board: a man per cell, rows from the top, a number for a run of empty cells ---

function drawGrid(field, value, parts) {
  const { files, size } = current.board;
  const men = new Map(field.men.map((man) => [man.value, man]));
  const order = field.men.map((man) => man.value);
  const empty = order[0];
  const grid = document.createElement("div");
  grid.className = "editor-grid";
  grid.style.gridTemplateColumns = `repeat(${size}, 1fr)`;
  const setMan = (button, man) => {
    button.dataset.man = man;
    button.textContent = man === empty ? "" : man;
    button.setAttribute("aria-label", `${button.dataset.cell}: ${men.get(man).label}`);
  };
  value.split("/").forEach((row, index) => {
    const rank = size - index;
    const cells = [];
    for (const token of row.match(/[0-9]+|./g) || []) {
      if (/[0-9]/.test(token)) cells.push(...empty.repeat(Number(token)));
      else cells.push(token);
    }
    for (let file = 0; file < size; file += 1) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "editor-cell";
      button.dataset.cell = `${files[file]}${rank}`;
      setMan(button, men.has(cells[file]) ? cells[file] : empty);
      button.addEventListener("click", () => {
        const next = order[(order.indexOf(button.dataset.man) + 1) % order.length];
        // One of its kind on the board: the one set before becomes its `single` man.
        const single = men.get(next).single;
        if (single) for (const other of grid.querySelectorAll(`[data-man="${next}"]`)) setMan(other, single);
        setMan(button, next);
        write();
      });
      grid.append(button);
    }
  });
  const hint = document.createElement("p");
  hint.className = "hint";
  hint.textContent = field.hint;
  parts.push(hint, grid);
  return () => {
    const cells = [...grid.querySelectorAll(".editor-cell")].map((button) => button.dataset.man);
    const rows = [];
    for (let r = 0; r < size; r += 1) {
      let row = "";
      let run = 0;
      for (const man of cells.slice(r * size, r * size + size)) {
        if (man === empty) {
          run += 1;
          continue;
        }
        row += (run ? String(run) : "") + man;
        run = 0;
      }
      rows.push(row + (run ? String(run) : ""));
    }
    return rows.join("/");
  };
}

// --- shared -------------------------------------------------------------------------------

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
  for (const choice of choices) input.append(new Option(choice.label, choice.value, false, choice.value === value));
  input.addEventListener("change", write);
  return input;
}

function labelled(words, input) {
  const label = document.createElement("label");
  label.append(`${words} `, input);
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
