package decode

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dualcrf/dualcrf/option"
)

// Constraints say which label sequences a decoder may output: the
// well-formed sequences of a chunk tagging scheme. They are applied as
// forbidden transitions, first and last labels (crf.Lattice.Mask), so the
// best path, the n best paths, the marginals and the log-probabilities are
// all those of the allowed sequences (p(y | x, y allowed)).
type Constraints uint8

const (
	// NoConstraints (the zero value) allows every label sequence.
	NoConstraints Constraints = iota
	// ConstraintsBIO is IOB2 (BIO): labels O, B-TYPE and I-TYPE; I-X only
	// after B-X or I-X, so never first, after O or after another type.
	ConstraintsBIO
	// ConstraintsIOB1: labels O, B-TYPE and I-TYPE, where a chunk starts
	// with I- and B-X only separates two adjacent chunks of type X: B-X
	// only after B-X or I-X, so never first, after O or after another type.
	ConstraintsIOB1
	// ConstraintsIOBES: labels O, B-, I-, E- and S-TYPE; after B-X or I-X
	// only I-X or E-X; after O, E- or S- only O, B- or S-; the first label
	// is O, B- or S-, the last O, E- or S-.
	ConstraintsIOBES
)

var constraintNames = [...]string{
	NoConstraints:    "none",
	ConstraintsBIO:   "bio",
	ConstraintsIOB1:  "iob1",
	ConstraintsIOBES: "iobes",
}

// String returns the constraints' name as ParseConstraints accepts it.
func (c Constraints) String() string {
	if int(c) < len(constraintNames) {
		return constraintNames[c]
	}
	return fmt.Sprintf("Constraints(%d)", uint8(c))
}

// ParseConstraints returns the constraints named name: "none" (or ""),
// "bio" (also "iob2"), "iob1" or "iobes", in any letter case.
func ParseConstraints(name string) (Constraints, error) {
	switch strings.ToLower(name) {
	case "":
		return NoConstraints, nil
	case "iob2":
		return ConstraintsBIO, nil
	}
	for c, n := range constraintNames {
		if strings.EqualFold(name, n) {
			return Constraints(c), nil
		}
	}
	return 0, fmt.Errorf("decode: unknown constraints %q (want one of %s; iob2 is bio)", name, strings.Join(constraintNames[:], ", "))
}

// ErrConstraintLabel means the model's labels are not of the scheme the
// constraints enforce: a label that is not a tag of the scheme, or one that
// no labelling the constraints allow can hold.
var ErrConstraintLabel = errors.New("decode: the labels do not fit the constraints")

// labelMasks are the allowed transitions (K×K, y·K+y'), first and last
// labels of a set of labels under constraints; all nil without.
type labelMasks struct {
	trans, start, end []bool
}

