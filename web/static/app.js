// Mr. Mentor's web client: sign-in, the learner selector, the end of a
// session and the memory panel (the conversation itself is in chat.js;
// what Mr. Mentor knows in knowledge.js; adding and renaming learners in
// learners.js; search results in results.js; the phone's
// one-view-at-a-time layout in layout.js). Plain ES modules; all
// text reaches the page through textContent or text nodes, never
// innerHTML, and the mentor's Markdown is built as elements (markdown.js).

import { createActions } from './actions.js';
import { ApiError, createClient, request } from './api.js';
import { createChat } from './chat.js';
import { textList, timeElement } from './dom.js';
import { createErasure } from './erase.js';
import { failure, plainError } from './errors.js';
import { setupExport } from './export.js';
import { createKnowledge } from './knowledge.js';
import { createLayout } from './layout.js';
import { createLearners } from './learners.js';
import { setMarkdown } from './markdown.js';
import { createResults } from './results.js';
import { savedLearner, saveLearner } from './resume.js';
import {
  REFRESH_MARGIN_SECONDS, clearSession, devSignIn, expired, loadSession, nowSeconds, pastedSession,
  saveSession, supabaseRefresh, supabaseSignIn,
} from './session.js';
import { createSupabaseAccount } from './signup.js';

const $ = (id) => document.getElementById(id);
const el = {
  status: $('status'),
  whoami: $('whoami'),
  signout: $('signout'),
  signin: $('signin'),
  signinDev: $('signin-dev'),
  devSignin: $('dev-signin'),
  signinSupabase: $('signin-supabase'),
  signinEmail: $('signin-email'),
  signinPassword: $('signin-password'),
  signinTokenBox: $('signin-token-box'),
  signinToken: $('signin-token'),
  signinTokenInput: $('signin-token-input'),
  signinTokenDev: $('signin-token-dev'),
  signinTokenAsk: $('signin-token-ask'),
  signinError: $('signin-error'),
  signinLead: document.querySelector('#signin .lead'),
  workspace: $('workspace'),
  learner: $('learner'),
  messages: $('messages'),
  chatForm: $('chat-form'),
  message: $('message'),
  send: $('send'),
  stop: $('stop'),
  endSession: $('end-session'),
  memoryScope: $('memory-scope'),
  memoryTurns: $('memory-turns'),
  memoryUpdated: $('memory-updated'),
  memorySummary: $('memory-summary'),
  memoryStatus: $('memory-status'),
  clearMemory: $('clear-memory'),
  clearDialog: $('clear-dialog'),
  clearScope: $('clear-scope'),
  searchForm: $('search-form'),
  searchQ: $('search-q'),
  includeArchive: $('include-archive'),
  searchStatus: $('search-status'),
  results: $('results'),
};

const state = {
  config: { dev_mode: false, supabase_url: '', supabase_anon_key: '', model_configured: true },
  session: null,
  learners: [],
  learnerId: '', // '' is the general conversation
  account: 0, // bumped at sign-out: queued work of the previous user is dropped
  ending: false,
  // Background saves run one after another, so turns reach the log in the
  // order they were said, and a clear runs after the saves queued before it.
  memoryQueue: Promise.resolve(),
  memoryRequest: 0, // the newest memory read; older answers are ignored
  searchRequest: 0,
  lastSearch: null, // { q, archive } of the results on screen
  refreshTimer: 0,
  refreshing: null,
};

// Every answer of the server says it is back: exchanges that could not be
// saved are tried again.
const api = createClient(freshToken, () => {
  signOut('Your sign-in has ended. Please sign in again.');
}, () => chat.retrySaving());
const layout = createLayout();

const chat = createChat({
  api,
  el,
  layout,
  actions: createActions(api, () => knowledge.load()), // a confirmed change shows in the memory panel at once
  user: () => state.session?.user_id || '',
  scopeName,
  modelConfigured: () => state.config.model_configured,
  canSend: () => !state.ending,
  setBusy: setChatBusy,
  inOrder,
  onSaved: afterSave,
});

