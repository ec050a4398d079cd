package featurize

// Helpers only the tests use.

import "strings"

// crfsuiteEscape escapes an attribute name for a CRFsuite attribute file:
// '\' becomes "\\" and ':' becomes "\:". It is the inverse of
// CRFsuiteUnescape.
func crfsuiteEscape(s string) string {
	if !strings.ContainsAny(s, `\:`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' || s[i] == ':' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// withBoundary returns a copy of the set using boundary mode b.
func (s *TemplateSet) withBoundary(b Boundary) *TemplateSet {
	c := *s
	c.boundary = b
	return &c
}

// missingColumnsOf returns those of RequiredColumns that columns lacks
// (aliases count: w is found as word, form or token).
func (s *TemplateSet) missingColumnsOf(columns []string) []string {
	return missingColumns(s.RequiredColumns(), columns)
}

// numTemplates returns the number of entries, the bound of Feature.Template
// (1 for an empty set, whose implicit "@input" is entry 0).
func (x *Extractor) numTemplates() int { return len(x.tmpls) }
