/**
 * An answer of the API other than 2xx. The service answers every error as
 * `{"success": false, "error": "<message>"}`; `message` is that message, or
 * the HTTP status text when the body was something else (a proxy's page).
 */
export class MentorError extends Error {
  override readonly name = "MentorError";
  /** The HTTP status, e.g. 404. */
  readonly status: number;
  /**
   * Seconds to wait before retrying, from the Retry-After header (a 429 of
   * a used-up quota, a 503 of a busy server); undefined without one.
   */
  readonly retryAfter: number | undefined;

  constructor(status: number, message: string, retryAfter?: number) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** Reads the error out of an answer that is not ok. */
export async function errorOf(response: Response): Promise<MentorError> {
  let message = response.statusText || `HTTP ${response.status}`;
  try {
    const body: unknown = await response.json();
    if (body && typeof body === "object" && "error" in body && typeof body.error === "string") {
      message = body.error;
    }
  } catch {
    // Not JSON: the status text is all there is to tell.
  }
  return new MentorError(response.status, message, retryAfterSeconds(response.headers.get("Retry-After")));
}

// Retry-After is either seconds (what this service sends) or an HTTP date
// (what a proxy in front of it may send).
function retryAfterSeconds(header: string | null): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  if (/^\s*\d+\s*$/.test(header)) return Number(header);
  const at = Date.parse(header);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - Date.now()) / 1000));
}
