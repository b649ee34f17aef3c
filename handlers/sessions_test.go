package handlers_test

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/auth"
	"mentormemory/llm/llmtest"
	"mentormemory/mentor"
)

// alexSession reads a sample tutoring session as conversation turns: the
// student speaks as the user, the tutor as the assistant.
func alexSession(t *testing.T, n string) []mentor.Turn {
	t.Helper()
	raw, err := os.ReadFile("../simulator/samples/student-alex/session_" + n + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var lines []struct{ Speaker, Text string }
	if err := json.Unmarshal(raw, &lines); err != nil {
		t.Fatal(err)
	}
	turns := make([]mentor.Turn, len(lines))
	for i, l := range lines {
		turns[i] = mentor.Turn{Role: mentor.RoleAssistant, Content: l.Text}
		if l.Speaker == "Student" {
			turns[i].Role = mentor.RoleUser
		}
	}
	return turns
}

func strs(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

func TestSessionClosingAndOpening(t *testing.T) {
	svc, u, alex := apptest.StartWithLearner(t, apptest.Options{}, "Alex")
	svc.AddMemory(t, u, alex, map[string]any{"type": "personal", "content": "Plays basketball; games are on Fridays"})
	svc.AddMemory(t, u, alex, map[string]any{"type": "personal", "content": "Has a dog named Max"})

	// No session has ended yet: no opening.
	none := svc.Call(t, u.Token, http.MethodGet, "/api/opening-context?learner_id="+alex, nil).WantStatus(http.StatusOK)
	if none.Body["opening"] != nil {
		t.Fatalf("opening before any session: %s", none.Raw)
	}
	svc.Call(t, u.Token, http.MethodPost, "/api/sessions/end", map[string]any{"learner_id": alex}).WantError(http.StatusNotFound, "No live session to end")

	// The session is posted exchange by exchange, as the web client does,
	// and the facilitator tells how it went.
	turns := alexSession(t, "1")
	for i := 0; i+1 < len(turns); i += 2 {
		svc.PostTurns(t, u, alex, turns[i], turns[i+1]).WantStatus(http.StatusOK)
	}
	svc.PostTurns(t, u, alex, apptest.Exchange("Alex told me it finally makes sense!", "That's the graph doing its work.")...).WantStatus(http.StatusOK)
	ended := svc.Call(t, u.Token, http.MethodPost, "/api/sessions/end", map[string]any{"learner_id": alex}).WantStatus(http.StatusOK)
	session := ended.Body["session"].(map[string]any)
	closing := session["closing"].(map[string]any)
	if got := strings.Join(strs(closing["emotional_arc"]), " → "); got != "anxious → confused → frustrated → excited" {
		t.Fatalf("emotional arc %q, want anxious → confused → frustrated → excited (%s)", got, ended.Raw)
	}
	// The one in the chat is the facilitator: what they post in their own
	// voice ("Oh! So that's why…") is theirs, what they report of Alex is
	// Alex's breakthrough.
	if got := strs(closing["key_moments"]); !slices.Equal(got, []string{"Alex told me it finally makes sense!"}) {
		t.Fatalf("key moments %q, want only what Alex was reported to say (%s)", got, ended.Raw)
	}
	hooks := strs(closing["next_session_hooks"])
	if len(hooks) == 0 || !strings.Contains(hooks[0], "completing the square") {
		t.Fatalf("next-session hook missing: %s", ended.Raw)
	}
	if closing["exchanges"] != 10.0 || session["reason"] != "ended" || !strings.Contains(closing["goodbye_line"].(string), "Alex") {
		t.Fatalf("closing state: %s", ended.Raw)
	}
	svc.Call(t, u.Token, http.MethodPost, "/api/sessions/end", map[string]any{"learner_id": alex}).WantError(http.StatusNotFound, "No live session to end")

	// The opening is stored; on a Friday it brings up the game.
	friday := svc.Call(t, u.Token, http.MethodGet, "/api/opening-context?learner_id="+alex+"&date=2026-11-27", nil).WantStatus(http.StatusOK)
	opening := friday.Body["opening"].(map[string]any)
	if got := strs(opening["personal_relevance"]); len(got) != 1 || got[0] != "It's Friday: Plays basketball; games are on Fridays" {
		t.Fatalf("Friday relevance %v (%s)", got, friday.Raw)
	}
	if opening["last_emotional_state"] != "excited" || opening["from_session_id"] != session["session_id"] ||
		opening["welcome_hook"] != "A breakthrough last time: Alex told me it finally makes sense!" || opening["last_session_summary"] == "" {
		t.Fatalf("opening: %s", friday.Raw)
	}
	// It speaks to the facilitator, by the name their sign-in gives
	// (here none: the test's address is a uuid).
	if got := opening["suggested_opener"].(string); !strings.HasPrefix(got, "Welcome back. Shall we pick up where we left off with Alex?") {
		t.Fatalf("suggested opener %q", got)
	}
	dana, err := auth.MintHS256(apptest.Secret, u.ID, "dana.whitfield@example.com", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	named := svc.Call(t, dana, http.MethodGet, "/api/opening-context?learner_id="+alex, nil).WantStatus(http.StatusOK)
	if got := named.Object("opening")["suggested_opener"].(string); !strings.HasPrefix(got, "Welcome back, Dana. Shall we pick up") {
		t.Fatalf("suggested opener for Dana %q", got)
	}
	if _, leaked := opening["personal_by_weekday"]; leaked {
		t.Fatalf("the weekday table is internal: %s", friday.Raw)
	}
	monday := svc.Call(t, u.Token, http.MethodGet, "/api/opening-context?learner_id="+alex+"&date=2026-11-23", nil).WantStatus(http.StatusOK)
	if got := monday.Body["opening"].(map[string]any)["personal_relevance"].([]any); len(got) != 0 {
		t.Fatalf("nothing is special on Monday, got %v", got)
	}
	svc.Call(t, u.Token, http.MethodGet, "/api/opening-context?learner_id="+alex+"&date=friday", nil).WantError(http.StatusBadRequest, "date must be YYYY-MM-DD")

	// Another facilitator holding Alex's id sees nothing and ends nothing.
	other := svc.NewUser(t)
	svc.Call(t, other.Token, http.MethodGet, "/api/opening-context?learner_id="+alex, nil).WantError(http.StatusNotFound, "Learner not found")
	svc.Call(t, other.Token, http.MethodPost, "/api/sessions/end", map[string]any{"learner_id": alex}).WantError(http.StatusNotFound, "Learner not found")
}

func TestIdleSessionEndsBeforeTheNextOne(t *testing.T) {
	svc, u := apptest.StartWithUser(t, apptest.Options{})
	svc.PostTurns(t, u, "", apptest.Exchange("I'm worried about bedtime battles.", "Next time we'll plan a wind-down routine.")...).WantStatus(http.StatusOK)
	// Forty idle minutes later...
	svc.Exec(t, `update mentor_sessions set last_activity_at = now() - interval '40 minutes'`)
	svc.PostTurns(t, u, "", apptest.Exchange("Different question: screen time?", "Try a shared family plan.")...).WantStatus(http.StatusOK)

	if n := svc.Count(t, `select count(*) from mentor_sessions where end_reason = 'idle' and exchanges = 1`); n != 1 {
		t.Fatalf("the idle session should have ended, with its one exchange")
	}
	if n := svc.Count(t, `select count(*) from mentor_sessions where ended_at is null and exchanges = 1`); n != 1 {
		t.Fatalf("a new live session should hold the new exchange")
	}
	res := svc.Call(t, u.Token, http.MethodGet, "/api/opening-context", nil).WantStatus(http.StatusOK)
	threads := strs(res.Body["opening"].(map[string]any)["unfinished_threads"])
	if len(threads) != 1 || threads[0] != "Next time we'll plan a wind-down routine." {
		t.Fatalf("the idle session's opening should carry its thread: %s", res.Raw)
	}
}

func TestCounselorBringsProfileMemoriesAndOpening(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent("Let's do it.", "stop"))
	svc, u, alex := apptest.StartWithLearner(t, apptest.Options{ModelURL: model.URL}, "Alex")
	svc.AddMemory(t, u, alex, map[string]any{"type": "personal", "content": "Plays basketball; games are on Fridays"})
	svc.AddMemory(t, u, alex, map[string]any{"type": "preference", "content": "When frustrated, pictures help more than letters",
		"metadata": map[string]any{"category": "emotional_response", "trigger": "frustrated", "emotion": "frustrated"}})
	svc.PostTurns(t, u, alex, apptest.Exchange("Alex finally got the discriminant!", "Next time we'll try word problems.")...).WantStatus(http.StatusOK)
	svc.EndSession(t, u, alex)
	svc.Call(t, u.Token, http.MethodPut, "/api/learners/"+alex+"/profile", map[string]any{
		"lines": []map[string]any{{"category": "goals", "text": "Pass the algebra exam in June"}},
	}).WantStatus(http.StatusOK)
	// The digest of the last sessions, as a consolidation keeps it.
	svc.Exec(t, `update learner_profiles set digest = $2::jsonb where learner_id = $1::uuid`, alex,
		`{"sessions": ["s1"], "themes": [], "standing": ["Still working on: word problems."], "recent": [], "tokens": 20}`)
	opening := svc.Call(t, u.Token, http.MethodGet, "/api/opening-context?learner_id="+alex, nil).WantStatus(http.StatusOK)
	if recent := opening.Object("opening")["recent_sessions"]; recent == nil || !slices.Equal(strs(recent.(map[string]any)["standing"]), []string{"Still working on: word problems."}) {
		t.Fatalf("the opening lacks the digest of the last sessions: %s", opening.Raw)
	}

	// First message of the next session: profile, digest, opening and
	// memories, deep retrieval.
	res := svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{
		"message": "Alex has a basketball game and is frustrated with word problems", "learner_id": alex,
	}).WantStatus(http.StatusOK)
	if res.Body["retrieval"].(map[string]any)["mode"] != "deep" {
		t.Fatalf("first message with an emotional cue should run deep retrieval: %s", res.Raw)
	}
	system := model.Calls()[0].Body.Contents("system")[0]
	for _, want := range []string{
		// The facilitator's own line is pinned apart from the rest.
		"This session is about one learner, Alex (learner_id " + alex + ").\n\n=== WHAT THE FACILITATOR WROTE ABOUT THEM ===\n" +
			"- Goals and what is next: Pass the algebra exam in June\n=== END WHAT THE FACILITATOR WROTE ===",
		"=== LEARNER PROFILE ===\n# Alex\n\n" +
			"## The last session\n\n### Where things stand\n\n- Still working on: word problems.\n=== END LEARNER PROFILE ===",
		"=== SESSION OPENING ===", "Unfinished threads:\n- Next time we'll try word problems.",
		"=== RELEVANT MEMORIES ===\nPersonal:\n- Plays basketball; games are on Fridays\n=== END RELEVANT MEMORIES ===",
		"=== EMOTIONAL PATTERNS TO WATCH ===", "- When frustrated, pictures help more than letters (felt frustrated)",
		"Never recite the record", // the instruction to use memories naturally
	} {
		if !strings.Contains(system, want) {
			t.Fatalf("system prompt lacks %q:\n%s", want, system)
		}
	}
	// Later messages keep the memories and the pinned line but not the
	// opening or the profile.
	svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{
		"message": "what about the game?", "learner_id": alex, "history": apptest.Exchange("Hi", "Hello"),
	}).WantStatus(http.StatusOK)
	later := model.Calls()[1].Body.Contents("system")[0]
	if strings.Contains(later, "SESSION OPENING") || strings.Contains(later, "LEARNER PROFILE") || !strings.Contains(later, "Plays basketball") ||
		!strings.Contains(later, "- Goals and what is next: Pass the algebra exam in June") {
		t.Fatalf("later system prompt:\n%s", later)
	}
}

