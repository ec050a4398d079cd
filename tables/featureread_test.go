package tables

import (
	"bytes"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
)

// tableChunks reads every chunk of a table with FeatureReader.
func tableChunks(t *testing.T, rr array.RecordReader, opts FeatureReadOptions) ([]*FeatureTable, error) {
	t.Helper()
	tr, err := NewFeatureReader(rr, "t.arrow", opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []*FeatureTable
	for tr.Next() {
		out = append(out, tr.Chunk())
	}
	return out, tr.Err()
}

// tableJoin concatenates chunks into one table, checking that they number
// their sentences on and that every chunk's names are a prefix of the
// last's.
func tableJoin(t *testing.T, chunks []*FeatureTable) *FeatureTable {
	t.Helper()
	last := chunks[len(chunks)-1].Data
	d := &crf.Dataset{NumAttrs: last.NumAttrs, NumLabels: last.NumLabels, AttrNames: last.AttrNames, LabelNames: last.LabelNames,
		SentStart: []int{0}, AttrStart: []int{0}}
	out := &FeatureTable{Data: d, Columns: chunks[0].Columns, Text: make([][]string, len(chunks[0].Columns))}
	real := false
	for k, c := range chunks {
		cd := c.Data
		if c.FirstSentence != d.Len() {
			t.Fatalf("chunk %d starts at sentence %d, want %d", k, c.FirstSentence, d.Len())
		}
		if !reflect.DeepEqual(cd.AttrNames, last.AttrNames[:cd.NumAttrs]) || !reflect.DeepEqual(cd.LabelNames, last.LabelNames[:cd.NumLabels]) {
			t.Fatalf("chunk %d: names are not a prefix of the last chunk's", k)
		}
		base := d.NumTokens()
		for i := 1; i < len(cd.SentStart); i++ {
			d.SentStart = append(d.SentStart, base+cd.SentStart[i])
		}
		for tok := 0; tok < cd.NumTokens(); tok++ {
			d.Labels = append(d.Labels, cd.Labels[tok])
			for j := cd.AttrStart[tok]; j < cd.AttrStart[tok+1]; j++ {
				d.Attrs = append(d.Attrs, cd.Attrs[j])
				v := 1.0
				if cd.Values != nil {
					v = cd.Values[j]
				}
				real = real || v != 1
				d.Values = append(d.Values, v)
			}
			d.AttrStart = append(d.AttrStart, len(d.Attrs))
		}
		for col := range out.Text {
			out.Text[col] = append(out.Text[col], c.Text[col]...)
		}
	}
	if !real {
		d.Values = nil
	}
	return out
}

// checkChunkSizes fails when a chunk is empty or holds more than
// chunkTokens−1 tokens plus its last sentence.
func checkChunkSizes(t *testing.T, chunks []*FeatureTable, chunkTokens int) {
	t.Helper()
	for k, c := range chunks {
		d := c.Data
		n := d.Len()
		if n == 0 {
			t.Fatalf("chunk %d is empty", k)
		}
		if before := d.SentStart[n-1]; before >= chunkTokens {
			t.Fatalf("chunk %d: %d tokens before its last sentence, want < %d", k, before, chunkTokens)
		}
	}
}

// TestTableReaderChunks reads random tables in chunks and checks that
// every chunk is bounded and that together they are the whole table.
func TestTableReaderChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	attrNames := tableNames("a=", 40)
	labels := []string{"B-NP", "I-NP", "O", "B-VP"}
	in := tableRandomCorpus(rng, 300, len(attrNames), labels)
	want := tableExpected(in, attrNames, labels[:2])
	for _, format := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatFile} {
		t.Run(string(format), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			data := tableWrite(t, in, FeatureOptions{Columns: []string{"word", "pos"}, AttrNames: attrNames,
				LabelNames: labels[:2], BatchTokens: 37, Writer: arrowio.WriterOptions{Format: format}, Mem: mem})
			rr, err := OpenRecordReader(bytes.NewReader(data), "t.arrow", arrowio.ReaderOptions{Mem: mem})
			if err != nil {
				t.Fatal(err)
			}
			defer rr.Release()
			chunks, err := tableChunks(t, rr, FeatureReadOptions{ChunkTokens: 50, Mem: mem})
			if err != nil {
				t.Fatal(err)
			}
			if len(chunks) < 10 {
				t.Fatalf("%d chunks of a %d-token table in chunks of 50", len(chunks), want.NumTokens())
			}
			checkChunkSizes(t, chunks, 50)
			got := tableJoin(t, chunks)
			if err := crftest.CompareDatasets(got.Data, want); err != nil {
				t.Fatal(err)
			}
			tok := 0
			for _, x := range in {
				for _, row := range x.s.Tokens {
					if got.Text[0][tok] != row[0] || got.Text[1][tok] != row[1] {
						t.Fatalf("token %d text %q %q, want %q", tok, got.Text[0][tok], got.Text[1][tok], row)
					}
					tok++
				}
			}
		})
	}
}

