// The computer's review of a finished game, on the game's page (docs/PROTOCOL.md,
// "Analysis"): asked for with a button, computed in the background, then drawn as player 1's
// win chance after every move, with the moves that threw most away listed. Each opens the
// analysis board before the move, with the move the search preferred.
/* global gettext, interpolate */
import { el, svg } from "./boards/svg.js";

const $ = (id) => document.getElementById(id);
const box = $("review");
const gameId = document.getElementById("game").dataset.gameId;
const WIDTH = 600;
const HEIGHT = 120;
let polling = null;
// The marks the server gives (analysis/reviews.py), in words; the mark itself is a CSS class.
const MARKS = { blunder: gettext("blunder"), mistake: gettext("mistake"), inaccuracy: gettext("inaccuracy") };
const markWord = (mark) => MARKS[mark] ?? mark;
// A fraction as the page's language writes a percentage ("12%", "12 %").
const percent = (fraction) => new Intl.NumberFormat(document.documentElement.lang || undefined, { style: "percent" })
  .format(Math.round(fraction * 100) / 100);

function csrf() {
  const part = document.cookie.split("; ").find((item) => item.startsWith("csrftoken="));
  return part ? part.split("=")[1] : "";
}

async function fetchReview(method) {
  const response = await fetch(`/api/games/${gameId}/review`, method === "POST" ? {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
    body: "{}",
  } : {});
  const answer = await response.json();
  if (answer.error) {
    $("review-status").textContent = answer.error.message;
    return null;
  }
  return answer.review;
}

function show(review) {
  // Asked for by anyone signed in (the button is there for them only), once per game.
  const button = $("review-button");
  if (button) button.hidden = Boolean(review) && review.status !== "failed";
  if (!review) return;
  if (review.status === "running") {
    $("review-status").textContent = interpolate(gettext("The computer is reviewing the game: %(done)s of %(of)s positions…"), {
      done: review.done, of: review.of,
    }, true);
    if (!polling) polling = setTimeout(refresh, 1000);
    return;
  }
  if (review.status === "failed") {
    $("review-status").textContent = gettext("The review could not be finished: ask again.");
    return;
  }
  $("review-status").textContent = interpolate(gettext("Reviewed: %(ms)s ms of search a position."), { ms: review.ms }, true);
  drawChart(review.plies);
  drawMarks(review.plies);
  box.dataset.state = "done";
}

async function refresh() {
  polling = null;
  show(await fetchReview("GET"));
}

function drawChart(plies) {
  const last = Math.max(1, plies.length - 1);
  const x = (ply) => (ply / last) * WIDTH;
  const y = (win) => HEIGHT - win * HEIGHT;
  const chart = svg(WIDTH, HEIGHT, gettext("player 1's chance to win after each move"), "img");
  chart.classList.add("review-chart");
  chart.append(el("rect", { x: 0, y: 0, width: WIDTH, height: HEIGHT, class: "review-back" }));
  chart.append(el("line", { x1: 0, y1: HEIGHT / 2, x2: WIDTH, y2: HEIGHT / 2, class: "review-even" }));
  const points = plies.map((ply) => `${x(ply.ply).toFixed(1)},${y(ply.win).toFixed(1)}`).join(" ");
  chart.append(el("polyline", { points, class: "review-line" }));
  for (const ply of plies.filter((item) => item.mark)) {
    const dot = el("circle", { cx: x(ply.ply), cy: y(ply.win), r: 4, class: `review-${ply.mark}` });
    dot.append(el("title", {}, `${ply.ply}. ${ply.move}: ${markWord(ply.mark)}`));
    chart.append(dot);
  }
  $("review-chart").replaceChildren(chart);
}

// Each marked move opens the analysis board at the position before it (a form, so that the
// analysis is made for the viewer), with the better move named there.
function drawMarks(plies) {
  const marked = plies.filter((ply) => ply.mark);
  const list = $("review-marks");
  if (!marked.length) {
    list.replaceChildren(Object.assign(document.createElement("li"), { textContent: gettext("No move lost much.") }));
    return;
  }
  const form = $("review-open");
  list.replaceChildren(...marked.map((ply) => {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.className = `review-mark ${ply.mark}`;
    button.dataset.ply = String(ply.ply);
    button.textContent = interpolate(gettext("%(ply)s. %(move)s: %(mark)s (−%(drop)s), better %(best)s"), {
      ply: ply.ply, move: ply.move, mark: markWord(ply.mark), drop: percent(ply.drop), best: ply.best,
    }, true);
    button.addEventListener("click", () => {
      form.elements.ply.value = String(ply.ply - 1);
      form.elements.suggest.value = ply.best;
      form.elements.played.value = ply.move;
      form.submit();
    });
    item.append(button);
    return item;
  }));
}

if (box) {
  $("review-button")?.addEventListener("click", async () => {
    $("review-button").hidden = true;
    const review = await fetchReview("POST");
    if (review) show(review);
    else $("review-button").hidden = false;
  });
  // A review is for a finished game: the section shows once the game's result does.
  const banner = $("banner");
  const offer = () => {
    if (!banner.hidden && box.hidden) {
      box.hidden = false;
      refresh();
    }
  };
  new MutationObserver(offer).observe(banner, { attributes: true, attributeFilter: ["hidden"] });
  offer();
}
