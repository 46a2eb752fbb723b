package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

var nan = math.NaN()

// spec is one figure of the report.
type spec struct {
	id, name, unit string
	// lowerBetter: a time, a latency or CPU; the ratio is then REF ÷ HEAD,
	// so that ≥ 1 means HEAD no slower either way.
	lowerBetter bool
}

// specs are the report's rows, in order.
var specs = []spec{
	{"import-s", "import (wall)", "s", true},
	{"import-cpu", "import (CPU)", "s", true},
	{"start-s", "serve to /readyz, whole log (wall)", "s", true},
	{"start-cpu", "serve to /readyz, whole log (CPU)", "s", true},
	{"snapstart-s", "serve to /readyz from a snapshot (wall)", "s", true},
	{"snapstart-cpu", "serve to /readyz from a snapshot (CPU)", "s", true},
	{"replay-s", "replay, whole log (wall)", "s", true},
	{"replay-cpu", "replay, whole log (CPU)", "s", true},
	{"verify-s", "verify (wall)", "s", true},
	{"verify-cpu", "verify (CPU)", "s", true},
	{"append64", "appends, 64 writers (go test in each tree)", "events/s", false},
	{"append64-cpu", "appends, 64 writers, CPU per event (go test)", "µs", true},
	{"overview-p50", "ClickHouse overview, 60 zones uncached, p50", "ms", true},
	{"overview-p99", "ClickHouse overview, 60 zones uncached, p99", "ms", true},
	{"place-p50", "placement at the rate, 64 clients, p50", "ms", true},
	{"place-p99", "placement at the rate, 64 clients, p99", "ms", true},
	{"place-cpu", "placement, serve's CPU per order", "µs", true},
	{"place-rate", "placement, rate achieved", "orders/s", false},
}

// figures are one benchmark's figures for one build, by spec id; NaN: the
// build has none (n/a).
type figures map[string]float64

// String lists the figures in the specs' order.
func (f figures) String() string {
	var parts []string
	for _, s := range specs {
		v, ok := f[s.id]
		if !ok {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s", s.id, formatValue(v, s.unit)))
	}
	return strings.Join(parts, "  ")
}

// results are every round's figures of both builds.
type results struct {
	refLabel, headLabel string
	ref, head           map[string]map[int]float64 // spec id → round → value
	loads               []float64
}

func newResults(refLabel, headLabel string) *results {
	return &results{refLabel: refLabel, headLabel: headLabel, ref: map[string]map[int]float64{}, head: map[string]map[int]float64{}}
}

func (r *results) add(round int, head bool, load float64, f figures) {
	into := r.ref
	if head {
		into = r.head
	}
	for id, v := range f {
		if into[id] == nil {
			into[id] = map[int]float64{}
		}
		into[id][round] = v
	}
	if !math.IsNaN(load) {
		r.loads = append(r.loads, load)
	}
}

// report writes the table: per figure each build's min, median and max
// over the rounds, and the ratio HEAD/REF (as a speed) of each round's
// pair, its min, median and max.
func (r *results) report(w io.Writer, header string) {
	fmt.Fprintf(w, "\n%s\n", header)
	if len(r.loads) > 0 {
		fmt.Fprintf(w, "load (1 min) when each measurement began: %.2f–%.2f, median %.2f\n", slices.Min(r.loads), slices.Max(r.loads), median(r.loads))
	}
	fmt.Fprintf(w, "HEAD/REF is a speed ratio per round (a rate HEAD ÷ REF; a time, latency or CPU REF ÷ HEAD): ≥ 1.00 means HEAD is as fast or faster.\n\n")
	fmt.Fprintf(w, "| figure | unit | %s min / median / max | %s min / median / max | HEAD/REF min / median / max |\n", r.refLabel, r.headLabel)
	fmt.Fprintf(w, "|---|---|---|---|---|\n")
	for _, s := range specs {
		ref, head := r.ref[s.id], r.head[s.id]
		if ref == nil && head == nil {
			continue
		}
		var ratios []float64
		for round, h := range head {
			x, ok := ref[round]
			if !ok || math.IsNaN(x) || math.IsNaN(h) || x == 0 || h == 0 {
				continue
			}
			if s.lowerBetter {
				ratios = append(ratios, x/h)
			} else {
				ratios = append(ratios, h/x)
			}
		}
		ratio := "n/a"
		if len(ratios) > 0 {
			ratio = fmt.Sprintf("%.2f / %.2f / %.2f", slices.Min(ratios), median(ratios), slices.Max(ratios))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", s.name, s.unit, spread(ref, s.unit), spread(head, s.unit), ratio)
	}
}

// spread is "min / median / max" of a build's rounds, or n/a.
func spread(rounds map[int]float64, unit string) string {
	var vs []float64
	for _, v := range rounds {
		if !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return "n/a"
	}
	return formatValue(slices.Min(vs), unit) + " / " + formatValue(median(vs), unit) + " / " + formatValue(slices.Max(vs), unit)
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// formatValue writes v with three significant digits or as a whole number.
func formatValue(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case unit == "events/s" || unit == "orders/s" || math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}
