/* global gettext, pgettext, interpolate */
// A game's name with its options, in the page's language: "ZigZag (pits 6, seeds 5)", "ZigZag
// (6 trous, 5 graines)", as the server writes it (games/messages.py, game_title). The names
// and the options' labels come from the server's description of the games (`games`: [{slug,
// name, options: [{name, label}]}]), the words around them from the client's catalog: no
// game or option is named here.
export function gameTitle(games, slug, options) {
  const game = games.find((each) => each.slug === slug);
  const name = game ? game.name : slug;
  const keys = Object.keys(options || {}).sort();
  if (!keys.length) return name;
  const label = (key) => game?.options.find((option) => option.name === key)?.label || key;
  const parts = keys.map((key) => interpolate(
    pgettext("a game's option and its value, as in its name: pits 6", "%(option)s %(value)s"),
    { option: label(key), value: options[key] }, true,
  ));
  return interpolate(gettext("%(game)s (%(options)s)"), { game: name, options: parts.join(", ") }, true);
}

// The games' description a page carries for its scripts (templates/base.html, the lobby's
// own), or none.
export function pageGames(id = "game-labels") {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : [];
}
