// Pit boards (any game whose board description says "renderer": "pits") drawn from the
// server's board description {"names": [[top row, left to right], ...], "blocks": [{"label",
// "owner", "columns": [first, last]}]} and state {"rows": [...], "stores": [left, right]}.
// No per-game tables here: which pits may be played comes from the server's legal moves.
//
// On a narrow screen the board stands upright (columns run down the page) so that every pit
// stays a comfortable target for a finger; it is the same board turned a quarter. Either way
// it fits the window, across and down.
/* global gettext, pgettext, interpolate */
import { blockLabel, el, svg } from "./svg.js";

const CELL = 64;
const HOLE = 24; // the hole's radius: room in the cell's corner for the pit's letter
const STORE = 72;
const TOP = 46; // room above the board: a side label, and the blocks' labels when flat
const BOTTOM = 28; // below it: the other side's label
const MARGIN = 22; // upright, left of the board: the blocks' labels
// A pit smaller than this on screen (CSS pixels) is hard to tap: stand the board upright.
export const MIN_TARGET = 44;
// The height the page keeps for itself around the board (its header, the players, the
// buttons) where the page does not say (view.room): a board is never taller than the window
// less this (CSS: .board svg.mancala).
export const CHROME = 160;
// The height the zoom button takes above the board (CSS: .zoom-button, 2.75rem and a margin).
const ZOOM_BUTTON = 50;
const STEP_KEYS = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };

// Flat (the board as it lies between the players) or upright (turned a quarter): the one that
// fits the space given, width and height, with the bigger pits; flat whenever its pits are
// big enough for a finger.
export function layoutFor(board, width, height = 0) {
  if (!width) return "flat";
  const rows = board.names.length;
  const columns = board.names[0].length;
  const length = STORE * 2 + columns * CELL + 16;
  const depth = rows * CELL;
  const scale = (w, h) => Math.min(width / w, height > 0 ? height / h : Infinity);
  const flat = (CELL - 10) * scale(length, depth + TOP + BOTTOM);
  const upright = (CELL - 10) * scale(MARGIN + depth + 16, length + TOP + BOTTOM);
  return flat >= MIN_TARGET || flat >= upright ? "flat" : "upright";
}

// Pits drawn this big (CSS pixels) when the player zooms in on a board whose pits are too
// small for a finger: upright, as wide as that makes it, and the page scrolls down the board.
const ZOOMED_PIT = 48;
// Whether the player zoomed in: it survives redraws, as the board is drawn anew each move.
let zoomed = false;

