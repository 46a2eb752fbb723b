-- Tradeledger analytics tables (projections/clickhouse), for ClickHouse 18.16 and later.
-- The sink creates them itself (CREATE ... IF NOT EXISTS); this file is for review,
-- for creating them ahead of time, and as the base of a cluster variant (see cluster.md).
-- Generated from projections/clickhouse.Schema("tradeledger"); a test keeps the two equal.
--
-- Amounts are Int64 counts of 1e-12 (columns ending in _e12), or exact decimal text (String
-- columns of pnl_conv_buckets, fill_fees and rates); times are Int64 milliseconds.
-- Every table is a ReplacingMergeTree versioned by the log position of the row's event:
-- read with FINAL (or argMax(col, position)) to see each row once.

CREATE DATABASE IF NOT EXISTS tradeledger;

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

CREATE TABLE IF NOT EXISTS tradeledger.strategies9 (
    instance      String,
    exchange      String,
    pair          String,
    strategy      String,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (instance, exchange, pair);

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

CREATE TABLE IF NOT EXISTS tradeledger.settings9 (
    method        String,
    instance      String,
    name          String,
    value         String,
    position      UInt64
) ENGINE = ReplacingMergeTree(position)
ORDER BY (method, instance, name);

CREATE TABLE IF NOT EXISTS tradeledger.instances (
    instance      String,
    log           String,
    claimed_ms    Int64
) ENGINE = MergeTree
ORDER BY (instance, claimed_ms, log);

CREATE TABLE IF NOT EXISTS tradeledger.checkpoint (
    sink          String,
    position      UInt64,
    updated_ms    Int64
) ENGINE = ReplacingMergeTree(position)
ORDER BY sink;

CREATE TABLE IF NOT EXISTS tradeledger.schema_version (
    sink          String,
    version       UInt32,
    updated_ms    Int64
) ENGINE = ReplacingMergeTree(version)
ORDER BY sink;

