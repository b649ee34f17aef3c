package main

import (
	"regexp"
	"slices"
	"strings"
)

// This file reads a statement as pg_stat_statements keeps it and finds the
// tables kept per facilitator it reads or writes without naming their
// facilitator. Citus runs a statement on one shard when every such table
// in it is filtered on facilitator_id = <one value>, or joined on
// facilitator_id to one that is. The reading is textual and errs on the
// side of reporting: a mention of a table it cannot tie to one
// facilitator is reported.
//
// A table's mention is tied to one facilitator by
//   - name.facilitator_id = value (or value = name.facilitator_id), where
//     value is a parameter, a constant or a PL/pgSQL variable;
//   - an unqualified facilitator_id = value after it, as a WHERE follows
//     its FROM (the nearest mention before it not tied yet);
//   - name.facilitator_id = other.facilitator_id, other tied: another
//     table's mention, or a subquery or common table expression whose
//     every mention is tied;
//   - an INSERT naming facilitator_id among its columns whose VALUES or
//     SELECT give it a value.

// reference is one mention of a table: after FROM, JOIN, UPDATE, INSERT
// INTO, USING or a comma of a FROM list, with its alias.
type reference struct {
	table, alias string
	at           int
	// insertColumns is an INSERT's list of columns.
	insertColumns string
	end           int
}

var (
	lineComment  = regexp.MustCompile(`--[^\n]*`)
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	stringLit    = regexp.MustCompile(`'(?:[^']|'')*'`)
	quotedName   = regexp.MustCompile(`"([^"]*)"`)
	space        = regexp.MustCompile(`\s+`)

	name     = `[a-z_][a-z0-9_]*`
	tableRef = regexp.MustCompile(`(?:\b(?:from|join|update|into|using)|,)\s+(?:only\s+)?(?:(?:public|private)\.)?(` + name + `)\b(\s*\.)?` +
		`(?:\s+(?:as\s+)?(` + name + `))?(?:\s*\(([a-z0-9_, ]*)\))?`)
	// A value: a parameter, a constant ($s after normalize), a PL/pgSQL
	// variable or another name's column, with a cast.
	value         = `(?:\$\d+|\$s|` + name + `(?:\.` + name + `)?)(?:::` + name + `)?`
	equalityLeft  = regexp.MustCompile(`(?:\b(` + name + `)\.)?\bfacilitator_id(?:::uuid)?\s*=\s*(` + value + `)`)
	equalityRight = regexp.MustCompile(`(` + value + `)\s*=\s*(?:\b(` + name + `)\.)?\bfacilitator_id\b`)
	cteStart      = regexp.MustCompile(`(?:\bwith|,)\s+(?:recursive\s+)?(` + name + `)\s+as\s+(?:not\s+)?(?:materialized\s+)?\(`)
	derivedName   = regexp.MustCompile(`^\s+(?:as\s+)?(` + name + `)`)
	// An INSERT's value for facilitator_id: a parameter, a constant or a
	// PL/pgSQL variable, not a column (facilitator_id itself, x.column).
	plainValue = regexp.MustCompile(`^(?:\$\d+|\$s|` + name + `)(?:::` + name + `)?$`)
	// The one source an INSERT's SELECT reads, when it reads one.
	selectSource = regexp.MustCompile(`^select [^;]*? from (` + name + `)(?:\s+` + name + `)?(?:\s*$|\s+(?:where|returning|on conflict)\b)`)

	notAnAlias = []string{"where", "on", "set", "join", "left", "right", "inner", "full", "cross", "natural",
		"lateral", "using", "order", "group", "limit", "offset", "returning", "values", "select", "for", "union",
		"except", "intersect", "having", "window", "default", "with", "and", "or", "not", "into", "from",
		"overriding", "tablesample", "on", "do"}
	notAValue = []string{"any", "all", "some", "array", "select", "case", "coalesce", "nullif", "null"}
)

// normalize lower-cases the statement and blanks what may hold anything:
// comments, strings (to $s) and the quotes of quoted names.
func normalize(query string) string {
	q := lineComment.ReplaceAllString(query, " ")
	q = blockComment.ReplaceAllString(q, " ")
	q = stringLit.ReplaceAllString(q, "$$s")
	q = quotedName.ReplaceAllString(q, "$1")
	q = space.ReplaceAllString(strings.ToLower(q), " ")
	// Postgres's own statements (a foreign key's checks and actions)
	// name the operator.
	return strings.TrimSpace(strings.ReplaceAll(q, "operator(pg_catalog.=)", "="))
}

