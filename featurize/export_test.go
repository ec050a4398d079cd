package featurize

// Helpers only the tests use.

// crfsuiteEscape is CRFsuiteEscape of s as a string.
func crfsuiteEscape(s string) string { return string(CRFsuiteEscape(nil, s)) }

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
