// Diffusion Chess, 19x19, drawn from the server's state JSON:
// {"white": [cells], "black": [cells], "kings": {"white", "black"}, "to_move", "moves_left",
//  "turn", "moved": [cells], "last_move", ...} and the server's legal-move summary
// {"destinations": {stone: {cell: shortest path}}, "echo": bool,
//  "groups": {"at_turn_start", "now", "needed", "members": [[cells], ...]}}.
// Which stones move, where, and which stones form a group all come from the server; the
// board only lets the player point:
//   - click a stone, then one of its destinations: the move goes at once (the server's
//     shortest path);
//   - or drag a stone through the cells of the path you want (the path matters for an
//     echo); the server says whether it is legal when it is played.
// On a small screen a chosen stone brings a close-up of its neighbourhood, and a move waits
// for "Play" so that a slip of the finger costs nothing.
/* global gettext, ngettext, interpolate */
import { el, svg } from "./svg.js";

const CELL = 30;
const MARGIN = 28;
const CLOSE_UP_MARGIN = 20;
// Cells smaller than this on screen (CSS pixels) are too small to tap reliably.
const MIN_TARGET = 40;
// The height of the bar under a close-up (CSS: .close-up-bar, a button and its margins).
const CLOSE_UP_BAR = 58;

// What the player is doing survives redraws (a crowd update, a clock tick) but not a move.
const ui = { key: null, selected: null, path: [], pending: null, closeUp: null, drag: null, cursor: null };
// Arrow keys as (file, rank) steps on the board as White sees it.
const ARROWS = { ArrowUp: [0, 1], ArrowDown: [0, -1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };

// What a screen reader says of a cell: its name, what stands on it (with the number of its
// group, which the cell shows: a name holds what its control shows, WCAG 2.5.3), what it can
// do now.
function cellLabel(name, stone, king, { movable, target, last, onPath, group }) {
  const men = {
    white: king ? gettext("white king") : gettext("white stone"),
    black: king ? gettext("black king") : gettext("black stone"),
  };
  const words = [name, stone ? men[stone] : gettext("empty")];
  if (group) words.push(interpolate(gettext("group %(number)s"), { number: group }, true));
  if (movable) words.push(gettext("can move"));
  if (target) words.push(gettext("a destination"));
  if (onPath) words.push(gettext("on the path"));
  if (last) words.push(gettext("last move"));
  return words.join(", ");
}

export function renderChess(container, view) {
  const { board, state, legal, previous, flipped, lastMove, ply } = view;
  const FILES = board.files;
  const SIZE = board.size;
  const STEPS = board.steps;
  const cellName = (file, rank) => `${FILES[file]}${rank + 1}`;
  const parse = (name) => ({ file: FILES.indexOf(name[0]), rank: Number(name.slice(1)) - 1 });
  const adjacent = (a, b) => {
    const p = parse(a);
    const q = parse(b);
    return STEPS.some(([file, rank]) => p.file + file === q.file && p.rank + rank === q.rank);
  };
  const destinations = (legal && legal.destinations) || {};
  const interactive = Object.keys(destinations).length > 0;
  const key = `${ply}:${state.moves_left}:${state.to_move}:${interactive}`;
  if (ui.key !== key) Object.assign(ui, { key, selected: null, path: [], pending: null, closeUp: null, drag: null });

  // The board's side on screen: the container's width, or less where the page gives the
  // board a height (view.room: a phone's game page), which the close-up's bar shares.
  const room = view.room || Infinity;
  const small = container.clientWidth > 0 && Math.min(container.clientWidth, room) / (SIZE + 2) < MIN_TARGET;
  const bar = small && (ui.closeUp || ui.pending) ? CLOSE_UP_BAR : 0;
  const across = Math.min(container.clientWidth, room - bar);
  // The close-up: a window of the board around the chosen stone, on small screens only.
  let window = { file: 0, rank: 0, size: SIZE };
  if (small && ui.closeUp) {
    // As many cells a side as fit at MIN_TARGET pixels each (5 to 9).
    const fit = Math.floor(((across * CELL) / (MIN_TARGET + 2) - 2 * CLOSE_UP_MARGIN) / CELL);
    const size = Math.max(5, Math.min(9, fit));
    const half = Math.floor(size / 2);
    const clamp = (v) => Math.max(0, Math.min(SIZE - size, v - half));
    window = { file: clamp(ui.closeUp.file), rank: clamp(ui.closeUp.rank), size };
  }
  const inWindow = (file, rank) => file >= window.file && file < window.file + window.size
    && rank >= window.rank && rank < window.rank + window.size;

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
  const groups = legal && legal.groups;
  const groupOf = new Map();
  ((groups && groups.members) || []).forEach((members, index) => {
    for (const cell of members) groupOf.set(cell, index);
  });

  const n = window.size;
  const margin = n < SIZE ? CLOSE_UP_MARGIN : MARGIN;
  const width = margin * 2 + n * CELL;
  const root = svg(width, width, gettext("Diffusion Chess board"), "grid");
  root.classList.add("chessboard");
  root.setAttribute("tabindex", "-1"); // the cells take focus; Chromium would stop on the grid itself
  if (n < SIZE) root.classList.add("close-up");
  if (view.room) root.style.maxWidth = `${Math.max(across, 120)}px`;
  const at = (name) => {
    const { file, rank } = parse(name);
    const f = file - window.file;
    const r = rank - window.rank;
    const col = flipped ? n - 1 - f : f;
    const row = flipped ? r : n - 1 - r;
    return { x: margin + col * CELL + CELL / 2, y: margin + row * CELL + CELL / 2 };
  };

  root.append(el("rect", { x: margin, y: margin, width: n * CELL, height: n * CELL, class: "wood" }));
  for (let i = 0; i < n; i += 1) {
    const offset = margin + i * CELL + CELL / 2;
    root.append(el("line", { x1: margin + CELL / 2, y1: offset, x2: width - margin - CELL / 2, y2: offset, class: "grid" }));
    root.append(el("line", { x1: offset, y1: margin + CELL / 2, x2: offset, y2: width - margin - CELL / 2, class: "grid" }));
    const file = FILES[window.file + (flipped ? n - 1 - i : i)];
    const rank = window.rank + (flipped ? i + 1 : n - i);
    root.append(el("text", { x: offset, y: width - margin / 2 + 5, class: "coord", "aria-hidden": "true" }, file));
    root.append(el("text", { x: offset, y: margin / 2 + 5, class: "coord", "aria-hidden": "true" }, file));
    root.append(el("text", { x: margin / 2, y: offset + 4, class: "coord", "aria-hidden": "true" }, rank));
    root.append(el("text", { x: width - margin / 2, y: offset + 4, class: "coord", "aria-hidden": "true" }, rank));
  }

  const targets = ui.selected ? destinations[ui.selected] || {} : {};
  const redraw = () => renderChess(container, view);
  const play = (path) => {
    if (small) {
      ui.pending = path; // a slip of the finger costs nothing: "Play" sends it
      ui.path = path.split("-");
      redraw();
    } else {
      view.onMove(path);
    }
  };
  const choose = (name) => {
    if (ui.pending) return;
    if (ui.selected && targets[name]) {
      play(targets[name]);
    } else if (destinations[name] && name !== ui.selected) {
      ui.selected = name;
      ui.path = [name];
      if (small) ui.closeUp = parse(name);
      redraw();
    } else if (name === ui.selected) {
      Object.assign(ui, { selected: null, path: [], closeUp: null });
      redraw();
    } else if (view.onExplain) {
      view.onExplain(ui.selected
        ? interpolate(gettext("%(cell)s cannot be reached from %(from)s this move."), { cell: name, from: ui.selected }, true)
        : colour.get(name) ? interpolate(gettext("The stone on %(cell)s cannot move now."), { cell: name }, true)
          : gettext("Choose one of your stones first."));
    }
  };

  // A grid, row by row as seen on screen: arrow keys move a cursor over the cells (one of
  // them is in the tab order), Enter or Space does what a click does.
  if (!ui.cursor || !inWindow(parse(ui.cursor).file, parse(ui.cursor).rank)) {
    ui.cursor = ui.selected || Object.keys(destinations).sort()[0]
      || cellName(window.file + Math.floor(n / 2), window.rank + Math.floor(n / 2));
  }
  for (let row = 0; row < n; row += 1) {
    const line = el("g", { role: "row" });
    for (let col = 0; col < n; col += 1) {
      const file = window.file + (flipped ? n - 1 - col : col);
      const rank = window.rank + (flipped ? row : n - 1 - row);
      const name = cellName(file, rank);
      const { x, y } = at(name);
      const stone = colour.get(name);
      const classes = ["cell"];
      if (destinations[name]) classes.push("movable");
      if (targets[name]) classes.push("target");
      if (ui.path.includes(name)) classes.push("on-path");
      if (name === ui.selected) classes.push("selected");
      if (lastPath.has(name)) classes.push("last");
      if (previous && before.get(name) !== stone) classes.push("changed");
      const group = el("g", {
        class: classes.join(" "),
        "data-cell": name,
        role: "gridcell",
        tabindex: name === ui.cursor ? 0 : -1,
        "aria-selected": name === ui.selected ? "true" : undefined,
        "aria-label": cellLabel(name, stone, kings.has(name), {
          movable: Boolean(destinations[name]),
          target: Boolean(targets[name]),
          last: lastPath.has(name),
          onPath: ui.path.length > 1 && ui.path.includes(name),
          group: groupOf.has(name) ? groupOf.get(name) + 1 : null,
        }),
      });
      group.append(el("rect", { x: x - CELL / 2, y: y - CELL / 2, width: CELL, height: CELL, class: "hit" }));
      if (groupOf.has(name)) {
        // The stones of one group share a colour wash: the player sees the groups form.
        group.append(el("rect", {
          x: x - CELL / 2 + 1, y: y - CELL / 2 + 1, width: CELL - 2, height: CELL - 2, rx: 6,
          class: `group-wash g${groupOf.get(name) % 8}`,
        }));
      }
      // Shapes beside the colours: a corner triangle on the last move's cells, the group's
      // number on each stone of a group.
      if (lastPath.has(name)) {
        group.append(el("polygon", {
          points: `${x - CELL / 2 + 1},${y - CELL / 2 + 1} ${x - CELL / 2 + 9},${y - CELL / 2 + 1} ${x - CELL / 2 + 1},${y - CELL / 2 + 9}`,
          class: "last-mark",
        }));
      }
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
      if (targets[name]) group.append(el("circle", { cx: x, cy: y, r: 5, class: "dest-dot" }));
      if (groupOf.has(name)) {
        group.append(el("text", { x: x + CELL / 2 - 2, y: y + CELL / 2 - 2, class: "group-no" }, groupOf.get(name) + 1));
      }
      line.append(group);
    }
    root.append(line);
  }
  if (ui.path.length > 1) {
    const shown = ui.path.filter((name) => { const p = parse(name); return inWindow(p.file, p.rank); });
    const points = shown.map((name) => { const p = at(name); return `${p.x},${p.y}`; }).join(" ");
    root.append(el("polyline", { points, class: "path", "aria-hidden": "true" }));
  }

  // Pointer input: a click chooses, a drag draws a path.
  const cellAt = (event) => {
    const node = document.elementFromPoint(event.clientX, event.clientY);
    const cell = node && node.closest("[data-cell]");
    return cell && root.contains(cell) ? cell.dataset.cell : null;
  };
  if (interactive && !ui.pending) {
    root.addEventListener("pointerdown", (event) => {
      const name = cellAt(event);
      if (!name) return;
      ui.drag = { from: name, moved: false, wasSelected: ui.selected === name };
      if (!small && destinations[name]) {
        ui.selected = name;
        ui.path = [name];
      }
    });
    root.addEventListener("pointermove", (event) => {
      const drag = ui.drag;
      if (!drag || small || !destinations[drag.from]) return;
      const name = cellAt(event);
      const end = ui.path[ui.path.length - 1];
      if (!name || name === end) return;
      if (ui.path.length > 1 && ui.path[ui.path.length - 2] === name) ui.path.pop(); // a step back
      else if (!ui.path.includes(name) && adjacent(end, name)) ui.path.push(name);
      else return;
      drag.moved = true;
      redraw();
    });
    root.addEventListener("pointerup", (event) => {
      const drag = ui.drag;
      ui.drag = null;
      if (!drag) return;
      const name = cellAt(event);
      if (drag.moved && ui.path.length > 1) {
        view.onMove(ui.path.join("-")); // the path as drawn: the server judges it
        return;
      }
      if (name !== drag.from) return;
      if (destinations[name] && !small) {
        if (drag.wasSelected) Object.assign(ui, { selected: null, path: [] });
        redraw();
      } else {
        choose(name);
      }
    });
    if (!small) root.classList.add("draggable");
  } else if (!interactive && view.onRefused) {
    root.addEventListener("click", () => view.onRefused(null)); // the page says why not
  }
  root.addEventListener("focusin", (event) => {
    const cell = event.target.closest && event.target.closest("[data-cell]");
    if (cell) ui.cursor = cell.dataset.cell;
  });
  root.addEventListener("keydown", (event) => {
    const arrow = ARROWS[event.key];
    if (arrow) {
      event.preventDefault();
      const p = parse(ui.cursor);
      // Screen directions: a flipped board runs the other way.
      const sign = flipped ? -1 : 1;
      const file = p.file + arrow[0] * sign;
      const rank = p.rank + arrow[1] * sign;
      if (!inWindow(file, rank)) return;
      const next = cellName(file, rank);
      ui.cursor = next;
      if (event.shiftKey && interactive && !ui.pending && ui.selected) {
        // Shift+arrow draws the path step by step, as a drag does; back over a step undoes it.
        const end = ui.path[ui.path.length - 1];
        if (ui.path.length > 1 && ui.path[ui.path.length - 2] === next) ui.path.pop();
        else if (!ui.path.includes(next) && adjacent(end, next)) ui.path.push(next);
      }
      redraw();
    } else if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      if (!interactive) {
        if (view.onRefused) view.onRefused(null);
      } else if (ui.path.length > 1 && ui.cursor === ui.path[ui.path.length - 1]) {
        play(ui.path.join("-")); // the path as drawn: the server judges it
      } else {
        choose(ui.cursor);
      }
    } else if (event.key === "Escape" && (ui.selected || ui.pending)) {
      event.preventDefault();
      Object.assign(ui, { selected: null, path: [], pending: null, closeUp: null });
      redraw();
    }
  });
  // The board is drawn anew on every change: the keyboard's place in it survives.
  const hadFocus = container.contains(document.activeElement) && document.activeElement.closest("svg") !== null;
  container.replaceChildren(root);
  if (hadFocus) root.querySelector(`[data-cell="${ui.cursor}"]`)?.focus();
  // Beside the board when the page has a place for it, else under it.
  const info = turnInfo(state, groups, view, small);
  if (view.infoContainer) view.infoContainer.replaceChildren(info);
  else container.append(info);
  if (small && (ui.closeUp || ui.pending)) container.append(closeUpBar(redraw, view));
}

