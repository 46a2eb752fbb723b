#!/usr/bin/env bash
# ClickHouse for the integration tests of projections/clickhouse.
#
# Sourced by .ci/run:
#     . .ci/clickhouse.sh
#     clickhouse_start || true   # exports TRADELEDGER_TEST_CLICKHOUSE on success
#     trap clickhouse_stop EXIT
#
# or run directly:  .ci/clickhouse.sh start   (prints the export line, leaves the server running)
#                   .ci/clickhouse.sh stop    (stops the server started by "start")
#
# clickhouse_start installs clickhouse-server and clickhouse-client from
# Debian's packages when they are missing, writes a config of our own
# (data, tmp and logs under a temporary directory, listening on 127.0.0.1
# only, native port 9000 or a free one, no HTTP port), starts the server and
# waits until it answers. When the packages cannot be installed or the server
# does not come up it says so and returns 1 without exporting anything, so the
# ClickHouse tests skip (with a message) instead of failing CI.

CLICKHOUSE_STATE_FILE=${CLICKHOUSE_STATE_FILE:-/tmp/tradeledger-ci-clickhouse.state}

clickhouse__log() { echo "clickhouse.sh: $*" >&2; }

clickhouse__port_busy() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

clickhouse__free_port() {
	local p
	for p in 9000 19000 19001 19002 19003 29000 29001 29002 39000 39001; do
		if ! clickhouse__port_busy "$p"; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

clickhouse_install() {
	if command -v clickhouse-server >/dev/null 2>&1 && command -v clickhouse-client >/dev/null 2>&1; then
		return 0
	fi
	local sudo=""
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
			clickhouse__log "clickhouse-server missing and not root (no sudo): ClickHouse tests will skip"
			return 1
		fi
	fi
	clickhouse__log "installing clickhouse-server and clickhouse-client from Debian's packages"
	# Bounded, so an unreachable mirror costs CI minutes, not the whole run.
	local t=""
	if command -v timeout >/dev/null 2>&1; then t="timeout 600"; fi
	if ! $t $sudo apt-get update >/tmp/tradeledger-ci-clickhouse-apt.log 2>&1 ||
		! DEBIAN_FRONTEND=noninteractive $t $sudo apt-get install -y clickhouse-server clickhouse-client >>/tmp/tradeledger-ci-clickhouse-apt.log 2>&1; then
		clickhouse__log "apt-get could not install clickhouse-server (see /tmp/tradeledger-ci-clickhouse-apt.log): ClickHouse tests will skip"
		return 1
	fi
}

clickhouse_start() {
	clickhouse_install || return 1
	local dir port
	dir=$(mktemp -d /tmp/tradeledger-clickhouse.XXXXXX) || return 1
	mkdir -p "$dir/data" "$dir/tmp" "$dir/log" "$dir/user_files" "$dir/format_schemas"
	if ! port=$(clickhouse__free_port); then
		clickhouse__log "no free port for ClickHouse: ClickHouse tests will skip"
		rm -rf "$dir"
		return 1
	fi
	cat >"$dir/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
    <logger>
        <level>warning</level>
        <log>$dir/log/clickhouse-server.log</log>
        <errorlog>$dir/log/clickhouse-server.err.log</errorlog>
        <size>10M</size>
        <count>2</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>$port</tcp_port>
    <path>$dir/data/</path>
    <tmp_path>$dir/tmp/</tmp_path>
    <user_files_path>$dir/user_files/</user_files_path>
    <format_schema_path>$dir/format_schemas/</format_schema_path>
    <users_config>$dir/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mark_cache_size>268435456</mark_cache_size>
    <max_concurrent_queries>100</max_concurrent_queries>
</yandex>
EOF
	cat >"$dir/users.xml" <<'EOF'
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <max_memory_usage>2000000000</max_memory_usage>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
EOF
	(cd "$dir" && exec clickhouse-server --config-file="$dir/config.xml" >"$dir/log/stdout.log" 2>&1) &
	local pid=$!
	echo "pid=$pid dir=$dir port=$port" >"$CLICKHOUSE_STATE_FILE"
	local i
	for i in $(seq 1 120); do
		if clickhouse-client --host 127.0.0.1 --port "$port" --query 'SELECT 1' >/dev/null 2>&1; then
			export TRADELEDGER_TEST_CLICKHOUSE="clickhouse://127.0.0.1:$port/tradeledger_test"
			clickhouse__log "ClickHouse $(clickhouse-client --host 127.0.0.1 --port "$port" --query 'SELECT version()') on 127.0.0.1:$port (data in $dir)"
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 0.5
	done
	clickhouse__log "ClickHouse did not come up on port $port: ClickHouse tests will skip"
	tail -n 20 "$dir/log/stdout.log" "$dir/log/clickhouse-server.err.log" >&2 2>/dev/null || true
	clickhouse_stop
	return 1
}

clickhouse_stop() {
	[ -f "$CLICKHOUSE_STATE_FILE" ] || return 0
	local pid dir port kv
	for kv in $(cat "$CLICKHOUSE_STATE_FILE"); do
		case $kv in
		pid=*) pid=${kv#pid=} ;;
		dir=*) dir=${kv#dir=} ;;
		port=*) port=${kv#port=} ;;
		esac
	done
	if [ -n "${pid:-}" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		local i
		for i in $(seq 1 40); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.25
		done
		kill -9 "$pid" 2>/dev/null || true
	fi
	case ${dir:-} in
	/tmp/tradeledger-clickhouse.*) rm -rf "$dir" ;;
	esac
	rm -f "$CLICKHOUSE_STATE_FILE"
	unset TRADELEDGER_TEST_CLICKHOUSE
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case ${1:-} in
	start)
		clickhouse_start || exit 1
		echo "export TRADELEDGER_TEST_CLICKHOUSE=$TRADELEDGER_TEST_CLICKHOUSE"
		;;
	stop) clickhouse_stop ;;
	*)
		echo "usage: $0 start|stop" >&2
		exit 2
		;;
	esac
fi
