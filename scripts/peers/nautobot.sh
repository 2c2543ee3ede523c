#!/usr/bin/env bash
# Nautobot 2.4.44 (PyPI) on PostgreSQL (scripts/peers/postgres.sh) and Redis (Debian's redis-server):
# the source of truth netgw reads its inventory and intent from (docs/nautobot.md), and nornir_nautobot
# 5.0.0 + pynautobot 3.2.0, which load the campus (nautobot_campus.py) and give the hosts netgw's
# are compared with.
#
#   scripts/peers/nautobot.sh install     idempotent: redis-server and PostgreSQL (apt, only when
#                                         missing), venvs .peers/venv-nautobot (nautobot) and
#                                         .peers/venv-nornir-nautobot (nornir_nautobot, pynautobot),
#                                         then one `nautobot-server migrate` into a throwaway cluster,
#                                         dumped to .peers/nautobot-cache/ (every start restores it).
#   scripts/peers/nautobot.sh start DIR   a fresh Nautobot in DIR: PostgreSQL (DIR/pg, the migrated
#                                         dump restored), Redis on a free 127.0.0.1 port,
#                                         DIR/nautobot_config.py, a fresh API token (SQL, never
#                                         printed), `nautobot-server runserver` on a free 127.0.0.1
#                                         port, and `nautobot-server celery worker` (it sends the
#                                         webhooks), failing when it does not say ready.
#                                         Writes DIR/nautobot.env (shell syntax, 0600):
#                                         NAUTOBOT_URL NAUTOBOT_TOKEN NAUTOBOT_PID REDIS_PORT NAUTOBOT_DIR
#   NETGW_PEER_WATCH_PID=PID: also stop everything when process PID exits (see watch_parent)
#   scripts/peers/nautobot.sh stop DIR    stop the worker, Nautobot, Redis and PostgreSQL
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
NAUTOBOT_VERSION=2.4.44
VENV="$PEERS/venv-nautobot"
CLIENT_VENV="$PEERS/venv-nornir-nautobot"
CACHE="$PEERS/nautobot-cache"
DUMP="$CACHE/nautobot-$NAUTOBOT_VERSION.sql"
PG="$ROOT/scripts/peers/postgres.sh"

pg_bin() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/pg_dump" ] && { echo "$d"; return 0; }
    done
    return 1
}

install() {
    command -v redis-server >/dev/null || apt_install redis-server
    command -v curl >/dev/null || apt_install curl
    bash "$PG" install
    venv_install nautobot "$VENV" 'import nautobot, psycopg2, django_redis' \
        "nautobot==$NAUTOBOT_VERSION"
    [ -s "$DUMP" ] || migrate_once
    venv_install nornir_nautobot "$CLIENT_VENV" 'import nornir_nautobot, pynautobot' \
        nornir-nautobot==5.0.0 pynautobot==3.2.0
}

# The migrated database, dumped to $DUMP: `migrate` costs minutes, restoring the dump a second.
migrate_once() {
    local tmp
    tmp="$(mktemp -d)"
    # shellcheck disable=SC2064
    trap "stop_all '$tmp'; rm -rf '$tmp'" EXIT
    backends "$tmp"
    configure "$tmp" "$(free_port)"
    echo "nautobot: migrating a new database (once; cached in $CACHE)"
    "$VENV/bin/nautobot-server" --config="$tmp/nautobot_config.py" migrate --no-input \
        >"$tmp/migrate.log" 2>&1 || { tail -30 "$tmp/migrate.log" >&2; exit 1; }
    DJANGO_SUPERUSER_PASSWORD="$(python3 -c 'import secrets; print(secrets.token_hex(16))')" \
        "$VENV/bin/nautobot-server" --config="$tmp/nautobot_config.py" createsuperuser --no-input \
        --username netgw --email netgw@example.invalid >/dev/null
    mkdir -p "$CACHE"
    # shellcheck disable=SC1091
    . "$tmp/pg/postgres.env"
    PGPASSWORD="$PG_PASSWORD" "$(pg_bin)/pg_dump" -h 127.0.0.1 -p "$PG_PORT" -U netgw --no-owner \
        --no-privileges netgw >"$DUMP.tmp"
    mv "$DUMP.tmp" "$DUMP"
    echo "nautobot: migrated database cached in $DUMP"
}

