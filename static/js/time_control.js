/* global gettext, ngettext, interpolate */
// A time control as people read it, in the page's language, from its code ("5+3", "3d" or ""
// for untimed): the frames' `label` is the protocol's English, the same for every reader.
export function timeControlLabel(code) {
  if (!code) return gettext("untimed");
  const days = /^(\d+)d$/.exec(code);
  if (days) {
    const count = Number(days[1]);
    return interpolate(ngettext("%(days)s day per move", "%(days)s days per move", count), { days: count }, true);
  }
  return interpolate(gettext("%(code)s (real time)"), { code }, true);
}
