// "What Mr. Mentor knows": the learner's profile (profile.js), then the
// learner memories of the selected conversation, grouped by type, with how
// confident he is of each; those no longer current (superseded, expired,
// resolved) are listed apart. Each can be confirmed, corrected in place
// (PATCH), forgotten after a confirmation (DELETE), and its history and
// sources (the turns it was learnt from) read; control.js adds whether he
// is learning now, the "Don't learn" switch and forgetting a category;
// the facilitator can add one (POST, which reinforces a memory already
// known instead of repeating it).

import { badge, percent, placeholder, shortDate } from './dom.js';
import { failure, plainError } from './errors.js';
import { historyList } from './history.js';
import { createProfile } from './profile.js';
import { createControl, sourcesPanel } from './control.js';

// The memory types in the order shown, with the names facilitators see.
export const MEMORY_TYPES = [
  { type: 'academic', label: 'Learning' },
  { type: 'personal', label: 'Personal' },
  { type: 'preference', label: 'Preferences' },
  { type: 'context', label: 'Where things stand' },
];

// The most the server lists at once; a learner has a few hundred at most.
const LIST_LIMIT = 200;
// Extraction runs in the background after an exchange is stored, so the
// list is read once more a little later to show what was learnt.
const LEARNT_LATER_MS = 20000;
// How much of a memory a status line quotes; the quote ends the line, as
// memories end with their own full stop.
const QUOTE_CHARS = 80;
// How much of a memory a button's accessible name quotes ("Correct: Emma
// loves dinosaurs…").
const NAME_CHARS = 40;
// Confidence decays to this floor for a memory long unconfirmed, which
// then leaves recall until a person confirms it.
const CONFIDENCE_FLOOR = 0.3;

// How a memory that is no longer current is marked.
const STATUS_LABELS = { superseded: 'Superseded', expired: 'Expired', resolved: 'Resolved' };

const $ = (id) => document.getElementById(id);

function quote(text) {
  const s = String(text).replace(/\s+/g, ' ').trim();
  return `“${s.length > QUOTE_CHARS ? `${s.slice(0, QUOTE_CHARS - 1)}…` : s}”`;
}

function typeLabel(type) {
  return MEMORY_TYPES.find((t) => t.type === type)?.label || type;
}

// sourceText says where a memory comes from; a correction is the
// facilitator's, so a corrected memory says so rather than "learnt in
// conversation".
function sourceText(m) {
  let origin = m.source === 'added' ? 'added by you' : 'learnt in conversation';
  const corrected = m.corrected_at ? shortDate(m.corrected_at) : '';
  if (corrected) origin = m.source === 'added' ? `added by you, corrected on ${corrected}` : `corrected by you on ${corrected}`;
  const parts = [origin];
  if (m.mentions > 1) parts.push(`mentioned ${m.mentions} times`);
  return parts.join(' · ');
}

// shortName is the start of a memory, to tell its buttons apart.
function shortName(text) {
  const s = String(text).replace(/\s+/g, ' ').trim();
  if (s.length <= NAME_CHARS) return s;
  const cut = s.slice(0, NAME_CHARS - 1);
  // At a word's end when there is one in the second half.
  const space = cut.lastIndexOf(' ');
  return `${(space > NAME_CHARS / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.]+$/, '')}…`;
}

function metaText(m, key) {
  const v = m.metadata && m.metadata[key];
  return typeof v === 'string' ? v.trim() : '';
}

function isCurrent(m) {
  return !m.status || m.status === 'current';
}

// faded: a current memory whose confidence has decayed to the floor.
function faded(m) {
  return isCurrent(m) && typeof m.confidence === 'number' && m.confidence <= CONFIDENCE_FLOOR + 1e-9;
}

// A memory flagged for review, or long unconfirmed, asks to be confirmed.
function reviewable(m) {
  return Boolean(m.needs_review) || faded(m);
}