# PostgreSQL in DIR/pg and Redis on a free port (DIR/redis.port).
backends() {
    local dir="$1" port
    # As root the cluster runs as the postgres user, who must reach DIR/pg (postgres.sh opens DIR/pg).
    if [ "$(id -u)" = 0 ]; then chmod 0711 "$dir"; fi
    bash "$PG" start "$dir/pg" >/dev/null
    port="$(free_port)"
    mkdir -p "$dir/redis"
    redis-server --bind 127.0.0.1 --port "$port" --daemonize yes --dir "$dir/redis" \
        --pidfile "$dir/redis/redis.pid" --logfile "$dir/redis/redis.log" --save '' --appendonly no \
        >/dev/null
    echo "$port" >"$dir/redis.port"
    for _ in $(seq 1 100); do
        [ -s "$dir/redis/redis.pid" ] && break
        sleep 0.05
    done
}

# DIR/nautobot_config.py: Nautobot's own settings, pointed at DIR's PostgreSQL and Redis.
configure() {
    local dir="$1" port="$2"
    # shellcheck disable=SC1091
    . "$dir/pg/postgres.env"
    local redis_port secret
    redis_port="$(cat "$dir/redis.port")"
    secret="$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
    cat >"$dir/nautobot_config.py" <<PY
import os
os.environ.setdefault("NAUTOBOT_ROOT", "$dir/root")
from nautobot.core.settings import *  # noqa: F401,F403

ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
SECRET_KEY = "$secret"
DEBUG = False
DATABASES = {"default": {
    "NAME": "$PG_DATABASE", "USER": "$PG_USER", "PASSWORD": "$PG_PASSWORD",
    "HOST": "127.0.0.1", "PORT": "$PG_PORT", "ENGINE": "django.db.backends.postgresql",
    "CONN_MAX_AGE": 300,
}}
CACHES = {"default": {
    "BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://127.0.0.1:$redis_port/0",
    "TIMEOUT": 300, "OPTIONS": {"CLIENT_CLASS": "django_redis.client.DefaultClient"},
}}
CELERY_BROKER_URL = "redis://127.0.0.1:$redis_port/1"
MEDIA_ROOT = "$dir/root/media"
STATIC_ROOT = "$dir/root/static"
GIT_ROOT = "$dir/root/git"
JOBS_ROOT = "$dir/root/jobs"
INSTALLATION_METRICS_ENABLED = False
# The suite's runs are short: no update checks, no telemetry.
RELEASE_CHECK_URL = None
# Webhooks to netgw serve on 127.0.0.1 (the suite's only network): nautobot_loopback_webhooks.py.
import sys
sys.path.insert(0, "$ROOT/scripts/peers")
INSTALLED_APPS.append("nautobot_loopback_webhooks.LoopbackWebhooks")
PY
    chmod 0600 "$dir/nautobot_config.py"
    mkdir -p "$dir/root/media" "$dir/root/static" "$dir/root/git" "$dir/root/jobs"
    echo "$port" >"$dir/nautobot.port"
}

watch_all() {
    local dir="$1" watched="${NETGW_PEER_WATCH_PID:-}"
    [ -n "$watched" ] || return 0
    (
        while kill -0 "$watched" 2>/dev/null && [ -f "$dir/nautobot.pid" ]; do sleep 1; done
        stop_all "$dir" >/dev/null 2>&1 || true
        # The test that started it is gone, and with it whoever would have removed DIR.
        kill -0 "$watched" 2>/dev/null || rm -rf "$dir"
    ) </dev/null >/dev/null 2>&1 &
}

