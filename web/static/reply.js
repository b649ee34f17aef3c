// How a reply of Mr. Mentor's is shown. Its text reaches the page through
// renderReplyText alone, and what the reply's metadata tells under it
// through showReplyDetails alone, so that how replies look is changed in
// one place each.

import { setMarkdown } from './markdown.js';

// renderReplyText shows a reply's text in element, replacing what it
// showed: as the reply grows, when it is whole, when it is restored. The
// mentor writes Markdown; it is built as elements, never parsed as HTML.
export function renderReplyText(element, text) {
  setMarkdown(element, text);
}

// showReplyDetails adds under a reply (its list item) what its metadata
// (the counselor's answer: memories_used, context_tokens, tool_calls,
// without_memory, …) tells the facilitator: what of his memory Mr. Mentor
// used, with the memories on a click (lookUp(ids) reads them), that he
// looked back at earlier conversations, or that he answered without his
// memory. It is the one place for more of it.
export function showReplyDetails(item, reply, lookUp) {
  const details = document.createElement('div');
  details.className = 'reply-details';
  const used = usedMemories(reply);
  if (used.label) details.append(usedList(used, lookUp));
  const looked = lookedBack(reply);
  if (looked) details.append(detail(looked, 'looked-back'));
  if (reply.without_memory) {
    details.append(detail('Mr. Mentor couldn’t reach his memory just now, so this answer doesn’t draw on what he remembers. ' +
      'Nothing is lost: it will be there next time.', 'without-memory'));
  }
  if (details.childElementCount > 0) item.append(details);
}

// lookedBack says how many earlier conversations Mr. Mentor's searches
// found for a reply ("Looked back at 2 conversations"), or "" when he did
// not search.
export function lookedBack(reply) {
  const searches = (Array.isArray(reply.tool_calls) ? reply.tool_calls : [])
    .filter((call) => call && call.name === 'search_conversation_history');
  if (searches.length === 0) return '';
  // A search that failed or was not run says nothing of what it found.
  const ran = searches.filter((call) => typeof call.found === 'number');
  if (ran.length === 0) return 'Looked back at earlier conversations';
  const found = ran.reduce((n, call) => n + call.found, 0);
  if (found === 0) return 'Looked back at earlier conversations; nothing matched';
  return found === 1 ? 'Looked back at 1 conversation' : `Looked back at ${found} conversations`;
}

// The blocks of the context whose memories were recalled for the message,
// as against those standing behind the profile's lines.
const RECALLED_BLOCKS = new Set(['memories', 'emotional_patterns']);

// usedMemories says what of memory went into a reply: the ids of the
// memories recalled for it, and a label such as "Used 3 memories and the
// profile" (empty when nothing of memory went in).
export function usedMemories(reply) {
  const sources = Array.isArray(reply.memories_used) ? reply.memories_used : [];
  const ids = [...new Set(sources.filter((s) => s.kind === 'memory' && RECALLED_BLOCKS.has(s.block)).map((s) => s.id))];
  const blocks = (reply.context_tokens && reply.context_tokens.blocks) || {};
  const parts = [];
  if (ids.length > 0) parts.push(ids.length === 1 ? '1 memory' : `${ids.length} memories`);
  if (blocks.profile > 0) parts.push('the profile');
  if (blocks.opening > 0) parts.push('the last session');
  if (blocks.summary > 0 && parts.length === 0) parts.push('your conversation’s summary');
  const label = parts.length === 0 ? ''
    : 'Used ' + (parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`);
  return { ids, label };
}

// usedList is the label, opening on a click onto the memories it counts.
function usedList({ ids, label }, lookUp) {
  if (ids.length === 0 || !lookUp) return detail(label, 'used');
  const box = document.createElement('details');
  box.className = 'reply-detail used';
  const summary = document.createElement('summary');
  summary.textContent = label;
  const list = document.createElement('ul');
  list.className = 'used-memories';
  box.append(summary, list);
  let read = false;
  box.addEventListener('toggle', async () => {
    if (!box.open || read) return;
    read = true;
    list.replaceChildren(listItem('Reading…'));
    try {
      const memories = await lookUp(ids);
      const shown = memories.map((m) => listItem(m.content));
      // Forgotten or changed since the reply, or beyond the memories read.
      const missing = ids.length - memories.length;
      if (missing > 0) shown.push(listItem(missing === 1 ? '1 more, not shown here' : `${missing} more, not shown here`));
      list.replaceChildren(...shown);
    } catch {
      read = false;
      list.replaceChildren(listItem('They could not be read just now; close and open this to try again.'));
    }
  });
  return box;
}

function listItem(text) {
  const li = document.createElement('li');
  li.textContent = text;
  return li;
}

function detail(text, kind) {
  const p = document.createElement('p');
  p.className = `reply-detail ${kind}`;
  p.textContent = text;
  return p;
}

// What Mr. Mentor is doing while a tool runs, by the tool's name.
const TOOL_ACTIVITY = {
  search_conversation_history: 'Looking back at earlier conversations…',
  get_conversation_memory: 'Reading his notes on your conversation…',
  recall_learner_memories: 'Remembering what he knows…',
  list_learner_memories: 'Going over what he knows…',
  flag_memory: 'Noting something to check with you…',
  forget_memory: 'Preparing a change for you to confirm…',
  forget_topic: 'Preparing a change for you to confirm…',
  correct_memory: 'Preparing a change for you to confirm…',
};

// toolActivity says, quietly, what a running tool does.
export function toolActivity(name) {
  return TOOL_ACTIVITY[name] || 'Checking his memory…';
}
