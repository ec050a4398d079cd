# Sourced by scripts/killtest.sh and scripts/signaltest.sh: builds the command
# into a temporary directory removed at exit and sets
#   work      that directory
#   bin       the dualcrf binary in it
#   features  $1 if given, else a feature table of the embedded CoNLL-2000 slice
# Run from the repository's root.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/dualcrf
go build -o "$bin" ./cmd/dualcrf
features=${1:-}
if [ -z "$features" ]; then
  features=$work/train.arrow
  "$bin" featurize --template chunking --min-count 3 -o "$features" cmd/dualcrf/demodata/train.txt.gz 2>/dev/null
fi
