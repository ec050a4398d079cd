package main

import "strings"

// joinNames joins names with ", ".
func joinNames(names []string) string { return strings.Join(names, ", ") }

// splitComma splits a comma-separated list as dualcrf featurize --columns
// does.
func splitComma(s string) []string { return strings.Split(s, ",") }
