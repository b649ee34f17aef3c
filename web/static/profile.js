// The learner's profile, at the top of "What Mr. Mentor knows": what he
// believes about the learner as a whole, in lines under six headings,
// rebuilt by each consolidation run. "Refresh the profile" asks for a run
// now and shows the profile it writes.

import { badge, placeholder, timeElement } from './dom.js';
import { failure, plainError } from './errors.js';

// The categories in reading order, with the headings the server's
// Markdown page uses.
export const PROFILE_CATEGORIES = [
  { category: 'who', heading: 'Who they are' },
  { category: 'strengths', heading: 'Strengths and breakthroughs' },
  { category: 'struggles', heading: 'Struggles' },
  { category: 'goals', heading: 'Goals and what is next' },
  { category: 'preferences', heading: 'How they like to learn' },
  { category: 'emotional', heading: 'Emotional patterns' },
];

// A run is taken up within seconds of being asked for; the page looks
// for its end this often, and stops looking (the run goes on) after a
// while: one a session's end queued runs a couple of minutes later.
const RUN_POLL_MS = 1000;
const RUN_WAIT_MS = 60000;
const RUN_LIST_LIMIT = 5;

const $ = (id) => document.getElementById(id);

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

function learnerPath(learnerId, what) {
  return `/api/learners/${encodeURIComponent(learnerId)}/${what}`;
}

// changesText says what a run changed, in the audit trail's words.
function changesText(changes) {
  const done = Object.entries(changes || {}).filter(([, n]) => n > 0).map(([kind, n]) => `${n} ${kind}`);
  return done.length === 0 ? 'no memory needed changing' : `memories ${done.join(', ')}`;
}

