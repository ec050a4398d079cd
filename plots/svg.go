package plots

import (
	"bytes"
	"fmt"
	"io"
	"regexp"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// svgCanvas is vgsvg's canvas made independent of the fonts a viewer has.
// The layout measures text with the Liberation fonts gonum embeds; a viewer
// without them draws it in another font, wider or narrower, which spilled
// over legend boxes and off centre. So each string it draws records its
// measured width and its alignment (anchoredText tells it), and WriteTo
// writes every text element anchored where the layout aligned it
// (text-anchor start, middle or end: a legend entry ends at its
// thumbnail, an axis label is centred, whatever the font), stretched or
// squeezed to the measured width (textLength, for the viewers that honour
// it: browsers, Inkscape), in a font family list that ends in a generic
// family every viewer has.
type svgCanvas struct {
	*vgsvg.Canvas
	texts []svgText
	align text.XAlignment // of the text being drawn (anchoredText)
}

// svgText is a string drawn: its measured width and alignment.
type svgText struct {
	width vg.Length
	align text.XAlignment
}

// newSVGCanvas returns an SVG canvas of the given size.
func newSVGCanvas(w, h vg.Length) *svgCanvas { return &svgCanvas{Canvas: vgsvg.New(w, h)} }

// FillString draws s with its left edge at pt, as its text element
// anchored at the point the layout aligned it to.
func (c *svgCanvas) FillString(f font.Face, pt vg.Point, s string) {
	t := svgText{width: f.Width(s), align: c.align}
	switch t.align {
	case text.XCenter, text.XRight:
		pt.X -= vg.Length(t.align) * t.width
	default:
		t.align = text.XLeft
	}
	c.texts = append(c.texts, t)
	c.Canvas.FillString(f, pt, s)
}

// anchoredText is a text handler that tells an svgCanvas how the text it
// draws is aligned.
type anchoredText struct{ text.Handler }

// Draw draws txt as the handler does, the canvas told its alignment.
func (h anchoredText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	inner := c
unwrap:
	for {
		switch dc := inner.(type) { // plot draws through draw.Canvas values and pointers
		case *draw.Canvas:
			inner = dc.Canvas
		case draw.Canvas:
			inner = dc.Canvas
		default:
			break unwrap
		}
	}
	if sc, ok := inner.(*svgCanvas); ok {
		sc.align = sty.XAlign
		defer func() { sc.align = text.XLeft }()
	}
	h.Handler.Draw(c, txt, sty, pt)
}

// WriteTo writes the SVG document with its text fixed in length and its
// font families ending in a generic family.
func (c *svgCanvas) WriteTo(w io.Writer) (int64, error) {
	var buf bytes.Buffer
	if _, err := c.Canvas.WriteTo(&buf); err != nil {
		return 0, err
	}
	out, err := fixSVGText(buf.Bytes(), c.texts)
	if err != nil {
		return 0, err
	}
	n, err := w.Write(out)
	return int64(n), err
}

// svgFamilies are the font families SVGs name for gonum's fonts: the
// Liberation fonts gonum measures with, the fonts they match in metrics,
// then the generic family every viewer has.
var svgFamilies = map[string]string{
	"Liberation Serif": "'Liberation Serif','Times New Roman',Times,serif",
	"Liberation Sans":  "'Liberation Sans',Arial,Helvetica,sans-serif",
	"Liberation Mono":  "'Liberation Mono','Courier New',Courier,monospace",
}

var svgFamilyRE = regexp.MustCompile(`font-family:([^;"]*)`)

// fixSVGText gives the i-th text element of the SVG document doc the
// anchor and length of texts[i] and a font family list ending in a generic
// family.
func fixSVGText(doc []byte, texts []svgText) ([]byte, error) {
	open := []byte("<text ")
	if n := bytes.Count(doc, open); n != len(texts) {
		return nil, fmt.Errorf("plot: the SVG has %d text elements for %d strings drawn", n, len(texts))
	}
	var out bytes.Buffer
	for i := 0; ; i++ {
		k := bytes.Index(doc, open)
		if k < 0 {
			out.Write(doc)
			break
		}
		out.Write(doc[:k+len(open)])
		doc = doc[k+len(open):]
		switch texts[i].align {
		case text.XCenter:
			out.WriteString(`text-anchor="middle" `)
		case text.XRight:
			out.WriteString(`text-anchor="end" `)
		}
		if w := texts[i].width.Points(); w > 0 {
			fmt.Fprintf(&out, `textLength="%.5g" lengthAdjust="spacingAndGlyphs" `, w)
		}
		end := bytes.Index(doc, []byte(">"))
		if end < 0 {
			return nil, fmt.Errorf("plot: an unterminated text element in the SVG")
		}
		out.Write(svgFamilyRE.ReplaceAllFunc(doc[:end], func(m []byte) []byte {
			fam := string(m[len("font-family:"):])
			if stack, ok := svgFamilies[fam]; ok {
				return []byte("font-family:" + stack)
			}
			return []byte("font-family:'" + fam + "',serif")
		}))
		doc = doc[end:]
	}
	return out.Bytes(), nil
}
