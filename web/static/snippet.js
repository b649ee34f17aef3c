// Search snippets arrive as HTML-escaped text with the matched words in
// <mark> tags. They are turned into text nodes and <mark> elements, never
// parsed as HTML, so nothing in a stored conversation can become markup;
// the mentor's Markdown in them is rendered as in the chat (markdown.js).

import { markedText, renderMarkdown } from './markdown.js';

const ENTITY = /&(#[0-9]+|#x[0-9a-f]+|amp|lt|gt|quot|apos);/gi;
const NAMED = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

// unescapeHTML undoes the server's escaping (Go's html.EscapeString:
// &amp; &lt; &gt; &#39; &#34;), plus the other usual spellings.
export function unescapeHTML(text) {
  return text.replace(ENTITY, (whole, name) => {
    const lower = name.toLowerCase();
    if (lower in NAMED) return NAMED[lower];
    const code = lower.startsWith('#x') ? parseInt(lower.slice(2), 16) : parseInt(lower.slice(1), 10);
    // An invalid code point is left as it was written rather than thrown on.
    return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

// snippetText is the snippet's text, unescaped, with each match between
// \uE000 and \uE001, the marks markdown.js's markedText turns into <mark>.
// The split keeps the tags as separate pieces; an unbalanced tag simply
// ends or starts highlighting.
export function snippetText(snippet) {
  let text = '';
  for (const piece of String(snippet).split(/(<\/?mark>)/)) {
    if (piece === '<mark>') text += '\uE000';
    else if (piece === '</mark>') text += '\uE001';
    // The server takes these characters out of what it marks.
    else text += unescapeHTML(piece).replace(/[\uE000\uE001]/g, '');
  }
  return text;
}

// snippetFragment builds the DOM for a snippet: its Markdown rendered, its
// matches in <mark> elements.
export function snippetFragment(snippet, doc = document) {
  return renderMarkdown(snippetText(snippet), { doc, text: markedText(doc) });
}
