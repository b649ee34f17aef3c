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
// (the counselor's answer: tool_calls, without_memory, …) tells the
// facilitator: that Mr. Mentor looked back at earlier conversations, or
// answered without his memory. It is the one place for more of it.
export function showReplyDetails(item, reply) {
  const details = document.createElement('div');
  details.className = 'reply-details';
  const calls = Array.isArray(reply.tool_calls) ? reply.tool_calls : [];
  // The answer names the searches, not what they found: how many
  // conversations came back is not known here.
  if (calls.some((call) => call && call.name === 'search_conversation_history')) {
    details.append(detail('Looked back at earlier conversations', 'looked-back'));
  }
  if (reply.without_memory) {
    details.append(detail('Mr. Mentor couldn’t reach his memory just now, so this answer doesn’t draw on what he remembers. ' +
      'Nothing is lost: it will be there next time.', 'without-memory'));
  }
  if (details.childElementCount > 0) item.append(details);
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
