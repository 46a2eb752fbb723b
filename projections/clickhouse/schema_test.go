package clickhouse

import (
	"os"
	"strings"
	"testing"
)

// TestSchemaStatements checks that Schema sends each statement of
// schema.sql once, without its comments and ";", for the database asked.
func TestSchemaStatements(t *testing.T) {
	stmts := Schema("analytics")
	if got, want := len(stmts), strings.Count("\n"+schemaSQL, "\nCREATE "); got != want || want < 2 {
		t.Fatalf("Schema gave %d statements, schema.sql has %d", got, want)
	}
	if got, want := stmts[0], "CREATE DATABASE IF NOT EXISTS analytics"; got != want {
		t.Fatalf("first statement %q, want %q", got, want)
	}
	for _, s := range stmts[1:] {
		if !strings.HasPrefix(s, "CREATE TABLE IF NOT EXISTS analytics.") {
			t.Errorf("statement does not create a table in analytics: %.60q", s)
		}
		if strings.Contains(s, schemaDatabase) || strings.Contains(s, "--") || strings.Contains(s, ";") {
			t.Errorf("statement keeps the file's database, a comment or a ';': %q", s)
		}
	}
}

// TestSchemaFile checks that deploy/clickhouse/schema.sql, the file
// operators read, is schema.sql, the one the sink sends.
func TestSchemaFile(t *testing.T) {
	got, err := os.ReadFile("../../deploy/clickhouse/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != schemaSQL {
		t.Fatal("deploy/clickhouse/schema.sql differs from projections/clickhouse/schema.sql: make it a link to it (ln -sf ../../projections/clickhouse/schema.sql deploy/clickhouse/schema.sql)")
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