// createKnowledge wires the panel. nameOf(learnerId) is the learner's name,
// '' for the general conversation.
export function createKnowledge(api, nameOf) {
  const el = {
    hint: $('knowledge-hint'),
    refresh: $('knowledge-refresh'),
    status: $('knowledge-status'),
    list: $('knowledge-list'),
    rememberBox: $('remember-box'),
    rememberForm: $('remember-form'),
    rememberType: $('remember-type'),
    rememberText: $('remember-text'),
    rememberError: $('remember-error'),
    forgetDialog: $('forget-dialog'),
    forgetText: $('forget-text'),
  };
  // The profile's rebuild may merge, expire or resolve memories: the list
  // is read again after it.
  const profile = createProfile(api, nameOf, () => load());
  const controlBox = document.createElement('div');
  controlBox.id = 'learning-control';
  controlBox.className = 'learning-control';
  el.list.before(controlBox);
  const learning = createControl(api, nameOf, MEMORY_TYPES, controlBox, (removed) => {
    setStatus(`Forgotten: ${removed === 1 ? 'one memory' : `${removed} memories`} ${scopeText()}.`, 'ok');
    load();
  });
  const s = {
    learnerId: '', // whose memories these are; '' is the general conversation
    memories: [], // as the server listed them, newest first
    shown: '', // what the list on screen was drawn from, to skip redrawing it
    loaded: false,
    request: 0, // the newest read; older answers are ignored
    editingId: '',
    editNode: null, // the open correction, kept across redraws with its draft
    forgetting: null, // the memory the dialog asks about
    fresh: '', // the memory just added or reinforced, highlighted
    laterTimer: 0,
    // The histories shown, by memory id: {state: 'loading'|'ready'|'error',
    // changes, error}. A closed history has no entry.
    history: {},
    // The sources shown, by memory id, like the histories: {state, data,
    // error}.
    sources: {},
  };

  function setStatus(text, kind = '') {
    el.status.textContent = text;
    el.status.className = `memory-status ${kind}`.trim();
  }

  function scopeText(learnerId = s.learnerId) {
    const name = nameOf(learnerId);
    return learnerId ? `about ${name || 'this learner'}` : 'in general';
  }

  function listPath(learnerId) {
    const query = new URLSearchParams({ learner_id: learnerId || 'null', limit: String(LIST_LIMIT) });
    return `/api/memories?${query}`;
  }

  // ------------------------------------------------------------ reading

  // startOver drops what was read of the memories shown so far, open
  // corrections and panels with them, for learnerId's; an answer still on
  // its way for the ones before is ignored.
  function startOver(learnerId) {
    clearTimeout(s.laterTimer);
    s.request++;
    s.learnerId = learnerId;
    s.memories = [];
    s.loaded = false;
    s.editingId = '';
    s.editNode = null;
    s.fresh = '';
    s.history = {};
    s.sources = {};
  }

  // show switches to another conversation's memories.
  function show(learnerId) {
    startOver(learnerId);
    setStatus('');
    el.rememberError.hidden = true;
    el.hint.textContent = learnerId
      ? `What he has learnt about ${nameOf(learnerId) || 'this learner'} and what you told him. Correct or forget anything.`
      : 'What he has learnt in general conversations and what you told him. Correct or forget anything.';
    render();
    load();
    profile.show(learnerId);
    learning.show(learnerId);
  }

  // load reads the list again. announce says so in the status line (the
  // Refresh button); otherwise only newly learnt memories are announced.
  async function load({ announce = false } = {}) {
    const learnerId = s.learnerId;
    const n = ++s.request;
    el.refresh.disabled = true;
    el.list.setAttribute('aria-busy', 'true');
    try {
      const data = await api.get(listPath(learnerId));
      if (n !== s.request) return;
      const memories = Array.isArray(data.memories) ? data.memories : [];
      const before = new Set(s.memories.map((m) => m.id));
      const learnt = s.loaded ? memories.filter((m) => !before.has(m.id) && m.source !== 'added') : [];
      s.memories = memories;
      s.loaded = true;
      render();
      if (announce) {
        const count = memories.length;
        setStatus(`Up to date: ${count === 0 ? 'nothing' : count === 1 ? 'one thing' : `${count} things`} known ${scopeText()}.`, 'ok');
      } else if (learnt.length > 0) {
        setStatus(`Mr. Mentor learnt ${learnt.length === 1 ? 'something new' : `${learnt.length} new things`} ${scopeText()}.`, 'ok');
      }
    } catch (err) {
      if (n !== s.request || err.status === 401) return;
      if (!s.loaded) el.list.replaceChildren();
      setStatus('', 'error');
      failure(el.status, 'Could not load what Mr. Mentor knows', err, () => load({ announce }));
    } finally {
      if (n === s.request) {
        el.refresh.disabled = false;
        el.list.removeAttribute('aria-busy');
      }
    }
  }

  // afterExchange reads the list now and once more when the background
  // extraction has probably run.
  function afterExchange() {
    load();
    learning.refresh();
    clearTimeout(s.laterTimer);
    s.laterTimer = setTimeout(() => {
      load();
      learning.refresh();
    }, LEARNT_LATER_MS);
  }

  // reset forgets everything on screen: the user signed out.
  function reset() {
    startOver('');
    s.shown = '';
    s.forgetting = null;
    if (el.forgetDialog.open) el.forgetDialog.close();
    el.list.replaceChildren();
    el.list.removeAttribute('aria-busy');
    el.refresh.disabled = false;
    el.rememberText.value = '';
    el.rememberError.hidden = true;
    el.rememberBox.open = false;
    setStatus('');
    profile.reset();
    learning.reset();
  }

  // ---------------------------------------------------------- drawing

  // groups are the lists drawn, in order: the current memories by type,
  // then those no longer current, apart.
  function groups() {
    const current = s.memories.filter(isCurrent);
    return [
      ...MEMORY_TYPES.map(({ type, label }) => ({ label, items: current.filter((m) => m.type === type) })),
      { label: 'No longer current', items: s.memories.filter((m) => !isCurrent(m)), kind: 'retired' },
    ];
  }

  function ordered() {
    return groups().flatMap((g) => g.items);
  }

  // render draws the list. A redraw keeps the keyboard focus where it was,
  // on the same control of the same memory, and an open correction as typed.
  function render() {
    if (s.editingId && !s.memories.some((m) => m.id === s.editingId)) {
      s.editingId = ''; // forgotten elsewhere meanwhile
      s.editNode = null;
    }
    for (const id of Object.keys(s.history)) {
      if (!s.memories.some((m) => m.id === id)) delete s.history[id];
    }
    for (const id of Object.keys(s.sources)) {
      if (!s.memories.some((m) => m.id === id)) delete s.sources[id];
    }
    const drawn = JSON.stringify([s.learnerId, s.loaded, s.editingId, s.fresh, s.memories, s.history, s.sources]);
    if (drawn === s.shown) return;
    s.shown = drawn;
    const focus = focusedControl();
    if (!s.loaded) {
      el.list.replaceChildren(placeholder('Loading…'));
    } else if (s.memories.length === 0) {
      el.list.replaceChildren(placeholder(`Nothing remembered ${scopeText()} yet. Mr. Mentor learns as you talk, and you can add something below.`));
    } else {
      el.list.replaceChildren(...groups().map(group).filter(Boolean));
    }
    restoreFocus(focus);
  }

  function group({ label, items, kind = '' }) {
    if (items.length === 0) return null;
    const box = document.createElement('div');
    box.className = `known-group ${kind}`.trim();
    const heading = document.createElement('h4');
    heading.textContent = label;
    const count = document.createElement('span');
    count.className = 'count';
    count.textContent = ` (${items.length})`;
    heading.append(count);
    const list = document.createElement('ul');
    list.className = 'known-list';
    list.append(...items.map((m) => (m.id === s.editingId ? s.editNode : item(m))));
    box.append(heading, list);
    return box;
  }

  // actionButton is one of a memory's buttons. Its accessible name names
  // the memory too ("Forget: Emma loves dinosaurs"), so that a list of them
  // read out is not twenty times the same word.
  function actionButton(text, action, m, kind = '', describedBy = '') {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = `quiet ${kind}`.trim();
    b.textContent = text;
    b.dataset.action = action;
    b.setAttribute('aria-label', `${text}: ${shortName(m.content)}`);
    if (describedBy) b.setAttribute('aria-describedby', describedBy);
    return b;
  }

  function item(m) {
    const li = document.createElement('li');
    li.className = ['known', m.id === s.fresh && 'fresh', !isCurrent(m) && 'retired', reviewable(m) && 'review']
      .filter(Boolean).join(' ');
    li.dataset.id = m.id;
    const text = document.createElement('p');
    text.className = 'known-text';
    text.id = `known-${m.id}`;
    text.textContent = m.content;
    const meta = document.createElement('div');
    meta.className = 'meta';
    if (!isCurrent(m)) meta.append(badge(STATUS_LABELS[m.status] || m.status, 'state'), badge(typeLabel(m.type)));
    const emotion = metaText(m, 'emotion');
    if (emotion) meta.append(badge(`Feeling: ${emotion}`, 'feeling'));
    const topic = metaText(m, 'topic');
    if (topic) meta.append(badge(`Topic: ${topic}`));
    const source = document.createElement('span');
    source.className = 'source';
    source.textContent = sourceText(m);
    meta.append(source);
    if (typeof m.confidence === 'number') meta.append(confidence(m));
    li.append(text, meta);
    const note = statusNote(m);
    if (note) li.append(note);
    const actions = document.createElement('div');
    actions.className = 'known-actions';
    if (reviewable(m)) {
      const review = reviewNote(m);
      li.append(review);
      actions.append(actionButton('Confirm', 'confirm', m, 'primary', review.id));
    }
    const history = actionButton('History', 'history', m);
    history.setAttribute('aria-expanded', String(Boolean(s.history[m.id])));
    history.setAttribute('aria-controls', `history-${m.id}`);
    const sources = actionButton('Sources', 'sources', m);
    sources.setAttribute('aria-expanded', String(Boolean(s.sources[m.id])));
    sources.setAttribute('aria-controls', `sources-${m.id}`);
    actions.append(actionButton('Correct', 'correct', m), history, sources, actionButton('Forget', 'forget', m, 'danger'));
    li.append(actions, historyPanel(m), sourcesPanel(m.id, s.sources[m.id]));
    return li;
  }

  // confidence shows how sure Mr. Mentor is, as of now: a meter for the
  // eye, the percentage in words for everyone.
  function confidence(m) {
    const box = document.createElement('span');
    box.className = 'confidence';
    const meter = document.createElement('meter');
    meter.min = 0;
    meter.max = 1;
    meter.low = CONFIDENCE_FLOOR + 0.01;
    meter.high = 0.8;
    meter.optimum = 1;
    meter.value = m.confidence;
    meter.setAttribute('aria-hidden', 'true');
    const label = document.createElement('span');
    label.className = 'confidence-text';
    label.textContent = `Confidence ${percent(m.confidence)}`;
    box.append(meter, label);
    return box;
  }

  // statusNote says why a memory is no longer current, and what replaced
  // it when that is known.
  function statusNote(m) {
    if (isCurrent(m)) return null;
    const p = document.createElement('p');
    p.className = 'status-note';
    if (m.status === 'superseded') {
      const next = s.memories.find((x) => x.id === m.superseded_by);
      p.textContent = next ? `Replaced by ${quote(next.content)}` : 'Replaced by a newer memory.';
    } else if (m.status === 'expired') {
      p.textContent = 'Its moment has passed: Mr. Mentor no longer brings it up.';
    } else if (m.status === 'resolved') {
      p.textContent = 'Settled by a later breakthrough: Mr. Mentor no longer brings it up.';
    } else {
      p.textContent = 'Mr. Mentor no longer brings it up.';
    }
    return p;
  }

  function reviewNote(m) {
    const p = document.createElement('p');
    p.className = 'review-note';
    p.id = `review-${m.id}`;
    const flag = document.createElement('strong');
    flag.textContent = 'Needs your review: ';
    let why = 'confirm it if it still holds.';
    if (m.status === 'superseded') why = 'a newer memory says otherwise. Confirm it if it still holds.';
    else if (faded(m)) why = 'not confirmed for a long time, so Mr. Mentor no longer brings it up. Confirm it if it still holds.';
    p.append(flag, why);
    return p;
  }

  // historyPanel is the memory's history when open; closed, it is an empty
  // hidden box, so that the History button always names what it controls.
  function historyPanel(m) {
    const box = document.createElement('div');
    box.className = 'history';
    box.id = `history-${m.id}`;
    const h = s.history[m.id];
    if (!h) {
      box.hidden = true;
      return box;
    }
    if (h.state === 'error') {
      const p = document.createElement('p');
      p.className = 'error';
      p.textContent = h.error;
      box.append(p);
      return box;
    }
    if (!h.changes) {
      box.append(placeholder('Loading its history…'));
      return box;
    }
    if (h.state === 'loading') box.setAttribute('aria-busy', 'true');
    if (h.changes.length === 0) {
      box.append(placeholder('No change is recorded for it.'));
      return box;
    }
    box.append(historyList(h.changes, (id) => {
      const related = s.memories.find((x) => x.id === id);
      return related ? quote(related.content) : '';
    }));
    return box;
  }

  function labelFor(id, text) {
    const label = document.createElement('label');
    label.htmlFor = id;
    label.textContent = text;
    return label;
  }

  function editItem(m) {
    const li = document.createElement('li');
    li.className = 'known editing';
    li.dataset.id = m.id;
    const form = document.createElement('form');
    form.className = 'known-edit';
    const area = document.createElement('textarea');
    area.id = `edit-text-${m.id}`;
    area.rows = 3;
    area.maxLength = 1000;
    area.required = true;
    area.value = m.content;
    area.dataset.action = 'edit-text';
    const select = document.createElement('select');
    select.id = `edit-type-${m.id}`;
    select.append(...MEMORY_TYPES.map(({ type, label }) => new Option(label, type)));
    select.value = m.type;
    select.dataset.action = 'edit-type';
    const error = document.createElement('p');
    error.className = 'error';
    error.setAttribute('role', 'alert');
    error.hidden = true;
    const save = document.createElement('button');
    save.type = 'submit';
    save.className = 'primary';
    save.textContent = 'Save';
    save.dataset.action = 'save';
    const cancel = document.createElement('button');
    cancel.type = 'button';
    cancel.textContent = 'Cancel';
    cancel.dataset.action = 'cancel';
    const actions = document.createElement('div');
    actions.className = 'known-actions';
    actions.append(save, cancel);
    form.append(labelFor(area.id, 'Corrected text'), area, labelFor(select.id, 'Kind'), select, actions, error);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      saveEdit(m.id, { area, select, error, buttons: [save, cancel] });
    });
    cancel.addEventListener('click', () => closeEdit());
    form.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        closeEdit();
      }
    });
    li.append(form);
    return li;
  }

  // focusedControl notes which control of which memory has the focus.
  function focusedControl() {
    const active = document.activeElement;
    if (!active || !el.list.contains(active)) return null;
    return { node: active, id: active.closest('[data-id]')?.dataset.id, action: active.dataset.action };
  }

  function restoreFocus(focus) {
    if (!focus || document.activeElement === focus.node) return;
    if (focus.node.isConnected) {
      focus.node.focus();
    } else if (focus.id && focus.action) {
      focusControl(focus.id, focus.action);
    }
  }

  function control(id, action) {
    return [...el.list.querySelectorAll('[data-id]')].find((li) => li.dataset.id === id)
      ?.querySelector(`[data-action="${action}"]`) || null;
  }

  function focusControl(id, action) {
    const target = control(id, action);
    if (target) target.focus();
    return Boolean(target);
  }

  // ----------------------------------------------------------- correct

  function startEdit(id) {
    const m = s.memories.find((x) => x.id === id);
    if (!m) return;
    s.editingId = id;
    s.editNode = editItem(m);
    render();
    const area = control(id, 'edit-text');
    area.focus();
    area.setSelectionRange(area.value.length, area.value.length);
  }

  function closeEdit() {
    const id = s.editingId;
    s.editingId = '';
    s.editNode = null;
    render();
    focusControl(id, 'correct');
  }

  async function saveEdit(id, { area, select, error, buttons }) {
    const m = s.memories.find((x) => x.id === id);
    const content = area.value.trim();
    error.hidden = true;
    if (!m) return;
    if (!content) {
      error.textContent = 'Write the corrected text, or use Forget to erase it.';
      error.hidden = false;
      area.focus();
      return;
    }
    const patch = {};
    if (content !== m.content) patch.content = content;
    if (select.value !== m.type) patch.type = select.value;
    if (Object.keys(patch).length === 0) {
      closeEdit();
      return;
    }
    const learnerId = s.learnerId;
    buttons.forEach((b) => { b.disabled = true; });
    try {
      const data = await api.patch(`/api/memories/${encodeURIComponent(id)}`, patch);
      if (learnerId !== s.learnerId || s.editingId !== id) return;
      s.memories = s.memories.map((x) => (x.id === id ? data.memory : x));
      const moved = data.memory.type !== m.type ? `, now under ${typeLabel(data.memory.type)}.` : '';
      setStatus(`Corrected: ${quote(data.memory.content)}${moved}`, 'ok');
      closeEdit();
      if (s.history[id]) loadHistory(id);
    } catch (err) {
      if (err.status === 401 || learnerId !== s.learnerId) return;
      if (err.status === 404) {
        setStatus('That memory was already forgotten.', 'error');
        closeEdit();
        load();
        return;
      }
      error.textContent = `Could not save the correction: ${plainError(err)} Try again.`;
      error.hidden = false;
    } finally {
      buttons.forEach((b) => { b.disabled = false; });
    }
  }

  // ----------------------------------------------------------- confirm

  // confirmMemory tells Mr. Mentor the memory holds: its confidence is
  // full again, and a superseded one is current again.
  async function confirmMemory(id) {
    const m = s.memories.find((x) => x.id === id);
    if (!m) return;
    const learnerId = s.learnerId;
    const button = control(id, 'confirm');
    if (button) button.disabled = true;
    try {
      const data = await api.patch(`/api/memories/${encodeURIComponent(id)}`, { confirm: true });
      if (learnerId !== s.learnerId) return;
      s.memories = s.memories.map((x) => (x.id === id ? data.memory : x));
      const again = !isCurrent(m) && isCurrent(data.memory) ? ' It is current again.' : '';
      setStatus(`Confirmed: ${quote(data.memory.content)}${again}`, 'ok');
      render();
      // The Confirm button is gone: the focus stays with the memory.
      focusControl(id, 'correct');
      if (s.history[id]) loadHistory(id);
    } catch (err) {
      if (err.status === 401 || learnerId !== s.learnerId) return;
      if (button) button.disabled = false;
      if (err.status === 404) {
        setStatus('That memory was already forgotten.', 'error');
        load();
        return;
      }
      setStatus(`Could not confirm it: ${plainError(err)} Try again.`, 'error');
    }
  }

  // ----------------------------------------------------------- history

  // toggleSources opens or closes the turns a memory was learnt from.
  async function toggleSources(id) {
    if (s.sources[id]) {
      delete s.sources[id];
      render();
      return;
    }
    const entry = { state: 'loading' };
    s.sources[id] = entry;
    render();
    try {
      const data = await api.get(`/api/memories/${encodeURIComponent(id)}/sources`);
      if (s.sources[id] !== entry) return;
      s.sources[id] = { state: 'ready', data: { turns: Array.isArray(data.turns) ? data.turns : [], note: data.note || '' } };
    } catch (err) {
      if (s.sources[id] !== entry || err.status === 401) return;
      s.sources[id] = { state: 'error', error: `Could not load where it was learnt: ${plainError(err)} Close and open Sources to try again.` };
    }
    render();
  }

  function toggleHistory(id) {
    if (s.history[id]) {
      delete s.history[id];
      render();
      return;
    }
    loadHistory(id);
  }

  // loadHistory reads a memory's history; the changes already shown stay
  // while it is read again.
  async function loadHistory(id) {
    const entry = { state: 'loading', changes: s.history[id]?.changes };
    s.history[id] = entry;
    render();
    try {
      const data = await api.get(`/api/memories/${encodeURIComponent(id)}/history`);
      // Closed, read again or another learner's list meanwhile.
      if (s.history[id] !== entry) return;
      s.history[id] = { state: 'ready', changes: Array.isArray(data.history) ? data.history : [] };
    } catch (err) {
      if (s.history[id] !== entry || err.status === 401) return;
      // A 404 is a memory older than its history: nothing recorded yet.
      s.history[id] = err.status === 404
        ? { state: 'ready', changes: [] }
        : { state: 'error', error: `Could not load its history: ${plainError(err)} Close and open History to try again.` };
    }
    render();
  }

  // ------------------------------------------------------------ forget

  function askForget(id) {
    const m = s.memories.find((x) => x.id === id);
    if (!m) return;
    s.forgetting = m;
    el.forgetText.textContent = m.content;
    el.forgetDialog.returnValue = '';
    el.forgetDialog.showModal(); // focus goes to Cancel (autofocus): the safe choice
  }

  function forgetDialogClosed() {
    // The close event comes after the closing, as a task of its own. Asked
    // again at once, the dialog is open anew by the time it arrives: it
    // belongs to the earlier answer, and must not take the new question's
    // memory with it.
    if (el.forgetDialog.open) return;
    const m = s.forgetting;
    s.forgetting = null;
    if (!m) return;
    if (el.forgetDialog.returnValue === 'confirm') {
      forget(m);
    } else {
      focusControl(m.id, 'forget');
    }
  }

  async function forget(m) {
    const learnerId = s.learnerId;
    const button = control(m.id, 'forget');
    if (button) button.disabled = true;
    setStatus('Forgetting…');
    try {
      await api.del(`/api/memories/${encodeURIComponent(m.id)}`);
      if (learnerId !== s.learnerId) return;
      removeAndRefocus(m);
      setStatus(`Forgotten: ${quote(m.content)}`, 'ok');
    } catch (err) {
      if (err.status === 401 || learnerId !== s.learnerId) return;
      if (err.status === 404) {
        removeAndRefocus(m);
        setStatus('That memory was already forgotten.', 'ok');
        return;
      }
      if (button) button.disabled = false;
      setStatus(`Could not forget it: ${plainError(err)} It is still remembered; try again.`, 'error');
      focusControl(m.id, 'forget');
    }
  }

  // removeAndRefocus takes a memory off the list and moves the focus to
  // the next one shown (or the one before), else to the add form.
  function removeAndRefocus(m) {
    const order = ordered();
    const at = order.findIndex((x) => x.id === m.id);
    const next = order[at + 1] || order[at - 1];
    s.memories = s.memories.filter((x) => x.id !== m.id);
    if (s.editingId === m.id) {
      s.editingId = '';
      s.editNode = null;
    }
    render();
    if (!(next && focusControl(next.id, 'forget'))) el.rememberBox.querySelector('summary').focus();
  }

  // --------------------------------------------------------------- add

  async function add(event) {
    event.preventDefault();
    const content = el.rememberText.value.trim();
    if (!content) return;
    const learnerId = s.learnerId;
    const button = el.rememberForm.querySelector('button[type="submit"]');
    button.disabled = true;
    el.rememberError.hidden = true;
    try {
      const data = await api.post('/api/memories', { learner_id: learnerId || null, type: el.rememberType.value, content });
      if (learnerId !== s.learnerId) return;
      el.rememberText.value = '';
      s.fresh = data.memory?.id || '';
      setStatus(
        data.merged
          ? `Already known: reinforced ${quote(data.memory.content)}`
          : `Remembered: ${quote(content)}`,
        'ok',
      );
      await load();
    } catch (err) {
      if (err.status === 401 || learnerId !== s.learnerId) return;
      el.rememberError.textContent = `Could not remember that: ${plainError(err)} Try again.`;
      el.rememberError.hidden = false;
    } finally {
      button.disabled = false;
    }
  }

  // ------------------------------------------------------------ wiring

  el.list.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action]');
    const id = button?.closest('[data-id]')?.dataset.id;
    if (!id) return;
    if (button.dataset.action === 'correct') startEdit(id);
    if (button.dataset.action === 'forget') askForget(id);
    if (button.dataset.action === 'confirm') confirmMemory(id);
    if (button.dataset.action === 'history') toggleHistory(id);
    if (button.dataset.action === 'sources') toggleSources(id);
  });
  el.refresh.addEventListener('click', () => {
    setStatus('');
    load({ announce: true });
    profile.load();
  });
  el.rememberForm.addEventListener('submit', add);
  el.forgetDialog.addEventListener('close', forgetDialogClosed);

  return { show, load, afterExchange, reset };
}
