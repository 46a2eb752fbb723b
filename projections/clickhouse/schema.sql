-- Tradeledger analytics tables (projections/clickhouse), for ClickHouse 18.16 and later.
-- The sink creates them itself (CREATE ... IF NOT EXISTS); this file is for review,
-- for creating them ahead of time, and as the base of a cluster variant (deploy/clickhouse/cluster.md).
-- The one copy: projections/clickhouse embeds it (Schema sends each statement, comment lines
-- left out, database tradeledger renamed), and deploy/clickhouse/schema.sql links to it.
--
-- Amounts are Int64 counts of 1e-12 (columns ending in _e12), or exact decimal text (String
-- columns of pnl_conv_buckets, fill_fees and rates); times are Int64 milliseconds.
-- Every table is a ReplacingMergeTree versioned by the log position of the row's event:
-- read with FINAL (or argMax(col, position)) to see each row once.

CREATE DATABASE IF NOT EXISTS tradeledger;

-- One row per order: its latest state.
CREATE TABLE IF NOT EXISTS tradeledger.orders9 (
    instance      String,
    order_id      Int64,
    exchange      String,
    pair          String,
    side          String,
    kind          String,
    status        String,
    amount_e12     Int64,
    price_e12      Int64,
    stop_price_e12 Int64,
    filled_e12     Int64,
    filled_value_e12 Int64,
    fees_e12       Int64,
    wide          String,
    fills         UInt32,
    created_ms    Int64,
    updated_ms    Int64,
    actor         String,
    reason        String,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (instance, order_id);

-- One row per fill, with the realized PNL of the configured lot
-- matching method (method is in the key: switching method rebuilds
-- its own rows beside the old ones); position is the fill's, version
-- the row's (a fill folded again is written again).
CREATE TABLE IF NOT EXISTS tradeledger.fills9 (
    method        String,
    instance      String,
    exchange      String,
    pair          String,
    time_ms       Int64,
    order_id      Int64,
    fill_id       String,
    side          String,
    price_e12      Int64,
    quantity_e12   Int64,
    value_e12      Int64,
    fee_e12        Int64,
    fee_asset     String,
    pnl_e12        Int64,
    cost_e12       Int64,
    unmatched_e12  Int64,
    unmatched_value_e12 Int64,
    net_e12        Int64,
    wide          String,
    closing       UInt8,
    first         UInt8,
    position      UInt64,
    version       UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(toDate(intDiv(time_ms, 1000)))
ORDER BY (method, instance, exchange, pair, time_ms, order_id, position);

-- Per pair and UTC day: aggregates computed in Go from the same PNL
-- code as the in-memory projections, upserted whole.
CREATE TABLE IF NOT EXISTS tradeledger.pnl_daily9 (
    method        String,
    instance      String,
    exchange      String,
    pair          String,
    day           Date,
    trades        UInt32,
    buys          UInt32,
    sells         UInt32,
    wins          UInt32,
    losses        UInt32,
    volume_e12     Int64,
    pnl_e12        Int64,
    fees_e12       Int64,
    unmatched_value_e12 Int64,
    wide          String,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (method, instance, exchange, pair, day);

-- Per pair and 15-minute slot: the PNL aggregates of the fills in
-- it, computed in Go exactly as the in-memory Ledger's buckets and
-- upserted whole; the PNL reads aggregate these (a day in any zone
-- is a run of whole slots).
CREATE TABLE IF NOT EXISTS tradeledger.pnl_buckets9 (
    method        String,
    instance      String,
    exchange      String,
    pair          String,
    slot          Int64,
    trades        Int64,
    buys          Int64,
    sells         Int64,
    wins          Int64,
    losses        Int64,
    evens         Int64,
    u_buys        Int64,
    u_sells       Int64,
    u_wins        Int64,
    u_losses      Int64,
    pnl_e12        Int64,
    profit_e12     Int64,
    loss_e12       Int64,
    fees_e12       Int64,
    cp_wins_e12    Int64,
    cp_losses_e12  Int64,
    buy_value_e12  Int64,
    sell_value_e12 Int64,
    volume_e12     Int64,
    unmatched_value_e12 Int64,
    invested_e12   Int64,
    hero_e12       Int64,
    hero_ms       Int64,
    fuckup_e12     Int64,
    fuckup_ms     Int64,
    first_ms      Int64,
    last_ms       Int64,
    wide          String,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (method, instance, exchange, pair, slot);

-- What an overview over all time reads, in one query: per pair
-- (kind 0) its aggregate over all time (v: the columns of
-- pnl_buckets, trades … last_ms) then its inventory (lots
-- quantity and cost, last price, position); its strategy (kind 3,
-- s); and its daily figures (trades, volume, pnl, unmatched value,
-- invested of the buckets starting in the day) in blocks: kind 1,
-- 32 local days from day n·32 under one whole-hour shift (seconds
-- east of UTC, -12 h to +14 h; local day = floor((bucket start +
-- shift) / 86400 s)), so that a zone's days are a key range;
-- kind 4, the first hours of the same days, so that a day when a
-- zone's offset changes by an hour is a shift's day less or plus
-- an hour (a few rows beside each other, read for such days only);
-- kind 5, the last 15, 30 and 45 minutes of the same days, so that a
-- day of a zone 15, 30 or 45 minutes ahead of the shift is the shift's
-- day moved by those minutes; kind 6, a UTC day's 96 buckets, for the
-- days when the offset of such a zone changes;
-- kind 2, 24 UTC hours from hour n·24, for the other days when a
-- zone's offset changes (rows scattered over the table: each costs
-- a read). v holds 5 figures per day or hour, zero without fills,
-- as zigzag varints of 128-bit counts (amounts in 10^-12: every
-- Decimal; an Array would cost the Go client a reflective step per
-- element). Schema 2 had kinds 0 to 3 in pnl_overview with 8-byte
-- figures.
CREATE TABLE IF NOT EXISTS tradeledger.pnl_overview9 (
    method        String,
    kind          UInt8,
    instance      String,
    shift         Int32,
    n             Int64,
    exchange      String,
    pair          String,
    v             String,
    s             String,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (method, kind, instance, shift, n, exchange, pair)
SETTINGS index_granularity = 32;

-- Sell orders' realized pnl (Σ of their closing fills) and the
-- trade time of their first closing fill: unique win/loss counts.
CREATE TABLE IF NOT EXISTS tradeledger.order_pnl9 (
    method        String,
    instance      String,
    exchange      String,
    pair          String,
    order_id      Int64,
    first_close_ms Int64,
    pnl_e12        Int64,
    wide          String,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (method, instance, exchange, pair, order_id);

-- Per pair: the inventory after the last fill (lots held, their
-- cost, last fill price, position from logged fills).
CREATE TABLE IF NOT EXISTS tradeledger.pairs9 (
    method        String,
    instance      String,
    exchange      String,
    pair          String,
    lots_qty_e12   Int64,
    lots_cost_e12  Int64,
    last_price_e12 Int64,
    balance_e12    Int64,
    wide          String,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (method, instance, exchange, pair);

-- Per pair: the strategy the configuration names ('' once removed).
CREATE TABLE IF NOT EXISTS tradeledger.strategies9 (
    instance      String,
    exchange      String,
    pair          String,
    strategy      String,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (instance, exchange, pair);

-- Per pair and 15-minute slot: the last fill price (asset values).
CREATE TABLE IF NOT EXISTS tradeledger.prices9 (
    instance      String,
    exchange      String,
    pair          String,
    slot          Int64,
    price_e12      Int64,
    wide          String,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (instance, exchange, pair, slot);

-- Balance snapshots: one row per observation (seq counts them per
-- exchange from 1) and one row per asset held in it.
CREATE TABLE IF NOT EXISTS tradeledger.snapshots9 (
    instance      String,
    exchange      String,
    seq           UInt64,
    time_ms       Int64,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (instance, exchange, seq);

CREATE TABLE IF NOT EXISTS tradeledger.balances9 (
    instance      String,
    exchange      String,
    seq           UInt64,
    asset         String,
    time_ms       Int64,
    available_e12  Int64,
    on_order_e12   Int64,
    wide          String,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (instance, exchange, seq, asset);

-- Per PNL method, currency, pair and 15-minute slot: the pair's
-- aggregate in another currency (conv.go; part 0 every fill with
-- the money of those that had a rate, part 1 the fills without one
-- in the pair's quote), packed as exact decimal text.
CREATE TABLE IF NOT EXISTS tradeledger.pnl_conv_buckets9 (
    method        String,
    currency      String,
    instance      String,
    part          UInt8,
    exchange      String,
    pair          String,
    slot          Int64,
    v             String,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (method, currency, instance, part, exchange, pair, slot);

-- Per PNL method, currency and pair: the pair's aggregate over all
-- time in that currency (conv: every fill, money of those that had
-- a rate; unconv: those without one, in the pair's quote; packed as
-- pnl_conv_buckets9's v), one row per currency its quote converts
-- into; ok 0 once it no longer does (the reporting currency
-- changed). What the fleet's overview reads (fleet.go).
CREATE TABLE IF NOT EXISTS tradeledger.pnl_conv_totals9 (
    method        String,
    currency      String,
    instance      String,
    exchange      String,
    pair          String,
    conv          String,
    unconv        String,
    ok            UInt8,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (method, currency, instance, exchange, pair);

-- Fills whose fee was charged in a third asset: the fee as charged
-- and its valuation in the pair's quote (exact decimal text; valued
-- 0: no rate at the fill's time, unconverted).
CREATE TABLE IF NOT EXISTS tradeledger.fill_fees9 (
    instance      String,
    exchange      String,
    pair          String,
    time_ms       Int64,
    order_id      Int64,
    position      UInt64,
    fee_asset     String,
    fee_amount    String,
    fee_quote     String,
    fee_rate      String,
    fee_rate_ms   Int64,
    valued        UInt8,
    version       UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (instance, exchange, pair, time_ms, position);

-- Every currency pair's latest rate (fold.RateBook: 1 base = rate
-- quote at time_ms; seq the log position it was recorded at).
CREATE TABLE IF NOT EXISTS tradeledger.rates9 (
    instance      String,
    quote         String,
    base          String,
    rate          String,
    time_ms       Int64,
    seq           UInt64,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (instance, quote, base);

-- Per PNL method: what the PNL reads need of the configuration and
-- the log as a whole (name "reporting": the reporting currency).
CREATE TABLE IF NOT EXISTS tradeledger.settings9 (
    method        String,
    instance      String,
    name          String,
    value         String,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (method, instance, name);

-- Which log each instance name belongs to: a sink claims its
-- instance with its log's identity (the log's origin) before it
-- writes; the first claim (claimed_ms, then log) owns the name, and
-- a sink of another log claiming it is refused (Sink.claim). Rows
-- are only added, never replaced.
CREATE TABLE IF NOT EXISTS tradeledger.instances (
    instance      String,
    log           String,
    claimed_ms    Int64
) ENGINE = MergeTree
ORDER BY (instance, claimed_ms, log);

-- The position of the last event whose rows are all stored, per
-- sink (one per instance and PNL method: sinkNameOf). Written
-- after the rows, so a crash between the two only makes the next
-- start write them again.
CREATE TABLE IF NOT EXISTS tradeledger.checkpoint (
    sink          String,
    position      UInt64,
    updated_ms    Int64
) ENGINE = ReplacingMergeTree(position)
ORDER BY sink;

-- The schema version each sink's rows were written under
-- (SchemaVersion). A sink finding an older one (or none beside a
-- checkpoint) writes every row again from the log's start, then
-- records the version; readers use the tables added since only
-- once it is recorded. A newer one (a newer release's) stops an
-- older release's sink, and its readers use their fallback.
CREATE TABLE IF NOT EXISTS tradeledger.schema_version (
    sink          String,
    version       UInt32,
    updated_ms    Int64
) ENGINE = ReplacingMergeTree(version)
ORDER BY sink;
