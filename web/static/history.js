// A memory's history as the knowledge panel lists it: each change, who
// made it and when, with the text and confidence before and after.

import { percent, timeElement } from './dom.js';

// The changes and their makers, in the facilitator's words.
const CHANGE_LABELS = {
  created: 'Remembered',
  merged: 'Merged',
  confirmed: 'Confirmed',
  corrected: 'Corrected',
  superseded: 'Superseded',
  expired: 'Expired',
  resolved: 'Resolved',
  forgotten: 'Forgotten',
  flagged: 'Flagged as not quite right',
};
const ACTOR_LABELS = {
  facilitator: 'by you',
  extraction: 'by Mr. Mentor, from a conversation',
  consolidation: 'by Mr. Mentor, going over what he knows',
  // A change made from the chat: confirmed by you, or a flag you asked for.
  chat: 'from your chat with Mr. Mentor',
};
// What the memory a change names did to this one.
const RELATED_LABELS = { superseded: 'Replaced by', merged: 'Merged into', resolved: 'Settled by' };

// fromTo shows a change as "before → after"; a screen reader hears "to".
function fromTo(before, after) {
  const arrow = document.createElement('span');
  arrow.setAttribute('aria-hidden', 'true');
  arrow.textContent = ' → ';
  const to = document.createElement('span');
  to.className = 'visually-hidden';
  to.textContent = ' to ';
  const f = document.createDocumentFragment();
  f.append(before, arrow, to, after);
  return f;
}

const text = (v) => (typeof v === 'string' ? v : null);
const number = (v) => (typeof v === 'number' ? v : null);

// historyList lists changes, oldest first. quoteMemory(id) quotes a memory
// a change names, or answers '' for one not on screen.
export function historyList(changes, quoteMemory) {
  const list = document.createElement('ol');
  list.className = 'history-list';
  list.setAttribute('aria-label', 'History of this memory, oldest first');
  let status = '';
  for (const c of changes) {
    list.append(entry(c, status, quoteMemory));
    status = c.status_after || status;
  }
  return list;
}

// entry is one change: what, by whom and when, then the text and
// confidence before and after, the status it left when that changed, and
// the memory it names.
function entry(c, statusBefore, quoteMemory) {
  const li = document.createElement('li');
  li.className = 'change';
  li.dataset.change = c.change;
  const head = document.createElement('p');
  head.className = 'change-head';
  const what = document.createElement('strong');
  what.textContent = CHANGE_LABELS[c.change] || c.change;
  head.append(what, ` ${ACTOR_LABELS[c.actor] || `by ${c.actor}`} · `, timeElement(c.at));
  li.append(head);
  const detail = (className, ...content) => {
    const p = document.createElement('p');
    p.className = `change-detail ${className}`;
    p.append(...content);
    li.append(p);
  };
  const before = text(c.content_before);
  const after = text(c.content_after);
  if (before !== null && after !== null && before !== after) {
    detail('change-text', fromTo(`“${before}”`, `“${after}”`));
  } else if (before === null && after !== null) {
    detail('change-text', `“${after}”`);
  }
  const confidenceBefore = number(c.confidence_before);
  const confidenceAfter = number(c.confidence_after);
  if (confidenceBefore !== null && confidenceAfter !== null && confidenceBefore !== confidenceAfter) {
    detail('change-confidence', 'Confidence ', fromTo(percent(confidenceBefore), percent(confidenceAfter)));
  } else if (confidenceBefore === null && confidenceAfter !== null) {
    detail('change-confidence', `Confidence ${percent(confidenceAfter)}`);
  }
  if (c.status_after && statusBefore && c.status_after !== statusBefore) {
    detail('change-status', `Now ${c.status_after}`);
  }
  const related = c.related_memory_id ? quoteMemory(c.related_memory_id) : '';
  if (related) detail('change-related', `${RELATED_LABELS[c.change] || 'About'} ${related}`);
  return li;
}
