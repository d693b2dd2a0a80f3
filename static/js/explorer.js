// The opening explorer beside a board (docs/API.md, "The opening explorer"): the moves played
// from the position shown in the games the site counted, with how each went for the player who
// chose it, as the server sums them. The page names the position (its text, or a finished
// game's number and ply) and draws the answer; no rules here.
/* global gettext, ngettext, interpolate */

const BANDS = [0, 1200, 1400, 1600, 1800, 2000, 2200];
const SPEEDS = { realtime: () => gettext("Real time"), correspondence: () => gettext("Correspondence"), untimed: () => gettext("Untimed") };
const STORED = "explorer-filters";
const lang = document.documentElement.lang || undefined;
const number = (value) => new Intl.NumberFormat(lang).format(value);
const percent = (part, whole) => new Intl.NumberFormat(lang, { style: "percent" }).format(whole ? part / whole : 0);

function bandName(band) {
  const next = BANDS[BANDS.indexOf(band) + 1];
  if (band === 0) return interpolate(gettext("under %(rating)s"), { rating: number(next) }, true);
  if (next === undefined) return interpolate(gettext("%(rating)s and over"), { rating: number(band) }, true);
  return `${number(band)}–${number(next - 1)}`;
}

function storedFilters() {
  try {
    const kept = JSON.parse(localStorage.getItem(STORED) || "{}");
    return { ratings: Array.isArray(kept.ratings) ? kept.ratings : [], speeds: Array.isArray(kept.speeds) ? kept.speeds : [] };
  } catch {
    return { ratings: [], speeds: [] };
  }
}

function make(tag, attributes = {}, text = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text) node.textContent = text;
  return node;
}

// The explorer in `box` (templates/analysis/_explorer.html). `onPick(move)`, when given, makes
// each move a button (the analysis board plays it); `played` names the move the game went on
// with (the replay marks it).
export function explorer(box, { onPick = null } = {}) {
  const filters = storedFilters();
  const status = box.querySelector(".explorer-status");
  const body = box.querySelector("tbody");
  const total = box.querySelector(".explorer-total");
  let asked = null;
  let played = null;

  function checkboxes(where, values, chosen, label, name) {
    const holder = box.querySelector(where);
    holder.replaceChildren();
    for (const value of values) {
      const item = make("label");
      const input = make("input", { type: "checkbox", name, value: String(value) });
      input.checked = chosen.includes(value);
      input.addEventListener("change", () => {
        const list = name === "ratings" ? filters.ratings : filters.speeds;
        const at = list.indexOf(value);
        if (input.checked && at < 0) list.push(value);
        if (!input.checked && at >= 0) list.splice(at, 1);
        localStorage.setItem(STORED, JSON.stringify(filters));
        if (asked) fetchMoves(asked);
      });
      item.append(input, ` ${label(value)}`);
      holder.append(item);
    }
  }
  checkboxes(".explorer-ratings", BANDS, filters.ratings, bandName, "ratings");
  checkboxes(".explorer-speeds", Object.keys(SPEEDS), filters.speeds, (speed) => SPEEDS[speed](), "speeds");

  async function fetchMoves(params) {
    const query = new URLSearchParams(params);
    if (filters.ratings.length) query.set("ratings", filters.ratings.join(","));
    if (filters.speeds.length) query.set("speeds", filters.speeds.join(","));
    const url = `/api/explorer?${query}`;
    box.dataset.loading = "true";
    let answer;
    try {
      answer = await (await fetch(url)).json();
    } catch {
      answer = { error: { message: gettext("The explorer could not be reached.") } };
    }
    if (asked !== params) return; // another position was asked for meanwhile
    box.dataset.loading = "false";
    draw(answer);
  }

  function draw(answer) {
    body.replaceChildren();
    if (answer.error) {
      status.textContent = answer.error.message;
      total.textContent = "";
      return;
    }
    box.querySelector(".explorer-about").textContent = interpolate(gettext(
      "The moves played from this position in the site's finished games (the first %(plies)s moves of each), and how each went for the player who chose it.",
    ), { plies: number(answer.plies) }, true);
    status.textContent = answer.moves.length ? "" : gettext("No game counted here has reached this position.");
    for (const move of answer.moves) {
      const row = make("tr");
      if (played !== null && move.move === played) row.classList.add("played");
      const name = make("th", { scope: "row" });
      if (onPick) {
        const button = make("button", { type: "button", class: "explorer-move" }, move.move);
        button.addEventListener("click", () => onPick(move.move));
        name.append(button);
      } else {
        name.textContent = move.move;
      }
      if (played !== null && move.move === played) {
        name.append(" ", make("span", { class: "hint" }, gettext("(played in this game)")));
      }
      const games = make("td", {}, number(move.games));
      const rating = make("td", {}, number(move.rating));
      const results = make("td", { class: "explorer-results" });
      const bar = make("span", { class: "explorer-bar", "aria-hidden": "true" });
      for (const [kind, count] of [["wins", move.wins], ["draws", move.draws], ["losses", move.losses]]) {
        const part = make("span", { class: kind });
        part.style.width = `${(100 * count) / move.games}%`;
        bar.append(part);
      }
      const words = make("span", { class: "explorer-words" }, interpolate(
        gettext("%(wins)s won, %(draws)s drawn, %(losses)s lost"),
        { wins: percent(move.wins, move.games), draws: percent(move.draws, move.games), losses: percent(move.losses, move.games) },
        true,
      ));
      results.append(bar, words);
      row.append(name, games, rating, results);
      body.append(row);
    }
    total.textContent = answer.games
      ? interpolate(ngettext("%(count)s game from here", "%(count)s games from here", answer.games), { count: number(answer.games) }, true)
      : "";
    box.dataset.games = String(answer.games || 0);
  }

  return {
    // params: {game, options, position} or {game_id, ply}; `next` the move the game played.
    show(params, next = null) {
      const same = asked && JSON.stringify(asked) === JSON.stringify(params);
      played = next;
      if (same) return;
      asked = params;
      box.hidden = false;
      fetchMoves(params);
    },
    hide() {
      box.hidden = true;
      asked = null;
    },
  };
}