const knowledge = createKnowledge(api, (id) => (id ? learnerName(id) || 'this learner' : ''));
const erasure = createErasure(api, () => ({ id: state.learnerId, name: learnerName(state.learnerId) }),
  afterQueuedSaves, afterErasure);

const learnerForms = createLearners({
  api,
  learners: () => state.learners,
  selected: () => state.learnerId,
  onAdded: (learner) => {
    state.learners.push(learner);
    renderLearnerOptions();
    selectLearner(learner.id);
    el.learner.focus();
  },
  onRenamed: (learner) => {
    state.learners = state.learners.map((l) => (l.id === learner.id ? learner : l));
    renderLearnerOptions();
    if (learner.id === state.learnerId) showLearnerName();
    setMemoryStatus(`Renamed: this learner is ${learner.name} now.`, 'ok');
  },
});
const results = createResults({ api, learnerName });
const supabaseAccount = createSupabaseAccount({
  config: () => state.config,
  showSignin: (message) => showSignin(message),
  showError: (anchor, message) => showSigninError(anchor, message),
  signIn: (button, obtain) => signInWith(button, obtain),
});

const exporter = setupExport({
  getToken: freshToken,
  tokens: api.tokens,
  learnerId: () => state.learnerId,
  onUnauthorized: (message) => signOut(message || 'Your sign-in has ended. Please sign in again.'),
  accountButton: $('export-account'),
  learnerButton: $('export-learner'),
  status: $('export-status'),
});

// ---------------------------------------------------------------- session

function supabaseConfigured() {
  return Boolean(state.config.supabase_url && state.config.supabase_anon_key);
}

// freshToken returns the access token, renewing a Supabase one first when
// it is about to expire (a background tab's timer may not have fired).
async function freshToken() {
  const s = state.session;
  if (!s) throw new ApiError(401, 'Not signed in');
  if (s.source === 'supabase' && s.refresh_token && expired(s, REFRESH_MARGIN_SECONDS)) {
    await refreshSession();
  }
  if (!state.session) throw new ApiError(401, 'Not signed in');
  return state.session.access_token;
}

// refreshSession renews the Supabase session; concurrent callers share one
// request, as Supabase rotates refresh tokens and a second use would fail.
function refreshSession() {
  if (!state.refreshing) {
    const current = state.session;
    state.refreshing = supabaseRefresh(state.config, current.refresh_token)
      .then((next) => {
        if (state.session === current) setSession(next);
        return next;
      })
      .catch((err) => {
        if (err.status === 0 && !expired(current)) {
          scheduleRefresh(30); // offline for now: try again while the token still works
        } else if (state.session === current) {
          signOut('Your sign-in has ended. Please sign in again.');
        }
        throw err;
      })
      .finally(() => {
        state.refreshing = null;
      });
  }
  return state.refreshing;
}

function scheduleRefresh(afterSeconds) {
  clearTimeout(state.refreshTimer);
  const s = state.session;
  if (!s || s.source !== 'supabase' || !s.refresh_token || s.expires_at == null) return;
  const delay = afterSeconds ?? Math.max(0, s.expires_at - REFRESH_MARGIN_SECONDS - nowSeconds());
  state.refreshTimer = setTimeout(() => {
    refreshSession().catch(() => {});
  }, delay * 1000);
}

function setSession(session) {
  state.session = session;
  saveSession(session);
  scheduleRefresh();
  renderAccount();
}

function renderAccount() {
  const s = state.session;
  if (!s) {
    el.whoami.textContent = '';
    el.signout.hidden = true;
    return;
  }
  const who = s.email || s.user_id || 'a pasted token';
  el.whoami.textContent = s.source === 'dev' ? `Signed in as ${who} (demo)` : `Signed in as ${who}`;
  el.signout.hidden = false;
}

