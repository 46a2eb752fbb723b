//go:build ignore

// testsummary reads `go test -json` on stdin and prints what `go test`
// prints without -json (ok/FAIL/? lines, the output of failed tests, build
// errors), then every skipped test with its reason. It exits 1 when a test
// or a package failed. Used by `make test`:
//
//	go test -json ./... | go run .ci/testsummary.go
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

func main() {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	testOutput := map[string][]string{} // package/test → its output lines
	var skipped []string
	failed := false
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	for in.Scan() {
		line := in.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Fprintf(out, "%s\n", line) // not test2json (e.g. a go command error)
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "build-output":
			out.WriteString(e.Output)
		case "build-fail":
			failed = true
		case "output":
			if e.Test != "" {
				testOutput[key] = append(testOutput[key], e.Output)
				continue
			}
			// Package-level lines, as go test prints them without -v.
			if o := strings.TrimSpace(e.Output); o == "PASS" || strings.HasPrefix(o, "=== ") {
				continue
			}
			out.WriteString(e.Output)
			out.Flush()
		case "fail":
			failed = true
			if e.Test != "" {
				for _, l := range testOutput[key] {
					if !strings.HasPrefix(l, "=== ") {
						out.WriteString(l)
					}
				}
			}
			delete(testOutput, key)
		case "skip":
			if e.Test != "" {
				skipped = append(skipped, fmt.Sprintf("%s %s: %s", e.Package, e.Test, reason(testOutput[key])))
			}
			delete(testOutput, key)
		case "pass":
			delete(testOutput, key)
		}
	}
	sort.Strings(skipped)
	fmt.Fprintf(out, "\nskipped tests: %d\n", len(skipped))
	for _, s := range skipped {
		fmt.Fprintf(out, "  %s\n", s)
	}
	if failed {
		out.Flush()
		os.Exit(1)
	}
}

// reason is a skipped test's message: its log lines after "--- SKIP",
// file:line prefixes dropped, on one line.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		if i := strings.Index(t, ": "); i > 0 && strings.Contains(t[:i], ".go:") {
			t = t[i+2:]
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}
