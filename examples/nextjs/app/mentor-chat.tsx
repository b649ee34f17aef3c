"use client";
// A chat that remembers: after each mentor reply it posts the exchange to
// the app's route handler (app/api/mentor/memory/route.ts), which stores it
// in mentormemory as the signed-in user. `askMentor` is the app's own way
// to get a reply, e.g. a Server Action passed from a server component.
import type { PostedTurn } from "@mentormemory/client";
import { useState, type FormEvent } from "react";

import type { RememberExchange } from "./api/mentor/memory/route";

interface Props {
  learnerId: string | null;
  askMentor: (message: string, learnerId: string | null) => Promise<string>;
}

async function remember(exchange: RememberExchange): Promise<void> {
  const response = await fetch("/api/mentor/memory", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(exchange),
  });
  if (!response.ok) {
    const { error } = (await response.json().catch(() => ({}))) as { error?: string };
    throw new Error(error ?? `could not remember the exchange (${response.status})`);
  }
}

export function MentorChat({ learnerId, askMentor }: Props) {
  const [turns, setTurns] = useState<PostedTurn[]>([]);
  const [draft, setDraft] = useState("");
  const [busy, setBusy] = useState(false);
  const [memoryProblem, setMemoryProblem] = useState<string | null>(null);

  async function send(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const message = draft.trim();
    if (!message || busy) return;
    setBusy(true);
    setDraft("");
    // Ids make a resend exact: the service stores a turn it has seen once.
    const question: PostedTurn = { id: crypto.randomUUID(), role: "user", content: message };
    setTurns((all) => [...all, question]);
    try {
      const reply: PostedTurn = { id: crypto.randomUUID(), role: "assistant", content: await askMentor(message, learnerId) };
      setTurns((all) => [...all, reply]);
      // The chat goes on when remembering fails; the alert says so, and
      // posting the same turns again later stores each of them once.
      await remember({ learnerId, turns: [question, reply] }).then(
        () => setMemoryProblem(null),
        (error: Error) => setMemoryProblem(error.message),
      );
    } finally {
      setBusy(false);
    }
  }

  return (
    <section>
      <ol>
        {turns.map((turn) => (
          <li key={turn.id} data-role={turn.role}>
            {turn.content}
          </li>
        ))}
      </ol>
      {memoryProblem && <p role="alert">Not remembered: {memoryProblem}</p>}
      <form onSubmit={send}>
        <input value={draft} onChange={(e) => setDraft(e.target.value)} disabled={busy} aria-label="Message" />
        <button type="submit" disabled={busy}>
          Send
        </button>
      </form>
    </section>
  );
}