function signOut(message = '') {
  const s = state.session;
  clearTimeout(state.refreshTimer);
  state.session = null;
  clearSession();
  if (s && s.source === 'supabase' && supabaseConfigured()) {
    // Revoke the refresh token too; the page does not wait for it.
    fetch(`${state.config.supabase_url}/auth/v1/logout?scope=local`, {
      method: 'POST',
      headers: { apikey: state.config.supabase_anon_key, Authorization: `Bearer ${s.access_token}` },
      credentials: 'omit',
    }).catch(() => {});
  }
  // Answers still on their way belong to the signed-out user: drop them.
  state.account++;
  state.memoryRequest++;
  state.searchRequest++;
  state.learners = [];
  state.learnerId = '';
  chat.reset();
  // Nothing of the signed-out user stays on screen for the next one.
  el.message.value = '';
  el.searchQ.value = '';
  el.includeArchive.checked = false;
  learnerForms.reset();
  layout.show('chat');
  if (el.clearDialog.open) el.clearDialog.close();
  el.results.replaceChildren();
  el.searchStatus.textContent = '';
  state.lastSearch = null;
  el.memoryStatus.textContent = '';
  knowledge.reset();
  erasure.reset();
  renderAccount();
  showSignin(message);
}

function showSignin(message) {
  el.workspace.hidden = true;
  el.signin.hidden = false;
  showSigninError(null, message);
}

// showSigninError shows a sign-in error right under what failed (anchor,
// an element of the form), or at the top with none; '' hides it.
function showSigninError(anchor, message) {
  const option = anchor?.closest('.signin-option');
  if (option) option.append(el.signinError);
  else el.signinLead.after(el.signinError);
  el.signinError.textContent = message || '';
  el.signinError.hidden = !message;
  if (message && option) el.signinError.scrollIntoView({ block: 'nearest' });
}

// The developer's ways in (the demo button, a pasted token and the
// commands that make one) show only in dev mode; a server with neither
// dev mode nor Supabase has the token as its only way in.
function renderSigninOptions() {
  const dev = Boolean(state.config.dev_mode);
  el.signinDev.hidden = !dev;
  el.signinSupabase.hidden = !supabaseConfigured();
  el.signinTokenBox.hidden = !dev && supabaseConfigured();
  el.signinTokenDev.hidden = !dev;
  el.signinTokenAsk.hidden = dev;
  // With no other way in, the token field is the sign-in: show it open.
  if (!dev && !supabaseConfigured()) el.signinTokenBox.open = true;
  supabaseAccount.render();
}

// signInWith signs in with the session obtainSession answers; button,
// when given, is disabled meanwhile and shows where a failure is told.
async function signInWith(button, obtainSession) {
  showSigninError(null, '');
  if (button) button.disabled = true;
  try {
    setSession(await obtainSession());
    await enterWorkspace();
  } catch (err) {
    // A 401 has already signed out with its own message.
    if (!(err instanceof ApiError && err.status === 401 && !state.session)) {
      // The page's own checks (a pasted token) and sign-in refusals are
      // already plain; a failing server is said plainly.
      showSigninError(button, err instanceof ApiError && err.status !== 400 && err.status !== 401
        ? `Could not sign in: ${plainError(err)} Try again.` : err.message);
    }
  } finally {
    if (button) button.disabled = false;
  }
}

async function enterWorkspace() {
  await loadLearners(); // also proves the token is accepted
  el.signin.hidden = true;
  el.workspace.hidden = false;
  showSigninError(null, '');
  supabaseAccount.reset();
  el.signinPassword.value = '';
  el.signinTokenInput.value = '';
  // Back to the learner of the last visit, so the next message is filed
  // where it belongs.
  selectLearner(savedLearner(state.session.user_id, state.learners));
  chat.startSaving(); // what an earlier visit could not save
  el.message.focus();
}

// --------------------------------------------------------------- learners

async function loadLearners() {
  const data = await api.get('/api/learners');
  state.learners = Array.isArray(data.learners) ? data.learners : [];
  renderLearnerOptions();
}

function renderLearnerOptions() {
  const sorted = [...state.learners].sort((a, b) => a.name.localeCompare(b.name));
  // new Option sets the text, not HTML: a learner's name is data.
  el.learner.replaceChildren(new Option('General', ''), ...sorted.map((l) => new Option(l.name, l.id)));
  el.learner.value = state.learnerId;
}

function learnerName(id) {
  return state.learners.find((l) => l.id === id)?.name || '';
}

function scopeName(id = state.learnerId) {
  return id ? learnerName(id) || 'this learner' : 'the general conversation';
}

