// The endgame database beside the analysis board (docs/API.md, "Endgames"): for a position it
// covers, the exact result for the player to move and each move's, as the server reads them.
// The page names the position and draws the answer; no rules here.
/* global gettext, ngettext, interpolate */

function said(result, distance) {
  if (result === "draw") return gettext("a draw: neither side can force the end");
  const text = result === "win"
    ? ngettext("wins in %(n)s move", "wins in %(n)s moves", distance)
    : ngettext("loses in %(n)s move", "loses in %(n)s moves", distance);
  return interpolate(text, { n: distance }, true);
}

// ZigZag's answers carry the final margin in seeds (the server computes it): "wins by 3
// seeds". Its sentences are the box's data attributes (templates/analysis/_endgame.html,
// translated by the server, "{n}" for the number: a "%" would not survive the template's
// translate tag); a margin of 1 takes the singular, larger ones the plural.
function saidMargin(box, result, margin) {
  if (result === "draw") return box.dataset.level;
  const n = Math.abs(margin);
  const key = (result === "win" ? "win" : "loss") + (n === 1 ? "One" : "Many");
  return box.dataset[key].replace("{n}", String(n));
}

function verdictOf(box, answer) {
  return answer.margin === null || answer.margin === undefined
    ? said(answer.result, answer.distance)
    : saidMargin(box, answer.result, answer.margin);
}

// The box is templates/analysis/_endgame.html; hidden while the position is not covered.
// `show(params)` names the position as GET /api/endgame takes it: {game, options, position},
// or a finished game's {game_id, ply}.
export function endgame(box) {
  const verdict = box.querySelector(".endgame-verdict");
  const list = box.querySelector(".endgame-moves");
  let asked = 0;

  return {
    hide() {
      asked += 1;
      box.hidden = true;
    },
    async show(params) {
      const ticket = ++asked;
      let answer = null;
      try {
        const query = new URLSearchParams(params);
        const response = await fetch(`/api/endgame?${query}`);
        answer = response.ok ? await response.json() : null;
      } catch {
        answer = null;
      }
      if (ticket !== asked) return; // another position was asked for since
      if (!answer || !answer.covered) {
        box.hidden = true;
        box.dataset.result = "";
        return;
      }
      box.hidden = false;
      box.dataset.result = answer.result;
      verdict.textContent = interpolate(gettext("With best play, the player to move %(verdict)s."), {
        verdict: verdictOf(box, answer),
      }, true);
      list.replaceChildren();
      for (const move of answer.moves) {
        const item = document.createElement("li");
        item.dataset.move = move.move;
        item.textContent = interpolate(gettext("%(move)s: the player who plays it %(verdict)s"), {
          move: move.move, verdict: verdictOf(box, move),
        }, true);
        list.append(item);
      }
    },
  };
}
