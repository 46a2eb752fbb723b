package clickhouse

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
)

// schemaSQL is the sink's DDL as operators read it: the statements of
// Schema for the database tradeledger, each ending in ";" at the end of a
// line, with "--" comment lines saying what each table holds.
// deploy/clickhouse/schema.sql is a link to this file.
//
//go:embed schema.sql
var schemaSQL string

// schemaDatabase is the database schema.sql creates its tables in; Schema
// puts its db in its place.
const schemaDatabase = "tradeledger"

// Schema returns the DDL statements that create database db and the sink's
// tables if they are missing (schema.sql's statements, without their
// comments and final ";", for database db). Many services share one
// database: every row names the instance that wrote it (Sink.Instance, first
// in each table's key after the PNL method, the kind or the currency), and
// every read of one instance's figures selects its rows. Every statement
// works on ClickHouse 18.16 (the Debian package) and on current releases:
// MergeTree syntax with ORDER BY, no DateTime64 (times are Int64
// milliseconds), no LowCardinality.
//
// Every table is a ReplacingMergeTree whose version is the log position of
// the event that produced the row, so writing a row again (a retry, or a
// restart from an older checkpoint) replaces it instead of adding to it.
// Readers use FINAL (or argMax) to see one row per key. Amounts are exact:
// Int64 counts of 10^-12 (the decimal.Decimal's 12 decimals), columns
// suffixed _e12, and an amount beyond an Int64 at that scale (about
// ±9.2×10^6) is -2^63 there and its decimal text in the row's wide column
// (wide.go: "name=value …", empty when every amount fits). A sum over them
// must leave out the marked rows and add their text: on 18.16 sum() of an
// Int64 or a Decimal128 wraps silently (the reader sums each column's high
// and low 32 bits apart, exactSum).
func Schema(db string) []string {
	var stmts []string
	var stmt []string
	for _, line := range strings.Split(schemaSQL, "\n") {
		if strings.HasPrefix(line, "--") || (len(stmt) == 0 && line == "") {
			continue
		}
		body, last := strings.CutSuffix(line, ";")
		stmt = append(stmt, body)
		if last {
			stmts = append(stmts, inDatabase(strings.Join(stmt, "\n"), db))
			stmt = nil
		}
	}
	return stmts
}

// inDatabase returns stmt, a CREATE DATABASE or CREATE TABLE statement of
// schema.sql, for database db instead of schemaDatabase.
func inDatabase(stmt, db string) string {
	for _, head := range []string{"CREATE DATABASE IF NOT EXISTS ", "CREATE TABLE IF NOT EXISTS "} {
		if rest, ok := strings.CutPrefix(stmt, head+schemaDatabase); ok && (rest == "" || rest[0] == '.') {
			return head + db + rest
		}
	}
	panic("clickhouse: schema.sql: a statement that does not create " + schemaDatabase + " or a table in it: " + stmt)
}

// SchemaVersion is the version of the rows the sink writes: 1 added
// pnl_totals, pnl_local_days and pnl_hours (and schema_version itself); 2
// replaced them by pnl_overview; 3 replaced that by pnl_overview3 (days'
// first hours in a column f, varint figures); 4 by pnl_overview4 (the
// first hours in rows of their own, kind 4); 5 holds amounts as counts of
// 10^-12 instead of 10^-8 (the ledger's 12 decimals), in tables of new names
// (orders5 … pnl_overview5, columns _e12); 6 values fees in any asset
// (fills' pnl changes) and adds pnl_conv_buckets, fill_fees, rates and
// settings; 7 holds every amount a Decimal holds (a wide column of exact
// text beside the Int64 ones, pnl_overview8's figures 128-bit varints) in
// tables of new names (orders7 … pnl_overview8); 8 tags every row with the
// instance that wrote it (an instance column in every key, in tables of new
// names ending in 9: orders9 … settings9) and adds pnl_conv_totals9 and
// instances; 9 adds pnl_overview9's kind 5 and 6 rows (each local day's last
// quarter-hours, each UTC day's buckets: zones of 30 and 45 minutes are read
// from it). A sink that rewrote its rows under SchemaVersion drops the
// tables replaced (replacedTables): every service sharing a database runs
// the same release, and they are upgraded together.
const SchemaVersion = 9

// replacedTables are the tables of older schemas that no reader of
// SchemaVersion reads.
var replacedTables = []string{"pnl_totals", "pnl_local_days", "pnl_hours", "pnl_overview", "pnl_overview3",
	"pnl_overview4", "orders", "fills", "pnl_daily", "pnl_buckets", "order_pnl", "pairs", "prices", "balances",
	"pnl_overview5", "orders5", "fills5", "pnl_daily5", "pnl_buckets5", "order_pnl5", "pairs5", "prices5", "balances5",
	"fills7", "pnl_daily7", "pnl_buckets7", "pnl_overview7", "order_pnl7", "pairs7", "prices7", "pnl_conv_buckets",
	"fill_fees", "rates", "orders7", "fills8", "pnl_daily8", "pnl_buckets8", "pnl_overview8", "order_pnl8", "pairs8",
	"strategies", "prices8", "snapshots", "balances7", "pnl_conv_buckets8", "fill_fees8", "rates8", "settings"}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// DefaultInstance names the instance of a Sink or Reader given none (a
// service names its own: serve --instance, by default its log's origin id).
const DefaultInstance = "default"

// MaxInstanceLen bounds an instance name.
const MaxInstanceLen = 64

var instanceRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// CheckInstance returns EINVALID unless name is an instance name: 1 to
// MaxInstanceLen letters, digits, '.', '_' and '-', starting with a letter
// or digit (it is part of the checkpoint's sink name, and shown in URLs and
// CSV files as it is).
func CheckInstance(name string) error {
	if len(name) > MaxInstanceLen || !instanceRE.MatchString(name) {
		return domain.Errorf(domain.EINVALID, "instance name %q: use 1 to %d letters, digits, '.', '_' and '-', starting with a letter or digit", name, MaxInstanceLen)
	}
	return nil
}

// checkIdent refuses database names that would need quoting: they end up
// in DDL and queries verbatim.
func checkIdent(name string) error {
	if !identRE.MatchString(name) {
		return fmt.Errorf("clickhouse: database name %q: use letters, digits and _", name)
	}
	return nil
}