function selectLearner(id) {
  state.learnerId = id;
  if (state.session) saveLearner(state.session.user_id, id);
  exporter.update();
  el.learner.value = id;
  el.memoryScope.textContent = `· ${id ? learnerName(id) : 'General'}`;
  el.memoryStatus.textContent = '';
  chat.open(id, loadMemory()); // the conversation comes back from the memory's read
  knowledge.show(id);
  erasure.show(id);
  learnerForms.show(id);
}

// showLearnerName follows a rename of the selected learner without
// starting the chat over.
function showLearnerName() {
  el.memoryScope.textContent = `· ${learnerName(state.learnerId)}`;
  knowledge.show(state.learnerId);
  erasure.show(state.learnerId);
}

// afterErasure drops from the page what was erased: the learner, or every
// learner, and search results that may show them.
function afterErasure(receipt) {
  chat.dropUnsaved(receipt.scope === 'account' ? undefined : receipt.learner_id);
  state.learners = receipt.scope === 'account' ? [] : state.learners.filter((l) => l.id !== receipt.learner_id);
  renderLearnerOptions();
  el.results.replaceChildren();
  el.searchStatus.textContent = '';
  state.lastSearch = null;
  selectLearner('');
}

// ------------------------------------------------------------------- chat

// setChatBusy holds the learner, sending and ending while a message or the
// end of the session is on its way.
function setChatBusy(busy) {
  el.send.disabled = busy;
  el.learner.disabled = busy;
  el.endSession.disabled = busy;
}

// endSession ends the live session with this learner. It runs after the
// saves still queued, so the last exchange belongs to the session it ends.
async function endSession() {
  if (chat.busy() || state.ending) return;
  const learnerId = state.learnerId;
  const account = state.account;
  state.ending = true;
  setChatBusy(true);
  const pending = chat.notice('Ending the session…', 'pending');
  try {
    const data = await afterQueuedSaves(() => api.post('/api/sessions/end', { learner_id: learnerId || null }));
    if (account !== state.account) return;
    appendClosing(data.session?.closing || {});
    // The next message starts a new session, which opens from this one.
    chat.forget();
  } catch (err) {
    if (account !== state.account || err.status === 401) return;
    if (err.status === 404) {
      chat.notice(`There is no session to end yet: one starts when you talk with Mr. Mentor${learnerId ? ` about ${scopeName(learnerId)}` : ''}.`);
    } else {
      chat.notice(`The session could not be ended: ${plainError(err)} Try again.`, 'error');
    }
  } finally {
    pending.remove();
    state.ending = false;
    setChatBusy(false);
  }
}

// appendClosing shows how the session closed: the goodbye line, how it
// felt, what was learnt and what to pick up next time.
function appendClosing(closing) {
  const li = document.createElement('li');
  li.className = 'notice closing';
  const title = document.createElement('p');
  title.className = 'closing-title';
  title.textContent = 'Session ended';
  const goodbye = document.createElement('p');
  goodbye.className = 'goodbye';
  goodbye.textContent = closing.goodbye_line || 'Good work today.';
  li.append(title, goodbye);
  const arc = textList(closing.emotional_arc);
  if (arc.length > 0) {
    const felt = document.createElement('p');
    const heading = document.createElement('span');
    heading.className = 'closing-heading';
    heading.textContent = 'How it felt: ';
    felt.append(heading, arc.join(' → '));
    li.append(felt);
  }
  const learnt = textList(closing.new_memories);
  if (learnt.length > 0) li.append(closingPart('Learnt this session', learnt));
  const hooks = textList(closing.next_session_hooks);
  if (hooks.length > 0) li.append(closingPart('For next time', hooks, 'hooks'));
  const next = document.createElement('p');
  next.textContent = 'Your next message starts a new session; Mr. Mentor picks up from here.';
  li.append(next);
  chat.append(li);
}

function closingPart(heading, items, kind = '') {
  const box = document.createElement('div');
  box.className = `closing-part ${kind}`.trim();
  const title = document.createElement('p');
  title.className = 'closing-heading';
  title.textContent = heading;
  const list = document.createElement('ul');
  for (const item of items) {
    const entry = document.createElement('li');
    entry.textContent = item;
    list.append(entry);
  }
  box.append(title, list);
  return box;
}

