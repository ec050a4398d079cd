// Package job runs a declarative job file: stages of dualcrf (featurize,
// train, decode, eval) with their inputs, options and outputs, re-running
// only what changed, resuming an interrupted training, refusing a
// concurrent run, and writing a manifest of what it did.
//
// A job file is YAML:
//
//	name: conll2000                       # the job; its state lives in .dualcrf-job/NAME/ next to the file
//	vars:                                 # ${NAME} in any path; ${DATE} and ${env:X} are built in
//	  data: ${env:DUALCRF_DATA}/conll2000
//	stages:
//	  - name: features                    # unique; default: the stage's command
//	    run: featurize                    # featurize, train, decode or eval
//	    inputs: [${data}/train.txt.gz]    # the command's arguments; globs expand (sorted)
//	    options: {template: chunking, min-count: 3}   # the command's flags, by their names
//	    output: train.arrow               # -o (eval: its JSON report)
//
// The stages run as the command's own stages do, from the same flags: the
// options are checked, and refused, exactly as on the command line. Paths
// (inputs, output, the options naming files) are relative to the job
// file's directory.
package job

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// File is a parsed job file.
type File struct {
	Name string `yaml:"name"`
	// Vars are the job's variables, ${NAME} in paths; their values may use
	// ${DATE} and ${env:X}.
	Vars map[string]string `yaml:"vars"`
	// State is the directory of the job's lock, its record of the last
	// stages run and train's checkpoints; "": .dualcrf-job/NAME next to the
	// job file.
	State string `yaml:"state"`
	// Manifest is where the manifest of the last successful run is written
	// (JSON); "": manifest.json in the state directory. A failed run writes
	// NAME.failed.json beside it instead.
	Manifest string  `yaml:"manifest"`
	Stages   []Stage `yaml:"stages"`

	path string // the job file
	dir  string // its directory
}

// Stage is one stage of a job.
type Stage struct {
	Name    string         `yaml:"name"`
	Run     string         `yaml:"run"`
	Inputs  []string       `yaml:"inputs"`
	Options map[string]any `yaml:"options"`
	Output  string         `yaml:"output"`
}

// Commands are the commands a stage may run.
var Commands = []string{"featurize", "train", "decode", "eval"}

