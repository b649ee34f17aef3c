package bench

import (
	"testing"
)

func TestJSONFields(t *testing.T) {
	body := []byte(`{"success":true,"count":12,"archived":false,"turns_added":2,"text":"\"count\":99"}`)
	if n, ok := jsonInt(body, "count"); !ok || n != 12 {
		t.Errorf("count %d, %v; want 12", n, ok)
	}
	if n, ok := jsonInt(body, "turns_added"); !ok || n != 2 {
		t.Errorf("turns_added %d, %v; want 2", n, ok)
	}
	if _, ok := jsonInt(body, "missing"); ok {
		t.Error("a missing key was read")
	}
	if _, ok := jsonInt([]byte(`{"count":"many"}`), "count"); ok {
		t.Error("a string was read as a number")
	}
	if n, ok := jsonInt([]byte(`{"count":7`), "count"); !ok || n != 7 {
		t.Errorf("a number at the end of the body: %d, %v", n, ok)
	}
	if !jsonTrue(body, "success") || jsonTrue(body, "archived") || jsonTrue(body, "missing") {
		t.Error("jsonTrue misread success, archived or a missing key")
	}
}

func TestAnswerChecks(t *testing.T) {
	o := &outcome{}
	if err := checkPost([]byte(`{"success":true,"turns_added":2,"archived":true,"summary_stale":true}`), o); err != nil {
		t.Error(err)
	}
	if err := checkPost([]byte(`{"success":true,"turns_added":1}`), o); err == nil {
		t.Error("a post that stored one turn of two passed")
	}
	if o.archived != 1 || o.stale != 1 {
		t.Errorf("archived %d, stale %d; want 1, 1", o.archived, o.stale)
	}
	if err := checkSearch([]byte(`{"success":true,"count":0,"results":[]}`), o); err != nil || o.searchEmpty != 1 {
		t.Errorf("an empty search: %v, %d empty", err, o.searchEmpty)
	}
	if err := checkConversation([]byte(`{"success":true,"conversation_update":null}`), o); err == nil {
		t.Error("a missing conversation passed")
	}
	if err := checkConversation([]byte(`{"success":true,"conversation_update":{"turn_count":4}}`), o); err != nil {
		t.Error(err)
	}

	deep := checkRecall("deep")
	body := []byte(`{"success":true,"memories":[{"score":1},{"score":2}],"emotional_patterns":[{"score":3}],"retrieval":{"mode":"deep"}}`)
	if err := deep(body, o); err != nil {
		t.Error(err)
	}
	if o.recalled != 3 || o.emotional != 1 {
		t.Errorf("recalled %d, emotional %d; want 3, 1", o.recalled, o.emotional)
	}
	if err := checkRecall("light")(body, o); err == nil {
		t.Error("a deep answer passed as light")
	}
}
