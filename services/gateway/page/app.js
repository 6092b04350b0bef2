// Violet in a browser: the chat, the memory page, the documents and the key page, spoken over
// the phone protocol; the person's archive is the one thing fetched apart (GET /v1/export).
// The page can live on a phone's home screen and opens with no connection (sw.js keeps its
// files); what the person writes meanwhile is kept in this browser until Violet has it.
"use strict";

const TOKEN_KEY = "violet.token";
// This browser's own name for Violet's notices, made once and kept.
const DEVICE_KEY = "violet.device";
// A sign-in under way at the identity provider: its state, nonce and code verifier, kept for
// this tab only until the provider sends the person back.
const SIGNING_IN_KEY = "violet.signing-in";
const RETRY_MAX_MS = 10000;
const RESEND_AFTER_MS = 5000;
// Where unsent messages are kept, so they outlive a closed page: one record a message, by id.
const KEPT_DB = "violet";
const KEPT_STORE = "unsent";
// How long a message a notice was about stays marked once shown.
const SHOWN_AGAIN_MS = 3000;
// What the person types to delete everything; the gateway checks it too.
const DELETE_WORDS = "delete everything";

const el = (id) => document.getElementById(id);

// The page's words: in the first of the browser's languages that Violet speaks, else English
// (`/words/LANGUAGE.json`, kept offline by sw.js). Dates and times follow the same language.
const LANGUAGES = [
  "en", "pt", "es", "fr", "de", "it", "nl", "pl", "tr", "id", "vi",
  "ru", "ar", "hi", "zh", "ja", "ko",
];
const RIGHT_TO_LEFT = new Set(["ar"]);
const BLANK = /\{(\w+)\}/g;
const page = {
  language: "en",
  words: {},
  plurals: new Intl.PluralRules("en"),
  when: new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short" }),
  clock: new Intl.DateTimeFormat("en", { timeStyle: "short" }),
};

function pageLanguage() {
  for (const tag of navigator.languages || [navigator.language]) {
    const language = String(tag).toLowerCase().split("-")[0];
    if (LANGUAGES.includes(language)) return language;
  }
  return "en";
}

async function wordsIn(language) {
  try {
    const answer = await fetch(`/words/${language}.json`);
    return answer.ok ? await answer.json() : null;
  } catch (_) {
    return null;
  }
}

async function loadWords() {
  let language = pageLanguage();
  let found = await wordsIn(language);
  if (!found && language !== "en") {
    language = "en";
    found = await wordsIn(language);
  }
  page.language = language;
  page.words = found || {};
  page.plurals = new Intl.PluralRules(language);
  page.when = new Intl.DateTimeFormat(language, { dateStyle: "medium", timeStyle: "short" });
  page.clock = new Intl.DateTimeFormat(language, { timeStyle: "short" });
  document.documentElement.lang = language;
  document.documentElement.dir = RIGHT_TO_LEFT.has(language) ? "rtl" : "ltr";
  for (const item of document.querySelectorAll("[data-words]")) item.textContent = words(item.dataset.words);
  for (const item of document.querySelectorAll("[data-words-label]")) {
    item.setAttribute("aria-label", words(item.dataset.wordsLabel));
  }
  for (const item of document.querySelectorAll("[data-words-placeholder]")) {
    item.placeholder = words(item.dataset.wordsPlaceholder);
  }
  fill(el("delete-words-label"), "data.typeToDelete", { words: strong(DELETE_WORDS) });
}

// The words of `key` with its blanks filled; a counted one in the form its `count` takes.
function words(key, values = {}) {
  return template(key, values).replace(BLANK, (blank, name) => (name in values ? String(values[name]) : blank));
}

function template(key, values) {
  const found = page.words[key];
  if (found === undefined) return key;
  if (typeof found === "string") return found;
  return found[page.plurals.select(values.count)] || found.other;
}

// Sets `element`'s content to the words of `key`, with elements (a time, a bold word) in some
// of its blanks.
function fill(element, key, values) {
  const parts = template(key, values).split(/(\{\w+\})/);
  element.replaceChildren(...parts.filter(Boolean).map((part) => {
    const name = /^\{(\w+)\}$/.exec(part);
    if (!name || !(name[1] in values)) return part;
    const value = values[name[1]];
    return value instanceof Node ? value : String(value);
  }));
}

function strong(text) {
  const bold = document.createElement("strong");
  bold.textContent = text;
  return bold;
}

const state = {
  socket: null,
  open: false,
  lastSeq: 0, // the highest seq shown; kept in memory only
  newest: 0, // the newest seq when Violet last said welcome: the history is shown up to it
  // say id -> {id, text, at, after, person}, in the order written, until the ack says it is
  // stored; kept in IndexedDB too (`after` is the newest seq shown when it was written).
  unsent: new Map(),
  retryMs: 500,
  retryTimer: 0,
  reveal: 0, // the seq of a message to show once it is there (a tapped notice)
  view: "chat",
  lastForgotten: null,
  openDocument: null, // the document shown: its name, title and text
  lastDeleted: null,
  signingOut: false,
  signOutWhenSent: false, // sign this device out once the messages not yet sent are stored
  deleting: false, // a deletion sent, its answer not come yet
  provider: null, // where and as which client to sign in, when the gateway has a provider
  // Violet's notices in this browser, as the gateway last told them. `key` "" means they are
  // not offered here; `asked` is the push frame waiting for its answer ("get", "change",
  // "refresh"), so that an error frame is known to be that answer.
  tell: { key: "", on: false, previews: false, asked: "", refreshed: false },
};

// The browser's time zone (an IANA name), so "tomorrow at 5" is the person's; left out when the
// browser does not know it.
function browserZone() {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return zone ? { tz: zone } : {};
}

function liveUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/v1/live`;
}

function send(frame) {
  if (!state.open) return false;
  state.socket.send(JSON.stringify(frame));
  return true;
}

function setConnection(text) {
  el("connection").textContent = text;
}

// Signing in: through the identity provider when the gateway has one, else with a pasted code

function askToSignIn(problem, note) {
  localStorage.removeItem(TOKEN_KEY);
  el("nav").hidden = true;
  el("chat").hidden = true;
  el("memory").hidden = true;
  el("documents").hidden = true;
  el("key").hidden = true;
  el("sign-in").hidden = false;
  el("sign-in-problem").textContent = problem || "";
  el("sign-in-note").textContent = note || "";
  setConnection("");
  el("code").value = "";
  offerProvider();
}

async function offerProvider() {
  let provider = null;
  try {
    const answer = await fetch("/sign-in/provider");
    if (answer.ok) provider = await answer.json();
    // Set up, but open to nobody yet: the page says so, and the code still works.
    else if (answer.status === 403) el("sign-in-note").textContent = signInProblem(await answer.json());
  } catch (_) {
    // No provider to offer: the code still works.
  }
  state.provider = provider;
  el("provider").hidden = !provider;
  el("sign-in-form").hidden = Boolean(provider);
  (provider ? el("provider-sign-in") : el("code")).focus();
}

// The gateway's sign-in problems, in the page's language (its own `error` is in English).
const SIGN_IN_PROBLEMS = {
  not_configured: "signIn.notConfigured",
  nobody_allowed: "signIn.nobodyAllowed",
  away: "signIn.away",
  not_finished: "signIn.notFinished",
  not_allowed: "signIn.notAllowed",
  refused: "signIn.refused",
};

function signInProblem(said) {
  const key = SIGN_IN_PROBLEMS[said.reason];
  return key ? words(key) : said.error;
}

function useCode() {
  el("provider").hidden = true;
  el("sign-in-form").hidden = false;
  el("code").focus();
}

function signIn(event) {
  event.preventDefault();
  const code = el("code").value.trim();
  if (code) begin(code);
}

function base64url(bytes) {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomText() {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

// Sends the person to the provider's sign-in page; it sends them back here with a code.
async function signInAtProvider() {
  if (!state.provider) return;
  if (!crypto.subtle) {
    el("sign-in-problem").textContent = words("signIn.needsHttps");
    return;
  }
  const signingIn = { state: randomText(), nonce: randomText(), verifier: randomText() };
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(signingIn.verifier));
  sessionStorage.setItem(SIGNING_IN_KEY, JSON.stringify(signingIn));
  const asked = new URLSearchParams({
    response_type: "code",
    client_id: state.provider.client_id,
    redirect_uri: pageAddress(),
    scope: state.provider.scope,
    state: signingIn.state,
    nonce: signingIn.nonce,
    code_challenge: base64url(new Uint8Array(digest)),
    code_challenge_method: "S256",
  });
  location.assign(`${state.provider.authorize}?${asked}`);
}

function pageAddress() {
  return `${location.origin}/`;
}

// Whether the page was opened by the provider sending the person back; if so, finishes that
// sign-in (with a token, or by asking again with the reason).
function backFromProvider() {
  const answer = new URLSearchParams(location.search);
  if (!answer.has("state")) return false;
  const signingIn = JSON.parse(sessionStorage.getItem(SIGNING_IN_KEY) || "null");
  sessionStorage.removeItem(SIGNING_IN_KEY);
  history.replaceState(null, "", "/");
  if (!signingIn || answer.get("state") !== signingIn.state) {
    askToSignIn(words("signIn.notFinished"));
  } else if (!answer.get("code")) {
    askToSignIn(words("signIn.didntGoThrough"));
  } else {
    exchange(answer.get("code"), signingIn);
  }
  return true;
}

async function exchange(code, signingIn) {
  setConnection(words("signIn.underway"));
  const sent = {
    code,
    verifier: signingIn.verifier,
    redirect_uri: pageAddress(),
    nonce: signingIn.nonce,
  };
  try {
    const answer = await fetch("/sign-in/token", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(sent),
    });
    const said = await answer.json();
    if (answer.ok) begin(said.token);
    else askToSignIn(signInProblem(said));
  } catch (_) {
    askToSignIn(words("signIn.cantReach"));
  }
}

// Starts the conversation of the person `token` signs in.
async function begin(token) {
  localStorage.setItem(TOKEN_KEY, token);
  // The token may be someone else's: start the conversation afresh.
  state.lastSeq = 0;
  state.unsent.clear();
  el("messages").replaceChildren();
  el("activity").textContent = "";
  showAccount({ key: "none", ending: "", month_usd: 0, text: "", note: "" });
  el("sign-in").hidden = true;
  el("nav").hidden = false;
  show(state.view);
  // Their messages not yet sent go first, after the next welcome, with the ids they had.
  await restoreKept(personOf(token));
  connect();
}

// Whose the token is, as far as keeping their unsent messages goes: read, not checked (the
// gateway checks it). A message kept for someone else is never sent for this person.
function personOf(token) {
  try {
    const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const claims = JSON.parse(atob(part));
    return `${claims.iss} ${claims.sub}`;
  } catch (_) {
    return "";
  }
}

// Unsent messages, kept in IndexedDB so they are still there when the page opens again. Where
// the browser keeps nothing (some private windows), they are kept while the page is open.

let keptDb = null;

function openKept() {
  keptDb = keptDb || new Promise((resolve) => {
    if (!window.indexedDB) {
      resolve(null);
      return;
    }
    const opening = indexedDB.open(KEPT_DB, 1);
    opening.onupgradeneeded = () => opening.result.createObjectStore(KEPT_STORE, { keyPath: "id" });
    opening.onsuccess = () => resolve(opening.result);
    opening.onerror = () => resolve(null);
  });
  return keptDb;
}

// Does `work` on the store in one transaction; resolves with what its request found, or with
// nothing when the browser would not keep it (the messages are still kept while the page is).
async function kept(mode, work) {
  const db = await openKept();
  if (!db) return undefined;
  return new Promise((resolve) => {
    try {
      const done = db.transaction(KEPT_STORE, mode);
      const request = work(done.objectStore(KEPT_STORE));
      done.oncomplete = () => resolve(request.result);
      done.onerror = () => resolve(undefined);
      done.onabort = () => resolve(undefined);
    } catch (_) {
      resolve(undefined);
    }
  });
}

const keep = (saying) => kept("readwrite", (store) => store.put(saying));
const unkeep = (id) => kept("readwrite", (store) => store.delete(id));
const unkeepAll = () => kept("readwrite", (store) => store.clear());

async function restoreKept(person) {
  const says = (await kept("readonly", (store) => store.getAll())) || [];
  says.sort((a, b) => a.at - b.at);
  for (const saying of says) {
    if (saying.person !== person) {
      unkeep(saying.id);
    } else if (!state.unsent.has(saying.id)) {
      state.unsent.set(saying.id, saying);
      showWaiting(saying);
    }
  }
}

// The connection

function connect() {
  clearTimeout(state.retryTimer);
  const token = localStorage.getItem(TOKEN_KEY);
  if (!token) {
    askToSignIn();
    return;
  }
  state.signingOut = false;
  // Once Violet could not be reached, that stays said until she answers again.
  if (!el("connection").textContent) {
    setConnection(words(navigator.onLine ? "connection.connecting" : "connection.offline"));
  }
  const socket = new WebSocket(liveUrl());
  state.socket = socket;
  socket.addEventListener("open", () => {
    socket.send(JSON.stringify({ type: "hello", token, since: state.lastSeq, ...browserZone() }));
  });
  socket.addEventListener("message", (event) => receive(JSON.parse(event.data)));
  socket.addEventListener("close", () => {
    if (state.socket !== socket) return;
    state.open = false;
    markWaiting();
    if (state.signingOut) return;
    setConnection(words("connection.offline"));
    state.retryTimer = setTimeout(connect, state.retryMs);
    state.retryMs = Math.min(state.retryMs * 2, RETRY_MAX_MS);
  });
}

// The phone says its connection is gone: a socket may still look open for minutes, so it is
// closed now and what the person writes waits in this browser.
function wentOffline() {
  setConnection(words("connection.offline"));
  if (state.socket && state.socket.readyState <= WebSocket.OPEN) state.socket.close();
}

// The connection is back: no need to wait out the pause before the next try.
function cameOnline() {
  if (!localStorage.getItem(TOKEN_KEY) || state.signingOut) return;
  if (state.socket && state.socket.readyState <= WebSocket.OPEN) return;
  state.retryMs = 500;
  connect();
}

function receive(frame) {
  const handlers = {
    welcome: welcomed,
    message: showMessage,
    ack: acked,
    activity: (f) => { el("activity").textContent = f.text; },
    memory: (f) => showMemories(f.items, f.told),
    documents: (f) => showDocuments(f.items),
    document: showDocument,
    account: showAccount,
    "account.deleted": accountDeleted,
    push: showTelling,
    devices: (f) => showDevices(f.devices),
    reminders: (f) => showReminders(f.items),
    error: showError,
  };
  const handler = handlers[frame.type];
  if (handler) handler(frame);
}

function welcomed(frame) {
  state.open = true;
  state.retryMs = 500;
  state.newest = frame.seq;
  setConnection("");
  askTelling();
  resendUnsent();
  markWaiting();
  revealWhenShown();
  if (state.view === "memory") send({ type: "memory.list" });
  if (state.view === "documents") send({ type: "documents.list" });
  if (state.view === "key") {
    checking(false);
    send({ type: "account.show" });
    send({ type: "reminders.list" });
    send({ type: "devices.list" });
  }
  if (state.signOutWhenSent && !state.unsent.size) signOutHere();
}

// Sends every message not yet stored, in the order written, with the id it was given: Violet
// stores and answers an id once, however often it comes.
function resendUnsent() {
  for (const saying of state.unsent.values()) send({ type: "say", id: saying.id, text: saying.text });
}

function showError(frame) {
  if (frame.code === "unauthorized") {
    state.deleting = false;
    state.signingOut = true;
    state.open = false;
    // Signed out from elsewhere (or the account is gone): what this browser keeps of the
    // person can't be sent anywhere now, and goes.
    forgetHere();
    askToSignIn(frame.text);
    return;
  }
  if (frame.code === "rate_limited" || frame.code === "unavailable") {
    setTimeout(resendUnsent, RESEND_AFTER_MS);
  }
  // Frames are answered in turn, so an error while a push frame waits is its answer.
  if (state.tell.asked) {
    tellingRefused(frame);
    return;
  }
  if (state.view === "key") checking(false);
  if (state.deleting) {
    state.deleting = false;
    el("delete-yes").disabled = false;
    el("delete-problem").textContent = frame.text;
    return;
  }
  const problems = { memory: "memory-problem", documents: "documents-problem", key: "key-problem" };
  const where = problems[state.view] || "chat-problem";
  el(where).textContent = frame.text;
}

// The chat

function bubble(from, said) {
  const item = document.createElement("li");
  item.className = from === "you" ? "from-you" : "from-violet";
  const who = document.createElement("span");
  who.className = "who";
  who.textContent = from === "you" ? words("chat.you") : "Violet";
  const text = document.createElement("p");
  text.className = "text";
  text.dir = "auto"; // Arabic reads right to left, beside English read left to right
  text.textContent = said;
  item.append(who, text);
  return item;
}

function showMessage(message) {
  if (message.seq <= state.lastSeq) return;
  state.lastSeq = message.seq;
  if (message.from === "you") settleWaiting(message);
  const item = bubble(message.from, message.text);
  item.id = `m${message.seq}`;
  const at = document.createElement("time");
  at.dateTime = message.at;
  at.textContent = page.clock.format(new Date(message.at));
  at.title = page.when.format(new Date(message.at));
  item.append(at);
  // Messages still waiting to be sent stay last: they are not in the conversation yet.
  const list = el("messages");
  list.insertBefore(item, list.querySelector(".waiting"));
  item.scrollIntoView({ block: "end" });
  revealWhenShown();
}

// A message written here but not yet stored by Violet, marked as waiting.
function showWaiting(saying) {
  const item = bubble("you", saying.text);
  item.classList.add("waiting");
  item.dataset.say = saying.id;
  const mark = document.createElement("span");
  mark.className = "mark";
  item.append(mark);
  el("messages").append(item);
  markWaiting();
  item.scrollIntoView({ block: "end" });
}

function markWaiting() {
  const said = words(state.open ? "chat.sending" : "chat.waiting");
  for (const mark of el("messages").querySelectorAll(".waiting .mark")) mark.textContent = said;
}

// The message a waiting one became takes its place: the one its ack named, else the first
// waiting one with its words written before it was stored (the ack may have been lost).
function settleWaiting(message) {
  const waiting = [...el("messages").querySelectorAll(".waiting")];
  const same = waiting.find((item) => item.dataset.seq === String(message.seq))
    || waiting.find((item) => {
      const saying = state.unsent.get(item.dataset.say);
      return saying && saying.text === message.text && saying.after < message.seq;
    });
  if (same) same.remove();
}

function acked(frame) {
  state.unsent.delete(frame.id);
  unkeep(frame.id);
  if (state.signOutWhenSent && !state.unsent.size) signOutHere();
  const item = el("messages").querySelector(`.waiting[data-say="${CSS.escape(frame.id)}"]`);
  if (!item) return;
  if (frame.seq <= state.lastSeq) item.remove();
  else item.dataset.seq = String(frame.seq); // goes when that message comes
}

function say(event) {
  event.preventDefault();
  const box = el("say-text");
  const text = box.value.trim();
  if (!text) return;
  const saying = {
    id: crypto.randomUUID(),
    text,
    at: Date.now(),
    after: state.lastSeq,
    person: personOf(localStorage.getItem(TOKEN_KEY) || ""),
  };
  state.unsent.set(saying.id, saying);
  keep(saying);
  el("chat-problem").textContent = "";
  showWaiting(saying);
  send({ type: "say", id: saying.id, text });
  box.value = "";
  box.focus();
}

function sayOnEnter(event) {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    el("say-form").requestSubmit();
  }
}

// The memory page

function showMemories(items, told) {
  el("memory-problem").textContent = "";
  el("memories").replaceChildren(...items.map(memoryRow));
  el("told").replaceChildren(...told.map(memoryRow));
  el("told-part").hidden = told.length === 0;
  el("memory-note").textContent = items.length
    ? words("memory.count", { count: items.length })
    : words("memory.none");
  el("forget-all").disabled = items.length === 0 && told.length === 0;
}

// Where a memory came from: the person, Violet's own doing, or what she told them.
function memoryFrom(memory) {
  if (memory.origin === "you") return words("memory.fromYou");
  if (memory.origin === "violet") return words("memory.fromViolet");
  return memory.source ? words("memory.toldFrom", { source: memory.source }) : words("memory.told");
}

function memoryRow(memory) {
  const row = document.createElement("li");
  const text = document.createElement("p");
  text.className = "text";
  text.textContent = memory.text;
  const origin = document.createElement("p");
  origin.className = "origin";
  const at = document.createElement("time");
  at.dateTime = memory.at;
  at.textContent = page.when.format(new Date(memory.at));
  fill(origin, "memory.origin", { from: memoryFrom(memory), at });
  const forget = document.createElement("button");
  forget.type = "button";
  forget.textContent = words("memory.forget");
  forget.setAttribute("aria-label", words("memory.forgetLabel", { text: memory.text }));
  forget.addEventListener("click", () => forgetOne(memory));
  row.append(text, origin, forget);
  return row;
}

// Sends a memory change, or says why it can't go now.
function change(frame) {
  if (send(frame)) return true;
  el("memory-problem").textContent = words("notConnected");
  return false;
}

function forgetOne(memory) {
  if (!change({ type: "memory.forget", item: memory.item })) return;
  state.lastForgotten = memory;
  el("undo-text").textContent = words("memory.forgotten", { text: memory.text });
  el("undo").hidden = false;
  el("undo-button").focus();
}

function undoForget() {
  if (!state.lastForgotten) return;
  if (!change({ type: "memory.restore", item: state.lastForgotten.item })) return;
  state.lastForgotten = null;
  el("undo").hidden = true;
  el("memory-title").focus();
}

function askForgetAll() {
  el("confirm").hidden = false;
  el("confirm-no").focus();
}

function closeForgetAll() {
  el("confirm").hidden = true;
  el("forget-all").focus();
}

function forgetAll() {
  if (!change({ type: "memory.forget_all" })) return;
  state.lastForgotten = null;
  el("undo").hidden = true;
  closeForgetAll();
}

// The documents: what Violet wrote for the person, newest first; each opens as plain text, can
// be saved as a file, and deleted with an undo.

function showDocuments(items) {
  el("documents-problem").textContent = "";
  el("document-list").replaceChildren(...items.map(documentRow));
  el("documents-note").textContent = words(items.length ? "documents.newestFirst" : "documents.none");
}

function documentSize(bytes) {
  if (bytes < 1024) return words("documents.underOneKb");
  return words("documents.kb", { count: Math.round(bytes / 1024) });
}

function documentRow(item) {
  const row = document.createElement("li");
  const title = document.createElement("p");
  title.className = "text";
  title.textContent = item.title;
  const about = document.createElement("p");
  about.className = "origin";
  const at = document.createElement("time");
  at.dateTime = item.at;
  at.textContent = page.when.format(new Date(item.at));
  fill(about, "documents.changed", { at, size: documentSize(item.size) });
  const open = document.createElement("button");
  open.type = "button";
  open.textContent = words("documents.open");
  open.setAttribute("aria-label", words("documents.openLabel", { title: item.title }));
  open.addEventListener("click", () => changeDocument({ type: "document.open", name: item.name }));
  const remove = document.createElement("button");
  remove.type = "button";
  remove.className = "danger";
  remove.textContent = words("documents.delete");
  remove.setAttribute("aria-label", words("documents.deleteLabel", { title: item.title }));
  remove.addEventListener("click", () => deleteDocument(item));
  row.append(title, about, open, remove);
  return row;
}

function showDocument(opened) {
  state.openDocument = opened;
  el("documents-problem").textContent = "";
  el("document-title").textContent = opened.title;
  el("document-text").textContent = opened.text;
  el("document-list").hidden = true;
  el("documents-note").hidden = true;
  el("document-view").hidden = false;
  el("document-title").focus();
}

function closeDocument() {
  state.openDocument = null;
  el("document-view").hidden = true;
  el("document-list").hidden = false;
  el("documents-note").hidden = false;
  el("documents-title").focus();
}

// Sends a documents request, or says why it can't go now.
function changeDocument(frame) {
  if (send(frame)) return true;
  el("documents-problem").textContent = words("notConnected");
  return false;
}

// Saves `file` (a Blob) among the person's downloads, as `name`.
function saveFile(file, name) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(file);
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

// Saves the open document's text as a file, under its own name.
function downloadDocument() {
  const opened = state.openDocument;
  if (!opened) return;
  saveFile(new Blob([opened.text], { type: "text/plain;charset=utf-8" }), opened.name);
}

function deleteDocument(item) {
  if (!changeDocument({ type: "document.delete", name: item.name })) return;
  state.lastDeleted = item;
  if (state.openDocument) closeDocument();
  el("document-undo-text").textContent = words("documents.deleted", { title: item.title });
  el("document-undo").hidden = false;
  el("document-undo-button").focus();
}

function undoDelete() {
  if (!state.lastDeleted) return;
  if (!changeDocument({ type: "document.restore", name: state.lastDeleted.name })) return;
  state.lastDeleted = null;
  el("document-undo").hidden = true;
  el("documents-title").focus();
}

// The key page: the person's own Anthropic key. The page never keeps a key: it goes out in one
// message and the box is emptied at once; only its last 4 characters ever come back.

// Where the key part goes, and what it says, as the operator chose (`own_keys`).
const OWN_KEYS = {
  needed: { title: () => words("key.neededTitle"), why: () => words("key.neededWhy") },
  optional: { title: () => words("key.optionalTitle"), why: () => words("key.optionalWhy") },
};

function placeOwnKey(ownKeys) {
  const part = el("own-key");
  const chosen = OWN_KEYS[ownKeys];
  part.hidden = !chosen;
  if (!chosen) return;
  el("own-key-title").textContent = chosen.title();
  el("own-key-why").textContent = chosen.why();
  const panel = el("key");
  if (ownKeys === "needed") panel.insertBefore(part, el("key-title").nextElementSibling);
  else panel.append(part); // after notifications, reminders, devices and data
}

function showAccount(account) {
  placeOwnKey(account.own_keys);
  checking(false);
  el("key-problem").textContent = "";
  el("key-note").textContent = account.note;
  // In the person's language; with their own key in use, it says what it cost this month.
  el("key-state").textContent = account.text;
  el("remove-key").disabled = account.key === "none";
  if (account.key === "none") el("remove-confirm").hidden = true;
}

function checking(underway) {
  el("use-key").disabled = underway;
  el("key-checking").textContent = underway ? words("key.checking") : "";
}

// Sends a change to the key, or says why it can't go now.
function changeKey(frame) {
  el("key-problem").textContent = "";
  if (send(frame)) return true;
  el("key-problem").textContent = words("notConnected");
  return false;
}

function useKey(event) {
  event.preventDefault();
  const box = el("key-input");
  const key = box.value.trim();
  box.value = "";
  if (!key) {
    el("key-problem").textContent = words("key.pasteFirst");
    return;
  }
  el("key-note").textContent = "";
  if (changeKey({ type: "key.set", key })) checking(true);
}

function askRemoveKey() {
  el("remove-confirm").hidden = false;
  el("remove-no").focus();
}

function closeRemoveKey() {
  el("remove-confirm").hidden = true;
  el("remove-key").focus();
}

function removeKey() {
  if (!changeKey({ type: "key.remove" })) return;
  el("key-note").textContent = "";
  closeRemoveKey();
}

// Your data: everything as one file, and deleting everything. The file comes over HTTP with the
// same sign-in code the connection uses; deleting is a frame, answered before the socket closes.


function archiveName(answer) {
  const named = /filename="([^"]+)"/.exec(answer.headers.get("Content-Disposition") || "");
  return named ? named[1] : "violet-archive.zip";
}

// Downloads the archive, telling how it goes in the `status` and `problem` paragraphs.
async function downloadData(status, problem) {
  const token = localStorage.getItem(TOKEN_KEY);
  if (!token) return;
  el(problem).textContent = "";
  el(status).textContent = words("data.gathering");
  downloading(true);
  let failure = "";
  try {
    const answer = await fetch("/v1/export", {
      headers: { Authorization: `Bearer ${token}` },
      cache: "no-store",
    });
    if (answer.ok) saveFile(await answer.blob(), archiveName(answer));
    else failure = words(answer.status === 401 ? "data.signInRanOut" : "data.downloadFailed");
  } catch (_) {
    failure = words("data.downloadFailed"); // no answer, or the download broke off midway
  }
  downloading(false);
  el(status).textContent = failure ? "" : words("data.saved");
  el(problem).textContent = failure;
}

function downloading(underway) {
  el("download-data").disabled = underway;
  el("delete-download").disabled = underway;
}

function askDeleteEverything() {
  el("delete-words").value = "";
  el("delete-problem").textContent = "";
  el("delete-download-state").textContent = "";
  el("delete-yes").disabled = false;
  el("delete-confirm").hidden = false;
  el("delete-download").focus();
}

function closeDeleteEverything() {
  el("delete-confirm").hidden = true;
  el("delete-everything").focus();
}

function deleteEverything(event) {
  event.preventDefault();
  const typed = el("delete-words").value.trim().toLowerCase().split(/\s+/).join(" ");
  if (typed !== DELETE_WORDS) {
    el("delete-problem").textContent = words("data.nothingDeleted", { words: DELETE_WORDS });
    return;
  }
  el("delete-problem").textContent = "";
  if (!send({ type: "account.delete", confirmation: typed })) {
    el("delete-problem").textContent = words("notConnected");
    return;
  }
  state.deleting = true;
  el("delete-yes").disabled = true;
}

// Everything is gone: the page forgets the conversation and the sign-in code, and says so.
function accountDeleted(frame) {
  state.deleting = false;
  state.signingOut = true;
  state.open = false;
  state.lastSeq = 0;
  state.unsent.clear();
  unkeepAll();
  stopTellingHere();
  el("messages").replaceChildren();
  el("delete-confirm").hidden = true;
  askToSignIn("", frame.text);
}

// Reminders: what Violet will remind the person of, or do for them, and when (in her words and
// their time), each of which can be cancelled. They are set by telling Violet.

function showReminders(reminders) {
  const list = el("reminders-list");
  list.replaceChildren();
  el("reminders-empty").hidden = reminders.length > 0;
  for (const reminder of reminders) {
    const item = document.createElement("li");
    const what = document.createElement("span");
    what.dir = "auto";
    what.textContent = reminder.text;
    const when = document.createElement("span");
    when.className = "help";
    when.textContent = ` ${reminder.when}`;
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.textContent = words("reminders.cancel");
    cancel.setAttribute("aria-label", words("reminders.cancelLabel", { text: reminder.text }));
    cancel.addEventListener("click", () => {
      el("reminders-problem").textContent = "";
      if (!send({ type: "reminders.cancel", reminder: reminder.reminder })) {
        el("reminders-problem").textContent = words("notConnected");
      }
    });
    item.append(what, when, " ", cancel);
    list.append(item);
  }
}

// Devices: where the person is signed in, each of which can be signed out. Signing out this one
// forgets everything this browser keeps for them: their sign-in, the messages not yet sent
// (offered to be sent first), and this browser's name for itself.

function showDevices(devices) {
  const list = el("devices-list");
  list.replaceChildren();
  for (const device of devices) {
    const item = document.createElement("li");
    const name = document.createElement("span");
    const described = describeAgent(device.agent);
    name.textContent = device.this ? words("devices.thisOne", { device: described }) : described;
    const seen = document.createElement("span");
    seen.className = "help";
    seen.textContent = ` ${words("devices.lastUsed", { at: page.when.format(new Date(device.last_seen)) })}`;
    item.append(name, seen);
    if (!device.this) {
      const out = document.createElement("button");
      out.type = "button";
      out.textContent = words("devices.signOut");
      out.addEventListener("click", () => {
        el("devices-problem").textContent = "";
        if (!send({ type: "devices.signout", device: device.device })) {
          el("devices-problem").textContent = words("notConnected");
        }
      });
      item.append(" ", out);
    }
    list.append(item);
  }
}

// A browser's or terminal's own words for itself, shortened to what a person recognises.
function describeAgent(agent) {
  if (!agent) return words("devices.aDevice");
  const browsers = [["Edg/", "Edge"], ["Firefox/", "Firefox"], ["Chrome/", "Chrome"], ["Safari/", "Safari"]];
  const systems = [["iPhone", "iPhone"], ["iPad", "iPad"], ["Android", "Android"],
    ["Windows", "Windows"], ["Mac OS", "Mac"], ["Linux", "Linux"]];
  const browser = browsers.find(([mark]) => agent.includes(mark));
  const system = systems.find(([mark]) => agent.includes(mark));
  if (browser && system) return words("devices.browserOn", { browser: browser[1], system: system[1] });
  if (browser) return browser[1];
  return agent.slice(0, 60);
}

function askSignOutHere() {
  const waiting = state.unsent.size;
  if (!waiting) {
    signOutHere();
    return;
  }
  el("sign-out-unsent").textContent = words("devices.unsent", { count: waiting });
  el("sign-out-confirm").hidden = false;
  el("sign-out-send").focus();
}

function sendThenSignOut() {
  el("sign-out-confirm").hidden = true;
  state.signOutWhenSent = true;
  if (state.open) resendUnsent();
  else connect();
  el("devices-problem").textContent = words("devices.sendingThenSigningOut");
}

// Ending a sign-in waits this long for Violet to confirm it.
const SIGN_OUT_WAIT_MS = 10000;

// Signs this device out (its sign-in is refused from then on, everywhere) and forgets here
// everything of the person's.
async function signOutHere() {
  state.signOutWhenSent = false;
  el("sign-out-confirm").hidden = true;
  const token = localStorage.getItem(TOKEN_KEY) || "";
  state.signingOut = true;
  clearTimeout(state.retryTimer); // no reconnecting, with a token about to be forgotten
  if (state.socket) state.socket.close();
  const ended = token ? await endSignIn(token) : true;
  stopTellingHere();
  forgetHere();
  askToSignIn("", words(ended ? "devices.signedOut" : "devices.signedOutHereOnly"));
}

// Ends the sign-in of `token` at Violet, on a connection of its own (the page's may be closed,
// offline): resolves with whether she confirmed it.
function endSignIn(token) {
  return new Promise((resolve) => {
    let socket;
    const done = (ended) => {
      clearTimeout(timer);
      if (socket) socket.close();
      resolve(ended);
    };
    const timer = setTimeout(() => done(false), SIGN_OUT_WAIT_MS);
    deviceHandle(token).then((handle) => {
      socket = new WebSocket(liveUrl());
      socket.addEventListener("open", () => socket.send(JSON.stringify({ type: "hello", token, since: 0 })));
      socket.addEventListener("message", (event) => {
        const frame = JSON.parse(event.data);
        if (frame.type === "welcome") socket.send(JSON.stringify({ type: "devices.signout", device: handle }));
        else if (frame.type === "devices") done(true);
        else if (frame.type === "error" && frame.code === "unauthorized") done(true); // ended already
      });
      socket.addEventListener("close", (event) => done(event.code === 4401));
      socket.addEventListener("error", () => done(false));
    });
  });
}

// What the gateway knows this device by: the first 16 hex characters of its token's SHA-256.
async function deviceHandle(token) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return Array.from(new Uint8Array(digest)).map((b) => b.toString(16).padStart(2, "0")).join("").slice(0, 16);
}

// Everything this browser keeps of the person goes: the sign-in, the conversation shown, the
// messages not yet sent, and the browser's name for itself. The page's own files stay.
function forgetHere() {
  localStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(DEVICE_KEY);
  localStorage.removeItem(SIGNING_IN_KEY);
  sessionStorage.clear();
  state.lastSeq = 0;
  state.unsent.clear();
  unkeepAll();
  el("messages").replaceChildren();
  el("devices-list").replaceChildren();
}

// Violet's notices: this browser asks the gateway whether she offers them, and turns them on
// (with the browser's own permission and address for them) or off. Where the browser can't
// show them, an iPhone's Safari tab says how to get them: from the home screen.

// A browser with no way to reach its notice service never answers: it is given this long.
const SET_UP_WAIT_MS = 20000;

function canTell() {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
}

// An iPhone shows notices only for a page added to its home screen.
function onIphoneTab() {
  return navigator.standalone === false;
}

function deviceId() {
  let id = localStorage.getItem(DEVICE_KEY);
  if (!id) {
    id = crypto.randomUUID();
    localStorage.setItem(DEVICE_KEY, id);
  }
  return id;
}

function askTelling() {
  if (!canTell() && !onIphoneTab()) return;
  if (send({ type: "push.get", device: deviceId() })) state.tell.asked = "get";
}

function showTelling(frame) {
  const asked = state.tell.asked;
  state.tell = { ...state.tell, key: frame.key, on: frame.on, previews: frame.previews, asked: "" };
  el("tell-me").hidden = !frame.key;
  el("tell-me-choices").hidden = !canTell();
  showTellingChoices();
  if (asked === "change") el("tell-me-problem").textContent = "";
  if (frame.key && frame.on && canTell() && !state.tell.refreshed) {
    state.tell.refreshed = true;
    refreshTelling();
  }
}

function showTellingChoices() {
  const { on, previews } = state.tell;
  el("tell-me-on").checked = on;
  el("tell-me-on").disabled = false;
  el("tell-me-previews").checked = on && previews;
  el("tell-me-previews").disabled = !on;
  el("tell-me-state").textContent = on ? words("tell.isOn") : "";
}

// An error frame answering a push frame: the offer stays hidden when the gateway has none, and
// a change not made says why and puts the switches back as they were.
function tellingRefused(frame) {
  const asked = state.tell.asked;
  state.tell.asked = "";
  if (asked === "get") el("tell-me").hidden = true;
  if (asked !== "change") return;
  showTellingChoices();
  el("tell-me-problem").textContent = frame.text;
}

function switchTelling() {
  el("tell-me-problem").textContent = "";
  if (el("tell-me-on").checked) tellHere(el("tell-me-previews").checked);
  else stopTelling();
}

// Turns notices on, or says again what the lock screen may show: asks the browser's permission
// (at once, while the tap still counts), gets this browser's address for notices and hands it
// to Violet.
async function tellHere(previews) {
  el("tell-me-on").disabled = true;
  el("tell-me-previews").disabled = true;
  const allowed = await Notification.requestPermission();
  if (allowed !== "granted") {
    tellingFailed(words("tell.notAllowed"));
    return;
  }
  let address = null;
  try {
    address = await inTime(addressHere(state.tell.key), SET_UP_WAIT_MS);
  } catch (_) {
    tellingFailed(words("tell.notSetUp"));
    return;
  }
  if (!sendTelling("change", address, previews)) tellingFailed(words("notConnected"));
}

function sendTelling(asked, address, previews) {
  const { endpoint, keys } = address.toJSON();
  const frame = {
    type: "push.on",
    device: deviceId(),
    endpoint,
    p256dh: keys.p256dh,
    auth: keys.auth,
    previews,
  };
  if (!send(frame)) return false;
  state.tell.asked = asked;
  state.tell.refreshed = true; // Violet has this browser's address as it is now
  return true;
}

function tellingFailed(problem) {
  showTellingChoices();
  el("tell-me-problem").textContent = problem;
}

// Violet hears first, so that a page with no connection changes nothing at all.
async function stopTelling() {
  if (!send({ type: "push.off", device: deviceId() })) {
    tellingFailed(words("notConnected"));
    return;
  }
  state.tell.asked = "change";
  el("tell-me-on").disabled = true;
  el("tell-me-previews").disabled = true;
  await stopTellingHere();
}

// This browser stops taking notices for Violet, whatever Violet keeps.
async function stopTellingHere() {
  try {
    const address = await currentAddress();
    if (address) await address.unsubscribe();
  } catch (_) {
    // Nothing to stop here.
  }
}

async function currentAddress() {
  if (!canTell()) return null;
  const helper = await navigator.serviceWorker.ready;
  return helper.pushManager.getSubscription();
}

// This browser's address for Violet's notices, made for the server's key `key`; an address
// made for another key (the server's key was changed) is given up for a new one.
async function addressHere(key) {
  const helper = await navigator.serviceWorker.ready;
  const wanted = bytesOf(key);
  const old = await helper.pushManager.getSubscription();
  const oldKey = old && old.options.applicationServerKey;
  if (oldKey && new Uint8Array(oldKey).join() === wanted.join()) return old;
  if (old) await old.unsubscribe();
  return helper.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: wanted });
}

function inTime(promise, ms) {
  const late = new Promise((_, fail) => setTimeout(() => fail(new Error("no answer")), ms));
  return Promise.race([promise, late]);
}

function bytesOf(base64urlText) {
  const plain = atob(base64urlText.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(plain, (letter) => letter.charCodeAt(0));
}

// Once a page: Violet gets this browser's address again, as a browser may change it, or hears
// that notices are off here now (the person took back the browser's permission).
async function refreshTelling() {
  try {
    if (Notification.permission === "granted") {
      const address = await inTime(addressHere(state.tell.key), SET_UP_WAIT_MS);
      if (sendTelling("refresh", address, state.tell.previews)) return;
    }
  } catch (_) {
    // No address to be had: notices can't reach this browser any more.
  }
  if (send({ type: "push.off", device: deviceId() })) state.tell.asked = "refresh";
}

// The page's files are kept by sw.js, so the page opens with no connection; sw.js also brings
// the page to the message a tapped notice was about.
function keepForOffline() {
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register("/sw.js").catch(() => {
    // Without it the page still works, only not offline.
  });
  navigator.serviceWorker.addEventListener("message", (event) => {
    const seq = event.data && event.data.type === "open" ? Number(event.data.seq) : 0;
    if (!seq) return;
    state.reveal = seq;
    revealWhenShown();
  });
  navigator.serviceWorker.startMessages();
}

// Scrolls to the message a tapped notice was about and marks it for a moment, once the history
// is shown up to it.
function revealWhenShown() {
  if (!state.reveal || !state.open || state.lastSeq < Math.max(state.newest, state.reveal)) return;
  const item = el(`m${state.reveal}`);
  state.reveal = 0;
  if (location.hash) history.replaceState(null, "", "/");
  if (!item) return;
  if (state.view !== "chat") show("chat");
  item.scrollIntoView({ block: "center" });
  item.classList.add("shown-again");
  setTimeout(() => item.classList.remove("shown-again"), SHOWN_AGAIN_MS);
}

// Switching pages

function show(view) {
  state.view = view;
  el("chat").hidden = view !== "chat";
  el("memory").hidden = view !== "memory";
  el("documents").hidden = view !== "documents";
  el("key").hidden = view !== "key";
  const pages = [
    ["show-chat", "chat"],
    ["show-memory", "memory"],
    ["show-documents", "documents"],
    ["show-key", "key"],
  ];
  for (const [button, name] of pages) {
    if (name === view) el(button).setAttribute("aria-current", "page");
    else el(button).removeAttribute("aria-current");
  }
  if (view === "memory") {
    el("undo").hidden = true;
    el("confirm").hidden = true;
    send({ type: "memory.list" });
    el("memory-title").focus();
  } else if (view === "documents") {
    el("document-undo").hidden = true;
    closeDocument();
    send({ type: "documents.list" });
  } else if (view === "key") {
    el("remove-confirm").hidden = true;
    el("delete-confirm").hidden = true;
    el("key-problem").textContent = "";
    el("data-problem").textContent = "";
    el("download-state").textContent = "";
    el("sign-out-confirm").hidden = true;
    el("devices-problem").textContent = "";
    el("reminders-problem").textContent = "";
    send({ type: "account.show" });
    send({ type: "reminders.list" });
    send({ type: "devices.list" });
    el("key-title").focus();
  } else {
    el("say-text").focus();
  }
}

async function start() {
  await loadWords();
  el("memory-title").tabIndex = -1;
  el("documents-title").tabIndex = -1;
  el("document-title").tabIndex = -1;
  el("key-title").tabIndex = -1;
  el("sign-in-form").addEventListener("submit", signIn);
  el("provider-sign-in").addEventListener("click", signInAtProvider);
  el("use-code").addEventListener("click", useCode);
  el("say-form").addEventListener("submit", say);
  el("say-text").addEventListener("keydown", sayOnEnter);
  el("show-chat").addEventListener("click", () => show("chat"));
  el("show-memory").addEventListener("click", () => show("memory"));
  el("undo-button").addEventListener("click", undoForget);
  el("forget-all").addEventListener("click", askForgetAll);
  el("confirm-yes").addEventListener("click", forgetAll);
  el("confirm-no").addEventListener("click", closeForgetAll);
  el("show-documents").addEventListener("click", () => show("documents"));
  el("document-undo-button").addEventListener("click", undoDelete);
  el("document-download").addEventListener("click", downloadDocument);
  el("document-delete").addEventListener("click", () => deleteDocument(state.openDocument));
  el("document-close").addEventListener("click", closeDocument);
  el("show-key").addEventListener("click", () => show("key"));
  el("key-form").addEventListener("submit", useKey);
  el("remove-key").addEventListener("click", askRemoveKey);
  el("remove-yes").addEventListener("click", removeKey);
  el("remove-no").addEventListener("click", closeRemoveKey);
  el("download-data").addEventListener("click", () => downloadData("download-state", "data-problem"));
  el("delete-everything").addEventListener("click", askDeleteEverything);
  el("delete-download").addEventListener(
    "click",
    () => downloadData("delete-download-state", "delete-problem"),
  );
  el("delete-form").addEventListener("submit", deleteEverything);
  el("delete-no").addEventListener("click", closeDeleteEverything);
  el("sign-out-here").addEventListener("click", askSignOutHere);
  el("sign-out-send").addEventListener("click", sendThenSignOut);
  el("sign-out-anyway").addEventListener("click", signOutHere);
  el("sign-out-no").addEventListener("click", () => { el("sign-out-confirm").hidden = true; });
  el("tell-me-on").addEventListener("change", switchTelling);
  el("tell-me-previews").addEventListener("change", () => tellHere(el("tell-me-previews").checked));
  window.addEventListener("offline", wentOffline);
  window.addEventListener("online", cameOnline);
  keepForOffline();
  const opened = /^#m(\d+)$/.exec(location.hash);
  if (opened) state.reveal = Number(opened[1]);
  if (backFromProvider()) return;
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) begin(token);
  else askToSignIn();
}

start();
