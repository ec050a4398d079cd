// Package option names a library's options in its messages. An error that
// refuses an option, or advises one, is an *Error that names each option
// by its Go field; a program with its own names for the options (the
// dualcrf command's flags) says the message in its words with
// Error.Format.
package option

import "strings"

// Error refuses an option, options together, or input that another
// option's value would read. Field names the option it is about as a Go
// selector ("GapTol", "Sampler.Kind", "InputOptions.MaxLineBytes"), ""
// when none; Value is the value as text ("" when the message shows none);
// Msg says what is wrong and names options as {Field}. Err, when set, is
// the kind of error it is (for errors.Is); the message does not show it.
type Error struct {
	Field string
	Value string
	Msg   string
	Err   error
}

// Error renders the error with the options' Go names.
func (e *Error) Error() string {
	return e.Format(func(field string) string { return field })
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Format renders the error with each option named by name(field): "Field
// Value: Msg", each {Field} of Msg replaced. A brace pair around anything
// but a Go selector (a path's braces) is kept as it is.
func (e *Error) Format(name func(field string) string) string {
	var b strings.Builder
	if e.Field != "" {
		b.WriteString(name(e.Field))
		if e.Value != "" {
			b.WriteString(" " + e.Value)
		}
		b.WriteString(": ")
	}
	b.WriteString(Format(e.Msg, name))
	return b.String()
}

// Format returns msg with each {Field} in it replaced by name(Field).
func Format(msg string, name func(field string) string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(msg[i+1:], '}')
		if j < 0 {
			break
		}
		field := msg[i+1 : i+1+j]
		if !isSelector(field) {
			b.WriteString(msg[:i+1])
			msg = msg[i+1:]
			continue
		}
		b.WriteString(msg[:i] + name(field))
		msg = msg[i+1+j+1:]
	}
	b.WriteString(msg)
	return b.String()
}

// isSelector tells whether s is a Go selector of exported names, such as
// "SDCA.Workers".
func isSelector(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if part == "" || part[0] < 'A' || part[0] > 'Z' {
			return false
		}
		for _, r := range part {
			if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return false
			}
		}
	}
	return true
}
