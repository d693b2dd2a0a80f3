// The news bar (#notices, on every page): a line of text with its buttons and links.
/* global gettext, interpolate */
export function notice(text, controls, challengeId) {
  const box = document.getElementById("notices");
  if (!box) return null;
  const item = document.createElement("div");
  item.className = "notice";
  item.setAttribute("role", "status");
  if (challengeId !== undefined) item.dataset.challengeId = challengeId;
  const words = document.createElement("span");
  words.textContent = text; // text, never HTML
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

// A followed game ended, or a followed player started one (docs/PROTOCOL.md, `followed`).
export function followedNotice(message) {
  const game = message.game;
  const href = `/games/${game.id}/`;
  if (message.news === "game_started") {
    const words = interpolate(gettext("%(player)s started %(game)s: %(first)s vs %(second)s."), {
      player: message.player, game: game.name, first: game.players["1"], second: game.players["2"],
    }, true);
    notice(words, [link(gettext("Watch"), href)]);
  } else {
    const result = message.result;
    const values = { game: game.name, id: game.id, reason: result?.reason };
    const over = !result ? gettext("%(game)s #%(id)s is over: it is over.")
      : result.winner ? gettext("%(game)s #%(id)s is over: %(winner)s won (%(reason)s).")
        : result.termination === "abort" ? gettext("%(game)s #%(id)s is over: aborted (%(reason)s).")
          : gettext("%(game)s #%(id)s is over: a draw (%(reason)s).");
    if (result?.winner) values.winner = game.players[String(result.winner)];
    notice(interpolate(over, values, true), [link(gettext("See the game"), href)]);
  }
}