export function renderMancala(container, view) {
  const { name, board, state, legal, previous, flipped, onMove, onRefused, captured, lastMove, you, players } = view;
  const rows = state.rows;
  const names = board.names;
  const columns = rows[0].length;
  // The height the board may take: the page's measure of it (a phone's game page keeps the
  // players, their clocks and the move controls on the same screen), else the window's less
  // CHROME.
  let room = view.room || window.innerHeight - CHROME;
  const upright = zoomed || (view.layout || layoutFor(board, container.clientWidth, room)) === "upright";
  // Board coordinates: along = the column's place along the board, across = the row's.
  const length = STORE * 2 + columns * CELL + 16;
  const depth = rows.length * CELL;
  const width = upright ? MARGIN + depth + 16 : length;
  // The captured seeds' line under the board: two lines upright, where the board is narrow.
  const capturedLines = captured ? (upright ? 2 : 1) : 0;
  const height = (upright ? length : depth) + TOP + BOTTOM + capturedLines * 20;
  const root = svg(width, height, interpolate(gettext("%(game)s board"), { game: name }, true));
  root.classList.add("mancala", upright ? "upright" : "flat");
  root.dataset.layout = upright ? "upright" : "flat";
  const legalSet = new Set(legal || []);

  // Viewed from North, the board turns half a circle: rows and columns reverse. Upright, the
  // left end of the board is at the top and the top row on the right.
  const place = (r, c) => {
    const rr = flipped ? rows.length - 1 - r : r;
    const cc = flipped ? columns - 1 - c : c;
    if (upright) return { x: MARGIN + 8 + (rows.length - 1 - rr) * CELL, y: TOP + STORE + 8 + cc * CELL };
    return { x: STORE + 8 + cc * CELL, y: TOP + rr * CELL };
  };

  // Whose side is where: player 1 (South) sits at the bottom, unless the board is flipped.
  const sideLabel = (player) => {
    const name = players ? players[String(player)].username : interpolate(gettext("player %(n)s"), { n: player }, true);
    const where = player === 1 ? gettext("South") : gettext("North");
    const yours = (words) => (you === player ? interpolate(gettext("%(name)s (you)"), { name: words }, true) : words);
    // Upright, the board is too narrow for names: the list of players has them.
    if (upright) return yours(where);
    return `${where} · ${yours(name)}`;
  };
  const [near, far] = flipped ? [2, 1] : [1, 2];
  const bottom = (upright ? length : depth) + TOP + 19;
  if (upright) {
    // Turned a quarter: the far side's row is on the right, the near side's on the left.
    root.append(el("text", { x: width - 4, y: 17, class: `side-label end player-${far}` }, `${sideLabel(far)} ↓`));
    root.append(el("text", { x: 4, y: bottom, class: `side-label start player-${near}` }, `↑ ${sideLabel(near)}`));
  } else {
    root.append(el("text", { x: width / 2, y: 17, class: `side-label player-${far}` }, sideLabel(far)));
    root.append(el("text", { x: width / 2, y: bottom, class: `side-label player-${near}` }, sideLabel(near)));
  }

  for (const block of board.blocks) {
    const a = place(0, block.columns[0]);
    const b = place(rows.length - 1, block.columns[1]);
    const x = Math.min(a.x, b.x) - 3;
    const y = Math.min(a.y, b.y) - 3;
    const w = Math.abs(b.x - a.x) + CELL + 6;
    const h = Math.abs(b.y - a.y) + CELL + 6;
    const owner = block.owner === you ? gettext("yours")
      : players ? players[String(block.owner)].username : interpolate(gettext("player %(n)s"), { n: block.owner }, true);
    root.append(el("rect", { x, y, width: w, height: h, rx: 10, class: `block owner-${block.owner}` }));
    const label = el("text", upright
      ? { x: 15, y: y + h / 2, class: "block-label", transform: `rotate(-90 15 ${y + h / 2})` }
      : { x: x + w / 2, y: y - 8, class: "block-label" }, `${blockLabel(block.label)} · ${owner}`);
    root.append(label);
  }

  const stores = flipped ? [...state.stores].reverse() : state.stores;
  stores.forEach((count, side) => {
    const box = upright
      ? { x: MARGIN + 8, y: side === 0 ? TOP + 4 : TOP + length - STORE + 4, width: depth, height: STORE - 8 }
      : { x: side === 0 ? 6 : width - STORE - 2, y: TOP, width: STORE - 8, height: depth };
    const words = side === 0 ? gettext("left store: %(count)s") : gettext("right store: %(count)s");
    const group = el("g", { class: "store-box", role: "img", "aria-label": interpolate(words, { count }, true) });
    group.append(el("rect", { ...box, rx: 28, class: "store" }));
    group.append(el("text", { x: box.x + box.width / 2, y: box.y + box.height / 2 + 8, class: "count store-count" }, count));
    group.append(el("text", { x: box.x + box.width / 2, y: box.y + box.height / 2 - 16, class: "store-label" }, pgettext("where a side's seeds are kept", "store")));
    root.append(group);
  });

  rows.forEach((row, r) => {
    row.forEach((count, c) => {
      const { x, y } = place(r, c);
      const name = names[r][c];
      const playable = legalSet.has(name);
      const played = lastMove !== null && lastMove !== undefined && String(lastMove) === name;
      const current = view.current === name; // the seed being sown now
      const delta = previous ? count - previous.rows[r][c] : 0;
      const signed = delta > 0 ? `+${delta}` : `${delta}`;
      const group = el("g", {
        class: `pit${playable ? " playable" : ""}${played ? " played" : ""}${current ? " current" : ""}`,
        "data-pit": name,
        tabindex: playable ? 0 : undefined,
        role: "button",
        "aria-label": [
          interpolate(gettext("pit %(name)s: %(count)s"), { name, count }, true),
          delta ? signed : null,
          playable ? gettext("playable") : null,
          played ? gettext("played last") : null,
        ].filter(Boolean).join(", "),
      });
      // The whole cell answers a tap, not only the drawn hole.
      group.append(el("rect", { x, y, width: CELL, height: CELL, class: "hit" }));
      // The pit's letter in the cell's corner, clear of the hole; the count in the middle of
      // the hole, the stones in a ring round it.
      group.append(el("circle", { cx: x + CELL / 2, cy: y + CELL / 2, r: HOLE, class: "hole" }));
      // Marks that are shapes, not only colours: a second ring round a pit that may be
      // played, a corner triangle on the pit played last.
      if (playable) group.append(el("circle", { cx: x + CELL / 2, cy: y + CELL / 2, r: HOLE + 3, class: "ring" }));
      if (played) group.append(el("polygon", { points: `${x + CELL - 2},${y + CELL - 2} ${x + CELL - 14},${y + CELL - 2} ${x + CELL - 2},${y + CELL - 14}`, class: "played-mark" }));
      drawStones(group, x, y, count);
      // What the pit shows in words, in one text and in the order its accessible name says
      // them ("pit F: 4, +1"), so that the name holds the visible label (WCAG 2.5.3): its
      // letter in the cell's corner, the count in the middle of the hole, the change since
      // the last move in the other corner.
      const words = el("text", { class: "pit-text" });
      words.append(el("tspan", { x: x + 4, y: y + 10, class: "pit-name" }, name), " ",
        el("tspan", { x: x + CELL / 2, y: y + CELL / 2 + 6, class: "count" }, count));
      if (delta) {
        words.append(" ", el("tspan", { x: x + CELL - 8, y: y + 14, class: `delta ${delta > 0 ? "up" : "down"}` }, signed));
        group.classList.add("changed");
      }
      group.append(words);
      const choose = () => (playable ? onMove(name) : onRefused && onRefused(name));
      group.addEventListener("click", choose);
      group.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          choose();
        } else if (STEP_KEYS[event.key]) {
          // Arrows go from playable pit to playable pit, in the order they are drawn.
          event.preventDefault();
          const pits = [...root.querySelectorAll(".pit.playable")];
          const next = pits[(pits.indexOf(group) + STEP_KEYS[event.key] + pits.length) % pits.length];
          if (next) next.focus();
        }
      });
      root.append(group);
    });
  });

  if (captured) {
    const tally = interpolate(gettext("South %(south)s · North %(north)s"), { south: captured[0], north: captured[1] }, true);
    const lines = upright ? [gettext("captured:"), tally] : [interpolate(gettext("captured: %(tally)s"), { tally }, true)];
    lines.forEach((text, i) => {
      root.append(el("text", { x: width / 2, y: height - 6 - (lines.length - 1 - i) * 20, class: "captured" }, text));
    });
  }
  // The board is drawn anew on every change: keyboard focus stays on the same pit, or goes to
  // the first playable one if that pit can no longer be played.
  const focused = container.contains(document.activeElement) ? document.activeElement.dataset.pit : null;
  // Pits too small for a finger: the page offers to zoom in (and back out). Where the page
  // measured the board's room, the button above the board takes its height from that room,
  // and the pits' size is known before they are drawn; elsewhere they are measured.
  const across = container.clientWidth;
  let offerZoom = zoomed;
  if (zoomed) {
    root.classList.add("zoomed");
    root.setAttribute("width", `${Math.min(container.clientWidth, Math.ceil((width * ZOOMED_PIT) / (CELL - 10)))}px`);
  } else if (view.room && across > 0) {
    offerZoom = CELL * Math.min(across / width, room / height) < MIN_TARGET;
    if (offerZoom) room -= ZOOM_BUTTON;
    root.style.maxHeight = `${Math.max(room, 100)}px`;
  }
  container.replaceChildren(root);
  if (!zoomed && !view.room) {
    const pit = root.querySelector(".pit .hit").getBoundingClientRect();
    offerZoom = pit.width > 0 && Math.min(pit.width, pit.height) < MIN_TARGET;
  }
  if (offerZoom) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "zoom-button";
    button.textContent = zoomed ? gettext("Whole board") : gettext("Zoom in: bigger pits");
    button.setAttribute("aria-pressed", String(zoomed));
    button.addEventListener("click", () => {
      zoomed = !zoomed;
      renderMancala(container, view);
      container.querySelector(".zoom-button").focus();
    });
    container.prepend(button);
  }
  if (focused) {
    const pit = root.querySelector(`.pit.playable[data-pit="${focused}"]`) || root.querySelector(".pit.playable");
    (pit || container).focus();
  }
}

function drawStones(group, x, y, count) {
  const shown = Math.min(count, 12);
  for (let i = 0; i < shown; i += 1) {
    const angle = (i / Math.max(shown, 1)) * Math.PI * 2 - Math.PI / 2;
    const radius = 17; // round the count, never under it
    group.append(el("circle", {
      cx: x + CELL / 2 + Math.cos(angle) * radius,
      cy: y + CELL / 2 + Math.sin(angle) * radius,
      r: 4,
      class: "stone",
    }));
  }
}
