package handlers_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
)

// exportArchive downloads u's archive (query: "" or "?learner_id=…") and
// returns it whole and as lines, each checked to be a JSON object with a
// type.
func exportArchive(t *testing.T, svc *apptest.Service, u apptest.User, query string) ([]byte, []map[string]any) {
	t.Helper()
	// Through apptest, which holds the answer to the API's document; its
	// Err only says that JSON Lines are not one JSON object.
	res := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodGet, Path: "/api/export" + query, Token: u.Token})
	raw := res.Raw
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("export answered %d %s: %s", res.Status, res.Header.Get("Content-Type"), raw)
	}
	var lines []map[string]any
	scanner := bufio.NewScanner(bytes.NewReader(raw))
	scanner.Buffer(nil, 4<<20)
	for scanner.Scan() {
		var line map[string]any
		if err := json.Unmarshal(scanner.Bytes(), &line); err != nil || line["type"] == nil {
			t.Fatalf("line %d is not a typed JSON object (%v): %s", len(lines)+1, err, scanner.Bytes())
		}
		lines = append(lines, line)
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return raw, lines
}

// ofType are the archive's lines of type typ.
func ofType(lines []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["type"] == typ {
			out = append(out, l)
		}
	}
	return out
}

// accountWithHistory gives a new facilitator two learners with every kind
// of record: archived and active turns (the second learner's conversation
// cleared), memories of each, one corrected, a profile
// with the facilitator's own lines, and an ended session.
func accountWithHistory(t *testing.T, svc *apptest.Service) (u apptest.User, emma, leo string) {
	t.Helper()
	u = svc.NewUser(t)
	emma = svc.NewLearner(t, u, "Emma")
	leo = svc.NewLearner(t, u, "Leo")
	// 30 exchanges: 60 turns, past the 50 at which a segment is archived.
	for i := range 30 {
		svc.PostTurns(t, u, emma, apptest.Exchange(
			fmt.Sprintf("Emma practised fractions with pizza slices, round %d.", i),
			fmt.Sprintf("Lovely: next time try thirds with the pizza, round %d.", i))...).WantStatus(http.StatusOK)
	}
	svc.PostTurns(t, u, leo, apptest.Exchange("Leo built a volcano for the science fair.", "Ask him what made it erupt.")...).WantStatus(http.StatusOK)
	svc.Call(t, u.Token, http.MethodDelete, "/api/conversation-memory?learner_id="+leo, nil).WantStatus(http.StatusOK)
	svc.PostTurns(t, u, leo, apptest.Exchange("Leo wants to read about dinosaurs.", "The library has a great series.")...).WantStatus(http.StatusOK)
	svc.PostTurns(t, u, "", apptest.Exchange("Our family plans a trip to the mountains.", "Pack snacks for the drive.")...).WantStatus(http.StatusOK)

	svc.AddMemory(t, u, emma, map[string]any{"type": "academic", "content": "Emma understands halves but mixes up thirds",
		"metadata": map[string]any{"topic": "fractions", "emotion": "frustrated"}, "importance": 0.8})
	pizza := svc.AddMemory(t, u, emma, map[string]any{"type": "preference", "content": "Emma loves pizza"})
	svc.Call(t, u.Token, http.MethodPatch, "/api/memories/"+pizza, map[string]any{"content": "Emma loves pizza with olives"}).
		WantStatus(http.StatusOK)
	svc.AddMemory(t, u, leo, map[string]any{"type": "personal", "content": "Leo is fascinated by volcanoes and dinosaurs"})
	svc.Call(t, u.Token, http.MethodPut, "/api/learners/"+emma+"/profile", map[string]any{
		"lines": []map[string]any{{"category": "strengths", "text": "Patient with hard problems"}},
	}).WantStatus(http.StatusOK)
	svc.EndSession(t, u, emma)
	// Leo is not learnt from; the account forgets what stays unconfirmed
	// for a year; a learner was erased, which left a receipt.
	svc.Call(t, u.Token, http.MethodPut, "/api/learners/"+leo+"/settings", map[string]any{"learning": false}).WantStatus(http.StatusOK)
	svc.Call(t, u.Token, http.MethodPut, "/api/account/settings", map[string]any{"retention_days": 365}).WantStatus(http.StatusOK)
	svc.Call(t, u.Token, http.MethodDelete, "/api/learners/"+svc.NewLearner(t, u, "Max"), nil).WantStatus(http.StatusOK)
	return u, emma, leo
}