// masks returns the allowed transitions, first and last labels of the
// labels under c. Labels that are not of c's scheme are an *option.Error
// (wrapping ErrConstraintLabel) naming them: a label that is not O or a
// prefix of the scheme followed by '-' and a type, or a label that no
// labelling the constraints allow can hold (B-X and I-X under iobes in a
// model without E-X: every chunk would be forbidden, and the tagging all O).
func (c Constraints) masks(labels []string) (labelMasks, error) {
	if c == NoConstraints {
		return labelMasks{}, nil
	}
	allowed := "BI"
	if c == ConstraintsIOBES {
		allowed = "BIES"
	}
	K := len(labels)
	tags := make([]tag, K)
	var bad []string
	for y, l := range labels {
		tags[y] = splitTag(l)
		if l != "O" && (len(l) < 3 || l[1] != '-' || strings.IndexByte(allowed, l[0]) < 0) {
			bad = append(bad, l)
		}
	}
	if bad != nil {
		return labelMasks{}, c.labelError(fmt.Sprintf("%s %s not O or one of %s- followed by a type",
			labelsNamed(bad), map[bool]string{true: "is", false: "are"}[len(bad) == 1], strings.Join(strings.Split(allowed, ""), "-, ")))
	}
	m := labelMasks{trans: make([]bool, K*K), start: make([]bool, K), end: make([]bool, K)}
	inChunk := func(t tag) bool { return t.prefix == "B" || t.prefix == "I" } // IOBES: a chunk open after it
	for y, t := range tags {
		switch c {
		case ConstraintsBIO:
			m.start[y] = t.prefix != "I"
		case ConstraintsIOB1:
			m.start[y] = t.prefix != "B"
		case ConstraintsIOBES:
			m.start[y] = t.prefix == "O" || t.prefix == "B" || t.prefix == "S"
		}
		m.end[y] = c != ConstraintsIOBES || !inChunk(t)
		for y2, t2 := range tags {
			ok := true
			switch c {
			case ConstraintsBIO:
				ok = t2.prefix != "I" || inChunk(t) && t.typ == t2.typ
			case ConstraintsIOB1:
				ok = t2.prefix != "B" || inChunk(t) && t.typ == t2.typ
			case ConstraintsIOBES:
				cont := t2.prefix == "I" || t2.prefix == "E"
				if inChunk(t) {
					ok = cont && t.typ == t2.typ
				} else {
					ok = !cont
				}
			}
			m.trans[y*K+y2] = ok
		}
	}
	if unusable := m.unusable(labels); unusable != nil {
		return labelMasks{}, c.labelError(fmt.Sprintf("no labelling the %s constraints allow can hold %s%s", c, labelsNamed(unusable), c.schemeHint(tags)))
	}
	return m, nil
}

// labelsNamed names labels in a message: "the label X" or "the labels X Y
// … and N more".
func labelsNamed(labels []string) string {
	if len(labels) == 1 {
		return "the label " + labels[0]
	}
	return "the labels " + labelList(labels)
}

// labelError is the *option.Error of labels that do not fit c's scheme.
func (c Constraints) labelError(msg string) error {
	return &option.Error{Field: "DecodeOptions.Constraints", Value: c.String(), Msg: "the model's labels are not of that scheme: " + msg, Err: ErrConstraintLabel}
}

// unusable returns the labels that are on no path the masks allow: not
// reachable from an allowed first label through allowed transitions, or
// from which no allowed last label is reachable. Nil when every label is
// usable.
func (m labelMasks) unusable(labels []string) []string {
	K := len(labels)
	reach := func(seed []bool, next func(y, y2 int) bool) []bool {
		got := slices.Clone(seed)
		queue := make([]int, 0, K)
		for y, ok := range got {
			if ok {
				queue = append(queue, y)
			}
		}
		for len(queue) > 0 {
			y := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			for y2 := range K {
				if !got[y2] && next(y, y2) {
					got[y2] = true
					queue = append(queue, y2)
				}
			}
		}
		return got
	}
	fromStart := reach(m.start, func(y, y2 int) bool { return m.trans[y*K+y2] })
	toEnd := reach(m.end, func(y, y2 int) bool { return m.trans[y2*K+y] })
	var out []string
	for y, l := range labels {
		if !fromStart[y] || !toEnd[y] {
			out = append(out, l)
		}
	}
	return out
}

// schemeHint says which scheme labels tags look like when it is not c's,
// as " (…)", or "".
func (c Constraints) schemeHint(tags []tag) string {
	has := map[string]bool{}
	for _, t := range tags {
		has[t.prefix] = true
	}
	switch {
	case c == ConstraintsIOBES && !has["E"] && !has["S"]:
		return " (the model has no E- or S- label: its labels look like bio or iob1; a chunk that B- or I- opens must close with E- under iobes)"
	case c == ConstraintsBIO && !has["B"]:
		return " (the model has no B- label: its labels look like iob1, where a chunk starts with I-)"
	case c == ConstraintsIOB1:
		return " (B-X follows only B-X or I-X under iob1)"
	}
	return ""
}
