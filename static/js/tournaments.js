// The tournaments list: the form that creates one (POST /api/tournaments), then its page.
/* global gettext */
const form = document.getElementById("create-tournament");

form?.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData(form);
  const number = (name) => (data.get(name) === "" ? null : Number(data.get(name)));
  const kind = data.get("kind");
  const body = {
    name: data.get("name"),
    kind,
    slug: data.get("slug"),
    time_control: data.get("time_control"),
    starts_in_minutes: number("starts_in_minutes"),
    minutes: kind === "arena" ? number("minutes") : null,
    rounds: kind === "swiss" ? number("rounds") : null,
    rated: data.get("rated") === "on",
    double: data.get("double") === "on",
    invite_only: data.get("invite_only") === "on",
    allow_bots: data.get("allow_bots") === "on",
  };
  const csrf = document.cookie.split("; ").find((part) => part.startsWith("csrftoken="));
  const response = await fetch("/api/tournaments", {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf ? csrf.split("=")[1] : "" },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) {
    document.getElementById("create-error").textContent = answer.error?.message || gettext("That did not work.");
    return;
  }
  location.assign(answer.invite || answer.url);
});
