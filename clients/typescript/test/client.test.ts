// The client against the live service that scripts/test-ts.sh starts: a
// real server on a real Postgres, with real tokens of two facilitators.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:http";
import { test, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { consistencyTokenHeader, createMentorClient, MentorError } from "../src/index.js";

// Run by scripts/test-ts.sh only: without its server the tests fail, they
// never skip.
function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run scripts/test-ts.sh, which starts the server`);
  return value;
}
const baseUrl = setting("MENTOR_URL");
const client = createMentorClient({ baseUrl, getToken: () => setting("MENTOR_TOKEN") });
// An async token source, as @supabase/ssr's getSession gives one.
const otherClient = createMentorClient({ baseUrl, getToken: async () => setting("MENTOR_OTHER_TOKEN") });

const packageDir = fileURLToPath(new URL("../..", import.meta.url));

test("the committed types are what openapi-typescript makes of the served document", async () => {
  const dir = await mkdtemp(join(tmpdir(), "mentor-schema-"));
  try {
    const generated = join(dir, "schema.ts");
    const cli = join(packageDir, "node_modules", "openapi-typescript", "bin", "cli.js");
    await promisify(execFile)(process.execPath, [cli, `${baseUrl}/api/openapi.json`, "--output", generated]);
    const committed = await readFile(join(packageDir, "src", "schema.ts"), "utf8");
    assert.ok(
      (await readFile(generated, "utf8")) === committed,
      "clients/typescript/src/schema.ts is out of date with the API's OpenAPI document: " +
        "run `npm run generate` in clients/typescript and commit src/schema.ts",
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a learner's conversation: post turns, read, search, recall, tools, clear", async () => {
  const { learner } = await client.learners.add("Emma");
  assert.equal(learner.name, "Emma");
  const { learners } = await client.learners.list();
  assert.ok(learners.some((l) => l.id === learner.id), "the new learner is listed");

  const exchange = [
    { id: randomUUID(), role: "user" as const, content: "Emma got stuck on fractions again today." },
    { id: randomUUID(), role: "assistant" as const, content: "Cut a pizza into quarters and let her name the pieces." },
  ];
  const posted = await client.conversation.post(learner.id, exchange);
  assert.equal(posted.turns_added, 2);
  assert.equal(posted.conversation_update.learner_id, learner.id);
  // Resending the same exchange (a retry) stores nothing twice.
  const resent = await client.conversation.post(learner.id, exchange);
  assert.equal(resent.turns_added, 0);
  assert.equal(resent.conversation_update.turn_count, 2);

  const read = await client.conversation.get(learner.id);
  assert.ok(read.conversation_update, "the conversation is stored");
  assert.deepEqual(
    read.conversation_update.recent_turns.map((t) => t.content),
    exchange.map((t) => t.content),
  );

  const found = await client.conversation.search("fractions", { learner_id: learner.id });
  assert.equal(found.count, 1);
  assert.match(found.results[0]!.snippet, /<mark>fractions<\/mark>/);

  // No model runs here, so memories come from the facilitator.
  const saved = await client.memories.add({
    learner_id: learner.id,
    type: "academic",
    content: "Emma finds fractions hard but likes pizza examples",
  });
  const memoryId = saved.memory.id;
  const recalled = await client.memories.context({ learner_id: learner.id, message: "How do I explain fractions?" });
  assert.ok(recalled.academic.some((m) => m.id === memoryId), "the memory is recalled for a message about fractions");
  const { memories } = await client.memories.list({ learner_id: learner.id });
  assert.deepEqual(memories.map((m) => m.id), [memoryId]);
  const sources = await client.memories.sources(memoryId);
  assert.deepEqual(sources.turns, [], "a memory a person added was learnt from no turn");
  const corrected = await client.memories.patch(memoryId, { content: "Emma now enjoys fractions with pizza" });
  assert.equal(corrected.memory.content, "Emma now enjoys fractions with pizza");
  const { history } = await client.memories.history(memoryId);
  assert.ok(history.length >= 2, "the history holds the memory's creation and its correction");

  const { tools } = await client.tools.list();
  assert.ok(tools.some((t) => t.function.name === "get_conversation_memory"));
  const called = await client.tools.call("get_conversation_memory", JSON.stringify({ learner_id: learner.id }));
  assert.ok("has_memory" in called, "get_conversation_memory answers with the memory");
  assert.equal(called.has_memory, true);
  assert.equal(called.turn_count, 2);

  // The generic request reaches any operation by path and method.
  const settings = await client.request("get", "/api/learners/{id}/settings", { path: { id: learner.id } });
  assert.equal(settings.settings.learning, true);

  const cleared = await client.conversation.clear(learner.id);
  assert.equal(cleared.archived, true);
  assert.equal((await client.conversation.get(learner.id)).conversation_update, null);
  // The archive stays searchable.
  const archived = await client.conversation.search("fractions", { learner_id: learner.id, include_archive: true });
  assert.equal(archived.results[0]?.archived, true);
  // It opens whole, or a page at a time, its turns as posted.
  const archive = await client.conversation.archive(archived.results[0]!.id);
  assert.equal(archive.turn_count, 2);
  assert.equal(archive.learner_id, learner.id);
  assert.deepEqual(
    archive.turns.map((t) => [t.id, t.role, t.content]),
    exchange.map((t) => [t.id, t.role, t.content]),
  );
  assert.equal(archive.next_offset, null);
  const firstPage = await client.conversation.archive(archive.id, { limit: 1 });
  assert.deepEqual(firstPage.turns.map((t) => t.content), [exchange[0]!.content]);
  assert.equal(firstPage.next_offset, 1);
  const secondPage = await client.conversation.archive(archive.id, { limit: 1, offset: firstPage.next_offset });
  assert.deepEqual(secondPage.turns.map((t) => t.content), [exchange[1]!.content]);
  assert.equal(secondPage.next_offset, null);
  // Another facilitator's archive is not found.
  await assert.rejects(otherClient.conversation.archive(archive.id), (e: unknown) => {
    return e instanceof MentorError && e.status === 404 && e.message === "Archived conversation not found";
  });

  await client.memories.forget(memoryId);
  assert.deepEqual((await client.memories.list({ learner_id: learner.id })).memories, []);
});

test("an unknown learner is a MentorError with status 404 and the API's message", async () => {
  const error = await client.conversation.get(randomUUID()).then(
    () => assert.fail("reading an unknown learner's memory succeeded"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof MentorError, `expected a MentorError, got ${String(error)}`);
  assert.equal(error.status, 404);
  assert.equal(error.message, "Learner not found");
  assert.equal(error.retryAfter, undefined);
});

test("a learner is renamed; a blank name is refused", async () => {
  const { learner } = await client.learners.add("Theo");
  const { learner: renamed } = await client.learners.rename(learner.id, "Theodore");
  assert.equal(renamed.id, learner.id);
  assert.equal(renamed.name, "Theodore");
  await assert.rejects(client.learners.rename(learner.id, " "), (e: unknown) => {
    return e instanceof MentorError && e.status === 400 && e.message === "Learner name required";
  });
});

test("another facilitator's learner is not found, as if it did not exist", async () => {
  const { learner } = await client.learners.add("Max");
  await assert.rejects(otherClient.conversation.get(learner.id), (e: unknown) => {
    return e instanceof MentorError && e.status === 404;
  });
  await assert.rejects(otherClient.learners.rename(learner.id, "Mine now"), (e: unknown) => {
    return e instanceof MentorError && e.status === 404;
  });
  const { learners } = await otherClient.learners.list();
  assert.ok(!learners.some((l) => l.id === learner.id));
});

test("without a token the API's 401 is a MentorError", async () => {
  const signedOut = createMentorClient({ baseUrl, getToken: () => null });
  await assert.rejects(signedOut.learners.list(), (e: unknown) => e instanceof MentorError && e.status === 401);
});

test("a used-up quota is a MentorError with status 429 and Retry-After", async () => {
  // scripts/test-ts.sh allows MENTOR_LIMIT_LEARNERS_PER_DAY=3; this
  // facilitator has added none before.
  for (const name of ["Ada", "Ben", "Cleo"]) await otherClient.learners.add(name);
  const error = await otherClient.learners.add("Dora").then(
    () => assert.fail("a fourth learner in a day was added"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof MentorError, `expected a MentorError, got ${String(error)}`);
  assert.equal(error.status, 429);
  assert.ok(error.retryAfter !== undefined && error.retryAfter > 0, `Retry-After: ${error.retryAfter}`);
});

// notingFetch is a fetch in front of the real one: it notes the consistency
// token each request brings, and gives the answers of writes the next of
// tokens, as the service does with a read replica configured (the one
// scripts/test-ts.sh starts has none, so it gives none itself but checks
// those it is sent).
function notingFetch(tokens: string[]) {
  const sent: (string | null)[] = [];
  const fetchNoting: typeof fetch = async (input, init) => {
    sent.push(new Headers(init?.headers).get(consistencyTokenHeader));
    const answer = await fetch(input, init);
    if (init?.method === "GET" || tokens.length === 0) return answer;
    const headers = new Headers(answer.headers);
    headers.set(consistencyTokenHeader, tokens.shift()!);
    return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers });
  };
  return { sent, fetch: fetchNoting };
}

test("the client sends the newest consistency token an answer carried with every request after it", async () => {
  const noting = notingFetch(["0/16B3748", "1/A0"]);
  const writing = createMentorClient({ baseUrl, getToken: () => setting("MENTOR_TOKEN"), fetch: noting.fetch });
  const turns = (text: string) => [
    { id: randomUUID(), role: "user" as const, content: text },
    { id: randomUUID(), role: "assistant" as const, content: "Let him teach you the rules." },
  ];
  await writing.conversation.search("chess");
  await writing.conversation.post(null, turns("Sam wants to learn chess openings"));
  const found = await writing.conversation.search("chess openings");
  assert.equal(found.count, 1, "the service took the token and found the post");
  await writing.memories.context({ message: "chess" });
  await writing.conversation.post(null, turns("Sam beat his uncle at chess"));
  await writing.memories.list();
  assert.deepEqual(noting.sent, [null, null, "0/16B3748", "0/16B3748", "0/16B3748", "1/A0"]);

  assert.equal(writing.consistencyToken(), "1/A0");

  // Each client keeps its own; one made per request starts from the token
  // the last one left.
  const other = notingFetch([]);
  await createMentorClient({ baseUrl, getToken: () => setting("MENTOR_TOKEN"), fetch: other.fetch }).memories.list();
  const next = createMentorClient({
    baseUrl,
    getToken: () => setting("MENTOR_TOKEN"),
    fetch: other.fetch,
    consistencyToken: writing.consistencyToken(),
  });
  await next.memories.list();
  assert.deepEqual(other.sent, [null, "1/A0"]);
});

test("a token the service could not have given is refused with a MentorError 400", async () => {
  const noting = notingFetch(["not a token"]);
  const garbled = createMentorClient({ baseUrl, getToken: () => setting("MENTOR_TOKEN"), fetch: noting.fetch });
  await garbled.conversation.post(null, [{ id: randomUUID(), role: "user", content: "Sam read a chess book" }]);
  await assert.rejects(
    garbled.memories.list(),
    (e: unknown) =>
      e instanceof MentorError &&
      e.status === 400 &&
      e.message === "Memory-Consistency-Token is not a token this service gave: send the newest one an answer carried, as it came",
  );
});

// The counselor's tests talk to the second server scripts/test-ts.sh
// starts, whose model is the fake OpenAI-compatible server below, on the
// port that server was told.
const chatClient = createMentorClient({ baseUrl: setting("MENTOR_CHAT_URL"), getToken: () => setting("MENTOR_TOKEN") });

// fakeModel answers chat completions as a model's server streams them:
// the pieces one chunk each, or, failing, a 500. It closes after the test.
async function fakeModel(t: TestContext, answer: { pieces: string[] } | { status: number }) {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if ("status" in answer) {
        res.writeHead(answer.status, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ error: { message: "overloaded", type: "server_error" } }));
        return;
      }
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      const chunk = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({
          id: "chatcmpl-ts",
          object: "chat.completion.chunk",
          created: 1700000000,
          model: "fake-model",
          choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
        })}\n\n`;
      for (const piece of answer.pieces) res.write(chunk({ role: "assistant", content: piece }, null));
      res.end(chunk({}, "stop") + "data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(Number(setting("MENTOR_MODEL_PORT")), "127.0.0.1", resolve));
  t.after(() => {
    // The service keeps its connection to the model open; the next test
    // listens on the same port.
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
}

test("the counselor's reply streams piece by piece, then comes whole with its metadata", async (t) => {
  const pieces = ["Cut ", "a ", "pizza ", "into ", "quarters ", "and ", "let ", "her ", "name ", "them."];
  await fakeModel(t, { pieces });
  const heard: string[] = [];
  const answer = await chatClient.counselorStream(
    { message: "How do I explain fractions to Emma?" },
    { onText: (piece) => heard.push(piece) },
  );
  assert.deepEqual(heard, pieces);
  assert.equal(answer.reply, pieces.join("").trim());
  assert.equal(answer.success, true);
  assert.ok(Array.isArray(answer.tool_calls) && answer.retrieval.mode, "the reply carries its metadata");
});

test("a model that fails ends the stream with a MentorError 502", async (t) => {
  await fakeModel(t, { status: 500 });
  await assert.rejects(
    chatClient.counselorStream({ message: "Any ideas for times tables?" }),
    (e: unknown) => e instanceof MentorError && e.status === 502 && e.message === "The mentor model failed; please try again",
  );
});

test("a request refused before the stream starts is the API's MentorError", async () => {
  await assert.rejects(
    chatClient.counselorStream({ message: "   " }),
    (e: unknown) => e instanceof MentorError && e.status === 400 && e.message === "Message required",
  );
});