func TestExportHoldsEveryRecordOfTheAccount(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{})
	a, emma, leo := accountWithHistory(t, svc)
	b := svc.NewUser(t)
	bLearner := svc.NewLearner(t, b, "Zed")
	svc.PostTurns(t, b, bLearner, apptest.Exchange("Zed's secret about marbles.", "Noted.")...).WantStatus(http.StatusOK)

	raw, lines := exportArchive(t, svc, a, "")
	header, end := lines[0], lines[len(lines)-1]
	if header["type"] != mentor.ArchiveHeaderType || header["format"] != mentor.ArchiveFormat || header["version"] != 1.0 ||
		header["scope"] != "account" || header["exported_at"] == nil {
		t.Fatalf("first line should name the format, version, scope and time: %v", header)
	}
	if end["type"] != mentor.ArchiveEndType || end["records"] != float64(len(lines)-2) {
		t.Fatalf("last line should count the %d records: %v", len(lines)-2, end)
	}
	want := map[string]int{
		"learner": 2, "session": 3, "conversation": 3, "archived_conversation": 2, "turn": 66,
		"memory": 3, "memory_history": 4, "session_opening": 1, "learner_profile": 1,
		"learner_settings": 1, "account_settings": 1, "erasure_receipt": 1,
	}
	for typ, n := range want {
		if got := len(ofType(lines, typ)); got != n {
			t.Errorf("want %d %s records, got %d: %v", n, typ, got, ofType(lines, typ))
		}
	}
	for _, typ := range []string{"consolidation_run"} {
		if len(ofType(lines, typ)) == 0 {
			t.Errorf("no %s record", typ)
		}
	}
	profile := ofType(lines, "learner_profile")[0]
	if md, _ := profile["markdown"].(string); !strings.Contains(md, "# Emma") || !strings.Contains(md, "Patient with hard problems") {
		t.Errorf("the profile should carry its Markdown: %v", profile)
	}
	for _, m := range ofType(lines, "memory") {
		if m["memory_type"] == nil || m["confidence"] == nil || m["status"] == nil || m["metadata"] == nil {
			t.Errorf("a memory record should carry its type, confidence, status and metadata: %v", m)
		}
		if m["facilitator_id"] != nil || m["search_vector"] != nil {
			t.Errorf("a memory record carries the account or derived columns: %v", m)
		}
	}
	for _, leak := range []string{"marbles", "Zed", b.ID, bLearner} {
		if bytes.Contains(raw, []byte(leak)) {
			t.Errorf("A's export holds B's %q", leak)
		}
	}

	// One learner's export holds nothing of the other, nor of the general
	// conversation.
	raw, lines = exportArchive(t, svc, a, "?learner_id="+emma)
	if lines[0]["scope"] != "learner" || lines[0]["learner_id"] != emma {
		t.Fatalf("scope should be the learner: %v", lines[0])
	}
	for _, leak := range []string{leo, "Leo", "volcano", "dinosaurs", "mountains"} {
		if bytes.Contains(raw, []byte(leak)) {
			t.Errorf("Emma's export holds %q", leak)
		}
	}
	if n := len(ofType(lines, "turn")); n != 60 {
		t.Errorf("Emma's export should hold her 60 turns, got %d", n)
	}

	// B cannot export A's learner.
	svc.Call(t, b.Token, http.MethodGet, "/api/export?learner_id="+emma, nil).WantError(http.StatusNotFound, "Learner not found")
	svc.Call(t, a.Token, http.MethodGet, "/api/export?learner_id=nope", nil).WantError(http.StatusBadRequest, "learner_id must be a uuid")
}

// importArchive posts an archive to u's account.
func importArchive(t *testing.T, svc *apptest.Service, u apptest.User, archive []byte) apptest.Response {
	t.Helper()
	return apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodPost, Path: "/api/import", Token: u.Token, Body: archive,
		Header: http.Header{"Content-Type": {"application/x-ndjson"}}})
}

