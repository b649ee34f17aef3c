// Export: downloads the facilitator's archive (GET /api/export), of the
// whole account or of the selected learner, as a JSON Lines file.

// setupExport wires the two buttons. getToken returns the current bearer
// token (refreshed if needed); learnerId returns the selected learner, ''
// for the general conversation.
export function setupExport({ getToken, learnerId, accountButton, learnerButton, status }) {
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
      const res = await fetch(path, {
        headers: { Authorization: `Bearer ${await getToken()}` },
        credentials: 'same-origin',
      });
      if (!res.ok) {
        const data = await res.json().catch(() => null);
        throw new Error((data && data.error) || `Export failed (HTTP ${res.status})`);
      }
      const file = await res.blob();
      const name = learner ? `mentormemory-export-${learner}.jsonl` : 'mentormemory-export.jsonl';
      const link = Object.assign(document.createElement('a'), { href: URL.createObjectURL(file), download: name });
      document.body.append(link);
      link.click();
      link.remove();
      // Revoked after the click has started the download.
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
      say(`Exported ${name}.`);
    } catch (err) {
      say(err.message || 'Export failed; please try again.');
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