// inOrder runs fn after the memory's work queued before it (saves, a
// clear, a session's end), so that turns reach the log in the order they
// were said and a clear runs after the saves queued before it.
function inOrder(fn) {
  const run = state.memoryQueue.then(fn);
  state.memoryQueue = run.catch(() => {});
  return run;
}

// afterSave shows what the memory answered to a stored exchange.
function afterSave(learnerId, data) {
  if (learnerId !== state.learnerId) return;
  // The answer holds the updated memory: no need to read it again.
  state.memoryRequest++;
  renderMemory(data.conversation_update);
  knowledge.afterExchange();
  if (data.archived) {
    setMemoryStatus('The earlier part of this conversation was archived; it stays searchable.', 'ok');
  }
}

// afterQueuedSaves runs fn once the saves queued before it are stored, for
// the signed-in user only.
function afterQueuedSaves(fn) {
  const account = state.account;
  return inOrder(() => {
    if (account !== state.account) throw new ApiError(401, 'Signed out');
    return fn();
  });
}

// ----------------------------------------------------------------- memory

function memoryPath(learnerId, params = {}) {
  const query = new URLSearchParams(params);
  if (learnerId) query.set('learner_id', learnerId);
  const qs = query.toString();
  return `/api/conversation-memory${qs ? `?${qs}` : ''}`;
}

// loadMemory reads the conversation's memory into the panel, and resolves
// with it for the chat: the record, null when there is none, undefined
// when it could not be read.
async function loadMemory() {
  const learnerId = state.learnerId;
  const n = ++state.memoryRequest;
  renderMemory(null);
  el.memorySummary.textContent = 'Loading…';
  try {
    const data = await api.get(memoryPath(learnerId));
    if (n === state.memoryRequest && learnerId === state.learnerId) renderMemory(data.conversation_update);
    return data.conversation_update;
  } catch (err) {
    if (n === state.memoryRequest && err.status !== 401) {
      el.memorySummary.textContent = '';
      setMemoryStatus('', 'error');
      failure(el.memoryStatus, 'Could not load the memory', err, loadMemory);
    }
    return undefined;
  }
}

function renderMemory(conv) {
  if (!conv) {
    el.memoryTurns.textContent = '0';
    el.memoryUpdated.replaceChildren('—');
    el.memorySummary.textContent = `No memory yet for ${scopeName()}: it fills in as you talk.`;
    el.memorySummary.classList.add('empty');
    return;
  }
  el.memoryTurns.textContent = String(conv.turn_count ?? 0);
  el.memoryUpdated.replaceChildren(timeElement(conv.updated_at));
  // The summary is the model's writing, Markdown and all.
  if (conv.summary) setMarkdown(el.memorySummary, conv.summary);
  else el.memorySummary.textContent = 'No summary yet.';
  if (conv.summary_stale) {
    const note = document.createElement('p');
    note.textContent = '(The summary is catching up with the latest turns.)';
    el.memorySummary.append(note);
  }
  el.memorySummary.classList.toggle('empty', !conv.summary);
}

function setMemoryStatus(text, kind = '') {
  el.memoryStatus.textContent = text;
  el.memoryStatus.className = `memory-status ${kind}`.trim();
}

function openClearDialog() {
  el.clearScope.textContent = state.learnerId ? scopeName() : 'the general conversation';
  el.clearDialog.returnValue = '';
  el.clearDialog.showModal(); // focus goes to Cancel (autofocus): the safe choice
}

