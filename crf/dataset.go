package crf

// Dataset holds a whole corpus of sparse sequences in flat arrays, the form
// the trainer and decoder work on. Token j of sentence i is global token
// SentStart[i]+j; its attributes are Attrs[AttrStart[tok]:AttrStart[tok+1]]
// with values Values[same range] (Values nil means every value is 1).
type Dataset struct {
	NumAttrs   int      // A, number of attribute ids
	NumLabels  int      // K, number of label ids
	AttrNames  []string // len NumAttrs
	LabelNames []string // len NumLabels
	SentStart  []int    // len n+1, token offsets of sentences
	AttrStart  []int    // len N+1, offsets into Attrs of tokens
	Attrs      []int32  // attribute ids, each < NumAttrs
	Values     []float64
	Labels     []int32 // len N, gold label per token, -1 when unknown
}

// Len returns the number of sentences n.
func (d *Dataset) Len() int { return len(d.SentStart) - 1 }

// NumTokens returns the number of tokens N.
func (d *Dataset) NumTokens() int { return len(d.Labels) }

// Sentence returns a view of sentence i; it shares the dataset's arrays.
func (d *Dataset) Sentence(i int) Sentence {
	lo, hi := d.SentStart[i], d.SentStart[i+1]
	s := Sentence{
		AttrStart: d.AttrStart[lo : hi+1],
		Attrs:     d.Attrs,
		Labels:    d.Labels[lo:hi],
	}
	if d.Values != nil {
		s.Values = d.Values
	}
	return s
}

// Sentence is a view of one sequence: T tokens, token t's attributes are
// Attrs[AttrStart[t]:AttrStart[t+1]] (indices into the shared arrays), with
// values Values[same range] or 1 when Values is nil.
type Sentence struct {
	AttrStart []int   // len T+1
	Attrs     []int32 // shared attribute array
	Values    []float64
	Labels    []int32 // len T, gold labels (-1 unknown)
}

// Len returns the number of tokens T.
func (s Sentence) Len() int { return len(s.AttrStart) - 1 }