// createProfile wires the profile. nameOf(learnerId) is the learner's name;
// onRebuilt runs after a run ended, which may have changed the memories.
export function createProfile(api, nameOf, onRebuilt) {
  const el = {
    box: $('profile'),
    title: $('profile-title'),
    rebuild: $('profile-rebuild'),
    status: $('profile-status'),
    body: $('profile-body'),
  };
  const s = {
    learnerId: '', // '' is the general conversation, which has no profile
    profile: null, // as the server sent it; null until read
    request: 0, // the newest read; older answers are ignored
    rebuild: 0, // the newest refresh asked for; older ones stop looking
  };

  function setStatus(text, kind = '') {
    el.status.textContent = text;
    el.status.className = `memory-status ${kind}`.trim();
  }

  function name() {
    return nameOf(s.learnerId) || s.profile?.learner_name || 'this learner';
  }

  // show switches to a learner's profile; '' hides it.
  function show(learnerId) {
    s.learnerId = learnerId;
    s.profile = null;
    s.request++;
    s.rebuild++;
    el.rebuild.disabled = false;
    setStatus('');
    el.box.hidden = !learnerId;
    if (!learnerId) {
      el.body.replaceChildren();
      return;
    }
    render();
    load();
  }

  async function load() {
    const learnerId = s.learnerId;
    if (!learnerId) return;
    const n = ++s.request;
    el.body.setAttribute('aria-busy', 'true');
    try {
      const data = await api.get(learnerPath(learnerId, 'profile'));
      if (n !== s.request) return;
      s.profile = data.profile || { lines: [] };
      render();
    } catch (err) {
      if (n !== s.request || err.status === 401) return;
      if (!s.profile) el.body.replaceChildren();
      setStatus('', 'error');
      failure(el.status, 'Could not load the profile', err, load);
    } finally {
      if (n === s.request) el.body.removeAttribute('aria-busy');
    }
  }

  // rebuild asks for a consolidation run, waits for it to end, then shows
  // the profile it wrote.
  async function rebuild() {
    const learnerId = s.learnerId;
    if (!learnerId) return;
    const attempt = ++s.rebuild;
    el.rebuild.disabled = true;
    setStatus(`Mr. Mentor is going over what he knows about ${name()}…`);
    try {
      const data = await api.post(learnerPath(learnerId, 'consolidate'));
      const run = await finishedRun(learnerId, data.run.id, attempt);
      if (attempt !== s.rebuild) return;
      if (!run) {
        setStatus('It is taking longer than usual: the profile is rebuilt in the background. Use Refresh to see it later.');
        return;
      }
      if (run.status === 'failed') {
        // The run's error is for whoever runs the server; it is in its log.
        setStatus('The profile could not be refreshed this time. Try again later.', 'error');
        return;
      }
      await load();
      if (attempt !== s.rebuild) return;
      onRebuilt();
      setStatus(`Profile refreshed: ${changesText(run.changes)}.`, 'ok');
    } catch (err) {
      if (attempt !== s.rebuild || err.status === 401) return;
      setStatus(`Could not refresh the profile: ${plainError(err)} Try again.`, 'error');
    } finally {
      if (attempt === s.rebuild) el.rebuild.disabled = false;
    }
  }

  // finishedRun reads the audit trail until the run is done or failed. It
  // answers null when it gave up or another refresh (or learner) took over.
  async function finishedRun(learnerId, runId, attempt) {
    const query = new URLSearchParams({ learner_id: learnerId, limit: String(RUN_LIST_LIMIT) });
    for (let waited = 0; waited < RUN_WAIT_MS; waited += RUN_POLL_MS) {
      await sleep(RUN_POLL_MS);
      if (attempt !== s.rebuild) return null;
      const data = await api.get(`/api/consolidations?${query}`);
      const run = (data.runs || []).find((r) => r.id === runId);
      if (run && (run.status === 'done' || run.status === 'failed')) return run;
    }
    return null;
  }

  // reset forgets everything on screen: the user signed out.
  function reset() {
    show('');
  }

  // ---------------------------------------------------------- drawing

  function render() {
    el.title.textContent = `${name()} at a glance`;
    const p = s.profile;
    if (!p) {
      el.body.replaceChildren(placeholder('Loading…'));
      return;
    }
    const lines = Array.isArray(p.lines) ? p.lines : [];
    const digest = recentSessions(p.digest);
    if (lines.length === 0 && !digest) {
      el.body.replaceChildren(placeholder(built(p)
        ? `Mr. Mentor has nothing to put in ${name()}'s profile yet.`
        : `No profile of ${name()} yet. Mr. Mentor writes one when he goes over what he knows: after a session ends, every night, or now with “Refresh the profile”.`));
      return;
    }
    el.body.replaceChildren(...sections(lines), ...(digest ? [digest] : []), footer(p));
  }

  // recentSessions is what the last sessions add up to: where things
  // stand, what keeps coming back, and a line per session; null before
  // any session ended.
  function recentSessions(d) {
    const count = Array.isArray(d?.sessions) ? d.sessions.length : 0;
    if (count === 0) return null;
    const box = document.createElement('div');
    box.className = 'profile-digest';
    const h = document.createElement('h5');
    h.textContent = count === 1 ? 'The last session' : `The last ${count} sessions`;
    box.append(h);
    for (const [heading, items] of [['Where things stand', d.standing], ['What keeps coming back', d.themes],
      ['Session by session', d.recent]]) {
      if (!Array.isArray(items) || items.length === 0) continue;
      const sub = document.createElement('h6');
      sub.textContent = heading;
      const list = document.createElement('ul');
      list.className = 'profile-lines';
      list.append(...items.map((text) => line({ text })));
      box.append(sub, list);
    }
    return box;
  }

  // built tells a profile a run wrote from the empty one of a learner
  // never consolidated, which the server dates at the year 1.
  function built(p) {
    const at = new Date(p.updated_at);
    return !Number.isNaN(at.getTime()) && at.getUTCFullYear() > 1;
  }

  function sections(lines) {
    const known = new Set(PROFILE_CATEGORIES.map((c) => c.category));
    // A category this page does not know yet still shows, under its name.
    const others = [...new Set(lines.map((l) => l.category).filter((c) => !known.has(c)))]
      .map((category) => ({ category, heading: category }));
    return [...PROFILE_CATEGORIES, ...others].map(({ category, heading }) => {
      const items = lines.filter((l) => l.category === category);
      if (items.length === 0) return null;
      const box = document.createElement('div');
      box.className = 'profile-section';
      box.dataset.category = category;
      const h = document.createElement('h5');
      h.textContent = heading;
      const list = document.createElement('ul');
      list.className = 'profile-lines';
      list.append(...items.map(line));
      box.append(h, list);
      return box;
    }).filter(Boolean);
  }

  function line(l) {
    const li = document.createElement('li');
    const text = document.createElement('span');
    text.className = 'profile-text';
    text.textContent = l.text;
    li.append(text);
    if (l.by_facilitator) {
      li.className = 'yours';
      li.append(' ', badge('written by you', 'yours'));
    }
    return li;
  }

  function footer(p) {
    const note = document.createElement('p');
    note.className = 'hint profile-note';
    if (built(p)) note.append('Written ', timeElement(p.updated_at), '.');
    const dropped = Array.isArray(p.dropped) ? p.dropped.length : 0;
    if (dropped > 0) {
      note.append(` ${dropped === 1 ? 'One memory was' : `${dropped} memories were`} left out to keep it short; they are listed below.`);
    }
    return note;
  }

  el.rebuild.addEventListener('click', rebuild);

  return { show, load, reset };
}
