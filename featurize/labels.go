package featurize

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// labelCounts counts the labels of a corpus and the line each is first
// seen on, for suspectLabels.
type labelCounts struct {
	n     map[string]int
	first map[string]int
}

func newLabelCounts() *labelCounts {
	return &labelCounts{n: map[string]int{}, first: map[string]int{}}
}

// add counts the labels of s.
func (c *labelCounts) add(s *Sentence) {
	for t, l := range s.Labels {
		if l == "" {
			continue
		}
		if c.n[l] == 0 {
			c.first[l] = s.TokenLine(t)
		}
		c.n[l]++
	}
}

// Thresholds of suspectLabels: a label seen at most rareLabel times next
// to a near-identical one seen at least frequentRatio times as often.
const (
	rareLabel     = 3
	frequentRatio = 50
)

// labelSchemes are the chunk-scheme prefixes of labels such as B-PER (BIO,
// BIOES, BILOU): labels that differ only in them are different positions
// of one chunk type, not typos.
var labelSchemes = []string{"B-", "I-", "E-", "S-", "L-", "U-"}

// splitScheme returns a label's chunk-scheme prefix and its type ("" and
// the label when it has none).
func splitScheme(l string) (string, string) {
	for _, p := range labelSchemes {
		if strings.HasPrefix(l, p) && len(l) > len(p) {
			return p, l[len(p):]
		}
	}
	return "", l
}

// suspectLabels returns, for each rarely seen label that is nearly
// identical to a frequent one, a warning naming both, their counts and
// where the rare one is first seen (display names the input): a mistyped
// label (B-PERS among B-PER) is otherwise taken as a label of its own.
// Nearly identical means equal but for letter case, or, for chunk labels
// (B-…, I-…), chunk types one edit apart (an insertion, deletion,
// substitution or swap of neighbours) when no frequent label has the rare
// label's type. POS tags one edit apart (NN and NNS) are not suspects.
func (c *labelCounts) suspectLabels(display string) []string {
	var labels []string
	for l := range c.n {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	var out []string
	for _, r := range labels {
		nr := c.n[r]
		if nr > rareLabel {
			continue
		}
		var frequent []string
		types := map[string]bool{} // the chunk types of the frequent labels
		for _, f := range labels {
			if f != r && c.n[f] >= frequentRatio*nr {
				frequent = append(frequent, f)
				_, ft := splitScheme(f)
				types[ft] = true
			}
		}
		best := ""
		for _, f := range frequent {
			if strings.EqualFold(f, r) {
				best = f
				break
			}
		}
		if rp, rt := splitScheme(r); best == "" && rp != "" && !types[rt] {
			for _, f := range frequent {
				if fp, ft := splitScheme(f); fp != "" && editsApart(rt, ft) <= 1 && (best == "" || c.n[f] > c.n[best]) {
					best = f
				}
			}
		}
		if best == "" {
			continue
		}
		times := "times"
		if nr == 1 {
			times = "time"
		}
		out = append(out, fmt.Sprintf("%s: label %q is seen %d %s (first on line %d), and %q %d times: a mistyped label becomes a label of its own",
			display, r, nr, times, c.first[r], best, c.n[best]))
	}
	return out
}

// editsApart returns the optimal string alignment distance of a and b in
// runes: insertions, deletions, substitutions and swaps of neighbours; it
// stops counting at 2.
func editsApart(a, b string) int {
	if utf8.RuneCountInString(a) > 64 || utf8.RuneCountInString(b) > 64 {
		if a == b {
			return 0
		}
		return 2
	}
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return min(d[len(x)][len(y)], 2)
}
