// The "BOT" beside a bot account's name (docs/API.md, "Bot accounts"), as the pages' own
// {% bot_mark %} draws it: an <abbr> whose long form screen readers and a tooltip give.
/* global gettext, pgettext */

export function botMark() {
  const mark = document.createElement("abbr");
  mark.className = "bot-mark";
  mark.title = gettext("bot account");
  mark.textContent = pgettext("the mark beside a bot account's name", "BOT");
  return mark;
}

// A name followed by the mark when `isBot`: [text node, " ", abbr] to append.
export function nameWithMark(name, isBot) {
  const parts = [document.createTextNode(name)];
  if (isBot) parts.push(document.createTextNode(" "), botMark());
  return parts;
}
