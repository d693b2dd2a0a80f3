// Diffusion Chess, 19x19, drawn from the server's state JSON:
// {"white": [cells], "black": [cells], "kings": {"white", "black"}, "to_move", "moves_left",
//  "turn", "moved": [cells], "last_move", ...} and the server's legal-move summary
// {"destinations": {stone: {cell: shortest path}}, "echo": bool}.
// Which stones move, where, and whether an echo is allowed all come from the server; the
// board only lets the player point: click a stone, then cells one step at a time to draw
// a path (or a highlighted destination to take the suggested path), then "Play".
import { el, svg } from "./svg.js";

// The grid's files and size come from the server's board description.
let FILES = "abcdefghijklmnopqrs";
let SIZE = 19;
const CELL = 30;
const MARGIN = 28;

// The path being drawn survives redraws (a crowd update, a clock tick) but not a new move.
const draft = { key: null, path: [] };

const cellName = (file, rank) => `${FILES[file]}${rank + 1}`;
const parse = (name) => ({ file: FILES.indexOf(name[0]), rank: Number(name.slice(1)) - 1 });
// One step of a path, as the server's board description lists them (no rules here: whether
// a path is legal is the server's answer when it is played).
let STEPS = [];
const adjacent = (a, b) => {
  const p = parse(a);
  const q = parse(b);
  return STEPS.some(([file, rank]) => p.file + file === q.file && p.rank + rank === q.rank);
};

export function renderChess(container, view) {
  const { board, state, legal, previous, flipped, onMove, onDraft, lastMove, ply } = view;
  FILES = board.files;
  SIZE = board.size;
  STEPS = board.steps;
  const destinations = (legal && legal.destinations) || {};
  const key = `${ply}:${state.moves_left}:${state.to_move}`;
  if (draft.key !== key) {
    draft.key = key;
    draft.path = [];
  }
  const colour = new Map();
  for (const cell of state.white) colour.set(cell, "white");
  for (const cell of state.black) colour.set(cell, "black");
  const kings = new Set(Object.values(state.kings || {}));
  const moved = new Set(state.moved || []);
  const before = new Map();
  if (previous) {
    for (const cell of previous.white) before.set(cell, "white");
    for (const cell of previous.black) before.set(cell, "black");
  }
  const lastPath = new Set(lastMove && lastMove !== "echo" ? lastMove.split("-") : []);

  const width = MARGIN * 2 + SIZE * CELL;
  const root = svg(width, width, "Diffusion Chess board");
  root.classList.add("chessboard");
  const at = (name) => {
    const { file, rank } = parse(name);
    const col = flipped ? SIZE - 1 - file : file;
    const row = flipped ? rank : SIZE - 1 - rank;
    return { x: MARGIN + col * CELL + CELL / 2, y: MARGIN + row * CELL + CELL / 2 };
  };

  root.append(el("rect", { x: MARGIN, y: MARGIN, width: SIZE * CELL, height: SIZE * CELL, class: "wood" }));
  for (let i = 0; i < SIZE; i += 1) {
    const offset = MARGIN + i * CELL + CELL / 2;
    root.append(el("line", { x1: MARGIN + CELL / 2, y1: offset, x2: width - MARGIN - CELL / 2, y2: offset, class: "grid" }));
    root.append(el("line", { x1: offset, y1: MARGIN + CELL / 2, x2: offset, y2: width - MARGIN - CELL / 2, class: "grid" }));
    const file = FILES[flipped ? SIZE - 1 - i : i];
    const rank = flipped ? i + 1 : SIZE - i;
    root.append(el("text", { x: offset, y: width - 8, class: "coord" }, file));
    root.append(el("text", { x: offset, y: 16, class: "coord" }, file));
    root.append(el("text", { x: 12, y: offset + 4, class: "coord" }, rank));
    root.append(el("text", { x: width - 12, y: offset + 4, class: "coord" }, rank));
  }

  const selected = draft.path[0];
  const targets = selected ? destinations[selected] || {} : {};
  const end = draft.path[draft.path.length - 1];

  const click = (name) => {
    if (!draft.path.length || (name === selected && draft.path.length === 1)) {
      draft.path = destinations[name] && name !== selected ? [name] : [];
    } else if (name === selected) {
      draft.path = [];
    } else if (draft.path.includes(name)) {
      draft.path = draft.path.slice(0, draft.path.indexOf(name) + 1); // step back
    } else if (adjacent(end, name)) {
      draft.path = [...draft.path, name]; // the server says whether the path is legal
    } else if (targets[name]) {
      draft.path = targets[name].split("-");
    } else if (destinations[name]) {
      draft.path = [name];
    }
    onDraft(draft.path.length > 1 ? draft.path.join("-") : "");
    renderChess(container, view);
  };

  const interactive = Object.keys(destinations).length > 0;
  for (let file = 0; file < SIZE; file += 1) {
    for (let rank = 0; rank < SIZE; rank += 1) {
      const name = cellName(file, rank);
      const { x, y } = at(name);
      const stone = colour.get(name);
      const movable = Boolean(destinations[name]);
      const isTarget = Boolean(targets[name]);
      const classes = ["cell"];
      if (movable) classes.push("movable");
      if (isTarget) classes.push("target");
      if (draft.path.includes(name)) classes.push("on-path");
      if (name === selected) classes.push("selected");
      if (lastPath.has(name)) classes.push("last");
      if (previous && before.get(name) !== stone) classes.push("changed");
      const group = el("g", {
        class: classes.join(" "),
        "data-cell": name,
        role: interactive ? "button" : undefined,
        "aria-label": `${name}${stone ? ` ${stone}${kings.has(name) ? " king" : ""}` : ""}`,
      });
      group.append(el("rect", { x: x - CELL / 2, y: y - CELL / 2, width: CELL, height: CELL, class: "hit" }));
      if (stone) {
        const r = CELL / 2 - 3;
        if (kings.has(name)) {
          group.append(el("polygon", {
            points: `${x},${y - r - 1} ${x + r + 1},${y} ${x},${y + r + 1} ${x - r - 1},${y}`,
            class: `stone ${stone} king`,
          }));
        } else {
          group.append(el("circle", { cx: x, cy: y, r, class: `stone ${stone}${moved.has(name) ? " moved" : ""}` }));
        }
      }
      if (isTarget) group.append(el("circle", { cx: x, cy: y, r: 5, class: "dest-dot" }));
      if (interactive) group.addEventListener("click", () => click(name));
      root.append(group);
    }
  }
  if (draft.path.length > 1) {
    const points = draft.path.map((name) => { const p = at(name); return `${p.x},${p.y}`; }).join(" ");
    root.append(el("polyline", { points, class: "path" }));
  }
  container.replaceChildren(root);

  const info = document.createElement("p");
  info.className = "turn-info";
  const side = state.to_move === 1 ? "White" : "Black";
  info.textContent = state.result
    ? `Turn ${state.turn}`
    : `Turn ${state.turn}: ${side} to move, ${state.moves_left} move${state.moves_left === 1 ? "" : "s"} left in the turn`;
  container.append(info);
  return { play: () => draft.path.length > 1 && onMove(draft.path.join("-")) };
}