function turnInfo(state, groups, view, small) {
  const info = document.createElement("div");
  info.className = view.infoContainer ? "turn-lines" : "turn-info";
  const white = state.to_move === 1;
  const parts = [];
  if (state.result) {
    parts.push(interpolate(gettext("Turn %(turn)s"), { turn: state.turn }, true));
  } else {
    parts.push(interpolate(white ? gettext("Turn %(turn)s: White to move") : gettext("Turn %(turn)s: Black to move"), { turn: state.turn }, true));
    parts.push(interpolate(ngettext("%(n)s move left in the turn", "%(n)s moves left in the turn", state.moves_left), { n: state.moves_left }, true));
  }
  info.append(line(parts.join(" · ")));
  if (groups && !state.result) {
    const short = groups.now < groups.needed;
    // Short of the new group is how every turn starts: only on its last move is it a warning.
    const warn = short && state.moves_left <= 1;
    const words = !short
      ? gettext("%(whose)s: %(start)s at the start of the turn, %(now)s now; the turn must end with %(needed)s or more: done.")
      : warn
        ? gettext("%(whose)s: %(start)s at the start of the turn, %(now)s now; the turn must end with %(needed)s or more: this last move must make a new group!")
        : gettext("%(whose)s: %(start)s at the start of the turn, %(now)s now; the turn must end with %(needed)s or more.");
    const node = line(interpolate(words, {
      whose: white ? gettext("White's groups") : gettext("Black's groups"),
      start: groups.at_turn_start, now: groups.now, needed: groups.needed,
    }, true));
    node.className = warn ? "groups short" : short ? "groups" : "groups ok";
    info.append(node);
  }
  if (view.legal && view.legal.destinations && Object.keys(view.legal.destinations).length) {
    // Dragging a path is for a mouse on a board big enough; a phone's close-up is tapped.
    info.append(line(ui.selected
      ? (small ? gettext("Now tap where it goes, then Play.") : gettext("Now click where it goes, or drag it along the path you want."))
      : (small ? gettext("Your move: tap a stone.") : gettext("Your move: click a stone (or drag it along a path)."))));
  }
  return info;
}

function line(text) {
  const node = document.createElement("p");
  node.textContent = text;
  return node;
}

// Below a close-up: play the chosen path, or go back to the whole board.
function closeUpBar(redraw, view) {
  const bar = document.createElement("div");
  bar.className = "close-up-bar";
  if (ui.pending) {
    const play = document.createElement("button");
    play.type = "button";
    play.className = "primary";
    play.textContent = interpolate(gettext("Play %(move)s"), { move: ui.pending }, true);
    play.addEventListener("click", () => {
      const path = ui.pending;
      ui.pending = null;
      view.onMove(path);
    });
    bar.append(play);
  }
  const back = document.createElement("button");
  back.type = "button";
  back.textContent = ui.pending ? gettext("Cancel") : gettext("Whole board");
  back.addEventListener("click", () => {
    Object.assign(ui, { selected: null, path: [], pending: null, closeUp: null });
    redraw();
  });
  bar.append(back);
  return bar;
}
