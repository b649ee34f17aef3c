// Search snippets arrive as HTML-escaped text with the matched words in
// <mark> tags. They are turned into text nodes and <mark> elements, never
// parsed as HTML, so nothing in a stored conversation can become markup.

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

// snippetFragment builds the DOM for a snippet. The split keeps the tags as
// separate pieces; an unbalanced tag simply ends or starts highlighting.
export function snippetFragment(snippet, doc = document) {
  const fragment = doc.createDocumentFragment();
  let inMark = false;
  for (const piece of String(snippet).split(/(<\/?mark>)/)) {
    if (piece === '<mark>') { inMark = true; continue; }
    if (piece === '</mark>') { inMark = false; continue; }
    if (piece === '') continue;
    const text = doc.createTextNode(unescapeHTML(piece));
    if (inMark) {
      const mark = doc.createElement('mark');
      mark.append(text);
      fragment.append(mark);
    } else {
      fragment.append(text);
    }
  }
  return fragment;
}
