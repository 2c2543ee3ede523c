#!/usr/bin/env bash
# PostgreSQL (Debian 12: 15): the shared database of several `netgw serve` gateways (docs/serve.md,
# "Several gateways on one PostgreSQL").
#
#   scripts/peers/postgres.sh install     idempotent: apt-get install postgresql (server + client), only
#                                         when initdb/pg_ctl are missing. No cluster is created or started
#                                         by us (the package's own cluster, if any, is left alone).
#   scripts/peers/postgres.sh start DIR   a throwaway cluster in DIR/data: initdb, then postgres on
#                                         127.0.0.1:<free port>, no unix socket outside DIR, SCRAM
#                                         password authentication. Writes DIR/postgres.env (shell syntax):
#                                         PG_HOST PG_PORT PG_USER PG_PASSWORD PG_DATABASE PG_URL PG_PID PG_DIR
#   NETGW_PEER_WATCH_PID=PID: also stop it when process PID exits (see watch_parent)
#   scripts/peers/postgres.sh restart DIR stop (fast) and start the same cluster on the same port
#   scripts/peers/postgres.sh stop DIR    stop the cluster (fast shutdown)
#
# initdb and postgres refuse to run as root: as root the cluster runs as the `postgres` system user the
# package creates (DIR is opened to it), otherwise as the current user.
set -euo pipefail

pg_bindir() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
    done
    return 1
}

install() {
    if bin="$(pg_bindir)"; then
        echo "postgres: already installed ($bin)"
        return 0
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # Without systemd the package starts no daemon; our clusters are private ones in temp dirs.
    apt-get install -y -qq postgresql >/dev/null
    echo "postgres: installed ($(pg_bindir))"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Run a PostgreSQL program as the cluster's owner.
as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

watch_parent() {
    local dir="$1" watched="${NETGW_PEER_WATCH_PID:-}"
    [ -n "$watched" ] || return 0
    (
        while kill -0 "$watched" 2>/dev/null && [ -f "$dir/data/postmaster.pid" ]; do sleep 1; done
        stop "$dir" >/dev/null 2>&1 || true
    ) </dev/null >/dev/null 2>&1 &
}

launch() {
    local dir="$1" port="$2" bin="$3"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir/sock -c fsync=off -c max_connections=300" \
        start >/dev/null
}

start() {
    local dir="${1:?usage: start DIR}" bin
    bin="$(pg_bindir)" || { echo "PostgreSQL not installed: run $0 install" >&2; exit 1; }
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    local password port
    password="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
    mkdir -p "$dir/data" "$dir/sock"
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || { echo "no postgres system user: run $0 install" >&2; exit 1; }
        chmod 0711 "$dir"
        chown postgres: "$dir/data" "$dir/sock"
        touch "$dir/postgres.log" && chown postgres: "$dir/postgres.log"
    fi
    chmod 0700 "$dir/data"
    local pwfile="$dir/sock/pwfile"
    printf '%s\n' "$password" >"$pwfile"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$pwfile"; fi
    as_owner "$bin/initdb" -D "$dir/data" -U netgw --pwfile="$pwfile" --auth-host=scram-sha-256 \
        --auth-local=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
        echo "postgres: initdb failed:" >&2; cat "$dir/initdb.log" >&2; exit 1; }
    rm -f "$pwfile"
    port="$(free_port)"
    echo "$port" >"$dir/port"
    launch "$dir" "$port" "$bin" || { echo "postgres: did not start:" >&2; cat "$dir/postgres.log" >&2; exit 1; }
    PGPASSWORD="$password" "$bin/psql" -h 127.0.0.1 -p "$port" -U netgw -d postgres -qAt \
        -c "CREATE DATABASE netgw" >/dev/null
    local pid
    pid="$(head -1 "$dir/data/postmaster.pid")"
    cat >"$dir/postgres.env" <<ENV
PG_HOST=127.0.0.1
PG_PORT=$port
PG_USER=netgw
PG_PASSWORD=$password
PG_DATABASE=netgw
PG_URL=postgres://netgw:$password@127.0.0.1:$port/netgw
PG_PID=$pid
PG_DIR=$dir
ENV
    chmod 0600 "$dir/postgres.env"
    watch_parent "$dir"
    echo "postgres: ready on 127.0.0.1:$port (pid $pid)"
}

stop() {
    local dir="${1:?usage: stop DIR}" bin
    bin="$(pg_bindir)" || return 0
    [ -f "$dir/data/postmaster.pid" ] || return 0
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null || true
}

restart() {
    local dir="${1:?usage: restart DIR}" bin
    bin="$(pg_bindir)"
    dir="$(cd "$dir" && pwd)"
    stop "$dir"
    launch "$dir" "$(cat "$dir/port")" "$bin"
    sed -i "s/^PG_PID=.*/PG_PID=$(head -1 "$dir/data/postmaster.pid")/" "$dir/postgres.env"
    echo "postgres: restarted"
}

# TLS on, with CERT and KEY (PEM) as the server's: copied into the data directory as its owner (the
# test's files may not be readable by the postgres user), then `ALTER SYSTEM SET ssl = on` and a
# reload, waited for until a new session reports ssl on.
tls() {
    local dir="${1:?usage: tls DIR CERT KEY}" cert="${2:?usage: tls DIR CERT KEY}" key="${3:?usage: tls DIR CERT KEY}" bin
    bin="$(pg_bindir)"
    dir="$(cd "$dir" && pwd)"
    as_owner tee "$dir/data/server.crt" <"$cert" >/dev/null
    as_owner tee "$dir/data/server.key" <"$key" >/dev/null
    as_owner chmod 0600 "$dir/data/server.key"
    # shellcheck disable=SC1091
    . "$dir/postgres.env"
    local psql=("$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U netgw -d postgres -qAt)
    PGPASSWORD="$PG_PASSWORD" "${psql[@]}" -c "ALTER SYSTEM SET ssl = on" -c "SELECT pg_reload_conf()" >/dev/null
    for _ in $(seq 1 100); do
        [ "$(PGPASSWORD="$PG_PASSWORD" "${psql[@]}" -c "SHOW ssl")" = on ] && return 0
        sleep 0.1
    done
    echo "postgres: ssl did not come on:" >&2; tail -5 "$dir/postgres.log" >&2; exit 1
}

case "${1:-}" in
    install) install ;;
    tls) shift; tls "$@" ;;
    start) shift; start "$@" ;;
    restart) shift; restart "$@" ;;
    stop) shift; stop "$@" ;;
    *) echo "usage: $0 install | start DIR | restart DIR | stop DIR | tls DIR CERT KEY" >&2; exit 2 ;;
esac
