// The app's own route to the mentor's memory. The browser posts here with
// its Supabase session cookies; this handler forwards the user's access
// token to mentormemory, which verifies it and keeps each facilitator's
// memory apart with row-level security. The browser never needs to know the
// service's address, and the service needs no CORS for the app.
//
// Environment: MENTOR_API_URL (the service), NEXT_PUBLIC_SUPABASE_URL and
// NEXT_PUBLIC_SUPABASE_ANON_KEY (the same project the service trusts).
//
// With a read replica behind several instances of the service, a read
// sees the user's last write only when it brings that write's consistency
// token. A client is made per request here, so the newest token is kept in
// a cookie of the user's (consistencyCookie) from one request to the next.
import { createMentorClient, MentorError, type PostedTurn } from "@mentormemory/client";
import { createServerClient } from "@supabase/ssr";
import { cookies } from "next/headers";
import { NextResponse } from "next/server";

const consistencyCookie = "mentor-consistency-token";

async function mentorForSignedInUser() {
  const cookieStore = await cookies();
  const supabase = createServerClient(
    process.env.NEXT_PUBLIC_SUPABASE_URL!,
    process.env.NEXT_PUBLIC_SUPABASE_ANON_KEY!,
    {
      cookies: {
        getAll: () => cookieStore.getAll(),
        // A refreshed session is written back to the browser with this answer.
        setAll: (toSet) => toSet.forEach(({ name, value, options }) => cookieStore.set(name, value, options)),
      },
    },
  );
  const mentor = createMentorClient({
    baseUrl: process.env.MENTOR_API_URL!,
    // getSession reads the cookie without asking Supabase Auth; that is
    // enough here because mentormemory verifies the token itself and
    // refuses one that is forged or expired.
    getToken: async () => (await supabase.auth.getSession()).data.session?.access_token,
    consistencyToken: cookieStore.get(consistencyCookie)?.value,
  });
  // Called once the request's calls are done: the newest token goes back
  // to the browser with the answer.
  const keepConsistencyToken = () => {
    const token = mentor.consistencyToken();
    if (token) cookieStore.set(consistencyCookie, token, { httpOnly: true, sameSite: "lax", path: "/" });
  };
  return { mentor, keepConsistencyToken };
}

// Errors keep the API's status, message and Retry-After, so the component
// can tell "sign in again" from "wait a minute".
function errorResponse(error: unknown) {
  if (!(error instanceof MentorError)) throw error;
  const headers: Record<string, string> = {};
  if (error.retryAfter !== undefined) headers["Retry-After"] = String(error.retryAfter);
  return NextResponse.json({ success: false, error: error.message }, { status: error.status, headers });
}

/** GET ?learner_id=: the learner's conversation memory (summary and recent turns). */
export async function GET(request: Request) {
  const learnerId = new URL(request.url).searchParams.get("learner_id");
  const { mentor, keepConsistencyToken } = await mentorForSignedInUser();
  try {
    return NextResponse.json(await mentor.conversation.get(learnerId));
  } catch (error) {
    return errorResponse(error);
  } finally {
    keepConsistencyToken();
  }
}

export interface RememberExchange {
  learnerId: string | null;
  turns: PostedTurn[];
}

/** POST {learnerId, turns}: stores an exchange; resending one is harmless. */
export async function POST(request: Request) {
  const exchange = (await request.json().catch(() => null)) as RememberExchange | null;
  if (!exchange || !Array.isArray(exchange.turns) || exchange.turns.length === 0) {
    return NextResponse.json({ success: false, error: "turns are required" }, { status: 400 });
  }
  const { mentor, keepConsistencyToken } = await mentorForSignedInUser();
  try {
    const stored = await mentor.conversation.post(exchange.learnerId, exchange.turns);
    return NextResponse.json({ success: true, turnsAdded: stored.turns_added, summary: stored.conversation_update.summary });
  } catch (error) {
    return errorResponse(error);
  } finally {
    keepConsistencyToken();
  }
}
