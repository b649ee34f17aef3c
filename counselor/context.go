package counselor

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"mentormemory/mentor"
	"mentormemory/tools"
)

// DefaultContextTokens is the default budget of what one model call of a
// reply is sent (COUNSELOR_CONTEXT_TOKENS). gpt-4o-mini reads 128k tokens,
// but every round of the tool loop sends the context again (up to five
// calls a reply) and each facilitator has 2,000,000 model tokens a day
// (MENTOR_LIMIT_MODEL_TOKENS_PER_DAY): at 12k a full call costs about
// $0.002 and a day's budget holds some 160 of them, where a full window
// would hold 15. 12k holds what a session's first message brings (the
// persona and tools, about 1,400; a profile and digest, at most 1,400; the
// opening and recalled memories, under 1,000), a pasted school report of
// the chat's 20,000 characters (about 5,000) and still the last dozen or
// so exchanges; a model also answers worse from a long context than from
// the part of it that matters.
const DefaultContextTokens = 12_000

// The bounds of COUNSELOR_CONTEXT_TOKENS: the least leaves room beside the
// persona and the tools (about 1,400) for a message; the most is beyond
// any model's window today.
const (
	MinContextTokens = 2_000
	MaxContextTokens = 1_000_000
)

// The blocks of a reply's context, as ChatReply.ContextTokens names them,
// in the order they are sent.
const (
	blockInstructions = "instructions" // the persona
	blockTools        = "tools"        // the tools' definitions
	blockPinned       = "pinned"       // who the session is about, the facilitator's own lines
	blockSummary      = "summary"      // the conversation's rolling summary, where there is no profile
	blockProfile      = "profile"      // the learner's profile and session digest
	blockOpening      = "opening"      // the opening prepared for the session
	blockMemories     = "memories"     // the memories recalled for the message
	blockEmotional    = "emotional_patterns"
	blockEarlier      = "earlier"      // what the oldest exchanges left out, and any brought back
	blockConversation = "conversation" // the session's exchanges kept
	blockMessage      = "message"
)

var blockNames = []string{blockInstructions, blockTools, blockPinned, blockSummary, blockProfile, blockOpening,
	blockMemories, blockEmotional, blockEarlier, blockConversation, blockMessage}

// shrinkOrder is the order in which the blocks of memory give way when
// they alone do not fit the budget: recalled memories first, lowest scored
// first, then the emotional patterns, the opening, and last the profile or
// summary, each of those whole.
var shrinkOrder = []string{blockMemories, blockEmotional, blockOpening, blockProfile, blockSummary}

// What a chat request costs beyond the text of its messages, as OpenAI
// counts it for its chat models: each message's role and separators, and
// the start of the reply.
const (
	messageOverhead = 3
	replyPriming    = 3
)

// toolTokens is what the tools' definitions cost every model call, counted
// as their JSON (the model's own rendering of them is a little shorter).
var toolTokens = sync.OnceValue(func() int {
	encoded, err := json.Marshal(tools.Definitions())
	if err != nil {
		panic("the tools' definitions do not encode: " + err.Error())
	}
	return countTokens(string(encoded))
})

// remembered is one thing of memory a block holds: its text as the model
// reads it, the heading it goes under (if any), the score that ranks it
// against the others of its block, and what of memory it stands on.
type remembered struct {
	group   string
	text    string
	score   float64
	sources []mentor.ContextSource
}

// memoryBlock is a block of what the mentor remembers, framed by its title.
// Over budget, its items leave lowest scored first; a block of one item
// leaves whole.
type memoryBlock struct {
	name       string
	title, end string
	items      []remembered
}

