package postgres

import "strings"

// SplitStatements cuts SQL text into its statements, each without its
// closing semicolon, leaving out those that hold only comments and white
// space. A semicolon ends a statement only outside a string ('…', E'…'),
// a quoted name ("…"), a dollar-quoted body ($$…$$, $tag$…$tag$) and a
// comment (-- to the end of the line, /* … */, nested): what psql and
// Postgres's own scanner treat as one statement.
func SplitStatements(sql string) []string {
	var statements []string
	start, meaningful := 0, false
	flush := func(end int) {
		if meaningful {
			statements = append(statements, strings.TrimSpace(sql[start:end]))
		}
		start, meaningful = end+1, false
	}
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c == ';':
			flush(i)
			continue
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			i = lineEnd(sql, i)
			continue
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			i = blockCommentEnd(sql, i)
			continue
		case c == '\'':
			escapes := i > 0 && (sql[i-1] == 'E' || sql[i-1] == 'e') && (i < 2 || !isIdentifierByte(sql[i-2]))
			i = quotedEnd(sql, i, '\'', escapes)
		case c == '"':
			i = quotedEnd(sql, i, '"', false)
		case c == '$':
			if tag, ok := dollarTag(sql, i); ok {
				i = dollarQuotedEnd(sql, i, tag)
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			continue
		}
		meaningful = true
	}
	flush(len(sql))
	return statements
}

// lineEnd is the index of the line break that ends the comment at i, or
// the last index.
func lineEnd(sql string, i int) int {
	if n := strings.IndexByte(sql[i:], '\n'); n >= 0 {
		return i + n
	}
	return len(sql) - 1
}

// blockCommentEnd is the index of the / that closes the comment opened at
// i; block comments nest.
func blockCommentEnd(sql string, i int) int {
	depth := 0
	for j := i; j < len(sql)-1; j++ {
		switch {
		case sql[j] == '/' && sql[j+1] == '*':
			depth++
			j++
		case sql[j] == '*' && sql[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				return j
			}
		}
	}
	return len(sql) - 1
}

// quotedEnd is the index of the quote that closes the one at i: a doubled
// quote is a quote within, and so is a backslashed one in an E'…' string.
func quotedEnd(sql string, i int, quote byte, backslashEscapes bool) int {
	for j := i + 1; j < len(sql); j++ {
		switch {
		case backslashEscapes && sql[j] == '\\':
			j++
		case sql[j] == quote && j+1 < len(sql) && sql[j+1] == quote:
			j++
		case sql[j] == quote:
			return j
		}
	}
	return len(sql) - 1
}

// dollarTag reads the $tag$ that opens a dollar-quoted string at i. A $
// that follows a name's letter or digit ($1, a$b) opens none.
func dollarTag(sql string, i int) (string, bool) {
	if i > 0 && isIdentifierByte(sql[i-1]) {
		return "", false
	}
	for j := i + 1; j < len(sql); j++ {
		switch c := sql[j]; {
		case c == '$':
			return sql[i : j+1], true
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80,
			c >= '0' && c <= '9' && j > i+1:
		default:
			return "", false
		}
	}
	return "", false
}

// dollarQuotedEnd is the index of the last byte of the tag that closes the
// string opened by tag at i.
func dollarQuotedEnd(sql string, i int, tag string) int {
	if n := strings.Index(sql[i+len(tag):], tag); n >= 0 {
		return i + len(tag) + n + len(tag) - 1
	}
	return len(sql) - 1
}

func isIdentifierByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