// pastimes are Emma's, one a day of the week, unlike enough not to merge.
var pastimes = map[string]string{"Sunday": "visits her grandmother", "Monday": "swims", "Tuesday": "plays chess",
	"Wednesday": "paints pottery", "Thursday": "sings in a choir", "Friday": "plays basketball", "Saturday": "rides horses"}

// endSessionWithAPastimeADay has u tell the memory emma's pastimes, then
// talk about her and end the session, so that the opening holds a pastime
// for each day.
func endSessionWithAPastimeADay(t *testing.T, svc *apptest.Service, u apptest.User, emma string) {
	t.Helper()
	for day, pastime := range pastimes {
		svc.AddMemory(t, u, emma, map[string]any{"type": "personal", "content": "Emma " + pastime + " on " + day + "s"})
	}
	svc.PostTurns(t, u, emma, apptest.Exchange("Emma liked her club.", "Lovely.")...).WantStatus(http.StatusOK)
	svc.EndSession(t, u, emma)
}

// The opening's weekday hint is the facilitator's day: zones a day apart
// (UTC+14 and UTC-11, always on different weekdays) each get their own,
// and a zone that is not one is refused.
func TestCounselorSpeaksOfTheFacilitatorsDay(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent("Hello!", "stop"))
	svc, u, emma := apptest.StartWithLearner(t, apptest.Options{ModelURL: model.URL}, "Emma")
	endSessionWithAPastimeADay(t, svc, u, emma)

	for i, zone := range []string{"Pacific/Kiritimati", "Pacific/Pago_Pago"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{
			"message": "Hi", "learner_id": emma, "time_zone": zone}).WantStatus(http.StatusOK)
		today := time.Now().In(loc).Weekday().String()
		if system := model.Calls()[i].Body.First("system"); !strings.Contains(system, "It's "+today+": Emma "+pastimes[today]+" on "+today+"s") {
			t.Errorf("in %s it is %s; the opening says:\n%s", zone, today, system)
		}
	}
	svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi", "time_zone": "Mars/Olympus"}).
		WantError(http.StatusBadRequest, "time_zone must be an IANA time zone such as Europe/Paris")
	svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi", "time_zone": "Local"}).
		WantError(http.StatusBadRequest, "time_zone must be an IANA time zone such as Europe/Paris")
}

