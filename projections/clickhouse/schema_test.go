package clickhouse

import (
	"os"
	"strings"
	"testing"
)

// schemaSQL renders Schema(db) as the statements of a .sql file.
func schemaSQL(db string) string {
	var b strings.Builder
	b.WriteString(schemaHeader)
	for _, s := range Schema(db) {
		b.WriteString(s)
		b.WriteString(";\n\n")
	}
	return b.String()
}

const schemaHeader = `-- Tradeledger analytics tables (projections/clickhouse), for ClickHouse 18.16 and later.
-- The sink creates them itself (CREATE ... IF NOT EXISTS); this file is for review,
-- for creating them ahead of time, and as the base of a cluster variant (see cluster.md).
-- Generated from projections/clickhouse.Schema("tradeledger"); a test keeps the two equal.
--
-- Amounts are Int64 counts of 1e-12 (columns ending in _e12), or exact decimal text (String
-- columns of pnl_conv_buckets, fill_fees and rates); times are Int64 milliseconds.
-- Every table is a ReplacingMergeTree versioned by the log position of the row's event:
-- read with FINAL (or argMax(col, position)) to see each row once.

`

// TestSchemaFileMatches keeps deploy/clickhouse/schema.sql equal to Schema.
// SCHEMA_OUT=path writes the expected file there (outside the tree).
func TestSchemaFileMatches(t *testing.T) {
	want := schemaSQL("tradeledger")
	if out := os.Getenv("SCHEMA_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("../../deploy/clickhouse/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("deploy/clickhouse/schema.sql differs from Schema(\"tradeledger\"); regenerate: SCHEMA_OUT=/tmp/schema.sql go test -run TestSchemaFileMatches ./projections/clickhouse && cp /tmp/schema.sql deploy/clickhouse/")
	}
}

func TestParseURL(t *testing.T) {
	for _, tt := range []struct {
		url, db string
		ok      bool
	}{
		{"clickhouse://127.0.0.1:9000/tradeledger", "tradeledger", true},
		{"clickhouse://127.0.0.1:9000", DefaultDatabase, true},
		{"clickhouse://user:pw@ch:9000/analytics?dial_timeout=2s", "analytics", true},
		{"http://127.0.0.1:8123/x", "", false},
		{"clickhouse:///x", "", false},
		{"clickhouse://h:9000/bad-name", "", false},
		{"clickhouse://h:9000/x;DROP", "", false},
	} {
		_, db, err := ParseURL(tt.url)
		if (err == nil) != tt.ok || db != tt.db {
			t.Errorf("ParseURL(%q) = %q, %v; want %q, ok=%v", tt.url, db, err, tt.db, tt.ok)
		}
	}
}