// tableRecut rewrites an IPC stream with its rows cut into record batches
// of `every` rows, across sentence boundaries, as a foreign writer may.
func tableRecut(t *testing.T, data []byte, every int64) []byte {
	t.Helper()
	rr, err := OpenRecordReader(bytes.NewReader(data), "t", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rr.Schema()), ipc.WithDictionaryDeltas(true))
	var held []arrow.RecordBatch
	for rr.Next() {
		rec := rr.RecordBatch()
		rec.Retain()
		held = append(held, rec)
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	// Slices of one record share its dictionaries, so the rows are cut
	// per input batch, the cuts falling inside sentences.
	for _, rec := range held {
		for lo := int64(0); lo < rec.NumRows(); lo += every {
			s := rec.NewSlice(lo, min(lo+every, rec.NumRows()))
			err := w.Write(s)
			s.Release()
			if err != nil {
				t.Fatal(err)
			}
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTableReaderSplitSentences reads a table whose record batches cut
// sentences in two: the chunks carry each sentence whole.
func TestTableReaderSplitSentences(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	attrNames := tableNames("a=", 30)
	labels := []string{"A", "B", "C"}
	in := tableRandomCorpus(rng, 200, len(attrNames), labels)
	want := tableExpected(in, attrNames, labels)
	data := tableRecut(t, tableWrite(t, in, FeatureOptions{Columns: []string{"word", "pos"}, AttrNames: attrNames,
		LabelNames: labels, BatchTokens: 100}), 7)
	if n := tableBatchCount(t, data); n < 100 {
		t.Fatalf("the recut table has %d batches", n)
	}
	rr, err := OpenRecordReader(bytes.NewReader(data), "t", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	chunks, err := tableChunks(t, rr, FeatureReadOptions{ChunkTokens: 20})
	if err != nil {
		t.Fatal(err)
	}
	checkChunkSizes(t, chunks, 20)
	if err := crftest.CompareDatasets(tableJoin(t, chunks).Data, want); err != nil {
		t.Fatal(err)
	}
	whole, err := ReadFeatureTable(bytes.NewReader(data), "t", FeatureReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := crftest.CompareDatasets(whole.Data, want); err != nil {
		t.Fatal(err)
	}
}

// streamsReader reads several IPC streams one after the other and says
// which one the current batch came from, as arrowio's reader of
// concatenated streams does.
type streamsReader struct {
	array.RecordReader // the current stream
	rest               []array.RecordReader
	stream             int
}

func (s *streamsReader) Next() bool {
	for {
		if s.RecordReader.Next() {
			return true
		}
		if s.RecordReader.Err() != nil || len(s.rest) == 0 {
			return false
		}
		s.RecordReader.Release()
		s.RecordReader, s.rest = s.rest[0], s.rest[1:]
		s.stream++
	}
}

func (s *streamsReader) Stream() int { return s.stream }

func (s *streamsReader) Release() {
	s.RecordReader.Release()
	for _, r := range s.rest {
		r.Release()
	}
}

func openStreams(t *testing.T, tables ...[]byte) *streamsReader {
	t.Helper()
	var rrs []array.RecordReader
	for i, data := range tables {
		rr, err := OpenRecordReader(bytes.NewReader(data), "t", arrowio.ReaderOptions{})
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		rrs = append(rrs, rr)
	}
	return &streamsReader{RecordReader: rrs[0], rest: rrs[1:]}
}

// TestTableReaderStreams reads two concatenated streams of different
// vocabularies: the second's sentences number on after the first's, its
// names join the first's, and a stream that does not start at sentence 0
// is refused.
func TestTableReaderStreams(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	labels := []string{"A", "B", "C"}
	a := tableRandomCorpus(rng, 40, 10, labels)
	b := tableRandomCorpus(rng, 30, 10, labels)
	namesA, namesB := tableNames("a=", 10), tableNames("a=", 20)[5:15]
	dataA := tableWrite(t, a, FeatureOptions{AttrNames: namesA, LabelNames: labels, BatchTokens: 30})
	dataB := tableWrite(t, b, FeatureOptions{AttrNames: namesB, LabelNames: labels[1:], BatchTokens: 30})
	// The expected table: b's attribute ids shifted to the joint names
	// (a=5…a=9 are known, a=10…a=14 new), its labels by name.
	joint := tableNames("a=", 15)
	for _, x := range b {
		for _, ids := range x.attrs {
			for j := range ids {
				ids[j] += 5
			}
		}
	}
	want := tableExpected(append(append([]tableInput(nil), a...), b...), joint, labels)
	for _, chunk := range []int{25, 0} {
		rr := openStreams(t, dataA, dataB)
		chunks, err := tableChunks(t, rr, FeatureReadOptions{ChunkTokens: chunk, SkipText: true})
		rr.Release()
		if err != nil {
			t.Fatal(err)
		}
		if chunk > 0 {
			checkChunkSizes(t, chunks, chunk)
		}
		if err := crftest.CompareDatasets(tableJoin(t, chunks).Data, want); err != nil {
			t.Fatalf("chunks of %d: %v", chunk, err)
		}
	}
	// The second stream starting at sentence 1 is an error naming it.
	rr := openStreams(t, dataA, tableDropFirstSentence(t, dataB))
	defer rr.Release()
	_, err := tableChunks(t, rr, FeatureReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "stream 1") || !strings.Contains(err.Error(), "must start at sentence 0") {
		t.Fatalf("second stream starting at sentence 1: %v", err)
	}
}

// tableDropFirstSentence rewrites a stream without the rows of its
// sentence 0, which its first batch holds.
func tableDropFirstSentence(t *testing.T, data []byte) []byte {
	t.Helper()
	rr, err := OpenRecordReader(bytes.NewReader(data), "t", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rr.Schema()), ipc.WithDictionaryDeltas(true))
	first := true
	for rr.Next() {
		rec := rr.RecordBatch()
		lo := int64(0)
		if first {
			sent := rec.Column(0).(*array.Int64)
			for lo < rec.NumRows() && sent.Value(int(lo)) == 0 {
				lo++
			}
			first = false
		}
		s := rec.NewSlice(lo, rec.NumRows())
		err := w.Write(s)
		s.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTableReaderPipeBounded streams a table of 100,000 tokens through a
// pipe and checks that the reader hands out chunks as the table arrives:
// when a chunk comes out, the writer is never more than a few thousand
// tokens (one chunk, one batch, the reader's buffer) ahead. A reader that
// loads its input whole hands out its first chunk only once the writer has
// finished.
func TestTableReaderPipeBounded(t *testing.T) {
	const sentences, chunkTokens = 20000, 1000
	rng := rand.New(rand.NewPCG(13, 14))
	attrNames := tableNames("a=", 50)
	in := tableRandomCorpus(rng, 200, len(attrNames), []string{"A", "B"})
	pr, pw := io.Pipe()
	var written atomic.Int64 // tokens handed to the writer
	go func() {
		w, err := NewFeatureWriter(pw, FeatureOptions{Columns: []string{"word", "pos"}, AttrNames: attrNames, BatchTokens: 256})
		if err != nil {
			pw.CloseWithError(err)
			return
		}
		for i := 0; i < sentences; i++ {
			x := in[i%len(in)]
			written.Add(int64(len(x.attrs)))
			if err := w.Write(x.sentence()); err != nil {
				w.Abort()
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(w.Close())
	}()
	rr, err := OpenRecordReader(pr, "pipe", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	tr, err := NewFeatureReader(rr, "pipe", FeatureReadOptions{ChunkTokens: chunkTokens})
	if err != nil {
		t.Fatal(err)
	}
	read, maxAhead, chunks := 0, int64(0), 0
	for tr.Next() {
		c := tr.Chunk()
		checkChunkSizes(t, []*FeatureTable{c}, chunkTokens)
		read += c.Data.NumTokens()
		maxAhead = max(maxAhead, written.Load()-int64(read))
		chunks++
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	if int64(read) != written.Load() || tr.Summary().Sentences != sentences {
		t.Fatalf("read %d tokens of %d sentences, written %d tokens of %d", read, tr.Summary().Sentences, written.Load(), sentences)
	}
	if limit := int64(10 * chunkTokens); maxAhead > limit {
		t.Fatalf("the writer was up to %d tokens ahead of the chunks handed out (of %d in all); a streaming reader keeps it within %d",
			maxAhead, read, limit)
	}
	t.Logf("%d chunks, %d tokens; the writer was at most %d tokens ahead", chunks, read, maxAhead)
}
