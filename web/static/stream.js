// Server-Sent Events read from a fetch response. EventSource cannot send a
// POST with a body and a bearer token, so the chat reads the stream itself:
// the response body, decoded as UTF-8, cut into lines, gathered into
// events as the format says (https://html.spec.whatwg.org/#event-stream-interpretation).

// readEvents calls onEvent(name, data) for each event of body (a
// ReadableStream of bytes) as it arrives, and resolves when the stream
// ends. data is the event's data lines joined, as text; an event without a
// name is a "message". It rejects as the body does: with an AbortError
// when the request's signal is aborted.
export async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const takeLine = eventGatherer(onEvent);
  let rest = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    rest += value;
    // A line ends with CRLF, LF or CR. A CR at the very end may be the
    // first half of a CRLF, so it waits for the next piece.
    const lines = rest.split(/\r\n|\n|\r(?!$)/);
    rest = lines.pop();
    for (const line of lines) takeLine(line);
  }
  // An event is dispatched only at its blank line: an unfinished last one
  // is dropped, as the format says.
}

// eventGatherer returns a function that takes the stream's lines one by
// one and calls onEvent at each blank line that ends an event.
function eventGatherer(onEvent) {
  let name = '';
  let data = [];
  return (line) => {
    if (line === '') {
      if (data.length > 0) onEvent(name || 'message', data.join('\n'));
      name = '';
      data = [];
      return;
    }
    if (line.startsWith(':')) return; // a comment, such as a keep-alive
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') name = value;
    else if (field === 'data') data.push(value);
    // id and retry are for EventSource's reconnection, which a POST has not.
  };
}