// render is the block as the system prompt holds it; "" when it is empty.
func (b memoryBlock) render() string {
	if len(b.items) == 0 {
		return ""
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\n\n=== %s ===", b.title)
	group := ""
	for _, item := range b.items {
		if item.group != group && item.group != "" {
			fmt.Fprintf(&s, "\n%s:", item.group)
		}
		group = item.group
		s.WriteString("\n" + item.text)
	}
	fmt.Fprintf(&s, "\n=== %s ===", b.end)
	return s.String()
}

// withoutLowest is the block without its lowest-scored item (of equals,
// the last), and that item.
func (b memoryBlock) withoutLowest() (memoryBlock, remembered) {
	lowest := len(b.items) - 1
	for i, item := range b.items {
		if item.score < b.items[lowest].score {
			lowest = i
		}
	}
	left := b.items[lowest]
	items := make([]remembered, 0, len(b.items)-1)
	items = append(items, b.items[:lowest]...)
	b.items = append(items, b.items[lowest+1:]...)
	return b, left
}

// contextParts are what a reply's context is assembled from, before it is
// fitted to the budget.
type contextParts struct {
	instructions string
	pinned       string
	// memory are the blocks of memory, in the order they are sent.
	memory  []memoryBlock
	history []mentor.Turn
	message string
}

// assembled is a reply's context fitted to its budget.
type assembled struct {
	// system is the system prompt: the instructions, the pinned facts, the
	// memory that fitted and the earlier block.
	system       string
	conversation []mentor.Turn
	message      string
	tokens       mentor.ContextTokens
	used         []mentor.ContextSource
}

// assemble fits parts within budget tokens. The instructions, the tools,
// the pinned facts and the message always go. The blocks of memory go
// next; when they alone do not fit, they give way in shrinkOrder. The
// session's exchanges fill what is left, the newest first: the oldest
// leave, whole exchanges at a time, and the earlier block says how many
// left. When the message refers back to them, the turns of those that best
// match it come back, within half the room the conversation has.
func assemble(budget int, parts contextParts) assembled {
	a := assembled{message: parts.message, used: []mentor.ContextSource{},
		tokens: mentor.ContextTokens{Budget: budget, Blocks: map[string]int{}, LeftOut: []mentor.ContextSource{}}}
	for _, name := range blockNames {
		a.tokens.Blocks[name] = 0
	}
	a.tokens.Blocks[blockInstructions] = countTokens(parts.instructions) + messageOverhead + replyPriming
	a.tokens.Blocks[blockTools] = toolTokens()
	a.tokens.Blocks[blockPinned] = countTokens(parts.pinned)
	a.tokens.Blocks[blockMessage] = countTokens(parts.message) + messageOverhead
	room := budget - a.tokens.Blocks[blockInstructions] - a.tokens.Blocks[blockTools] - a.tokens.Blocks[blockPinned] -
		a.tokens.Blocks[blockMessage]

	memory, rendered := fitMemory(parts.memory, room, &a.tokens)
	for _, b := range memory {
		room -= a.tokens.Blocks[b.name]
	}
	// What went in is listed the most particular first: a memory recalled
	// for the message that also stands behind a line of the profile is
	// listed as recalled.
	for _, name := range shrinkOrder {
		for _, b := range memory {
			if b.name == name {
				for _, item := range b.items {
					a.used = appendSources(a.used, item.sources)
				}
			}
		}
	}

	exchanges := exchangesOf(parts.history)
	costs := make([]int, len(exchanges))
	kept := keepNewest(exchanges, costs, room)
	earlier := ""
	if kept < len(exchanges) {
		var back []mentor.Turn
		if mentor.RefersBack(parts.message) {
			evicted := 0
			for _, e := range exchanges[:len(exchanges)-kept] {
				evicted += len(e)
			}
			back = bringBack(parts.message, parts.history, evicted, room/2)
		}
		// The earlier block takes its room first, counted with the most
		// exchanges it could name so that it is never counted short; in
		// a room too small even for its note, it is left out.
		reserve := countTokens(renderEarlier(len(exchanges), back))
		if reserve > room && len(back) > 0 {
			back = nil
			reserve = countTokens(renderEarlier(len(exchanges), nil))
		}
		if reserve <= room {
			kept = keepNewest(exchanges, costs, room-reserve)
			earlier = renderEarlier(len(exchanges)-kept, back)
			a.tokens.BroughtBack = len(back)
			a.tokens.Blocks[blockEarlier] = countTokens(earlier)
		} else {
			kept = 0
		}
		a.tokens.EvictedExchanges = len(exchanges) - kept
	}
	for i, e := range exchanges[len(exchanges)-kept:] {
		a.conversation = append(a.conversation, e...)
		a.tokens.Blocks[blockConversation] += costs[len(exchanges)-kept+i]
	}

	a.system = parts.instructions + parts.pinned + rendered + earlier
	// A memory left out of one block may be in the context by another.
	a.tokens.LeftOut = slices.DeleteFunc(a.tokens.LeftOut, func(s mentor.ContextSource) bool {
		return slices.ContainsFunc(a.used, func(u mentor.ContextSource) bool { return u.Kind == s.Kind && u.ID == s.ID })
	})
	for _, n := range a.tokens.Blocks {
		a.tokens.Total += n
	}
	return a
}

// fitMemory fits the blocks of memory within room: while they do not fit,
// the first block in shrinkOrder that still has items gives up its lowest
// scored, which counts as left out. It returns the blocks that still have
// items and their text, and counts each block's tokens into counted.
func fitMemory(blocks []memoryBlock, room int, counted *mentor.ContextTokens) ([]memoryBlock, string) {
	blocks = append([]memoryBlock(nil), blocks...)
	size := make([]int, len(blocks))
	total := 0
	for i, b := range blocks {
		size[i] = countTokens(b.render())
		total += size[i]
	}
	for total > room {
		i := nextToShrink(blocks)
		if i < 0 {
			break
		}
		var left remembered
		blocks[i], left = blocks[i].withoutLowest()
		counted.LeftOut = appendSources(counted.LeftOut, left.sources)
		total -= size[i]
		size[i] = countTokens(blocks[i].render())
		total += size[i]
	}
	var kept []memoryBlock
	var text strings.Builder
	for i, b := range blocks {
		if len(b.items) > 0 {
			kept = append(kept, b)
			text.WriteString(b.render())
			counted.Blocks[b.name] = size[i]
		}
	}
	return kept, text.String()
}

// nextToShrink is the index of the block to give up an item next, by
// shrinkOrder; -1 when every block is empty.
func nextToShrink(blocks []memoryBlock) int {
	for _, name := range shrinkOrder {
		for i, b := range blocks {
			if b.name == name && len(b.items) > 0 {
				return i
			}
		}
	}
	return -1
}

// appendSources adds sources to list, each kind and id once.
func appendSources(list []mentor.ContextSource, sources []mentor.ContextSource) []mentor.ContextSource {
	for _, s := range sources {
		if !slices.ContainsFunc(list, func(l mentor.ContextSource) bool { return l.Kind == s.Kind && l.ID == s.ID }) {
			list = append(list, s)
		}
	}
	return list
}

// exchangesOf groups a session's turns into exchanges: a facilitator's
// turn and the replies after it. Replies before the first facilitator's
// turn (a greeting) are an exchange of their own.
func exchangesOf(history []mentor.Turn) [][]mentor.Turn {
	var exchanges [][]mentor.Turn
	for i, t := range history {
		if i == 0 || t.Role == mentor.RoleUser {
			exchanges = append(exchanges, nil)
		}
		last := len(exchanges) - 1
		exchanges[last] = append(exchanges[last], t)
	}
	return exchanges
}

// keepNewest is how many of the newest exchanges fit in room tokens, taken
// newest first until one does not fit: an older one is never kept in place
// of a newer. costs caches each exchange's tokens (zero: not counted yet),
// so that only the exchanges near the room's edge are ever counted.
func keepNewest(exchanges [][]mentor.Turn, costs []int, room int) int {
	kept := 0
	for i := len(exchanges) - 1; i >= 0; i-- {
		if costs[i] == 0 {
			for _, t := range exchanges[i] {
				costs[i] += countTokens(t.Content) + messageOverhead
			}
		}
		if room -= costs[i]; room < 0 {
			break
		}
		kept++
	}
	return kept
}

// renderEarlier is the earlier block: how many of the session's oldest
// exchanges were left out, and the turns of them brought back.
func renderEarlier(evicted int, back []mentor.Turn) string {
	var s strings.Builder
	s.WriteString("\n\n=== EARLIER IN THIS SESSION ===\n")
	plural := "s"
	if evicted == 1 {
		plural = ""
	}
	fmt.Fprintf(&s, "The session's first %d exchange%s are not shown here, for length; search_conversation_history finds what was said in them.", evicted, plural)
	if len(back) > 0 {
		s.WriteString("\nThe facilitator's message refers back to them; these turns of them match it:")
		for _, t := range back {
			s.WriteString(earlierLine(t))
		}
	}
	s.WriteString("\n=== END EARLIER IN THIS SESSION ===")
	return s.String()
}

// earlierLine is a turn brought back, as the earlier block shows it.
func earlierLine(t mentor.Turn) string {
	who := "Facilitator"
	if t.Role == mentor.RoleAssistant {
		who = "You"
	}
	return "\n" + who + ": " + t.Content
}

// personalizationOf is how much of what the mentor knows went into a
// context (see mentor.PersonalizationNone): nothing of memory (no memory
// block and no facilitator's lines) is none; deep retrieval, the profile
// or the opening is deep; anything else light.
func personalizationOf(retrieval string, blocks map[string]int, facilitatorLines bool) string {
	remembered := facilitatorLines
	for _, name := range shrinkOrder {
		remembered = remembered || blocks[name] > 0
	}
	switch {
	case !remembered:
		return mentor.PersonalizationNone
	case retrieval == mentor.RetrievalDeep || blocks[blockProfile] > 0 || blocks[blockOpening] > 0:
		return mentor.PersonalizationDeep
	}
	return mentor.PersonalizationLight
}