// unroutedTables lists the tables of perFacilitator the statement refers
// to without tying them to one facilitator, each once, in order.
func unroutedTables(query string, perFacilitator map[string]bool) []string {
	return (&statement{text: normalize(query), tables: perFacilitator}).unrouted()
}

type statement struct {
	text   string
	tables map[string]bool
}

func (s *statement) unrouted() []string {
	q := s.text
	refs := s.references()
	if len(refs) == 0 {
		return nil
	}
	isTable := map[string]bool{}
	for _, r := range refs {
		isTable[nameOf(r)] = true
	}
	subqueries := s.subqueries()

	tied := map[string]bool{}
	links := map[string][]string{}
	var unqualified []int
	equality := func(left, right string, at int) {
		right = strings.SplitN(right, "::", 2)[0]
		other, column, qualified := strings.Cut(right, ".")
		switch {
		case slices.Contains(notAValue, right):
		case qualified && isRecord(q, other):
			// A PL/pgSQL record's field (a trigger's new or old row, a
			// loop's row): one value.
			if left == "" {
				unqualified = append(unqualified, at)
			} else {
				tied[left] = true
			}
		case qualified && column == "facilitator_id":
			if left == "" {
				return // a join condition whose side cannot be told
			}
			links[left] = append(links[left], other)
			links[other] = append(links[other], left)
			if body, ok := subqueries[other]; ok && !isTable[other] && subqueryTied(body, s.tables) {
				tied[other] = true
			}
		case qualified:
			// Another column: no one facilitator's value.
		case left == "":
			unqualified = append(unqualified, at)
		default:
			tied[left] = true
		}
	}
	for _, m := range equalityLeft.FindAllStringSubmatchIndex(q, -1) {
		equality(group(q, m, 1), group(q, m, 2), m[0])
	}
	for _, m := range equalityRight.FindAllStringSubmatchIndex(q, -1) {
		equality(group(q, m, 2), group(q, m, 1), m[0])
	}
	slices.Sort(unqualified)
	for _, at := range unqualified {
		for i := len(refs) - 1; i >= 0; i-- {
			if refs[i].at < at && !tied[nameOf(refs[i])] {
				tied[nameOf(refs[i])] = true
				break
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for n, others := range links {
			if !tied[n] && slices.ContainsFunc(others, func(o string) bool { return tied[o] }) {
				tied[n], changed = true, true
			}
		}
	}

	var unrouted []string
	for _, r := range refs {
		if tied[nameOf(r)] || s.insertsOneFacilitator(r, subqueries) || slices.Contains(unrouted, r.table) {
			continue
		}
		unrouted = append(unrouted, r.table)
	}
	return unrouted
}

// references finds the mentions of the tables kept per facilitator.
func (s *statement) references() []reference {
	q := s.text
	var refs []reference
	for _, m := range tableRef.FindAllStringSubmatchIndex(q, -1) {
		table := group(q, m, 1)
		if !s.tables[table] || m[4] >= 0 { // a name followed by a dot qualifies a column
			continue
		}
		r := reference{table: table, at: m[0], end: m[1]}
		if alias := group(q, m, 3); alias != "" && !slices.Contains(notAnAlias, alias) {
			r.alias = alias
		}
		if strings.HasPrefix(q[m[0]:], "into") && m[8] >= 0 {
			r.insertColumns = group(q, m, 4)
		}
		refs = append(refs, r)
	}
	return refs
}

// subqueries maps the names of common table expressions and subqueries in
// FROM to their statements.
func (s *statement) subqueries() map[string]string {
	q := s.text
	found := map[string]string{}
	for _, m := range cteStart.FindAllStringSubmatchIndex(q, -1) {
		open := m[1] - 1
		if closing := matchingParen(q, open); closing > 0 {
			found[group(q, m, 1)] = q[open+1 : closing]
		}
	}
	for open := strings.Index(q, "(select "); open >= 0; {
		if closing := matchingParen(q, open); closing > 0 {
			if m := derivedName.FindStringSubmatch(q[closing+1:]); m != nil && !slices.Contains(notAnAlias, m[1]) {
				found[m[1]] = q[open+1 : closing]
			}
		}
		next := strings.Index(q[open+1:], "(select ")
		if next < 0 {
			break
		}
		open += 1 + next
	}
	return found
}

// subqueryTied says whether a subquery's rows are one facilitator's: it
// names a table kept per facilitator, and ties every mention.
func subqueryTied(body string, tables map[string]bool) bool {
	sub := &statement{text: body, tables: tables}
	return len(sub.references()) > 0 && len(sub.unrouted()) == 0
}

// insertsOneFacilitator says whether r is an INSERT's table whose rows all
// get one facilitator: facilitator_id is among its columns, and the VALUES
// or the SELECT that follow give it a value, or the SELECT reads it from a
// subquery or common table expression whose rows are one facilitator's,
// its one source or the one its item names (x.facilitator_id).
func (s *statement) insertsOneFacilitator(r reference, subqueries map[string]string) bool {
	columns := strings.Split(strings.ReplaceAll(r.insertColumns, " ", ""), ",")
	at := slices.Index(columns, "facilitator_id")
	if at < 0 {
		return false
	}
	rest := strings.TrimSpace(s.text[r.end:])
	switch {
	case strings.HasPrefix(rest, "values"):
		return true
	case strings.HasPrefix(rest, "select "):
		items := splitTopLevel(strings.TrimPrefix(strings.TrimPrefix(rest, "select "), "distinct "))
		if at >= len(items) {
			return false
		}
		item := strings.TrimSpace(items[at])
		if item != "facilitator_id" && plainValue.MatchString(item) {
			return true
		}
		if source, column, ok := strings.Cut(item, "."); ok && column == "facilitator_id" {
			if body, ok := subqueries[source]; ok && subqueryTied(body, s.tables) {
				return true
			}
		}
		if m := selectSource.FindStringSubmatch(rest); m != nil {
			body, ok := subqueries[m[1]]
			return ok && subqueryTied(body, s.tables)
		}
	}
	return false
}

// splitTopLevel splits a select list at its commas outside parentheses,
// up to its FROM or its end.
func splitTopLevel(list string) []string {
	var items []string
	depth, start := 0, 0
	for i := 0; i < len(list); i++ {
		switch {
		case list[i] == '(':
			depth++
		case list[i] == ')':
			depth--
			if depth < 0 {
				return append(items, list[start:i])
			}
		case list[i] == ',' && depth == 0:
			items = append(items, list[start:i])
			start = i + 1
		case depth == 0 && strings.HasPrefix(list[i:], " from "):
			return append(items, list[start:i])
		}
	}
	return append(items, list[start:])
}

// matchingParen is the index of the parenthesis that closes the one at
// open, or -1.
func matchingParen(q string, open int) int {
	depth := 0
	for i := open; i < len(q); i++ {
		switch q[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// isRecord says whether name is a PL/pgSQL record in the statement: a
// name that appears only with a field after it (new.x, due.x), never
// introduced as a table, subquery or alias of its own.
func isRecord(q, name string) bool {
	for _, m := range regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b(\s*\.)?`).FindAllStringSubmatchIndex(q, -1) {
		if m[2] < 0 {
			return false
		}
	}
	return true
}

// group is the regexp's submatch n, "" when it did not match.
func group(q string, m []int, n int) string {
	if m[2*n] < 0 {
		return ""
	}
	return q[m[2*n]:m[2*n+1]]
}

// nameOf is the name a statement refers to the table by.
func nameOf(r reference) string {
	if r.alias != "" {
		return r.alias
	}
	return r.table
}

var insertSelect = regexp.MustCompile(`\binsert into (?:public\.)?(` + name + `)(?:\s+as\s+` + name + `)?\s*(?:\([a-z0-9_, ]*\))?\s*select\b`)

// copiedInserts lists the tables kept per facilitator that the statement
// fills by an INSERT … SELECT with neither RETURNING nor ON CONFLICT. Citus
// sends such an INSERT to the shard whole only when it reads distributed
// tables alone, joined on the distribution column; any other (one from a
// common table expression, one from unnest) it runs in steps, and writes
// its rows with COPY, which row-level security refuses to a role subject
// to it. With RETURNING or ON CONFLICT it writes them with an INSERT.
func copiedInserts(query string, perFacilitator map[string]bool) []string {
	q := normalize(query)
	var tables []string
	for _, m := range insertSelect.FindAllStringSubmatchIndex(q, -1) {
		table := group(q, m, 1)
		if !perFacilitator[table] {
			continue
		}
		// The INSERT ends where the parenthesis around it closes, or with
		// the statement.
		end, depth := len(q), 0
		for i := m[1]; i < len(q); i++ {
			if q[i] == '(' {
				depth++
			} else if q[i] == ')' {
				if depth == 0 {
					end = i
					break
				}
				depth--
			}
		}
		if insert := q[m[0]:end]; !strings.Contains(insert, " returning ") && !strings.Contains(insert, " on conflict ") &&
			!slices.Contains(tables, table) {
			tables = append(tables, table)
		}
	}
	return tables
}
