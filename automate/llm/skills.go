package llm

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Skill is one AI Skill: instructions the system prompt carries when the
// skill is chosen for a run.
type Skill struct {
	ID           string // the file name without .md, or the folder name of <id>/SKILL.md
	Name         string // front matter name; the ID when absent
	Description  string // front matter description
	Instructions string // the body after the front matter
	Path         string
}

// Limits of a skills folder.
const (
	maxSkills         = 256      // skills read from a folder
	maxSkillFileBytes = 64 << 10 // a larger skill file is skipped
)

// LoadSkills reads the skills of dir: every <id>.md file and every
// <id>/SKILL.md, each with an optional YAML front matter block (between
// "---" lines) holding name and description; the rest is the
// instructions. Files that cannot be read or parsed are reported in the
// returned problems and skipped. An empty dir yields no skills.
func LoadSkills(dir string) ([]Skill, []error) {
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, []error{fmt.Errorf("skills folder: %w", err)}
	}
	var skills []Skill
	var problems []error
	for _, e := range entries {
		if len(skills) >= maxSkills {
			problems = append(problems, fmt.Errorf("skills folder %s: more than %d skills; the rest are ignored", dir, maxSkills))
			break
		}
		var id, p string
		switch {
		case e.IsDir():
			id, p = e.Name(), filepath.Join(dir, e.Name(), "SKILL.md")
			if _, err := os.Stat(p); err != nil {
				continue // a folder without SKILL.md is not a skill
			}
		case strings.EqualFold(filepath.Ext(e.Name()), ".md"):
			id, p = strings.TrimSuffix(e.Name(), filepath.Ext(e.Name())), filepath.Join(dir, e.Name())
		default:
			continue
		}
		if strings.HasPrefix(id, ".") {
			continue
		}
		s, err := readSkill(id, p)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		skills = append(skills, s)
	}
	slices.SortFunc(skills, func(a, b Skill) int { return strings.Compare(a.ID, b.ID) })
	return skills, problems
}

func readSkill(id, p string) (Skill, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return Skill{}, fmt.Errorf("skill %s: %w", id, err)
	}
	if fi.Size() > maxSkillFileBytes {
		return Skill{}, fmt.Errorf("skill %s: %w: %d bytes, the limit is %d", id, fs.ErrInvalid, fi.Size(), maxSkillFileBytes)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return Skill{}, fmt.Errorf("skill %s: %w", id, err)
	}
	s, err := ParseSkill(id, b)
	if err != nil {
		return Skill{}, err
	}
	s.Path = p
	return s, nil
}

// ParseSkill parses one skill file.
func ParseSkill(id string, b []byte) (Skill, error) {
	s := Skill{ID: id, Name: id}
	text := strings.ReplaceAll(string(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))), "\r\n", "\n")
	if rest, ok := strings.CutPrefix(text, "---\n"); ok {
		front, body, found := strings.Cut(rest, "\n---")
		if !found {
			return Skill{}, fmt.Errorf("skill %s: the front matter has no closing ---", id)
		}
		var fm struct {
			Name        string `yaml:"name"`
			Description string `yaml:"description"`
		}
		if err := yaml.Unmarshal([]byte(front), &fm); err != nil {
			return Skill{}, fmt.Errorf("skill %s: front matter: %w", id, err)
		}
		if strings.TrimSpace(fm.Name) != "" {
			s.Name = strings.TrimSpace(fm.Name)
		}
		s.Description = strings.TrimSpace(fm.Description)
		// The closing line may carry trailing characters up to its newline.
		if _, after, ok := strings.Cut(body, "\n"); ok {
			body = after
		} else {
			body = ""
		}
		text = body
	}
	s.Instructions = strings.TrimSpace(text)
	return s, nil
}

// Prompt is the skill's section of the system prompt.
func (s Skill) Prompt() string {
	var b strings.Builder
	b.WriteString(s.Name)
	if s.Description != "" {
		b.WriteString(": ")
		b.WriteString(s.Description)
	}
	if s.Instructions != "" {
		b.WriteString("\n\n")
		b.WriteString(s.Instructions)
	}
	return b.String()
}