start() {
    local dir="${1:?usage: start DIR}"
    [ -s "$DUMP" ] || { echo "Nautobot not installed: run $0 install" >&2; exit 1; }
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    backends "$dir"
    # shellcheck disable=SC1091
    . "$dir/pg/postgres.env"
    local psql=("$(pg_bin)/psql" -h 127.0.0.1 -p "$PG_PORT" -U netgw -d netgw -qAt -v ON_ERROR_STOP=1)
    PGPASSWORD="$PG_PASSWORD" "${psql[@]}" -1 -f "$DUMP" >/dev/null
    # A token of this start only, inserted as Nautobot's Token model stores it (the key in clear).
    local token
    token="$(python3 -c 'import secrets; print(secrets.token_hex(20))')"
    PGPASSWORD="$PG_PASSWORD" "${psql[@]}" -c "INSERT INTO users_token (id, user_id, created, key,
        write_enabled, description) SELECT gen_random_uuid(), id, now(), '$token', true, 'netgw tests'
        FROM auth_user WHERE username = 'netgw'" >/dev/null
    # A free port can be taken by someone else before runserver binds it: then it exits at once
    # saying so, and the next attempt takes another port.
    local attempt url
    for attempt in 1 2 3; do
        url="$(serve_once "$dir" "$token")" && { start_worker "$dir"; return 0; }
        grep -q "already in use" "$dir/nautobot.log" 2>/dev/null || break
        echo "nautobot: port taken (attempt $attempt), trying another" >&2
    done
    echo "nautobot: did not answer on ${url:-its port}:" >&2
    tail -30 "$dir/nautobot.log" >&2
    stop_all "$dir"
    exit 1
}

# runserver on a free port until it answers (prints its URL) or exits; writes DIR/nautobot.env.
serve_once() {
    local dir="$1" token="$2" port
    port="$(free_port)"
    configure "$dir" "$port"
    nohup "$VENV/bin/nautobot-server" --config="$dir/nautobot_config.py" runserver --noreload \
        --skip-checks "127.0.0.1:$port" >"$dir/nautobot.log" 2>&1 </dev/null &
    echo $! >"$dir/nautobot.pid"
    watch_all "$dir"
    local url="http://127.0.0.1:$port"
    # Django loads Nautobot's apps for ~20 s on an idle 2-core machine, minutes on a loaded one.
    local deadline=$((SECONDS + 300))
    while [ "$SECONDS" -lt "$deadline" ]; do
        if curl -sf -o /dev/null -H "Authorization: Token $token" "$url/api/status/"; then
            cat >"$dir/nautobot.env" <<ENV
NAUTOBOT_URL=$url
NAUTOBOT_TOKEN=$token
NAUTOBOT_PID=$(cat "$dir/nautobot.pid")
REDIS_PORT=$(cat "$dir/redis.port")
NAUTOBOT_DIR=$dir
ENV
            chmod 0600 "$dir/nautobot.env"
            echo "nautobot: ready on $url (pid $(cat "$dir/nautobot.pid"))" >&2
            echo "$url"
            return 0
        fi
        kill -0 "$(cat "$dir/nautobot.pid")" 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}

# The Celery worker that delivers webhooks (Nautobot enqueues each one in Redis; without a worker
# none is ever sent), until it says it is ready; else everything stops and start fails.
start_worker() {
    local dir="$1"
    nohup "$VENV/bin/nautobot-server" --config="$dir/nautobot_config.py" celery worker --pool solo \
        --concurrency 1 --loglevel INFO --without-gossip --without-mingle --without-heartbeat \
        >"$dir/celery.log" 2>&1 </dev/null &
    echo $! >"$dir/celery.pid"
    local deadline=$((SECONDS + 300))
    while [ "$SECONDS" -lt "$deadline" ]; do
        if grep -q " ready\.$" "$dir/celery.log" 2>/dev/null; then
            echo "nautobot: celery worker ready (pid $(cat "$dir/celery.pid"))" >&2
            return 0
        fi
        kill -0 "$(cat "$dir/celery.pid")" 2>/dev/null || break
        sleep 0.2
    done
    echo "nautobot: the celery worker did not come up (webhooks would never be sent):" >&2
    tail -30 "$dir/celery.log" >&2
    stop_all "$dir"
    exit 1
}

stop_all() {
    local dir="$1" pid
    for f in "$dir/celery.pid" "$dir/nautobot.pid" "$dir/redis/redis.pid"; do
        if [ -s "$f" ]; then
            pid="$(cat "$f")"
            kill "$pid" 2>/dev/null || true
            rm -f "$f"
        fi
    done
    bash "$PG" stop "$dir/pg" >/dev/null 2>&1 || true
}

case "${1:-}" in
    install) install ;;
    start) shift; start "$@" ;;
    stop) shift; stop_all "${1:?usage: stop DIR}" ;;
    *) echo "usage: $0 install | start DIR | stop DIR" >&2; exit 2 ;;
esac