// sameWithoutIDs is an answer as text with every id, time and rank left
// out, to compare two accounts' answers about the same history.
func sameWithoutIDs(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			switch k {
			case "id", "learner_id", "memory_ids", "session_id", "superseded_by", "source_turn_ids", "date", "created_at",
				"updated_at", "last_seen_at", "archived_at", "computed_at", "rank", "score", "request_id", "took_ms":
				continue
			}
			out[k] = sameWithoutIDs(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = sameWithoutIDs(x)
		}
		return out
	}
	return v
}

func TestImportMovesAnAccountOnce(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{})
	a, emma, leo := accountWithHistory(t, svc)
	archive, lines := exportArchive(t, svc, a, "")

	c := svc.NewUser(t)
	first := importArchive(t, svc, c, archive).WantStatus(http.StatusOK)
	records := first.Object("records")
	for typ, n := range map[string]int{"learner": 2, "turn": 66, "memory": 3, "archived_conversation": 2} {
		if got := records[typ].(map[string]any); got["imported"] != float64(n) || got["existing"] != 0.0 {
			t.Errorf("first import of %d %s records: %v", n, typ, got)
		}
	}

	// C's learners, by name, are A's.
	learnersOf := func(u apptest.User) map[string]string {
		byName := map[string]string{}
		for _, l := range svc.Call(t, u.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK).Body["learners"].([]any) {
			l := l.(map[string]any)
			byName[l["name"].(string)] = l["id"].(string)
		}
		return byName
	}
	cLearners := learnersOf(c)
	if len(cLearners) != 2 || cLearners["Emma"] == "" || cLearners["Emma"] == emma || cLearners["Leo"] == leo {
		t.Fatalf("C should have Emma and Leo under new ids: %v", cLearners)
	}
	// what is the answer's subject, a word A's answer must hold.
	same := func(what, aPath, cPath string) {
		t.Helper()
		aRes := svc.Call(t, a.Token, http.MethodGet, aPath, nil).WantStatus(http.StatusOK)
		cRes := svc.Call(t, c.Token, http.MethodGet, cPath, nil).WantStatus(http.StatusOK)
		aJSON, _ := json.Marshal(sameWithoutIDs(aRes.Body))
		cJSON, _ := json.Marshal(sameWithoutIDs(cRes.Body))
		if !bytes.Equal(aJSON, cJSON) {
			t.Errorf("%s differs:\nA %s\nC %s", what, aJSON, cJSON)
		}
		if subject := strings.Fields(what)[1]; !bytes.Contains(bytes.ToLower(aJSON), []byte(strings.ToLower(subject))) {
			t.Errorf("A's %s should be about %q: %s", what, subject, aJSON)
		}
	}
	for _, q := range []string{"pizza", "volcano", "dinosaurs", "mountains", "thirds"} {
		same("search "+q, "/api/conversation-memory?search="+q+"&include_archive=true",
			"/api/conversation-memory?search="+q+"&include_archive=true")
	}
	same("conversation Emma", "/api/conversation-memory?learner_id="+emma, "/api/conversation-memory?learner_id="+cLearners["Emma"])
	same("recall pizza", "/api/memories/context?learner_id="+emma+"&message=fractions+with+pizza",
		"/api/memories/context?learner_id="+cLearners["Emma"]+"&message=fractions+with+pizza")
	same("recall volcanoes", "/api/memories/context?learner_id="+leo+"&message=volcano",
		"/api/memories/context?learner_id="+cLearners["Leo"]+"&message=volcano")
	same("profile Patient", "/api/learners/"+emma+"/profile", "/api/learners/"+cLearners["Emma"]+"/profile")
	same("opening Emma", "/api/opening-context?learner_id="+emma, "/api/opening-context?learner_id="+cLearners["Emma"])
	same("settings learning", "/api/learners/"+leo+"/settings", "/api/learners/"+cLearners["Leo"]+"/settings")
	same("settings retention_days", "/api/account/settings", "/api/account/settings")
	// What was erased in A's account is not C's: the receipt is left out.
	if got := records[mentor.ErasureRecordType].(map[string]any); got["imported"] != 0.0 || got["skipped"] != 1.0 {
		t.Errorf("the erasure receipt on import: %v, want skipped", got)
	}

	// Again: nothing new, everything found.
	before := snapshotOf(t, svc, c.ID)
	again := importArchive(t, svc, c, archive).WantStatus(http.StatusOK).Object("records")
	for typ, got := range again {
		want := records[typ].(map[string]any)
		if got := got.(map[string]any); got["imported"] != 0.0 || got["existing"] != want["imported"] {
			t.Errorf("second import of %s: %v, want all %v existing", typ, got, want["imported"])
		}
	}
	if after := snapshotOf(t, svc, c.ID); after != before {
		t.Errorf("a second import changed C's rows")
	}
	// C's export holds as many records as A's, the receipt aside.
	_, cLines := exportArchive(t, svc, c, "")
	if len(cLines) != len(lines)-len(ofType(lines, mentor.ErasureRecordType)) {
		t.Errorf("C's export has %d lines, A's %d with one receipt", len(cLines), len(lines))
	}
}

