package main

import (
	"runtime/debug"
	"strings"
)

// buildVersion describes this build for --version (see formatVersion).
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (the binary carries no build information)"
	}
	return formatVersion(bi)
}

// formatVersion gives the module version ("(devel)" when built from a
// checkout, vX.Y.Z when installed by version), the version-control
// revision, time and state when the build recorded them (`go build` in a
// git clone does, unless -buildvcs=false), and the Go version.
func formatVersion(bi *debug.BuildInfo) string {
	vcs := map[string]string{}
	for _, s := range bi.Settings {
		if name, ok := strings.CutPrefix(s.Key, "vcs."); ok {
			vcs[name] = s.Value
		}
	}
	var b strings.Builder
	b.WriteString(bi.Main.Version)
	if rev := vcs["revision"]; rev != "" {
		b.WriteString(", revision " + rev)
		if t := vcs["time"]; t != "" {
			b.WriteString(" of " + t)
		}
		if vcs["modified"] == "true" {
			b.WriteString(" with uncommitted changes")
		}
	}
	b.WriteString(", " + bi.GoVersion)
	return b.String()
}
