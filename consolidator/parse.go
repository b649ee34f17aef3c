package consolidator

import (
	"encoding/json"
	"fmt"
	"strings"

	"mentormemory/mentor"
)

// reply is the schema's shape; pointers tell a missing list from an empty
// one.
type reply struct {
	Merges *[]struct {
		Keep     string   `json:"keep"`
		Absorbed []string `json:"absorbed"`
	} `json:"merges"`
	Supersessions *[]struct {
		Old string `json:"old"`
		New string `json:"new"`
	} `json:"supersessions"`
	Expiries *[]struct {
		Memory string `json:"memory"`
		Reason string `json:"reason"`
	} `json:"expiries"`
	Resolutions *[]struct {
		Memory string `json:"memory"`
		By     string `json:"by"`
	} `json:"resolutions"`
}

// maxReasonChars bounds an expiry's reason as kept.
const maxReasonChars = 200

// parsePlan reads the model's plan and names its memories by id. A reply
// that is not the schema's shape, or names a key it was not shown, fails
// whole: a model that got one key wrong may have got others wrong too.
func parsePlan(content string, shown []mentor.LearnerMemory, restore func(string) string) (mentor.ConsolidationPlan, error) {
	var r reply
	if err := json.Unmarshal([]byte(strings.TrimSpace(content)), &r); err != nil {
		return mentor.ConsolidationPlan{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if r.Merges == nil || r.Supersessions == nil || r.Expiries == nil || r.Resolutions == nil {
		return mentor.ConsolidationPlan{}, fmt.Errorf("%w: a list of changes is missing", ErrMalformed)
	}
	ids := make(map[string]string, len(shown))
	for i, m := range shown {
		ids[key(i)] = m.ID
	}
	unknown := 0
	id := func(k string) string {
		v, ok := ids[strings.TrimSpace(k)]
		if !ok {
			unknown++
		}
		return v
	}
	var plan mentor.ConsolidationPlan
	for _, m := range *r.Merges {
		merge := mentor.Merge{Keep: id(m.Keep)}
		for _, a := range m.Absorbed {
			merge.Absorbed = append(merge.Absorbed, id(a))
		}
		plan.Merges = append(plan.Merges, merge)
	}
	for _, s := range *r.Supersessions {
		plan.Supersessions = append(plan.Supersessions, mentor.Supersession{Old: id(s.Old), New: id(s.New)})
	}
	for _, e := range *r.Expiries {
		reason := []rune(restore(strings.TrimSpace(e.Reason)))
		if len(reason) > maxReasonChars {
			reason = reason[:maxReasonChars]
		}
		plan.Expiries = append(plan.Expiries, mentor.Expiry{ID: id(e.Memory), Reason: string(reason)})
	}
	for _, res := range *r.Resolutions {
		plan.Resolutions = append(plan.Resolutions, mentor.Resolution{ID: id(res.Memory), By: id(res.By)})
	}
	// The keys themselves are the model's text, which may hold anything:
	// only their number is told.
	if unknown > 0 {
		return mentor.ConsolidationPlan{}, fmt.Errorf("%w: it names %d memories it was not shown", ErrMalformed, unknown)
	}
	return plan, nil
}