// managed are the options the job sets itself, refused in a job file.
var managed = map[string]string{
	"output":     "give the stage's output as output:",
	"o":          "give the stage's output as output:",
	"checkpoint": "the job keeps train's checkpoints in its state directory",
	"resume":     "the job resumes an interrupted training by itself",
	"progress":   "give --progress to dualcrf run",
	"json":       "eval's output is its JSON report",
	"help":       "not a stage option",
	"h":          "not a stage option",
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Parse reads the job file at path. vars override the file's variables
// (and DATE, which is otherwise now's date, YYYY-MM-DD in local time).
func Parse(path string, vars map[string]string, now time.Time) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f File
	if err := dec.Decode(&f); err != nil {
		err = yamlError(err)
		if bytes.Contains(data, []byte("${")) {
			err = fmt.Errorf("%w (quote a value holding ${…} inside [ ] or { }: \"${x}\")", err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.path, f.dir = path, filepath.Dir(path)
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.expand(vars, now); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &f, nil
}

// yamlError makes an empty document's error say so.
func yamlError(err error) error {
	if err.Error() == "EOF" {
		return errors.New("empty job file: want name: and stages:")
	}
	return err
}

// check refuses a job without a name or stages, unknown commands, stages
// named twice and options the job manages.
func (f *File) check() error {
	if !nameRE.MatchString(f.Name) {
		return fmt.Errorf("name %q: want letters, digits, '.', '_' or '-'", f.Name)
	}
	if len(f.Stages) == 0 {
		return errors.New("no stages")
	}
	seen := map[string]bool{}
	for i := range f.Stages {
		s := &f.Stages[i]
		if !isCommand(s.Run) {
			return fmt.Errorf("stage %d: run %q: want one of %s", i+1, s.Run, strings.Join(Commands, ", "))
		}
		if s.Name == "" {
			s.Name = s.Run
		}
		if !nameRE.MatchString(s.Name) {
			return fmt.Errorf("stage %d: name %q: want letters, digits, '.', '_' or '-'", i+1, s.Name)
		}
		if seen[s.Name] {
			return fmt.Errorf("stage %d: the name %q is taken by an earlier stage (give each stage a name:)", i+1, s.Name)
		}
		seen[s.Name] = true
		for k, v := range s.Options {
			if why, ok := managed[k]; ok {
				return fmt.Errorf("stage %s: option %q: %s", s.Name, k, why)
			}
			if _, err := optionValue(v); err != nil {
				return fmt.Errorf("stage %s: option %q: %w", s.Name, k, err)
			}
		}
		if s.Run != "eval" && s.Output == "" {
			return fmt.Errorf("stage %s: no output: (a job's stages write files)", s.Name)
		}
		if len(s.Inputs) == 0 && !(s.Run == "decode" && s.Options["text"] != nil) {
			return fmt.Errorf("stage %s: no inputs:", s.Name)
		}
	}
	return nil
}

// isCommand reports whether name is a stage command.
func isCommand(name string) bool {
	for _, c := range Commands {
		if c == name {
			return true
		}
	}
	return false
}

// optionValue writes an option's value as its flag takes it.
func optionValue(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case nil:
		return "", errors.New("no value")
	}
	return "", fmt.Errorf("value %v: want a string, number or true/false", v)
}

var varRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// expand substitutes the variables in every path and string option.
func (f *File) expand(over map[string]string, now time.Time) error {
	builtin := map[string]string{"DATE": now.Format("2006-01-02")}
	if d, ok := over["DATE"]; ok {
		builtin["DATE"] = d
	}
	vars := map[string]string{}
	names := make([]string, 0, len(f.Vars))
	for k := range f.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if v, ok := over[k]; ok {
			vars[k] = v
			continue
		}
		v, err := substitute(f.Vars[k], builtin)
		if err != nil {
			return fmt.Errorf("vars: %s: %w", k, err)
		}
		vars[k] = v
	}
	for k := range over {
		if _, ok := vars[k]; !ok && k != "DATE" {
			return fmt.Errorf("--var %s: the job has no variable %s", k, k)
		}
	}
	for k, v := range builtin {
		vars[k] = v
	}
	sub := func(s *string, what string) error {
		v, err := substitute(*s, vars)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		*s = v
		return nil
	}
	for _, p := range []*string{&f.State, &f.Manifest} {
		if err := sub(p, "state/manifest"); err != nil {
			return err
		}
	}
	for i := range f.Stages {
		s := &f.Stages[i]
		for j := range s.Inputs {
			if err := sub(&s.Inputs[j], "stage "+s.Name+": inputs"); err != nil {
				return err
			}
		}
		given := s.Output != ""
		if err := sub(&s.Output, "stage "+s.Name+": output"); err != nil {
			return err
		}
		if given && s.Output == "" {
			return fmt.Errorf("stage %s: output: empty once its variables are substituted (a job's stages write files)", s.Name)
		}
		for k, v := range s.Options {
			if str, ok := v.(string); ok {
				if err := sub(&str, "stage "+s.Name+": option "+k); err != nil {
					return err
				}
				s.Options[k] = str
			}
		}
	}
	return nil
}

// substitute replaces ${NAME} from vars and ${env:X} from the environment;
// an unknown name or an unset variable is an error (a dated path must not
// quietly lose its date).
func substitute(s string, vars map[string]string) (string, error) {
	var err error
	out := varRE.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		if env, ok := strings.CutPrefix(name, "env:"); ok {
			v, set := os.LookupEnv(env)
			if !set && err == nil {
				err = fmt.Errorf("%s: the environment variable %s is not set", m, env)
			}
			return v
		}
		v, ok := vars[name]
		if !ok && err == nil {
			err = fmt.Errorf("%s: no such variable (define it under vars:, or use ${env:%s})", m, name)
		}
		return v
	})
	return out, err
}

// resolve resolves p against the job file's directory.
func (f *File) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.dir, p)
}

// StateDir is the job's state directory.
func (f *File) StateDir() string {
	if f.State != "" {
		return f.resolve(f.State)
	}
	return filepath.Join(f.dir, ".dualcrf-job", f.Name)
}

// ManifestPath is where a successful run's manifest goes.
func (f *File) ManifestPath() string {
	if f.Manifest != "" {
		return f.resolve(f.Manifest)
	}
	return filepath.Join(f.StateDir(), "manifest.json")
}

// FailedManifestPath is where a failed run's manifest goes.
func (f *File) FailedManifestPath() string {
	return strings.TrimSuffix(f.ManifestPath(), ".json") + ".failed.json"
}
