package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// resultsReport is what a run found: the lines describing the run, its
// tables and notes. It is printed as text and saved as Markdown.
type resultsReport struct {
	header []string
	tables []table
	notes  []string
}

type table struct {
	header []string
	rows   [][]string
}

// layout is how a report is written out: its title line, the prefixes of
// header lines and of notes, and how tables are drawn.
type layout struct {
	title        string // format with the title
	headerPrefix string
	notePrefix   string
	table        func(b *strings.Builder, header []string, rows [][]string)
}

var (
	textLayout     = layout{title: "\n%s\n", headerPrefix: "  ", notePrefix: "  - ", table: textTable}
	markdownLayout = layout{title: "### %s\n\n", headerPrefix: "- ", notePrefix: "- ", table: markdownTable}
)

// text lays the report out for the terminal.
func (r resultsReport) text(title string) string { return r.render(title, textLayout) }

// markdown lays the report out as a Markdown section.
func (r resultsReport) markdown(title string) string { return r.render(title, markdownLayout) }

func (r resultsReport) render(title string, l layout) string {
	var b strings.Builder
	fmt.Fprintf(&b, l.title, title)
	for _, line := range r.header {
		fmt.Fprintf(&b, "%s%s\n", l.headerPrefix, line)
	}
	for _, t := range r.tables {
		b.WriteString("\n")
		l.table(&b, t.header, t.rows)
	}
	if len(r.notes) > 0 {
		b.WriteString("\n")
	}
	for _, n := range r.notes {
		fmt.Fprintf(&b, "%s%s\n", l.notePrefix, n)
	}
	return b.String()
}

// textTable aligns a table for the terminal: names left, figures right.
func textTable(b *strings.Builder, header []string, rows [][]string) {
	widths := make([]int, len(header))
	for _, row := range append([][]string{header}, rows...) {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	line := func(row []string) {
		var l strings.Builder
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			switch {
			case i == 0:
				l.WriteString(cell + pad)
			case i == len(row)-1 && !isFigure(cell):
				l.WriteString("  " + cell)
			default:
				l.WriteString("  " + pad + cell)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	line(header)
	for _, row := range rows {
		line(row)
	}
}

func isFigure(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return strings.ContainsRune("0123456789≤", r)
}

func markdownTable(b *strings.Builder, header []string, rows [][]string) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for i := range header {
		// Figures align right, words left.
		right := len(rows) > 0
		for _, row := range rows {
			right = right && isFigure(row[i])
		}
		if right {
			b.WriteString("--:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, row := range rows {
		cells := slices.Clone(row)
		if strings.HasPrefix(cells[0], "public.") || strings.HasPrefix(cells[0], "auth.") {
			cells[0] = "`" + cells[0] + "`"
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
}

// cpuColumn shows how the machine's CPU time was shared while a route was
// measured, in percent of all CPUs: this process, the server process when
// the app has one of its own, Postgres and the rest.
func cpuColumn(u cpuUse) string {
	if !u.ok {
		return "n/a"
	}
	if u.server == 0 {
		return fmt.Sprintf("%.0f%% / %.0f%% / %.0f%%", 100*u.self, 100*u.postgres, 100*u.others)
	}
	return fmt.Sprintf("%.0f%% / %.0f%% / %.0f%% / %.0f%%", 100*u.self, 100*u.server, 100*u.postgres, 100*u.others)
}

// cpuPerRequest shows the server's and Postgres's CPU time per request,
// and the two parts.
func cpuPerRequest(u cpuUse, n int) string {
	if !u.ok || n == 0 {
		return "n/a"
	}
	part := func(share float64) string {
		return strconv.FormatFloat(share*u.seconds*1000/float64(n), 'f', 2, 64)
	}
	return fmt.Sprintf("%s ms (%s + %s)", part(u.server+u.postgres), part(u.server), part(u.postgres))
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64) + " ms"
}

func mib(b uint64) string {
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

// thousands writes n with a comma between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	digits := strings.TrimPrefix(s, "-")
	var b strings.Builder
	b.WriteString(s[:len(s)-len(digits)])
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
