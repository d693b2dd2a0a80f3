// The news bar (#notices, on every page): a line of text with its buttons and links.
export function notice(text, controls, challengeId) {
  const box = document.getElementById("notices");
  if (!box) return;
  const item = document.createElement("div");
  item.className = "notice";
  item.setAttribute("role", "status");
  if (challengeId !== undefined) item.dataset.challengeId = challengeId;
  const words = document.createElement("span");
  words.textContent = text; // text, never HTML
  const close = action("×", () => item.remove());
  close.classList.add("dismiss");
  close.setAttribute("aria-label", "Dismiss");
  item.append(words, ...controls, close);
  box.append(item);
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
    notice(`${message.player} started ${game.name}: ${game.players["1"]} vs ${game.players["2"]}.`, [link("Watch", href)]);
  } else {
    const result = message.result;
    const how = !result ? "it is over"
      : result.winner ? `${game.players[String(result.winner)]} won (${result.reason})`
        : result.termination === "abort" ? `aborted (${result.reason})` : `a draw (${result.reason})`;
    notice(`${game.name} #${game.id} is over: ${how}.`, [link("See the game", href)]);
  }
}
