package counselor

import (
	"encoding/json"
	"strings"
	"testing"
)

// A result too long for its bound is shortened into valid JSON that keeps
// every item, its numbers exactly, and the start of each text.
func TestFitJSONShortensTextsIntoValidJSON(t *testing.T) {
	turn := strings.Repeat("Max lit up when the rocket book came out — «encore»! ", 400)
	result := map[string]any{
		"success": true,
		"count":   3,
		"big":     int64(9007199254740993), // beyond a float64's exact integers
		"results": []map[string]any{{"snippet": turn}, {"snippet": turn}, {"snippet": turn}},
	}
	encoded, shortened, err := fitJSON(result, 4<<10)
	if err != nil || encoded == nil || !shortened {
		t.Fatalf("fitJSON = %d bytes, shortened %v, error %v; want a shortened result", len(encoded), shortened, err)
	}
	if len(encoded) > 4<<10 || !json.Valid(encoded) {
		t.Fatalf("%d bytes, valid JSON %v: %s", len(encoded), json.Valid(encoded), encoded)
	}
	var got struct {
		Count     int    `json:"count"`
		Big       int64  `json:"big"`
		Shortened string `json:"shortened"`
		Results   []struct {
			Snippet string `json:"snippet"`
		} `json:"results"`
	}
	if err := json.Unmarshal(encoded, &got); err != nil {
		t.Fatal(err)
	}
	if got.Count != 3 || got.Big != 9007199254740993 || got.Shortened == "" || len(got.Results) != 3 {
		t.Fatalf("the shortened result lost its shape: %s", encoded)
	}
	for _, r := range got.Results {
		if !strings.HasPrefix(turn, strings.TrimSuffix(r.Snippet, "…")) || !strings.HasSuffix(r.Snippet, "…") {
			t.Fatalf("a text should keep its start and end in …: %q", r.Snippet)
		}
	}

	if small, shortened, _ := fitJSON(map[string]any{"success": true}, 100); string(small) != `{"success":true}` || shortened {
		t.Errorf("a result within its bound changed: %s", small)
	}
	if none, _, err := fitJSON(result, 100); none != nil || err != nil {
		t.Errorf("a result that cannot fit should give nothing, got %s, %v", none, err)
	}
}
