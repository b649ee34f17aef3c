package searchquality

import (
	"fmt"
	"strings"
)

// cutoff is the benchmark's: recall@5 of the session holding the answer;
// depth is the deeper cut it also reports, recall@10, and how many
// results a question asks for.
const (
	cutoff = 5
	depth  = 10
)

// outcome is one question's result for one system.
type outcome struct {
	q Question
	// top lists the session of each returned row, best first; a session
	// split into two archive rows may appear twice, taking two of the
	// five places, as it does for the benchmark.
	top []string
	// rank is the 1-based place of the first row of the right session in
	// top, 0 when it is not there.
	rank int
	// deepRank is its place in a longer list (verbose runs only), to tell
	// a near miss from a lost cause; 0 when unknown.
	deepRank int
}

// within reports whether the right session is among the first k.
func (o outcome) within(k int) bool { return o.rank >= 1 && o.rank <= k }

func newOutcome(q Question, top []string) outcome {
	o := outcome{q: q, top: top}
	for i, s := range top {
		if s == q.SessionID {
			o.rank = i + 1
			break
		}
	}
	return o
}

type score struct {
	n                 int
	r1, r5, r10, mrr5 float64
}

func (s *score) add(o outcome) {
	s.n++
	if o.rank == 1 {
		s.r1++
	}
	if o.within(cutoff) {
		s.r5++
		s.mrr5 += 1 / float64(o.rank)
	}
	if o.within(depth) {
		s.r10++
	}
}

func (s score) mean() score {
	if s.n == 0 {
		return s
	}
	n := float64(s.n)
	return score{n: s.n, r1: s.r1 / n, r5: s.r5 / n, r10: s.r10 / n, mrr5: s.mrr5 / n}
}

// apart reports whether a question kind is measured apart from the
// others and left out of ALL, so that ALL stays comparable with the
// figures from before the kind was added.
func apart(kind string) bool { return kind == KindDated || kind == KindWhen }

// summarize scores all outcomes but the dated and the when questions'
// (which are measured apart, each as its own kind) and each kind.
func summarize(outs []outcome) (all score, byKind map[string]score) {
	byKind = map[string]score{}
	for _, o := range outs {
		if !apart(o.q.Kind) {
			all.add(o)
		}
		k := byKind[o.q.Kind]
		k.add(o)
		byKind[o.q.Kind] = k
	}
	for k, s := range byKind {
		byKind[k] = s.mean()
	}
	return all.mean(), byKind
}

// table renders recall@1, recall@5, recall@10 and MRR@5 of several
// systems, per question kind and overall, then the dated and the when
// questions apart,
// as fixed-width text for t.Log.
func table(names []string, results map[string][]outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %4s", "kind", "n")
	for _, name := range names {
		fmt.Fprintf(&b, " | %-29s", name)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-12s %4s", "", "")
	for range names {
		fmt.Fprintf(&b, " | %6s %6s %6s %6s  ", "R@1", "R@5", "R@10", "MRR")
	}
	b.WriteString("\n")
	row := func(label string, get func(string) score) {
		n := get(names[0]).n
		fmt.Fprintf(&b, "%-12s %4d", label, n)
		for _, name := range names {
			s := get(name)
			fmt.Fprintf(&b, " | %6.3f %6.3f %6.3f %6.3f  ", s.r1, s.r5, s.r10, s.mrr5)
		}
		b.WriteString("\n")
	}
	sums := map[string]score{}
	kinds := map[string]map[string]score{}
	for _, name := range names {
		sums[name], kinds[name] = summarize(results[name])
	}
	for _, k := range Kinds {
		if kinds[names[0]][k].n == 0 {
			continue
		}
		row(k, func(name string) score { return kinds[name][k] })
	}
	row("ALL", func(name string) score { return sums[name] })
	for _, k := range []string{KindDated, KindWhen} {
		if kinds[names[0]][k].n > 0 {
			row(k, func(name string) score { return kinds[name][k] })
		}
	}
	return b.String()
}

// lengthBucket names the size of the session holding a question's answer:
// whole-session scoring normalizes by length, turn scoring does not, so
// this is where the two differ.
func lengthBucket(d *Dataset, q Question) string {
	_, s := d.Session(q.SessionID)
	switch n := len(s.Turns); {
	case n <= 14:
		return "6-14 turns"
	case n <= 26:
		return "16-26 turns"
	case n <= 50:
		return "28-40 turns"
	default:
		return ">50 (2 rows)"
	}
}

var lengthBuckets = []string{"6-14 turns", "16-26 turns", "28-40 turns", ">50 (2 rows)"}

// bucketTable shows recall@5 of each system per answer-session length.
func bucketTable(d *Dataset, names []string, results map[string][]outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-36s", "answer session length:")
	for _, k := range lengthBuckets {
		fmt.Fprintf(&b, " %12s", k)
	}
	b.WriteString("\n")
	counts := map[string]int{}
	for _, o := range results[names[0]] {
		if !apart(o.q.Kind) {
			counts[lengthBucket(d, o.q)]++
		}
	}
	fmt.Fprintf(&b, "%-36s", "questions")
	for _, k := range lengthBuckets {
		fmt.Fprintf(&b, " %12d", counts[k])
	}
	b.WriteString("\n")
	for _, name := range names {
		per := map[string]*score{}
		for _, k := range lengthBuckets {
			per[k] = &score{}
		}
		for _, o := range results[name] {
			if !apart(o.q.Kind) {
				per[lengthBucket(d, o.q)].add(o)
			}
		}
		fmt.Fprintf(&b, "%-36s", name)
		for _, k := range lengthBuckets {
			fmt.Fprintf(&b, " %12.3f", per[k].mean().r5)
		}
		b.WriteString("\n")
	}
	return b.String()
}
