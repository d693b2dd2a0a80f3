// The news bar (#notices, on every page): a line of text with its buttons and links.
/* global gettext */
import { nameWithMark } from "./bot_mark.js";

// `text`: a string, or a list of strings and nodes (a name with its BOT mark).
export function notice(text, controls, challengeId) {
  const box = document.getElementById("notices");
  if (!box) return null;
  const item = document.createElement("div");
  item.className = "notice";
  item.setAttribute("role", "status");
  if (challengeId !== undefined) item.dataset.challengeId = challengeId;
  const words = document.createElement("span");
  if (Array.isArray(text)) words.append(...text); // strings are appended as text, never HTML
  else words.textContent = text; // text, never HTML
  const close = action("×", () => item.remove());
  close.classList.add("dismiss");
  close.setAttribute("aria-label", gettext("Dismiss"));
  item.append(words, ...controls, close);
  box.append(item);
  return item;
}

export function action(text, onclick) {
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = text;
  button.addEventListener("click", onclick);
  return button;
}

export function link(text, href) {
  const anchor = document.createElement("a");
  anchor.href = href;
  anchor.textContent = text;
  return anchor;
}

// The translated `words` with each %(name)s filled in: a string, or a list of strings and
// nodes where a value is a list (a name and its BOT mark).
function filledIn(words, values) {
  const parts = [];
  let rest = words;
  for (let found = rest.match(/%\((\w+)\)s/); found; found = rest.match(/%\((\w+)\)s/)) {
    parts.push(rest.slice(0, found.index));
    const value = values[found[1]];
    parts.push(...(Array.isArray(value) ? value : [String(value)]));
    rest = rest.slice(found.index + found[0].length);
  }
  parts.push(rest);
  return parts.filter((part) => part !== "");
}

// A followed game ended, or a followed player started one (docs/PROTOCOL.md, `followed`).
// Bot accounts' names carry the BOT mark, as everywhere a name appears.
export function followedNotice(message) {
  const game = message.game;
  const href = `/games/${game.id}/`;
  const bots = game.bot_accounts || [];
  const named = (seat) => nameWithMark(game.players[seat], bots.includes(seat));
  if (message.news === "game_started") {
    const seat = ["1", "2"].find((s) => game.players[s] === message.player);
    const words = filledIn(gettext("%(player)s started %(game)s: %(first)s vs %(second)s."), {
      player: seat ? named(seat) : message.player, game: game.name, first: named("1"), second: named("2"),
    });
    notice(words, [link(gettext("Watch"), href)]);
  } else {
    const result = message.result;
    const values = { game: game.name, id: game.id, reason: result?.reason };
    const over = !result ? gettext("%(game)s #%(id)s is over: it is over.")
      : result.winner ? gettext("%(game)s #%(id)s is over: %(winner)s won (%(reason)s).")
        : result.termination === "abort" ? gettext("%(game)s #%(id)s is over: aborted (%(reason)s).")
          : gettext("%(game)s #%(id)s is over: a draw (%(reason)s).");
    if (result?.winner) values.winner = named(String(result.winner));
    notice(filledIn(over, values), [link(gettext("See the game"), href)]);
  }
}
