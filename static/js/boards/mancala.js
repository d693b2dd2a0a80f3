// Pit boards (any game whose board description says "renderer": "pits") drawn from the
// server's board description {"names": [[top row, left to right], ...], "blocks": [{"label",
// "owner", "columns": [first, last]}]} and state {"rows": [...], "stores": [left, right]}.
// No per-game tables here: which pits may be played comes from the server's legal moves.
import { el, svg } from "./svg.js";

const CELL = 64;
const STORE = 72;

export function renderMancala(container, view) {
  const { slug, board, state, legal, previous, flipped, onMove, captured } = view;
  const rows = state.rows;
  const names = board.names;
  const blocks = board.blocks.map((block) => ({ from: block.columns[0], to: block.columns[1], label: block.label, owner: block.owner }));
  const columns = rows[0].length;
  const width = STORE * 2 + columns * CELL + 16;
  const height = rows.length * CELL + 56;
  const root = svg(width, height, `${slug} board`);
  root.classList.add("mancala");
  const legalSet = new Set(legal);

  // Viewed from North, the board turns half a circle: rows and columns reverse.
  const place = (r, c) => {
    const rr = flipped ? rows.length - 1 - r : r;
    const cc = flipped ? columns - 1 - c : c;
    return { x: STORE + 8 + cc * CELL, y: 28 + rr * CELL };
  };

  for (const block of blocks) {
    const a = place(0, block.from);
    const b = place(rows.length - 1, block.to);
    const x = Math.min(a.x, b.x) - 3;
    const y = Math.min(a.y, b.y) - 3;
    const w = Math.abs(b.x - a.x) + CELL + 6;
    const h = Math.abs(b.y - a.y) + CELL + 6;
    root.append(el("rect", { x, y, width: w, height: h, rx: 10, class: `block owner-${block.owner}` }));
    root.append(el("text", { x: x + w / 2, y: flipped ? y + h + 18 : y - 8, class: "block-label" },
      `${block.label} · player ${block.owner}`));
  }

  const stores = flipped ? [...state.stores].reverse() : state.stores;
  stores.forEach((count, side) => {
    const x = side === 0 ? 6 : width - STORE - 2;
    root.append(el("rect", { x, y: 28, width: STORE - 8, height: rows.length * CELL, rx: 28, class: "store" }));
    root.append(el("text", { x: x + (STORE - 8) / 2, y: 28 + (rows.length * CELL) / 2 + 8, class: "count store-count" }, count));
  });

  rows.forEach((row, r) => {
    row.forEach((count, c) => {
      const { x, y } = place(r, c);
      const name = names[r][c];
      const playable = legalSet.has(name);
      const group = el("g", {
        class: `pit${playable ? " playable" : ""}`,
        "data-pit": name,
        tabindex: playable ? 0 : undefined,
        role: playable ? "button" : undefined,
        "aria-label": `pit ${name}: ${count}`,
      });
      group.append(el("circle", { cx: x + CELL / 2, cy: y + CELL / 2, r: CELL / 2 - 5, class: "hole" }));
      drawStones(group, x, y, count);
      group.append(el("text", { x: x + CELL / 2, y: y + CELL / 2 + 7, class: "count" }, count));
      group.append(el("text", { x: x + 8, y: y + 14, class: "pit-name" }, name));
      if (previous && previous.rows[r][c] !== count) {
        const delta = count - previous.rows[r][c];
        group.append(el("text", { x: x + CELL - 8, y: y + 14, class: `delta ${delta > 0 ? "up" : "down"}` },
          delta > 0 ? `+${delta}` : `${delta}`));
        group.classList.add("changed");
      }
      if (playable) {
        group.addEventListener("click", () => onMove(name));
        group.addEventListener("keydown", (event) => {
          if (event.key === "Enter" || event.key === " ") onMove(name);
        });
      }
      root.append(group);
    });
  });

  if (captured) {
    root.append(el("text", { x: width / 2, y: height - 6, class: "captured" },
      `captured: South ${captured[0]} · North ${captured[1]}`));
  }
  container.replaceChildren(root);
}

function drawStones(group, x, y, count) {
  const shown = Math.min(count, 12);
  for (let i = 0; i < shown; i += 1) {
    const angle = (i / Math.max(shown, 1)) * Math.PI * 2;
    const radius = shown > 1 ? 14 : 0;
    group.append(el("circle", {
      cx: x + CELL / 2 + Math.cos(angle) * radius,
      cy: y + CELL / 2 + Math.sin(angle) * radius,
      r: 5,
      class: "stone",
    }));
  }
}