// Relevance selection (skills and configured MCP servers).
//
// The relevance step is lexical and deterministic, so that a run can be
// explained and tested: the prompt and the workflow preferences are cut
// into terms (lower case letters and digits, at least 3 characters, minus
// common English stop words, with a plural or -ing/-ed ending removed);
// a candidate's name terms weigh 2 and its description terms weigh 1 (a
// term counts once, at its highest weight), and its score is the sum over
// the prompt's distinct terms. A candidate is relevant from a score of 2
// (a name word, or two description words, in the prompt). Selected ids
// come first, always, in the order given (unknown ids are ignored), and
// count against the budget; what the budget has left goes to relevant
// candidates by score, then id. For
// skills the budget is a number of skills and a total of instruction
// characters (selected skills count against both but are never dropped).

// candidate is a skill or MCP server seen by the relevance step.
type candidate struct {
	id, name, description string
	chars                 int // size it adds to the prompt
}

// minRelevance is the score from which a candidate is relevant.
const minRelevance = 2

// Selection is the outcome of the relevance step.
type Selection struct {
	IDs    []string // chosen, selected ones first
	Scores map[string]int
}

// selectCandidates applies the relevance step.
func selectCandidates(cands []candidate, selected []string, query string, maxCount, maxChars int) Selection {
	sel := Selection{Scores: map[string]int{}}
	byID := map[string]candidate{}
	for _, c := range cands {
		byID[c.id] = c
	}
	chosen := map[string]bool{}
	chars := 0
	for _, id := range selected {
		c, ok := byID[id]
		if !ok || chosen[id] {
			continue
		}
		chosen[id] = true
		sel.IDs = append(sel.IDs, id)
		chars += c.chars
	}
	q := terms(query)
	type scored struct {
		c     candidate
		score int
	}
	var ranked []scored
	for _, c := range cands {
		s := score(q, c)
		sel.Scores[c.id] = s
		if !chosen[c.id] && s >= minRelevance {
			ranked = append(ranked, scored{c, s})
		}
	}
	slices.SortFunc(ranked, func(a, b scored) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return strings.Compare(a.c.id, b.c.id)
	})
	for _, r := range ranked {
		if len(sel.IDs) >= maxCount {
			break
		}
		if maxChars > 0 && chars+r.c.chars > maxChars {
			continue
		}
		sel.IDs = append(sel.IDs, r.c.id)
		chars += r.c.chars
	}
	return sel
}

func score(query map[string]bool, c candidate) int {
	weights := map[string]int{}
	for t := range terms(c.description) {
		weights[t] = 1
	}
	for t := range terms(c.name + " " + strings.NewReplacer("-", " ", "_", " ").Replace(c.id)) {
		weights[t] = 2
	}
	s := 0
	for t := range query {
		s += weights[t]
	}
	return s
}

// stopWords are made on first use, as the regular expressions
// (lazyregexp): few hubgate processes run a model. A sync.Once, not a
// package-level sync.OnceValue, so that the package has no init work.
func stopWords() map[string]bool {
	stopWordSet.once.Do(func() { stopWordSet.m = makeStopWords() })
	return stopWordSet.m
}

var stopWordSet struct {
	once sync.Once
	m    map[string]bool
}

func makeStopWords() map[string]bool {
	words := map[string]bool{}
	for _, w := range strings.Fields(`the and for with that this from your you are was were will would can could should
		have has had not but all any into onto out about over under then than them they their there these those what when
		where which who whom why how its it's our ours his her hers him she he use using used make made please also just
		some such each other more most very via per may might must shall let lets get got does did doing done`) {
		words[w] = true
	}
	return words
}

// terms cuts text into its relevance terms.
func terms(text string) map[string]bool {
	out := map[string]bool{}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		if len([]rune(w)) < 3 || stopWords()[w] {
			continue
		}
		out[stem(w)] = true
	}
	return out
}

// stem is a light English stemmer: a plural ending ("ies" -> "y",
// "-ches/-shes/-sses/-xes/-zes" -> without "es", else a final "s" unless
// "ss") or else an "-ing"/"-ed" ending is removed, then a final "e", as
// long as at least 3 characters stay ("files", "file" -> "fil"; "writing",
// "write" -> "writ").
func stem(w string) string {
	cut := func(suf string) bool {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			w = strings.TrimSuffix(w, suf)
			return true
		}
		return false
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = strings.TrimSuffix(w, "ies") + "y"
	case strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "sses"),
		strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zes"):
		cut("es")
	case strings.HasSuffix(w, "ss"):
	case cut("s"):
	case cut("ing"):
	case cut("ed"):
	}
	if strings.HasSuffix(w, "e") && len(w) > 3 {
		w = strings.TrimSuffix(w, "e")
	}
	return w
}
