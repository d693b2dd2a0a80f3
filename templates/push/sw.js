// {% load static %}The site's service worker, served from its root (/sw.js, push/views.py) so
// that its scope is the whole site. It shows the push notices the server sends
// (push/sending.py: {title, body, url, tag, kind, lang}) and, when one is clicked, brings
// forward a tab already on that page or opens one. It caches nothing.
const ICON = "{% static 'img/icon-192.png' %}";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let notice = {};
  try {
    notice = event.data ? event.data.json() : {};
  } catch (error) {
    notice = { body: event.data ? event.data.text() : "" };
  }
  event.waitUntil(show(notice));
});

async function show(notice) {
  const url = new URL(notice.url || "/", self.location.origin).href;
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  // Someone looking at that very page sees the news there already.
  if (windows.some((client) => client.url === url && client.focused)) return;
  await self.registration.showNotification(notice.title || "Diffusion", {
    body: notice.body || "",
    tag: notice.tag || "",
    renotify: Boolean(notice.tag),
    lang: notice.lang || "",
    icon: ICON,
    data: { url, kind: notice.kind || "" },
  });
}

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil(open((event.notification.data && event.notification.data.url) || "/"));
});

async function open(url) {
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const same = windows.find((client) => client.url === url);
  if (same) return same.focus();
  return self.clients.openWindow(url);
}
