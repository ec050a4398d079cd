// Package tokenize splits a line of running text into words the way the
// Penn Treebank does, closely enough that the words of new text match the
// word features of models trained on PTB-tokenized corpora (CoNLL-2000,
// the WSJ treebank, most CoNLL column files).
//
// The rules, applied to each run of non-space characters (spaces are any
// Unicode white space):
//
//   - Opening punctuation is split off the front, one mark a token:
//     " ( [ { < « “ ‘ ¿ ¡, and a run of backquotes (“) as one token. A
//     leading ' is split off unless it starts a contraction ('s, 're, 've,
//     'll, 'd, 'm, 'em) or a number ('90s).
//   - Closing punctuation is split off the end, one mark a token: , ; : ! ?
//     ) ] } > » ” ’ " ' …, and "..." and ” as one token each. A final
//     "%" after a digit is split off (5% → 5 %).
//   - A final period is split off (Lima. → Lima .) unless the word is an
//     abbreviation: letters of one or two characters separated by periods
//     (U.S., e.g., a.m., Ph.D.), a single letter (J.), or one of a short
//     list of titles and company words (Mr. Mrs. Ms. Dr. Prof. St. Jr. Sr.
//     Inc. Co. Corp. Ltd. vs. etc. No.). An abbreviation ending the line
//     keeps its period and gets no separate one.
//   - A currency sign or # before a digit is split off ($3.5 → $ 3.5).
//   - Clitics are split as in the treebank: don't → do n't, can't → ca
//     n't, won't → wo n't, John's → John 's, they're → they 're, I'm → I
//     'm (also with the typographic apostrophe ’). CoNLL-2000 and the
//     treebank write "do n't", so this split makes new text's words match
//     the training words.
//   - Inside a word nothing is split: 3.5, 1,000, well-known, U.S.-based,
//     and URLs and e-mail addresses (http://x.org/a?b=c, a.b@c.org), but a
//     URL's closing punctuation is split off like any word's.
//
// Characters are never changed, added or dropped: the tokens concatenated
// are the line's non-space characters, in order. In particular quotes stay
// " rather than the treebank's “ and ”. Invalid UTF-8 is passed through
// byte by byte, as part of its word.
package tokenize

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns the tokens of a line of text (nil for a blank line).
func Line(s string) []string { return AppendLine(nil, s) }

// AppendLine appends the tokens of the line s to dst and returns it.
func AppendLine(dst []string, s string) []string {
	start := -1
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			if start >= 0 {
				dst = appendWord(dst, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
		i += n
	}
	if start >= 0 {
		dst = appendWord(dst, s[start:])
	}
	return dst
}

// appendWord appends the tokens of w, a run of non-space characters.
func appendWord(dst []string, w string) []string {
	// Opening punctuation.
	for w != "" {
		if strings.HasPrefix(w, "``") {
			n := len(w) - len(strings.TrimLeft(w, "`"))
			if n == len(w) {
				break
			}
			dst, w = append(dst, w[:n]), w[n:]
			continue
		}
		r, n := utf8.DecodeRuneInString(w)
		if n == len(w) || !opening(r, w[n:]) {
			break
		}
		dst, w = append(dst, w[:n]), w[n:]
	}
	// Closing punctuation, collected back to front.
	var tail []string
	for w != "" {
		n := closing(w)
		if n == 0 || n == len(w) {
			break
		}
		tail = append(tail, w[len(w)-n:])
		w = w[:len(w)-n]
	}
	// A currency sign before a number.
	if r, n := utf8.DecodeRuneInString(w); n < len(w) && (unicode.Is(unicode.Sc, r) || r == '#') && isDigit(w[n]) {
		dst, w = append(dst, w[:n]), w[n:]
	}
	if w != "" {
		dst = appendClitic(dst, w)
	}
	for i := len(tail) - 1; i >= 0; i-- {
		dst = append(dst, tail[i])
	}
	return dst
}

// opening reports whether r, followed by rest, is opening punctuation to
// split off.
func opening(r rune, rest string) bool {
	switch r {
	case '"', '(', '[', '{', '<', '«', '“', '‘', '¿', '¡':
		return true
	case '\'':
		if rest != "" && isDigit(rest[0]) {
			return false
		}
		for _, c := range []string{"s", "re", "ve", "ll", "d", "m", "em"} {
			if strings.EqualFold(rest, c) {
				return false
			}
		}
		return true
	}
	return false
}

// closing returns the length in bytes of the closing punctuation at the end
// of w to split off, 0 for none.
func closing(w string) int {
	for _, p := range []string{"...", "''"} {
		if strings.HasSuffix(w, p) {
			return len(p)
		}
	}
	r, n := utf8.DecodeLastRuneInString(w)
	rest := w[:len(w)-n]
	switch r {
	case ',', ';', ':', '!', '?', ')', ']', '}', '>', '»', '”', '’', '"', '\'', '…':
		return n
	case '%':
		if rest != "" && isDigit(rest[len(rest)-1]) {
			return n
		}
	case '.':
		if rest != "" && !abbreviation(rest) {
			return n
		}
	}
	return 0
}

// titles are words written with a final period that keep it.
var titles = map[string]bool{
	"Mr": true, "Mrs": true, "Ms": true, "Dr": true, "Prof": true, "St": true, "Jr": true, "Sr": true,
	"Inc": true, "Co": true, "Corp": true, "Ltd": true, "vs": true, "etc": true, "No": true,
}

// abbreviation reports whether w followed by a period is an abbreviation:
// a title, a single letter, or letters of one or two characters separated
// by periods (w = "U.S", "e.g", "Ph.D").
func abbreviation(w string) bool {
	if titles[w] {
		return true
	}
	for _, part := range strings.Split(w, ".") {
		n := 0
		for _, r := range part {
			if !unicode.IsLetter(r) {
				return false
			}
			n++
		}
		if n == 0 || n > 2 {
			return false
		}
	}
	return strings.Contains(w, ".") || utf8.RuneCountInString(w) == 1
}

// appendClitic appends w split before a clitic (do|n't, John|'s), or
// whole; URLs and e-mail addresses are never split.
func appendClitic(dst []string, w string) []string {
	if strings.Contains(w, "://") || strings.Contains(w, "@") || strings.HasPrefix(strings.ToLower(w), "www.") {
		return append(dst, w)
	}
	for _, apos := range []string{"'", "’"} {
		if k := len(w) - len("n"+apos+"t"); k > 0 && hasSuffixFold(w, "n"+apos+"t") {
			return append(dst, w[:k], w[k:])
		}
		for _, c := range []string{"s", "re", "ve", "ll", "d", "m"} {
			if k := len(w) - len(apos+c); k > 0 && hasSuffixFold(w, apos+c) {
				if r, _ := utf8.DecodeLastRuneInString(w[:k]); unicode.IsLetter(r) {
					return append(dst, w[:k], w[k:])
				}
			}
		}
	}
	return append(dst, w)
}

// hasSuffixFold reports whether w ends in the ASCII suffix, ignoring case.
func hasSuffixFold(w, suffix string) bool {
	return len(w) >= len(suffix) && strings.EqualFold(w[len(w)-len(suffix):], suffix)
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }
