package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

const modulePath = "github.com/tradeledger/tradeledger/"

// packageImports parses every non-test Go file under root (build tags
// aside: the ccxt connector's files count) and returns, per package
// directory, the packages of this module it imports, and the imports from
// outside the standard library.
func packageImports(t *testing.T, root string) (ours, outside map[string][]string) {
	t.Helper()
	ours, outside = map[string][]string{}, map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" && filepath.Dir(path) != filepath.Join(root, "cmd", "tradeledger") {
			return nil // a go:generate or go run helper (.ci), not a package of the house
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		dir = filepath.ToSlash(dir)
		if _, ok := ours[dir]; !ok {
			ours[dir] = nil
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			switch {
			case strings.HasPrefix(p, modulePath):
				if q := strings.TrimPrefix(p, modulePath); !slices.Contains(ours[dir], q) {
					ours[dir] = append(ours[dir], q)
				}
			case strings.Contains(strings.Split(p, "/")[0], "."):
				if !slices.Contains(outside[dir], p) {
					outside[dir] = append(outside[dir], p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range ours {
		slices.Sort(v)
	}
	return ours, outside
}

// TestPackageMap keeps docs/architecture.md's package map true: the
// packages each package of the module imports, read from the code. It
// also holds the floors the map shows: domain, domain/books, domain/fold and
// domain/gunbot import the standard library only.
func TestPackageMap(t *testing.T) {
	root := filepath.Join("..", "..")
	ours, outside := packageImports(t, root)
	var want strings.Builder
	dirs := make([]string, 0, len(ours))
	for d := range ours {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	for _, d := range dirs {
		imports := "—"
		if len(ours[d]) > 0 {
			imports = strings.Join(ours[d], ", ")
		}
		want.WriteString(d + ": " + imports + "\n")
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	const start = "<!-- package map: TestPackageMap checks it -->\n```text\n"
	_, block, ok := strings.Cut(string(doc), start)
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatalf("docs/architecture.md has no package map block starting %q", start)
	}
	if unwrapMapLines(block) != want.String() {
		t.Errorf("docs/architecture.md's package map is not the code's; the code's is:\n%s", wrapMapLines(want.String(), mapLineWidth))
	}
	for _, d := range []string{"domain", "domain/audit", "domain/books", "domain/decimal", "domain/fold", "domain/gunbot", "domain/jsonscan", "domain/pnlmath", "domain/pnlread", "domain/readahead", "domain/secrets", "domain/strategy", "domain/streams"} {
		if len(outside[d]) > 0 {
			t.Errorf("%s imports %v: it may import the standard library only", d, outside[d])
		}
	}
}

// mapLineWidth is where the package map's lines wrap: a package importing
// many goes on over indented lines, so that no line of docs/architecture.md
// is too long to read (TestArchitectureLineLength).
const mapLineWidth = 120

// wrapMapLines wraps each line of the package map longer than width after a
// comma, the rest on lines indented by two spaces.
func wrapMapLines(block string, width int) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(block, "\n") {
		for len(line) > width {
			cut := strings.LastIndex(line[:width], ", ")
			if cut < 0 {
				break
			}
			b.WriteString(line[:cut+1] + "\n")
			line = "  " + line[cut+2:]
		}
		b.WriteString(line)
	}
	return b.String()
}

// unwrapMapLines joins the package map's indented lines to the line they
// go on.
func unwrapMapLines(block string) string {
	return strings.ReplaceAll(block, ",\n  ", ", ")
}

// docBlock returns the lines of the text block of docs/architecture.md
// that follows marker.
func docBlock(t *testing.T, marker string) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	start := "<!-- " + marker + " -->\n```text\n"
	_, block, ok := strings.Cut(string(doc), start)
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatalf("docs/architecture.md has no block starting %q", start)
	}
	return strings.Split(strings.TrimSuffix(block, "\n"), "\n")
}

// TestProjectionList keeps docs/architecture.md's list of projections
// true: every projection serve registers (projectionList), in the order
// the runner applies them, with its Name and the package it lives in.
func TestProjectionList(t *testing.T) {
	e := startTradingE2E(t)
	var want []string
	for _, p := range e.m.projections {
		typ := reflect.TypeOf(p)
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		pkg := strings.TrimPrefix(typ.PkgPath(), modulePath)
		if typ.PkgPath() == "main" {
			pkg = "cmd/tradeledger"
		}
		want = append(want, p.Name()+" "+pkg)
	}
	var got []string
	for _, line := range docBlock(t, "projections: TestProjectionList checks it") {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("projection line %q: want its name, its package, then what it keeps", line)
		}
		got = append(got, f[0]+" "+f[1])
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/architecture.md lists the projections\n%s\nserve registers, in this order (name package):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestConnectorList keeps docs/architecture.md's list of connectors true:
// the descriptors connectorList names, in its order.
func TestConnectorList(t *testing.T) {
	var want []string
	for _, c := range connectorList(nil) {
		want = append(want, c.Name)
	}
	var got []string
	for _, line := range docBlock(t, "connectors: TestConnectorList checks it") {
		got = append(got, strings.Fields(line)[0])
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/architecture.md lists the connectors %v, connectorList names %v", got, want)
	}
}

// TestArchitectureLineLength keeps docs/architecture.md readable as a
// newcomer's map: no line over maxDocLine characters. A contract that needs
// more belongs in its package's doc comment (go doc shows it), not in a
// table cell.
func TestArchitectureLineLength(t *testing.T) {
	const maxDocLine = 400
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(doc), "\n") {
		if n := utf8.RuneCountInString(line); n > maxDocLine {
			t.Errorf("docs/architecture.md:%d has %d characters (at most %d): %.60s…", i+1, n, maxDocLine, line)
		}
	}
}

// envAssignments matches the VAR=value words before a shell command.
var envAssignments = regexp.MustCompile(`^\s*([A-Z_]+=('[^']*'|"[^"]*"|\S*)\s+)*`)

// TestReadmeSetUp keeps the README's promise to a newcomer: its Set-up
// gives exactly two commands, make test and make run (environment
// assignments before them and comments after them aside).
func TestReadmeSetUp(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Set-up\n")
	_, block, fenced := strings.Cut(section, "```sh\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !fenced || !closed {
		t.Fatal("README.md has no ## Set-up section with a sh block")
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		line, _, _ = strings.Cut(line, "#")
		got = append(got, strings.Join(strings.Fields(envAssignments.ReplaceAllString(line, "")), " "))
	}
	if want := []string{"make test", "make run"}; !slices.Equal(got, want) {
		t.Errorf("README.md's Set-up gives %q, want exactly %q", got, want)
	}
}

// rootDomainMaxLines is the size the root domain package may grow to (issue
// 37): events, payloads, aggregates and decide functions; what is not the
// trading domain lives in a sub-package of domain with one job.
const rootDomainMaxLines = 6000

// TestRootDomainSize holds the root domain package to rootDomainMaxLines
// lines of non-test Go, counted as wc -l counts them.
func TestRootDomainSize(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "domain", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(b), "\n")
	}
	if lines == 0 {
		t.Fatal("found no Go files in domain/")
	}
	if lines > rootDomainMaxLines {
		t.Errorf("the root domain package has %d lines of non-test Go, over %d: move what is not events, aggregates or decide functions into a sub-package of domain", lines, rootDomainMaxLines)
	}
}
