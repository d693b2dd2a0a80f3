// The profile page's push section (templates/push/_settings.html): turns this browser's push
// notices on (the browser asks for permission, then subscribes with the site's public key
// and the subscription is posted to the server) or off, and keeps the server told of the
// subscription the browser holds. The notices themselves are shown by the service worker
// (/sw.js). docs/PROTOCOL.md, "Push notices", has the endpoints.
/* global gettext */

const form = document.getElementById("push-form");
const state = document.getElementById("push-state");
const onButton = document.getElementById("push-on");
const offButton = document.getElementById("push-off");

function csrf() {
  const cookie = document.cookie.split("; ").find((part) => part.startsWith("csrftoken="));
  return cookie ? cookie.split("=")[1] : "";
}

async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(answer.error ? answer.error.message : response.statusText);
  return answer;
}

// The key as PushManager.subscribe wants it: the bytes of the base64url text.
function keyBytes(text) {
  const base64 = (text + "=".repeat((4 - (text.length % 4)) % 4)).replaceAll("-", "+").replaceAll("_", "/");
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

function sameKey(buffer, bytes) {
  if (!buffer) return true; // the browser does not say: assume it is ours
  const held = new Uint8Array(buffer);
  return held.length === bytes.length && held.every((value, index) => value === bytes[index]);
}

function tick(kinds) {
  for (const [kind, on] of Object.entries(kinds || {})) {
    const box = document.getElementById(`push-kind-${kind}`);
    if (box) box.checked = Boolean(on);
  }
}

function show(subscribed) {
  form.dataset.subscribed = subscribed ? "true" : "false";
  onButton.hidden = subscribed;
  offButton.hidden = !subscribed;
  state.textContent = subscribed
    ? gettext("Notices are on in this browser.")
    : gettext("Notices are off in this browser.");
}

async function start() {
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    state.textContent = gettext("This browser cannot show the site's notices.");
    return;
  }
  const registration = await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  await navigator.serviceWorker.ready;
  const { key } = await call("GET", "/api/push/key");
  const bytes = keyBytes(key);
  let subscription = await registration.pushManager.getSubscription();
  if (subscription && !sameKey(subscription.options && subscription.options.applicationServerKey, bytes)) {
    await subscription.unsubscribe(); // made with another key: push services would refuse ours
    subscription = null;
  }
  if (subscription && Notification.permission === "granted") {
    // The server may have forgotten it (a log-out, a failed address): tell it again.
    await call("POST", "/api/push/subscriptions", subscription.toJSON());
  }
  show(Boolean(subscription) && Notification.permission === "granted");
  form.dataset.ready = "true";

  onButton.addEventListener("click", async () => {
    try {
      const permission = await Notification.requestPermission();
      if (permission !== "granted") {
        state.textContent = gettext("Your browser does not allow the site's notices: allow them in its site settings.");
        return;
      }
      subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: bytes });
      const answer = await call("POST", "/api/push/subscriptions", subscription.toJSON());
      tick(answer.kinds);
      show(true);
    } catch (error) {
      state.textContent = gettext("Notices could not be turned on here.") + " " + error.message;
    }
  });

  offButton.addEventListener("click", async () => {
    try {
      if (subscription) {
        await call("DELETE", "/api/push/subscriptions", { endpoint: subscription.endpoint });
        await subscription.unsubscribe();
      }
      subscription = null;
      show(false);
    } catch (error) {
      state.textContent = gettext("Notices could not be turned off here.") + " " + error.message;
    }
  });
}

start().catch((error) => {
  state.textContent = gettext("Notices could not be set up in this browser.") + " " + error.message;
});
