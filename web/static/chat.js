// The conversation with Mr. Mentor: the messages on screen, the composer
// with Send and Stop, a reply shown as it is written, the session's
// opening, the conversation brought back after a reload, and every
// exchange kept until the memory has it (outbox.js). A reply's text is
// shown through reply.js; everything else goes in as text, never as markup.

import { textList } from './dom.js';
import { createOutbox } from './outbox.js';
import { renderReplyText, showReplyDetails, toolActivity } from './reply.js';

// The server refuses a chat request whose history holds more turns; within
// it, the server keeps what fits the model's token budget, the newest
// exchanges first.
const MAX_HISTORY = 1000;

// How many of a learner's memories are read to show the ones a reply used:
// the most GET /api/memories lists at once.
const MEMORIES_READ = 200;
// The longest turn the memory stores.
const MAX_TURN_CHARS = 20000;
// Ends the text of a reply the facilitator stopped, on screen and in the
// memory alike: what was shown, then this.
export const CUT_OFF = ' […]';
// The server ends a session nobody spoke in for this long (mentor's
// SessionIdleLimit): the next message starts a new one.
const SESSION_IDLE_MS = 30 * 60 * 1000;
// A message longer than this, in characters or lines, is shown folded.
const FOLD_CHARS = 600;
const FOLD_LINES = 8;

// browserTimeZone is the facilitator's IANA time zone, so that the mentor's
// "it's Friday" is their Friday; '' (UTC) when the browser does not say.
function browserTimeZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || '';
  } catch {
    return '';
  }
}

// localDate is today's date where the facilitator is, as YYYY-MM-DD.
function localDate(d = new Date()) {
  const two = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
}

// newTurnId names a turn so a resent save is recognised. randomUUID needs a
// secure context (https or localhost); a LAN address over http has only
// getRandomValues.
function newTurnId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// storedContent fits a turn to what the memory stores: a longer one keeps
// its start and is marked cut off.
function storedContent(text) {
  return text.length <= MAX_TURN_CHARS ? text : text.slice(0, MAX_TURN_CHARS - CUT_OFF.length) + CUT_OFF;
}

// liveStart is the index of the first of turns (oldest first) that belong
// to the session still going on: those after the last session ended (the
// opening is made when it ends) with no pause longer than the server's
// idle limit between them, or up to now. turns.length when none do.
export function liveStart(turns, opening, now = Date.now()) {
  const endedAt = opening ? Date.parse(opening.computed_at) : NaN;
  let start = turns.length;
  let later = now;
  for (let i = turns.length - 1; i >= 0; i--) {
    const at = Date.parse(turns[i].created_at);
    // at <= NaN is false: with no opening, no session has ended.
    if (Number.isNaN(at) || at <= endedAt || later - at > SESSION_IDLE_MS) break;
    start = i;
    later = at;
  }
  return start;
}

// chatProblem says in plain words why a message got no answer, whether
// trying again may help, and how the notice looks. The server's own words
// are kept only for a refusal of the message itself (400, 413).
function chatProblem(err, modelConfigured) {
  if (!modelConfigured) {
    return { text: 'Mr. Mentor can’t answer on this server yet: no mentor model is set up. Memory and search still work.', kind: 'warning' };
  }
  switch (err.status) {
    case 400:
    case 413:
      return { text: `Mr. Mentor couldn’t take that message: ${err.message}`, kind: 'error' };
    case 404:
      return { text: 'Mr. Mentor couldn’t find this learner any more. Pick them again, or reload the page.', kind: 'error' };
    case 429:
      return { text: 'That was a lot of messages in a short time: wait a minute.', kind: 'warning', retry: true };
    case 503:
      return { text: 'Mr. Mentor is busy just now: wait a moment.', kind: 'warning', retry: true };
    default:
      return { text: 'Mr. Mentor couldn’t answer just now.', kind: 'error', retry: true };
  }
}

