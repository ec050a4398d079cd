package decode

import (
	"errors"
	"fmt"
	"strings"
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

// ErrConstraintLabel means a model label is not a tag of the scheme the
// constraints enforce.
var ErrConstraintLabel = errors.New("decode: label does not fit the constraints")

// labelMasks are the allowed transitions (K×K, y·K+y'), first and last
// labels of a set of labels under constraints; all nil without.
type labelMasks struct {
	trans, start, end []bool
}

// masks returns the allowed transitions, first and last labels of the
// labels under c. A label that is not O or a prefix of c's scheme
// followed by '-' and a type is an error.
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
	for y, l := range labels {
		tags[y] = splitTag(l)
		if l != "O" && (len(l) < 3 || l[1] != '-' || strings.IndexByte(allowed, l[0]) < 0) {
			return labelMasks{}, fmt.Errorf("constraints %s: label %q is not O or one of %s- followed by a type: %w",
				c, l, strings.Join(strings.Split(allowed, ""), "-, "), ErrConstraintLabel)
		}
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
	return m, nil
}
