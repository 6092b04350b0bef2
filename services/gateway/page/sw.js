// Violet's helper in the browser: it keeps the page's own files, so the page opens with no
// connection, and it shows what Violet sends while the page is closed. Nothing else the page
// fetches is kept: not the archive, not the sign-in, not the health check.
"use strict";

// A new set of files gets a new name here; the old set is deleted once this one takes over.
const SHELL_CACHE = "violet-shell-v2";
const SHELL = [
  "/",
  "/app.js",
  "/style.css",
  "/manifest.webmanifest",
  "/icons/icon-192.png",
  "/icons/icon-512.png",
  "/icons/maskable-512.png",
  "/icons/apple-touch-icon.png",
  "/icons/badge-96.png",
  // The page's words in each language it speaks (a few KB each).
  "/words/en.json",
  "/words/pt.json",
  "/words/es.json",
  "/words/fr.json",
  "/words/de.json",
  "/words/it.json",
  "/words/nl.json",
  "/words/pl.json",
  "/words/tr.json",
  "/words/id.json",
  "/words/vi.json",
  "/words/ru.json",
  "/words/ar.json",
  "/words/hi.json",
  "/words/zh.json",
  "/words/ja.json",
  "/words/ko.json",
];
// How long a slow connection may keep the page blank before the kept copy is shown instead;
// the network's copy still replaces the kept one when it comes.
const NETWORK_WAIT_MS = 4000;
const ICON = "/icons/icon-192.png";
const BADGE = "/icons/badge-96.png";

self.addEventListener("install", (event) => {
  event.waitUntil(keepShell().then(() => self.skipWaiting()));
});

async function keepShell() {
  const cache = await caches.open(SHELL_CACHE);
  // Asked of the server afresh: never an older copy the browser happens to hold.
  await cache.addAll(SHELL.map((path) => new Request(path, { cache: "no-cache" })));
}

self.addEventListener("activate", (event) => {
  event.waitUntil(dropOldShells().then(() => self.clients.claim()));
});

async function dropOldShells() {
  const names = await caches.keys();
  const old = names.filter((name) => name.startsWith("violet-shell-") && name !== SHELL_CACHE);
  await Promise.all(old.map((name) => caches.delete(name)));
}

// The page's own files come from the network first, so a new version shows on the next visit;
// the kept copy is the fallback when the network fails or is very slow. Everything else is
// left to the browser, untouched and never kept.
self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (!SHELL.includes(url.pathname)) return;
  const fresh = fromNetwork(event, url.pathname);
  // Lets the network's copy be kept even after the kept one was shown.
  event.waitUntil(fresh.catch(() => undefined));
  event.respondWith(firstAnswer(fresh, url.pathname));
});

function fromNetwork(event, path) {
  return fetch(event.request).then((answer) => {
    if (answer.ok && answer.type === "basic") {
      const copy = answer.clone();
      event.waitUntil(caches.open(SHELL_CACHE).then((cache) => cache.put(path, copy)));
    }
    return answer;
  });
}

async function firstAnswer(fresh, path) {
  const late = new Promise((resolve) => setTimeout(resolve, NETWORK_WAIT_MS, "late"));
  const first = await Promise.race([fresh.catch(() => "failed"), late]);
  if (first !== "late" && first !== "failed") return first;
  const kept = await caches.match(path, { cacheName: SHELL_CACHE });
  // Nothing kept yet: the network's answer, or its failure, is all there is.
  return kept || fresh;
}

// What Violet sends while the page is closed: {"title", "body", "seq", "tag"}. The same tag
// replaces the notice already shown, so a notice sent twice shows once.
self.addEventListener("push", (event) => {
  const notice = readNotice(event.data);
  event.waitUntil(
    self.registration.showNotification(notice.title, {
      body: notice.body,
      tag: notice.tag,
      icon: ICON,
      badge: BADGE,
      data: { seq: notice.seq },
    }),
  );
});

function readNotice(data) {
  let notice = {};
  try {
    notice = (data && data.json()) || {};
  } catch (_) {
    // Not what Violet sends: a plain notice still tells the person something is there.
  }
  return {
    title: typeof notice.title === "string" && notice.title ? notice.title : "Violet",
    body: typeof notice.body === "string" ? notice.body : "Something is ready for you.",
    seq: Number.isInteger(notice.seq) ? notice.seq : 0,
    tag: typeof notice.tag === "string" && notice.tag ? notice.tag : "violet",
  };
}

// A tap on a notice opens the conversation at the message it was about: in the page already
// open, when there is one, else in a new one.
self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const seq = (event.notification.data && event.notification.data.seq) || 0;
  event.waitUntil(openAt(seq));
});

async function openAt(seq) {
  const open = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const page = open.find((client) => new URL(client.url).origin === self.location.origin);
  if (!page) {
    await self.clients.openWindow(seq ? `/#m${seq}` : "/");
    return;
  }
  try {
    await page.focus();
  } catch (_) {
    // Some browsers only let a window come forward now and then; the page still scrolls.
  }
  page.postMessage({ type: "open", seq });
}