func TestImportRefusesBadArchivesWhole(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{})
	a, _, _ := accountWithHistory(t, svc)
	archive, _ := exportArchive(t, svc, a, "")
	lines := strings.Split(strings.TrimSpace(string(archive)), "\n")
	turn, archived := 0, 0
	for i, l := range lines {
		if strings.HasPrefix(l, `{"type":"turn"`) && turn == 0 {
			turn = i
		}
		if strings.HasPrefix(l, `{"type":"archived_conversation"`) && archived == 0 {
			archived = i
		}
	}
	// The archived conversation, with its first turn said in the future.
	var record map[string]any
	if err := json.Unmarshal([]byte(lines[archived]), &record); err != nil {
		t.Fatal(err)
	}
	record["conversation_turns"].([]any)[0].(map[string]any)["created_at"] = "2999-01-01T00:00:00Z"
	futureArchive, err := json.Marshal(record)
	if err != nil {
		t.Fatal(err)
	}
	with := func(i int, line string) string {
		changed := append([]string{}, lines...)
		changed[i] = line
		return strings.Join(changed, "\n")
	}
	c := svc.NewUser(t)
	future := "A turn's created_at 2999-01-01T00:00:00Z is in the future (the server's clock reads "
	for _, bad := range []struct{ name, body, want string }{
		{"malformed", with(turn, `{"type":"turn",`), fmt.Sprintf("Not a JSON object (line %d)", turn+1)},
		{"unknown type", with(turn, `{"type":"spaceship","id":"x"}`), fmt.Sprintf(`Unknown record type "spaceship" (line %d)`, turn+1)},
		{"dangling reference", with(turn, `{"type":"turn","id":1,"role":"user","content":"hi","learner_id":"`+a.ID+`"}`),
			fmt.Sprintf("learner_id %s refers to a learner that is not in the archive above (line %d)", a.ID, turn+1)},
		{"bad value", with(turn, `{"type":"turn","id":1,"role":"robot","content":"hi"}`), ""},
		{"turn from the future", with(turn, `{"type":"turn","id":1,"role":"user","content":"hi","created_at":"2999-01-01T00:00:00Z"}`), future},
		{"archived turn from the future", with(archived, string(futureArchive)), future},
		{"cut short", strings.Join(lines[:len(lines)-1], "\n"), fmt.Sprintf("The archive is cut short: no end line (line %d)", len(lines))},
		{"not an archive", `{"type":"learner","id":"x"}`, "The first line must name the format mentormemory-archive (line 1)"},
		{"empty", ``, "The archive is empty (line 1)"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			res := importArchive(t, svc, c, []byte(bad.body))
			if bad.want == future {
				msg, _ := res.WantStatus(http.StatusBadRequest).Body["error"].(string)
				if !strings.HasPrefix(msg, future) || !strings.Contains(msg, "at most 5m0s ahead is accepted) (line ") {
					t.Errorf("refused with %s, want %q… naming its line", res.Raw, future)
				}
			} else if bad.want != "" {
				res.WantError(http.StatusBadRequest, bad.want)
			} else if res.WantStatus(http.StatusBadRequest); !strings.HasSuffix(res.Body["error"].(string), fmt.Sprintf("(line %d)", turn+1)) {
				t.Errorf("the error should name line %d: %s", turn+1, res.Raw)
			}
			if n := svc.Count(t, `select (select count(*) from learners where facilitator_id = $1::uuid)
				+ (select count(*) from conversation_turns where facilitator_id = $1::uuid)`, c.ID); n != 0 {
				t.Errorf("a refused import stored %d rows", n)
			}
		})
	}
}
