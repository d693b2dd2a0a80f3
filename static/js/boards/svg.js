// Tiny helpers for drawing SVG.
/* global gettext, interpolate */
export const SVG_NS = "http://www.w3.org/2000/svg";

export function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  if (text !== undefined) node.textContent = String(text);
  return node;
}

// A board is a group of controls (or a grid of cells), not a picture: role says which.
export function svg(width, height, label, role = "group") {
  return el("svg", {
    viewBox: `0 0 ${width} ${height}`,
    width: "100%",
    role,
    "aria-label": label,
    preserveAspectRatio: "xMidYMid meet",
  });
}

// A block's label as the engine names it ("Block A", "Block a-d"), in the page's language.
export function blockLabel(label) {
  const found = /^Block (.+)$/.exec(label || "");
  return found ? interpolate(gettext("Block %(name)s"), { name: found[1] }, true) : label;
}
