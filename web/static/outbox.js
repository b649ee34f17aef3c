// Exchanges on their way to the conversation memory. Each is kept in
// localStorage, per facilitator and learner, from the moment the reply is
// shown until the server has stored it, so that a failed save, a reload or
// a closed tab loses nothing. A save that fails is tried again: when the
// browser is back online, when the page is shown again, after the next
// request the server answers, on a timer that waits longer each time, and
// when the facilitator asks. Every try sends the exchange's own turn ids,
// and the server stores each turn once, so a resend is safe.

const PREFIX = 'mentor.outbox';
// Seconds before each automatic retry; the last one repeats.
const RETRY_DELAYS = [2, 5, 15, 30, 60];

// An entry: { id (its first turn's id), learner_id (null: the general
// conversation), turns: [{ id, role, content }] }.

// transient tells whether a failed save may succeed later: no answer, a
// server error or busy, a quota, or a sign-in to renew. Any other refusal
// (a learner erased, a turn the server refuses) would be refused again.
function transient(err) {
  const status = err && typeof err.status === 'number' ? err.status : 0;
  return status === 0 || status === 401 || status === 408 || status === 429 || status >= 500;
}

// createOutbox keeps the queue of the facilitator user() returns (their
// id; '' when signed out). inOrder(fn) runs fn after the memory's other
// queued work (a clear, a session's end), as app.js keeps it in order.
// onSaved(learnerId, answer) hears of each stored exchange; onState(entry,
// state, message) of each change: 'saving', 'saved', 'failed' (to be tried
// again) or 'refused' (dropped; message says why).
export function createOutbox({ api, user, inOrder, onSaved, onState }) {
  // What this page wrote, for a browser whose storage is off or full.
  const memory = new Map();
  // The last state of each entry this page tried to save, by its id.
  const states = new Map();
  let timer = 0;
  let failures = 0;
  let running = null;
  let again = false;

  const keyOf = (userId, learnerId) => `${PREFIX}.${userId}.${learnerId || 'general'}`;

  function load(key) {
    if (memory.has(key)) return memory.get(key);
    try {
      const entries = JSON.parse(localStorage.getItem(key));
      return Array.isArray(entries) ? entries.filter((e) => e && e.id && Array.isArray(e.turns)) : [];
    } catch {
      return [];
    }
  }

  function save(key, entries) {
    try {
      if (entries.length > 0) localStorage.setItem(key, JSON.stringify(entries));
      else localStorage.removeItem(key);
      memory.delete(key);
    } catch {
      memory.set(key, entries); // kept for this page at least
    }
  }

  // keysOf lists the facilitator's queues, one per learner.
  function keysOf(userId) {
    const prefix = `${PREFIX}.${userId}.`;
    const keys = new Set([...memory.keys()].filter((k) => k.startsWith(prefix)));
    try {
      for (let i = 0; i < localStorage.length; i++) {
        const key = localStorage.key(i);
        if (key && key.startsWith(prefix)) keys.add(key);
      }
    } catch {
      // storage off: memory holds it all
    }
    return [...keys].sort();
  }

  // add queues an exchange and saves it; it returns the entry.
  function add(learnerId, turns) {
    const entry = { id: turns[0].id, learner_id: learnerId || null, turns };
    const key = keyOf(user(), learnerId);
    save(key, [...load(key), entry]);
    flush();
    return entry;
  }

  // pending lists the learner's exchanges not known to be stored yet.
  function pending(learnerId) {
    return load(keyOf(user(), learnerId));
  }

  // drop forgets the learner's queue, or with no learner every queue of
  // the facilitator: what was erased is not to be saved again.
  function drop(learnerId) {
    const userId = user();
    const keys = learnerId === undefined ? keysOf(userId) : [keyOf(userId, learnerId)];
    for (const key of keys) save(key, []);
  }

  // flush saves what is queued, oldest first, one save at a time.
  function flush() {
    clearTimeout(timer);
    if (running) {
      again = true;
      return running;
    }
    const userId = user();
    if (!userId) return Promise.resolve();
    running = inOrder(() => saveAll(userId)).finally(() => {
      running = null;
      if (again) {
        again = false;
        flush();
      }
    });
    return running;
  }

  function tell(entry, state, message) {
    states.set(entry.id, state);
    onState(entry, state, message);
  }

  // stateOf is the last state of an entry's save on this page, or '' when
  // it was not tried yet (one an earlier visit left).
  function stateOf(id) {
    return states.get(id) || '';
  }

  async function saveAll(userId) {
    const keys = keysOf(userId);
    for (const [k, key] of keys.entries()) {
      for (const entry of load(key)) {
        if (user() !== userId) return; // signed out: not with another's token
        tell(entry, 'saving');
        try {
          const answer = await api.post('/api/conversation-memory', { learner_id: entry.learner_id, conversation_turns: entry.turns });
          save(key, load(key).filter((e) => e.id !== entry.id));
          failures = 0;
          tell(entry, 'saved');
          onSaved(entry.learner_id || '', answer);
        } catch (err) {
          if (!transient(err)) {
            save(key, load(key).filter((e) => e.id !== entry.id));
            tell(entry, 'refused', err.message);
            continue;
          }
          // The server is away: everything still queued waits for it, in
          // order, so no exchange overtakes an earlier one.
          failures++;
          for (const waiting of keys.slice(k).flatMap(load)) tell(waiting, 'failed');
          if (user() === userId) schedule();
          return;
        }
      }
    }
  }

  function schedule() {
    clearTimeout(timer);
    const delay = RETRY_DELAYS[Math.min(failures, RETRY_DELAYS.length) - 1];
    timer = setTimeout(flush, delay * 1000);
  }

  // retryIfWaiting tries again at once when a save failed earlier: the
  // server or the network is back.
  function retryIfWaiting() {
    if (failures > 0 && !running) flush();
  }

  window.addEventListener('online', retryIfWaiting);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') retryIfWaiting();
  });

  // start saves what an earlier visit left queued; stop ends the retries
  // at sign-out (the queue stays, for the facilitator's next sign-in).
  function start() {
    failures = 0;
    flush();
  }

  function stop() {
    clearTimeout(timer);
    failures = 0;
  }

  return { add, pending, stateOf, drop, flush, retryIfWaiting, start, stop };
}