async function clearMemory() {
  const learnerId = state.learnerId;
  const name = scopeName(learnerId);
  el.clearMemory.disabled = true;
  setMemoryStatus('Clearing…');
  // Queued behind the saves already waiting, so none of them lands after
  // the clear and brings the memory back.
  const account = state.account;
  try {
    const data = await afterQueuedSaves(() => api.del(memoryPath(learnerId)));
    if (account !== state.account || learnerId !== state.learnerId) return;
    state.memoryRequest++;
    renderMemory(null);
    setMemoryStatus(
      data.archived
        ? `Archived: the memory of ${name} is cleared, and its history stays searchable with “Include archive”.`
        : `Cleared: there was nothing to archive for ${name}.`,
      'ok',
    );
    // The mentor has forgotten; so does this session's history.
    chat.forget();
    chat.notice('Memory cleared. Mr. Mentor starts afresh from here.');
    // Results on screen may show the conversation as current: ask again.
    if (state.lastSearch) search(state.lastSearch.q, state.lastSearch.archive);
  } catch (err) {
    if (err.status !== 401) setMemoryStatus(`Could not clear the memory: ${plainError(err)} Nothing was cleared; try again.`, 'error');
  } finally {
    el.clearMemory.disabled = false;
  }
}

// ----------------------------------------------------------------- search

function submitSearch(event) {
  event.preventDefault();
  const q = el.searchQ.value.trim();
  if (q) search(q, el.includeArchive.checked);
}

async function search(q, archive) {
  state.lastSearch = { q, archive };
  const params = { search: q, limit: '20' };
  if (archive) params.include_archive = 'true';
  const n = ++state.searchRequest;
  el.searchStatus.textContent = 'Searching…';
  try {
    const data = await api.get(memoryPath('', params)); // every conversation, not only this learner's
    if (n !== state.searchRequest) return;
    const found = Array.isArray(data.results) ? data.results : [];
    el.results.replaceChildren(...found.map((r) => results.item(r, q)));
    if (found.length === 0) {
      el.searchStatus.textContent = archive
        ? `Nothing matches “${q}”.`
        : `Nothing matches “${q}” in current conversations. Tick “Include archive” to search cleared ones too.`;
    } else {
      el.searchStatus.textContent = `${found.length} ${found.length === 1 ? 'conversation matches' : 'conversations match'} “${q}”.`;
    }
  } catch (err) {
    if (n === state.searchRequest && err.status !== 401) {
      failure(el.searchStatus, 'The search did not work', err, () => search(q, archive));
    }
  }
}

// ------------------------------------------------------------------ start

function wire() {
  el.devSignin.addEventListener('click', () => signInWith(el.devSignin, devSignIn));
  el.signinSupabase.addEventListener('submit', (event) => {
    event.preventDefault();
    const button = el.signinSupabase.querySelector('button[type="submit"]');
    signInWith(button, () => supabaseSignIn(state.config, el.signinEmail.value.trim(), el.signinPassword.value));
  });
  el.signinToken.addEventListener('submit', (event) => {
    event.preventDefault();
    const button = el.signinToken.querySelector('button');
    signInWith(button, async () => pastedSession(el.signinTokenInput.value));
  });
  el.signout.addEventListener('click', () => signOut());
  el.learner.addEventListener('change', () => selectLearner(el.learner.value));
  el.clearMemory.addEventListener('click', openClearDialog);
  el.clearDialog.addEventListener('close', () => {
    el.clearMemory.focus();
    if (el.clearDialog.returnValue === 'confirm') clearMemory();
  });
  el.searchForm.addEventListener('submit', submitSearch);
  el.endSession.addEventListener('click', endSession);
}

async function start() {
  wire();
  try {
    state.config = { ...state.config, ...(await request('GET', '/api/config')) };
  } catch (err) {
    el.status.textContent = `Mr. Mentor could not start: ${plainError(err)} Reload the page to try again.`;
  }
  renderSigninOptions();
  // Back from a link in a Supabase email (a new password, a confirmed
  // address): the link carries the session, or why it failed.
  if (await supabaseAccount.takeRedirect()) return;
  const saved = loadSession();
  const usable = saved && (!expired(saved) || (saved.source === 'supabase' && saved.refresh_token && supabaseConfigured()));
  if (!usable) {
    clearSession();
    showSignin(saved ? 'Your session has expired. Please sign in again.' : '');
    return;
  }
  setSession(saved);
  try {
    await enterWorkspace(); // an expired Supabase token is renewed on the way
  } catch (err) {
    if (state.session) showSignin(`Could not open your workspace: ${plainError(err)} Try signing in again.`);
  }
}

start();
