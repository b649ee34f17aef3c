// Export: downloads the facilitator's archive (GET /api/export), of the
// whole account or of the selected learner, as a JSON Lines file.

import { plainError } from './errors.js';

// MAX_RETRY_WAIT_SECONDS bounds the wait before asking again after a 503.
const MAX_RETRY_WAIT_SECONDS = 5;

// setupExport wires the two buttons. getToken returns the current bearer
// token (refreshed if needed); learnerId returns the selected learner, ''
// for the general conversation; onUnauthorized(message) signs the page out,
// as every other request's 401 does; tokens are the API client's
// consistency tokens, so the export has what was just saved.
export function setupExport({ getToken, tokens, learnerId, onUnauthorized, accountButton, learnerButton, status }) {
  const say = (text) => {
    status.textContent = text;
  };
  // Exporting one learner makes no sense for the general conversation.
  const update = () => {
    learnerButton.disabled = !learnerId();
  };
  async function download(learner) {
    accountButton.disabled = learnerButton.disabled = true;
    say('Preparing the export…');
    try {
      const path = learner ? `/api/export?learner_id=${encodeURIComponent(learner)}` : '/api/export';
      const ask = async () => {
        const answer = await fetch(path, {
          headers: tokens.withToken({ Authorization: `Bearer ${await getToken()}` }),
          credentials: 'same-origin',
        });
        tokens.note(answer);
        return answer;
      };
      let res = await ask();
      // Busy for a moment (the page's other reads hold the account's
      // share): asked once more after the wait the server names.
      if (res.status === 503) {
        const wait = Math.min(Number(res.headers.get('Retry-After')) || 1, MAX_RETRY_WAIT_SECONDS);
        await new Promise((resolve) => { setTimeout(resolve, wait * 1000); });
        res = await ask();
      }
      if (!res.ok) {
        const data = await res.json().catch(() => null);
        const message = (data && data.error) || '';
        if (res.status === 401) {
          onUnauthorized(message);
          return;
        }
        throw Object.assign(new Error(message), { status: res.status });
      }
      const file = await res.blob();
      const name = attachmentName(res.headers.get('Content-Disposition'));
      const link = Object.assign(document.createElement('a'), { href: URL.createObjectURL(file), download: name });
      document.body.append(link);
      link.click();
      link.remove();
      // Revoked after the click has started the download.
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
      say(`Exported ${name}.`);
    } catch (err) {
      // fetch throws a TypeError when the server cannot be reached.
      say(`The export did not work: ${plainError(err instanceof TypeError ? { status: 0 } : err)} Try again.`);
    } finally {
      accountButton.disabled = false;
      update();
    }
  }
  accountButton.addEventListener('click', () => download(''));
  learnerButton.addEventListener('click', () => download(learnerId()));
  update();
  return { update };
}

// attachmentName is the file name the server gave the export
// (Content-Disposition: attachment; filename="…"), or a plain one.
function attachmentName(disposition) {
  const match = /filename="((?:[^"\\]|\\.)*)"/.exec(disposition || '');
  return match ? match[1].replace(/\\(.)/g, '$1') : 'mentormemory-export.jsonl';
}