// createChat runs the chat in el (messages, chatForm, message, send,
// stop). It needs: api (api.js's client), layout (layout.js, which scrolls
// the chat as the page is laid out), actions (actions.js), user() the
// signed-in facilitator's id, scopeName(learnerId) for "Emma" or "the
// general conversation", modelConfigured(), canSend() false while
// something else holds the chat (a session ending), setBusy(busy) to hold
// the controls that must wait for a reply, inOrder(fn) to run saves in
// order with the memory's other work, and onSaved(learnerId, answer) for
// each exchange the memory stored.
export function createChat({ api, el, layout, actions, user, scopeName, modelConfigured, canSend, setBusy, inOrder, onSaved }) {
  let learnerId = '';
  // Bumped when the conversation on screen changes (another learner, a
  // sign-out): what arrives for an earlier one is dropped.
  let epoch = 0;
  // This session's turns ({ id, role, content }), sent with each message.
  let history = [];
  // The reply on its way: { controller, stopped }; null when none is.
  let active = null;
  // Each queued exchange's reply on screen, by the exchange's id, to say
  // whether it was saved.
  const saveMarks = new Map();
  // Keep the newest message in view unless the facilitator scrolled away.
  let following = true;
  let textIds = 0;

  const outbox = createOutbox({ api, user, inOrder, onSaved, onState: markSave });

  // ------------------------------------------------------------ the view

  function scrollToEnd() {
    layout.scrollToEnd();
    following = true;
  }

  // followReply keeps a growing reply in view, but never scrolls its start
  // out of sight (a long reply is read from its top), and leaves the page
  // alone once the facilitator scrolls it.
  function followReply(item) {
    if (following) layout.reveal(item);
  }

  function add(item, before = null) {
    el.messages.insertBefore(item, before);
    if (!before) scrollToEnd();
    return item;
  }

  function noticeItem(text, kind = '') {
    const li = document.createElement('li');
    li.className = `notice ${kind}`.trim();
    li.textContent = text;
    return li;
  }

  // messageItem is one message: who said it and its text, a long one
  // folded.
  function messageItem(role, text) {
    const li = document.createElement('li');
    li.className = `msg ${role}`;
    const who = document.createElement('span');
    who.className = 'who';
    who.textContent = role === 'user' ? 'You' : 'Mr. Mentor';
    // The mentor writes Markdown (blocks: a div); the facilitator's words
    // show as written.
    const body = document.createElement(role === 'assistant' ? 'div' : 'p');
    body.className = 'text';
    li.append(who, body);
    if (role === 'assistant') {
      renderReplyText(body, text);
    } else {
      body.textContent = text;
      foldIfLong(li, body, text);
    }
    return li;
  }

  // foldIfLong shows a long message (a pasted school report) as its first
  // lines, with a button to show all of it.
  function foldIfLong(item, body, text) {
    if (text.length <= FOLD_CHARS && text.split('\n').length <= FOLD_LINES) return;
    body.id = `message-text-${++textIds}`;
    item.classList.add('folded');
    const toggle = document.createElement('button');
    toggle.type = 'button';
    toggle.className = 'quiet fold-toggle';
    toggle.setAttribute('aria-controls', body.id);
    const show = (folded) => {
      item.classList.toggle('folded', folded);
      toggle.textContent = folded ? 'Show all' : 'Show less';
      toggle.setAttribute('aria-expanded', String(!folded));
    };
    toggle.addEventListener('click', () => show(!item.classList.contains('folded')));
    show(true);
    body.after(toggle);
  }

  // openingItem is the session's opening as the server prepared it when
  // the last one ended: Mr. Mentor's first words, and under them what was
  // left from last time and what matters today.
  function openingItem(opening) {
    // Not a reply: nothing of it goes into the history or the memory.
    const li = messageItem('assistant', opening.suggested_opener || opening.welcome_hook || 'Welcome back.');
    li.className = 'msg opening';
    const hook = opening.suggested_opener ? opening.welcome_hook : '';
    const notes = textList([hook, ...textList(opening.unfinished_threads).filter((t) => !hook.includes(t)),
      ...textList(opening.personal_relevance)]);
    if (notes.length > 0) {
      const list = document.createElement('ul');
      list.className = 'opening-notes';
      list.setAttribute('aria-label', 'For this session');
      for (const note of notes) {
        const entry = document.createElement('li');
        entry.textContent = note;
        list.append(entry);
      }
      li.append(list);
    }
    return li;
  }

  function newConversationNotice() {
    return noticeItem(learnerId
      ? `A new conversation about ${scopeName(learnerId)}. Mr. Mentor remembers your earlier ones.`
      : 'A new general conversation. Mr. Mentor remembers your earlier ones.');
  }

  // markSave says on a reply whether its exchange is stored: nothing once
  // it is, "Not saved · Retry" while the server cannot be reached.
  function markSave(entry, state, message) {
    const item = saveMarks.get(entry.id);
    if (!item) return;
    let mark = item.querySelector('.save-state');
    if (state === 'saved') {
      mark?.remove();
      saveMarks.delete(entry.id);
      return;
    }
    if (state === 'saving' && !mark) return; // a first try says nothing
    if (!mark) {
      mark = document.createElement('p');
      mark.className = 'save-state';
      mark.setAttribute('role', 'status');
      item.append(mark);
    }
    mark.dataset.state = state;
    if (state === 'saving') {
      mark.textContent = 'Saving…';
    } else if (state === 'refused') {
      mark.textContent = `Not saved: ${message}`;
      saveMarks.delete(entry.id);
    } else {
      const retry = document.createElement('button');
      retry.type = 'button';
      retry.className = 'retry';
      retry.textContent = 'Retry';
      retry.setAttribute('aria-label', 'Retry saving this exchange');
      retry.addEventListener('click', () => outbox.flush());
      mark.replaceChildren('Not saved · ', retry);
    }
  }

  // ------------------------------------------------ opening a conversation

  // open shows the conversation about a learner ('' the general one): the
  // recent turns the memory holds, the exchanges still waiting to be
  // saved, and, when no session is going on, the session's opening.
  // conversationRead is the memory's read of it (GET
  // /api/conversation-memory): the record, null when there is none,
  // undefined when it could not be read.
  function open(id, conversationRead) {
    endReply();
    epoch++;
    const mine = epoch;
    learnerId = id;
    history = [];
    saveMarks.clear();
    // Taken before the answers come, so that an exchange saved meanwhile
    // is in one or the other.
    const unsaved = outbox.pending(id);
    el.messages.replaceChildren();
    const loading = add(noticeItem('Opening the conversation…', 'pending'));
    const query = new URLSearchParams({ date: localDate() });
    if (id) query.set('learner_id', id);
    const openingRead = api.get(`/api/opening-context?${query}`).then((data) => data.opening || null, () => null);
    // Changes proposed from the chat that still wait for a decision: their
    // replies' buttons went with the page.
    const waitingRead = api.get('/api/actions?status=pending').then(
      (data) => (data.actions || []).filter((a) => (a.learner_id || '') === id), () => []);
    Promise.all([Promise.resolve(conversationRead).catch(() => undefined), openingRead, waitingRead]).then(([record, opening, proposed]) => {
      if (mine === epoch) restore(loading, record, opening, unsaved, proposed);
    });
  }

  function restore(loading, record, opening, unsaved, proposed) {
    const turns = (record && Array.isArray(record.recent_turns) ? record.recent_turns : [])
      .filter((t) => t && (t.role === 'user' || t.role === 'assistant') && typeof t.content === 'string');
    const stored = new Set(turns.map((t) => t.id).filter(Boolean));
    // Dropped since (saved, or refused for good), or among the turns read:
    // not waiting any more.
    const waiting = unsaved.filter((e) => !['saved', 'refused'].includes(outbox.stateOf(e.id)) &&
      !e.turns.every((t) => stored.has(t.id)));
    const start = liveStart(turns, opening);
    const items = [];
    if (start > 0 && start === turns.length) {
      items.push(noticeItem(learnerId ? `Your last conversation about ${scopeName(learnerId)}` : 'Your last general conversation', 'earlier'));
    }
    for (const t of turns) items.push(messageItem(t.role, t.content));
    for (const entry of waiting) {
      const [asked, answered] = entry.turns;
      items.push(messageItem('user', asked.content));
      const reply = messageItem('assistant', answered.content);
      items.push(reply);
      saveMarks.set(entry.id, reply);
    }
    const live = [...turns.slice(start), ...waiting.flatMap((e) => e.turns)].map(({ id, role, content }) => ({ id, role, content }));
    // Messages sent while the conversation was read come after it.
    history = [...live, ...history];
    if (history.length === 0) items.push(opening ? openingItem(opening) : newConversationNotice());
    if (record === undefined) items.push(noticeItem('The earlier conversation could not be shown just now; Mr. Mentor still has it.'));
    if (!modelConfigured()) {
      items.push(noticeItem('No mentor model is configured on this server, so Mr. Mentor cannot answer yet. Memory and search still work.', 'warning'));
    }
    if (proposed.length > 0) {
      const waitingItem = noticeItem('Waiting for your decision', 'proposed');
      actions.show(waitingItem, proposed);
      items.push(waitingItem);
    }
    for (const item of items) add(item, loading);
    loading.remove();
    for (const entry of waiting) markSave(entry, outbox.stateOf(entry.id) === 'saving' ? 'saving' : 'failed');
    scrollToEnd();
  }

  // ------------------------------------------------------------- sending

  function setStreaming(on) {
    // Stop is about to hide: the keyboard goes back to the message box.
    if (!on && document.activeElement === el.stop) el.message.focus();
    setBusy(on);
    el.send.hidden = on;
    el.stop.hidden = !on;
    // The log announces the reply once it is whole, not at every word.
    el.messages.setAttribute('aria-busy', String(on));
  }

  // endReply drops the reply on its way, unsaved: the conversation on
  // screen is no longer its own.
  function endReply() {
    if (!active) return;
    active.controller.abort();
    active = null;
    setStreaming(false);
  }

  function stop() {
    if (!active) return;
    active.stopped = true;
    active.controller.abort();
  }

  // growingReply is the reply's item as it is written: its text, rendered
  // at most once a frame, and a quiet line saying what Mr. Mentor is doing.
  function growingReply() {
    const item = messageItem('assistant', '');
    item.classList.add('streaming');
    const body = item.querySelector('.text');
    const activity = document.createElement('p');
    activity.className = 'activity';
    activity.textContent = 'Mr. Mentor is thinking…';
    item.append(activity);
    let text = '';
    let frame = 0;
    const render = () => {
      frame = 0;
      renderReplyText(body, text);
      followReply(item);
    };
    return {
      item,
      grow(piece) {
        text += piece;
        activity.hidden = true;
        if (!frame) frame = requestAnimationFrame(render);
      },
      doing(what) {
        activity.textContent = what;
        activity.hidden = false;
        followReply(item);
      },
      shown: () => text,
      // finish shows the whole reply (the server's text, or what was shown
      // with CUT_OFF) and what its metadata tells; lookUp(ids) reads the
      // memories it used.
      finish(whole, reply, lookUp) {
        cancelAnimationFrame(frame);
        frame = 0;
        activity.remove();
        item.classList.remove('streaming');
        renderReplyText(body, whole);
        if (reply) {
          showReplyDetails(item, reply, lookUp);
          actions.show(item, reply.pending_actions);
        }
        followReply(item);
      },
    };
  }

  // memoriesOf reads, of the memories about the learner (or of the
  // general conversation), those with ids, in the order of ids.
  async function memoriesOf(learner, ids) {
    const answer = await api.get(`/api/memories?learner_id=${encodeURIComponent(learner)}&limit=${MEMORIES_READ}`);
    const byId = new Map((answer.memories || []).map((m) => [m.id, m]));
    return ids.map((id) => byId.get(id)).filter(Boolean);
  }

  async function send(text = el.message.value.trim()) {
    if (!text || active || !canSend()) return;
    const mine = epoch;
    const about = learnerId;
    const request = {
      message: text, learner_id: about || null, history: history.slice(-MAX_HISTORY), time_zone: browserTimeZone(),
    };
    const current = { controller: new AbortController(), stopped: false };
    active = current;
    setStreaming(true);
    const asked = add(messageItem('user', text));
    if (el.message.value.trim() === text) el.message.value = '';
    const reply = growingReply();
    add(reply.item);
    try {
      const answer = await api.stream('/api/counselor', request, {
        signal: current.controller.signal,
        onEvent(name, data) {
          if (mine !== epoch) return;
          if (name === 'text' && typeof data.text === 'string') reply.grow(data.text);
          else if (name === 'tool') reply.doing(toolActivity(data.name));
        },
      });
      if (mine !== epoch) return;
      const whole = typeof answer.reply === 'string' ? answer.reply.trim() : '';
      if (!whole) {
        reply.item.remove();
        add(noticeItem('Mr. Mentor gave an empty answer. Try asking again.', 'error'));
        return;
      }
      reply.finish(whole, answer, (ids) => memoriesOf(about, ids));
      keep(about, text, whole, reply.item);
    } catch (err) {
      if (mine !== epoch) return;
      if (err.name === 'AbortError') {
        if (current.stopped) stopped(asked, reply, text, about);
        return;
      }
      reply.item.remove();
      if (err.status === 401) return; // signed out, with its own message
      failed(asked, text, err);
    } finally {
      if (active === current) {
        active = null;
        setStreaming(false);
      }
    }
  }

  // stopped keeps what was shown of a reply the facilitator stopped,
  // marked cut off, and saves it as the exchange; a reply stopped before
  // its first word leaves the question unanswered and back in the box.
  function stopped(asked, reply, text, about) {
    const shown = reply.shown().trim();
    if (!shown) {
      reply.item.remove();
      asked.classList.add('failed');
      add(noticeItem('Stopped before Mr. Mentor answered. Your message is back in the box.'));
      if (!el.message.value) el.message.value = text;
      return;
    }
    const cut = shown + CUT_OFF;
    reply.finish(cut, null);
    reply.item.classList.add('cut-off');
    keep(about, text, cut, reply.item);
  }

  // failed says why the message got no answer, in plain words, with a
  // button to try again; the words go back into the box to edit.
  function failed(asked, text, err) {
    asked.classList.add('failed');
    const problem = chatProblem(err, modelConfigured());
    const notice = noticeItem(problem.text, problem.kind);
    if (problem.retry) {
      const again = document.createElement('button');
      again.type = 'button';
      again.className = 'quiet retry';
      again.textContent = 'Try again';
      again.addEventListener('click', () => {
        if (active || !canSend()) return;
        notice.remove();
        asked.remove();
        if (el.message.value.trim() === text) el.message.value = '';
        send(text);
      });
      notice.append(' ', again);
    }
    add(notice);
    if (!el.message.value) el.message.value = text;
  }

  // keep adds the exchange to the session's history and to the memory,
  // through the outbox, which keeps it until it is stored.
  function keep(about, question, answer, item) {
    const turns = [
      { id: newTurnId(), role: 'user', content: storedContent(question) },
      { id: newTurnId(), role: 'assistant', content: storedContent(answer) },
    ];
    history.push(...turns);
    saveMarks.set(turns[0].id, item);
    outbox.add(about, turns);
  }

  // ------------------------------------------------------------- wiring

  el.chatForm.addEventListener('submit', (event) => {
    event.preventDefault();
    send();
  });
  // On a touch screen Enter is a new line, as a phone's keyboard shows it;
  // Send sends.
  const touchScreen = matchMedia('(pointer: coarse)');
  el.message.addEventListener('keydown', (event) => {
    // Enter sends, Shift+Enter is a new line; an IME composing text keeps its Enter.
    if (touchScreen.matches) return;
    if (event.key === 'Enter' && !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey && !event.isComposing) {
      event.preventDefault();
      el.chatForm.requestSubmit();
    }
  });
  el.stop.addEventListener('click', stop);
  // A narrower window rewraps the messages and would leave the newest one
  // out of view; follow the end again unless the user had scrolled up. On
  // a phone the page scrolls, not the messages: a hand on the wheel or the
  // screen says the facilitator is reading elsewhere.
  el.messages.addEventListener('scroll', () => {
    const m = el.messages;
    following = m.scrollHeight - m.scrollTop - m.clientHeight < 24;
  });
  for (const hand of ['wheel', 'touchmove']) {
    window.addEventListener(hand, () => {
      if (active) following = false;
    }, { passive: true });
  }
  new ResizeObserver(() => {
    if (following) el.messages.scrollTop = el.messages.scrollHeight;
  }).observe(el.messages);

  return {
    open,
    // notice adds a line from the page (a session's end, a clear) at the
    // end of the conversation; append adds an item built elsewhere.
    notice: (text, kind) => add(noticeItem(text, kind)),
    append: (item) => add(item),
    busy: () => active !== null,
    // forget starts the history afresh: the session ended or the memory
    // was cleared, and the next message opens a new session.
    forget() {
      history = [];
    },
    // reset empties the chat at sign-out; nothing of it is sent after.
    reset() {
      endReply();
      epoch++;
      history = [];
      saveMarks.clear();
      el.messages.replaceChildren();
      outbox.stop();
    },
    // startSaving saves what an earlier visit left queued (at sign-in).
    startSaving: () => outbox.start(),
    retrySaving: () => outbox.retryIfWaiting(),
    // dropUnsaved forgets the queued exchanges of an erased learner, or
    // with no learner of the erased account.
    dropUnsaved: (id) => outbox.drop(id),
  };
}
