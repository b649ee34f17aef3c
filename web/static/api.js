// The memory service's API: JSON in and out, every failure an ApiError that
// carries the server's own message ({"success": false, "error": "…"}).

import { readEvents } from './stream.js';

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'ApiError';
    // 0 means the request never got an answer (network down, server gone).
    this.status = status;
  }
}

// CONSISTENCY_TOKEN is the header that carries read-your-writes across the
// server's instances: with a read replica, the answer to a request that
// wrote names where the write left the database, and a request that brings
// it back is read from the replica only once the replica has that write.
// Behind a load balancer the chat's save and the next message's recall may
// reach different instances; the token makes the recall see the save.
const CONSISTENCY_TOKEN = 'Memory-Consistency-Token';

// consistencyTokens keeps the newest token an answer carried (withToken
// adds it to a request's headers, note reads it from an answer), one per
// signed-in client.
export function consistencyTokens() {
  let newest = '';
  return {
    withToken(headers) {
      if (newest) headers[CONSISTENCY_TOKEN] = newest;
      return headers;
    },
    // Failed answers too: a write may have been stored before the failure.
    note(res) {
      newest = res.headers.get(CONSISTENCY_TOKEN) || newest;
    },
  };
}

// request sends one call. token, when given, goes as the bearer token;
// tokens, when given, carry the consistency token (consistencyTokens).
export async function request(method, path, { body, token, tokens, signal } = {}) {
  const res = await send(method, path, { body, token, tokens, signal, accept: 'application/json' });
  return readAnswer(res);
}

// send makes the request; only a request that got no answer fails here.
async function send(method, path, { body, token, tokens, signal, accept }) {
  const headers = { Accept: accept };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (tokens) tokens.withToken(headers);
  const init = { method, headers, signal, credentials: 'same-origin' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'Mr. Mentor could not be reached. Check your internet connection and try again.');
  }
  if (tokens) tokens.note(res);
  return res;
}

// readAnswer reads a JSON answer, or throws the ApiError it says.
async function readAnswer(res) {
  let data = null;
  try {
    data = await res.json();
  } catch {
    // Not JSON (a proxy's error page): the status says the rest, in
    // errors.js's plain words.
  }
  if (!res.ok || !data || data.success === false) {
    const message = (data && typeof data.error === 'string' && data.error) || 'That did not work just now.';
    throw new ApiError(res.status, message);
  }
  return data;
}

// requestEvents sends a call answered as Server-Sent Events (each event's
// data one JSON object), calling onEvent(name, data) as each arrives. It
// resolves with the data of the last event, "reply", and throws the
// ApiError of an "error" event, or of a request refused before the stream
// began (a JSON answer), or status 0 when the stream broke off before its
// end. An abort through signal throws an AbortError.
export async function requestEvents(method, path, { body, token, tokens, signal, onEvent }) {
  const res = await send(method, path, { body, token, tokens, signal, accept: 'text/event-stream' });
  if (!res.ok || !(res.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
    return readAnswer(res);
  }
  let last = null;
  try {
    await readEvents(res.body, (name, text) => {
      let data;
      try {
        data = JSON.parse(text);
      } catch {
        return; // not ours: every event of the API carries a JSON object
      }
      if (name === 'reply' || name === 'error') last = { name, data };
      else onEvent(name, data);
    });
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'The answer broke off before its end.');
  }
  if (!last) throw new ApiError(0, 'The answer broke off before its end.');
  if (last.name === 'error') {
    throw new ApiError(Number(last.data.status) || 502, String(last.data.error || 'The reply failed'));
  }
  return last.data;
}

// createClient binds the API to the signed-in session. getToken may refresh
// the token first, hence async; onUnauthorized runs when the server refuses
// it; onAnswered runs after every call that succeeded, so what waits for the
// server to be back (the chat's unsaved exchanges) learns that it is.
// Every call brings the newest consistency token an answer carried; tokens
// is there for a request made apart (the export's download).
export function createClient(getToken, onUnauthorized, onAnswered = () => {}) {
  const tokens = consistencyTokens();
  async function call(method, path, body, events) {
    const token = await getToken();
    try {
      const data = events
        ? await requestEvents(method, path, { body, token, tokens, ...events })
        : await request(method, path, { body, token, tokens });
      onAnswered();
      return data;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) onUnauthorized(err.message);
      throw err;
    }
  }
  return {
    tokens,
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body),
    patch: (path, body) => call('PATCH', path, body),
    put: (path, body) => call('PUT', path, body),
    del: (path) => call('DELETE', path),
    // stream posts body and hears the answer as it is written: events is
    // { signal, onEvent } as requestEvents takes them.
    stream: (path, body, events) => call('POST', path, body, events),
  };
}