// The opening is read for the facilitator's day: today in their time zone
// (UTC+14 and UTC-11 are always on different weekdays), or the date they
// give, there; a zone that is not one is refused.
func TestTheOpeningIsReadForTheFacilitatorsDay(t *testing.T) {
	svc, u, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	endSessionWithAPastimeADay(t, svc, u, emma)

	relevant := func(query string) []string {
		t.Helper()
		res := svc.Call(t, u.Token, http.MethodGet, "/api/opening-context?learner_id="+emma+query, nil).WantStatus(http.StatusOK)
		return strs(res.Object("opening")["personal_relevance"])
	}
	for _, zone := range []string{"Pacific/Kiritimati", "Pacific/Pago_Pago"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		today := time.Now().In(loc).Weekday().String()
		want := "It's " + today + ": Emma " + pastimes[today] + " on " + today + "s"
		if got := relevant("&time_zone=" + zone); !slices.Equal(got, []string{want}) {
			t.Errorf("in %s it is %s: relevant %q, want %q", zone, today, got, want)
		}
	}
	if got := relevant("&time_zone=America/New_York&date=2026-11-27"); !slices.Equal(got, []string{"It's Friday: Emma plays basketball on Fridays"}) {
		t.Errorf("a Friday in New York: relevant %q", got)
	}
	svc.Call(t, u.Token, http.MethodGet, "/api/opening-context?learner_id="+emma+"&time_zone=Mars/Olympus", nil).
		WantError(http.StatusBadRequest, "time_zone must be an IANA time zone such as Europe/Paris")
}
