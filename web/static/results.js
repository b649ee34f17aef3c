// Search results in plain words: whom the conversation was about ("About
// Emma", "General"), how long it is ("8 messages"), when it was last
// written or archived, and its best-matching messages, each saying who said
// it ("You", "Mr. Mentor"), with the searched words highlighted. "Read the
// conversation" opens its summary and its messages: a current
// conversation's latest ones (GET /api/conversation-memory), an archived
// one's every message, a page at a time (GET /api/archives/{id}).

import { element, shortDate } from './dom.js';
import { plainError } from './errors.js';
import { markedText, renderMarkdown } from './markdown.js';
import { snippetFragment, snippetText } from './snippet.js';

// How much of a long message a match shows, from the line of its first
// highlighted word; a line longer than that is cut around the word.
const EXCERPT_CHARS = 400;
const BEFORE_MATCH = 120;

// Messages of an archived conversation shown at once, and by each "Show
// more": an ordinary archive (50 messages) shows whole.
const ARCHIVE_PAGE = 100;

const MARK_START = '\uE000';
const MARK_STOP = '\uE001';

function dateElement(iso, prefix = '') {
  const t = document.createElement('time');
  t.dateTime = iso;
  t.textContent = `${prefix}${shortDate(iso)}`;
  t.title = new Date(iso).toLocaleString();
  return t;
}

