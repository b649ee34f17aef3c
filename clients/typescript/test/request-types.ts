// Compiled by `npm test` (tsconfig.test.json), never run. Each call marked
// as an expected error must stay a type error, so request keeps refusing
// what the OpenAPI document does not allow: a call that starts to compile
// leaves its directive unused, which fails the build.
import { createMentorClient } from "../src/index.js";

export function requestsTheDocumentRefuses() {
  const mentor = createMentorClient({ baseUrl: "", getToken: () => null });
  // @ts-expect-error a path parameter is required
  void mentor.request("get", "/api/learners/{id}/settings");
  // @ts-expect-error no such query parameter
  void mentor.request("get", "/api/learners/{id}/settings", { path: { id: "x" }, query: { nope: 1 } });
  // @ts-expect-error the body's property is `name`
  void mentor.request("post", "/api/learners", { body: { nam: "Emma" } });
  // @ts-expect-error no PATCH on /api/learners
  void mentor.request("patch", "/api/learners");
  // @ts-expect-error forgetting by category requires learner_id
  void mentor.request("delete", "/api/memories", { query: {} });
  // What the document allows compiles, and the answer is typed.
  void mentor.request("get", "/api/learners").then(({ learners }) => learners.map((l) => l.name));
}