// queryWords are the searched words, lower-cased, worth highlighting.
function queryWords(q) {
  return [...new Set(String(q).toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 3))];
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// highlight puts the highlight marks around the words that begin with a
// searched word (search matches word stems: "fraction" finds "fractions").
export function highlight(text, words) {
  if (words.length === 0) return text;
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${words.map(escapeRegExp).join('|')})[\\p{L}\\p{N}]*`, 'giu');
  return text.replace(pattern, (w) => `${MARK_START}${w}${MARK_STOP}`);
}

// excerpt cuts a long message to the part around its first highlight:
// whole lines from the one it is on, so that the Markdown of a list or a
// paragraph stays whole, or the words around it in a very long line.
function excerpt(text) {
  if (text.length <= EXCERPT_CHARS) return text;
  const lines = text.split('\n');
  let first = lines.findIndex((line) => line.includes(MARK_START));
  if (first < 0) first = 0;
  const kept = [];
  let size = 0;
  for (let i = first; i < lines.length && size < EXCERPT_CHARS; i++) {
    kept.push(lines[i]);
    size += lines[i].length + 1;
  }
  let cut = kept.join('\n');
  const before = first > 0;
  let after = first + kept.length < lines.length;
  if (cut.length > EXCERPT_CHARS + BEFORE_MATCH) {
    const at = Math.max(0, cut.indexOf(MARK_START));
    let start = Math.max(0, at - BEFORE_MATCH);
    let end = Math.min(cut.length, start + EXCERPT_CHARS);
    // Whole words.
    while (start > 0 && /\S/.test(cut[start - 1])) start--;
    while (end < cut.length && /\S/.test(cut[end])) end++;
    after = after || end < cut.length;
    cut = `${start > 0 ? '…' : ''}${cut.slice(start, end)}`;
  }
  // No highlight left open.
  if (cut.lastIndexOf(MARK_START) > cut.lastIndexOf(MARK_STOP)) cut += MARK_STOP;
  return `${before && !cut.startsWith('…') ? '…\n' : ''}${cut}${after ? ' …' : ''}`;
}

// markedWords are the words the server highlighted in the snippet: the
// forms the search matched, misspellings it corrected included.
function markedWords(snippet) {
  return [...String(snippet || '').matchAll(/<mark>(.*?)<\/mark>/g)]
    .map((m) => snippetText(m[1]).toLowerCase().trim())
    .filter((w) => w.length >= 2);
}

function who(role) {
  return role === 'user' ? 'You' : 'Mr. Mentor';
}

// message is one turn: who said it, and the text, the mentor's as Markdown,
// with the searched words highlighted.
function message(turn, words, { cut = false, className = 'said' } = {}) {
  const li = element('li', `${className} ${turn.role === 'user' ? 'user' : 'assistant'}`);
  const head = element('p', 'said-who');
  head.append(element('strong', '', who(turn.role)));
  if (turn.created_at) head.append(' · ', dateElement(turn.created_at));
  let text = highlight(String(turn.content || ''), words);
  if (cut) text = excerpt(text);
  const body = element('div', 'said-text');
  if (turn.role === 'user') {
    // The facilitator's own words, as they wrote them.
    body.classList.add('plain');
    body.append(markedText()(text));
  } else {
    body.classList.add('md');
    body.append(renderMarkdown(text, { text: markedText() }));
  }
  li.append(head, body);
  return li;
}

// createResults builds result items. learnerName(id) names a learner.
export function createResults({ api, learnerName }) {
  function item(r, q) {
    const words = [...new Set([...queryWords(q), ...markedWords(r.snippet)])];
    const li = element('li', 'result');
    li.dataset.id = r.id;
    const meta = element('p', 'meta');
    const about = r.learner_id ? `About ${learnerName(r.learner_id) || 'a learner'}` : 'General';
    meta.append(element('strong', 'about', about));
    if (r.turn_count) meta.append(` · ${r.turn_count} ${r.turn_count === 1 ? 'message' : 'messages'}`);
    meta.append(' · ', r.archived ? dateElement(r.date, 'archived ') : dateElement(r.date, 'last written '));
    li.append(meta);

    const matches = Array.isArray(r.matches) ? r.matches : [];
    if (matches.length > 0) {
      const list = element('ol', 'matches');
      list.setAttribute('aria-label', 'Best-matching messages');
      list.append(...matches.map((t) => message(t, words, { cut: true, className: 'said match' })));
      li.append(list);
    } else {
      // Only the summary matched: no one message said it.
      const snippet = element('div', 'snippet md');
      snippet.append(snippetFragment(r.snippet || r.summary || ''));
      li.append(element('p', 'said-who', 'In the summary:'), snippet);
    }

    const panel = element('div', 'conversation');
    panel.id = `conversation-${r.id}`;
    panel.hidden = true;
    const open = element('button', 'quiet open-conversation', 'Read the conversation');
    open.type = 'button';
    open.setAttribute('aria-expanded', 'false');
    open.setAttribute('aria-controls', panel.id);
    open.addEventListener('click', () => toggle(r, words, open, panel));
    li.append(open, panel);
    return li;
  }

  async function toggle(r, words, button, panel) {
    if (!panel.hidden) {
      panel.hidden = true;
      button.setAttribute('aria-expanded', 'false');
      button.textContent = 'Read the conversation';
      return;
    }
    panel.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    button.textContent = 'Close the conversation';
    panel.replaceChildren();
    if (r.summary) {
      panel.append(element('h4', '', 'Summary'));
      const summary = element('div', 'md conversation-summary');
      summary.append(renderMarkdown(highlight(r.summary, words), { text: markedText() }));
      panel.append(summary);
    }
    if (r.archived) {
      await showArchive(r, words, panel);
      return;
    }
    const status = element('p', 'hint', 'Loading the latest messages…');
    panel.append(status);
    try {
      const query = r.learner_id ? `?learner_id=${encodeURIComponent(r.learner_id)}` : '';
      const data = await api.get(`/api/conversation-memory${query}`);
      // Closed meanwhile, or opened again: this answer's place is gone.
      if (!status.isConnected) return;
      const conv = data.conversation_update;
      if (!conv || conv.id !== r.id) {
        status.textContent = 'This conversation was cleared since: search again with “Include archive” to find it.';
        return;
      }
      const turns = Array.isArray(conv.recent_turns) ? conv.recent_turns : [];
      if (turns.length === 0) {
        status.textContent = 'No message is kept yet.';
        return;
      }
      const heading = element('h4', '', turns.length < conv.turn_count
        ? `The latest ${turns.length} of ${conv.turn_count} messages` : 'The messages');
      const list = element('ol', 'conversation-turns');
      list.append(...messages(r, turns, words));
      status.replaceWith(heading, list);
    } catch (err) {
      if (err.status === 401) return;
      status.textContent = `Could not load the conversation: ${plainError(err)}`;
      status.className = 'error';
    }
  }

  // showArchive shows an archived conversation's messages, the first page
  // and then each next one on "Show more".
  async function showArchive(r, words, panel) {
    const status = element('p', 'hint', 'Loading the messages…');
    panel.append(status);
    const heading = element('h4');
    const list = element('ol', 'conversation-turns');
    const more = element('button', 'quiet show-more', 'Show more messages');
    more.type = 'button';
    let shown = 0;
    let next = 0;
    // This view is on screen while its status line, or the list that took
    // its place, is: closing the panel, or opening it again, takes both.
    const onScreen = () => status.isConnected || list.isConnected;
    const path = (offset) => `/api/archives/${encodeURIComponent(r.id)}?limit=${ARCHIVE_PAGE}&offset=${offset}`;
    const loadPage = async () => {
      const page = await api.get(path(next));
      if (!onScreen()) return null;
      const turns = Array.isArray(page.turns) ? page.turns : [];
      const added = messages(r, turns, words);
      list.append(...added);
      shown += turns.length;
      next = page.next_offset;
      heading.textContent = next == null ? 'The messages' : `The first ${shown} of ${page.turn_count} messages`;
      if (next == null) more.remove();
      return added[0] || null;
    };
    try {
      await loadPage();
      if (!onScreen()) return;
      if (shown === 0) {
        status.textContent = 'No message of it is kept.';
        return;
      }
      status.replaceWith(heading, list);
      if (next != null) list.after(more);
    } catch (err) {
      if (err.status === 401 || !onScreen()) return;
      status.textContent = `Could not load the conversation: ${plainError(err)}`;
      status.className = 'error';
      return;
    }
    more.addEventListener('click', async () => {
      more.disabled = true;
      more.textContent = 'Loading more messages…';
      try {
        const first = await loadPage();
        // The first new message takes the focus, where reading goes on.
        if (first && first.isConnected) {
          first.tabIndex = -1;
          first.focus();
        }
      } catch (err) {
        if (err.status === 401) return;
        more.textContent = `Could not load more: ${plainError(err)} Try again`;
        more.disabled = false;
        return;
      }
      more.textContent = 'Show more messages';
      more.disabled = false;
    });
  }

  // messages are the turns as list items, those the search matched marked.
  function messages(r, turns, words) {
    const matches = Array.isArray(r.matches) ? r.matches : [];
    return turns.map((t) => {
      const li = message(t, words);
      if (matches.some((m) => m.content === t.content && m.role === t.role)) li.classList.add('matched');
      return li;
    });
  }

  return { item };
}
