"""The deployment's topology on one machine, for `ops/cluster` and the fault suite: one etcd
member or three (the DCS), two PostgreSQL 15 nodes under Patroni (a primary and a synchronous standby,
`synchronous_mode_strict`, no pg_rewind), WAL archived as it is written to an encrypted
pgBackRest repository, haproxy in front (the primary through Patroni's `/primary` check, the
replicas through `/replica`, the API through each `serve`'s `/readyz`), and `serve` processes.

Everything lives in one folder (`Topology.dir`): the processes' data, configuration, logs and pid
files, `cluster.json` (ports and paths; no secret) and `secrets.json` (0600: the database roles'
passwords, the repository's cipher key, the first admin's token). PostgreSQL, Patroni, etcd and
pgBackRest run as the `postgres` user when this runs as root, so the folder must be one that user
can reach (by default under its home).
"""
import base64
import json
import os
import pwd
import secrets as random
import shutil
import signal
import socket
import subprocess
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STANZA = "backoffice"
DATABASE = "backoffice"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bin():
    found = shutil.which("pg_ctl")
    if found:
        return os.path.dirname(os.path.realpath(found))
    versions = sorted(os.listdir("/usr/lib/postgresql"), key=lambda v: int(v) if v.isdigit() else 0)
    return f"/usr/lib/postgresql/{versions[-1]}/bin"


def default_dir(name="default"):
    """Where a topology lives: under the postgres user's home when root (a clone in root's private
    home cannot be reached by that user), else in the checkout's `.cluster/`."""
    if os.geteuid() == 0:
        return os.path.join(pwd.getpwnam("postgres").pw_dir, "backoffice-cluster", name)
    return os.path.join(ROOT, ".cluster", name)


def http_status(url, timeout=1.0):
    """The status of a GET (0 when nothing answered)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except (OSError, ValueError):
        return 0


def wait_for(what, predicate, seconds=60, interval=0.25):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise SystemExit(f"timed out after {seconds} s waiting for {what}")


class Topology:
    """One deployment's processes and files; `up` makes and starts it, `down` stops it."""

    def __init__(self, dir, bin=None, servers=2, etcd=1):
        self.dir = os.path.abspath(dir)
        self.bin = bin
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.pg_bin = pg_bin()
        state = os.path.join(self.dir, "cluster.json")
        if os.path.exists(state):
            self.state = json.load(open(state))
            self.secrets = json.load(open(os.path.join(self.dir, "secrets.json")))
        else:
            ports = {name: free_port() for name in ("etcd", "etcd_peer", "haproxy_primary", "haproxy_replica", "haproxy_api",
                                                    "haproxy_stats")}
            nodes = [{"name": f"pg{i}", "port": free_port(), "rest": free_port()} for i in (1, 2)]
            serves = [{"name": f"serve{i}", "port": free_port(), "metrics": free_port()} for i in range(1, servers + 1)]
            members = [{"name": "etcd1", "client": ports["etcd"], "peer": ports["etcd_peer"]}]
            members += [{"name": f"etcd{i}", "client": free_port(), "peer": free_port()} for i in range(2, etcd + 1)]
            self.state = {"dir": self.dir, "ports": ports, "nodes": nodes, "serves": serves, "etcd": members}
            self.secrets = {
                "superuser": random.token_urlsafe(24), "replicator": random.token_urlsafe(24), "app": random.token_urlsafe(24),
                "repository_cipher": random.token_urlsafe(48), "second_factor_key": base64.b64encode(os.urandom(32)).decode(),
            }

    # Paths and addresses

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    @property
    def ports(self):
        return self.state["ports"]

    @property
    def nodes(self):
        return self.state["nodes"]

    @property
    def serves(self):
        return self.state["serves"]

    @property
    def etcd_members(self):
        """The DCS's members (one, or three for a quorum that outlives one), each with its client
        and peer ports; its process is `etcd` when alone, else its own name."""
        members = self.state.get("etcd") or [{"name": "etcd1", "client": self.ports["etcd"], "peer": self.ports["etcd_peer"]}]
        return [dict(m, process="etcd" if len(members) == 1 else m["name"]) for m in members]

    def url(self, role, port=None, database=DATABASE):
        port = port or self.ports["haproxy_primary"]
        user, password = {"owner": ("postgres", self.secrets["superuser"]), "app": ("backoffice_app", self.secrets["app"])}[role]
        return f"postgres://{user}:{password}@127.0.0.1:{port}/{database}?sslmode=disable"

    @property
    def api(self):
        return f"http://127.0.0.1:{self.ports['haproxy_api']}"

    def save(self):
        os.makedirs(self.dir, exist_ok=True)
        with open(self.path("cluster.json"), "w") as f:
            json.dump(self.state, f, indent=2)
        fd = os.open(self.path("secrets.json"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(self.secrets, f, indent=2)

    def own(self, path):
        """Gives `path` to the postgres user (when root), so its processes can write there."""
        if os.geteuid() == 0:
            shutil.chown(path, "postgres", "postgres")

    def folder(self, *parts, mode=0o700):
        path = self.path(*parts)
        os.makedirs(path, mode=mode, exist_ok=True)
        self.own(path)
        return path

    # Processes

    def spawn(self, name, argv, env=None, as_postgres=False, cwd=None):
        """Starts a process in its own session, its output to `logs/<name>.log`, its pid kept."""
        log = open(self.path("logs", f"{name}.log"), "a")
        full = (self.as_postgres if as_postgres else []) + argv
        process = subprocess.Popen(full, stdout=log, stderr=log, env=dict(os.environ, **(env or {})), cwd=cwd or self.dir,
                                   start_new_session=True)
        with open(self.path("run", f"{name}.pid"), "w") as f:
            f.write(str(process.pid))
        return process

    def log_tail(self, name, lines=20):
        """The last `lines` lines of a process's log (`logs/<name>.log`), to name what a failed check saw."""
        try:
            with open(self.path("logs", f"{name}.log"), errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def pid(self, name):
        try:
            return int(open(self.path("run", f"{name}.pid")).read())
        except (OSError, ValueError):
            return None

    def alive(self, name):
        pid = self.pid(name)
        if not pid:
            return False
        try:
            # Reaps it when it is this process's own child that has ended (a zombie still answers
            # kill 0); another process's child is reaped by init.
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return False
        except ChildProcessError:
            pass
        try:
            os.kill(pid, 0)
            return True
        except OSError:
            return False

    def stop(self, name, sig=signal.SIGTERM, seconds=30):
        """Signals the process's whole session and waits for it to end."""
        pid = self.pid(name)
        if not pid or not self.alive(name):
            return
        try:
            os.killpg(pid, sig)
        except OSError:
            os.kill(pid, sig)
        deadline = time.time() + seconds
        while time.time() < deadline and self.alive(name):
            time.sleep(0.1)
        if self.alive(name):
            os.killpg(pid, signal.SIGKILL)

    # etcd

    def start_etcd(self):
        """Starts every member (each with its data under `etcd/`) and waits until each answers
        healthy, which etcd says only once its members have a leader."""
        self.folder("etcd")
        for member in self.etcd_members:
            self.start_etcd_member(member)
        wait_for("etcd", lambda: all(self.etcd_healthy(m) for m in self.etcd_members), seconds=30)

    def start_etcd_member(self, member):
        """Starts one member; one whose data folder is kept rejoins its cluster from it."""
        members = self.etcd_members
        data = self.folder("etcd") if len(members) == 1 else self.folder("etcd", member["name"])
        cluster = ",".join(f"{m['name']}=http://127.0.0.1:{m['peer']}" for m in members)
        self.spawn(member["process"], [
            "etcd", "--name", member["name"], "--data-dir", data,
            "--listen-client-urls", f"http://127.0.0.1:{member['client']}", "--advertise-client-urls", f"http://127.0.0.1:{member['client']}",
            "--listen-peer-urls", f"http://127.0.0.1:{member['peer']}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{member['peer']}",
            "--initial-cluster", cluster, "--initial-cluster-state", "new",
        ], as_postgres=True)

    def etcd_leader(self):
        """The member etcd's members elected leader (their maintenance status), or None."""
        for member in self.etcd_members:
            try:
                request = urllib.request.Request(f"http://127.0.0.1:{member['client']}/v3/maintenance/status", data=b"{}", method="POST")
                status = json.loads(urllib.request.urlopen(request, timeout=2).read())
            except (OSError, ValueError):
                continue
            if status.get("leader") and status.get("leader") == status.get("header", {}).get("member_id"):
                return member
        return None

    def etcd_healthy(self, member):
        return http_status(f"http://127.0.0.1:{member['client']}/health") == 200

    # pgBackRest

    def pgbackrest_config(self, node=None):
        """The repository's configuration: for a node, its own data folder as pg1 (what
        archive-push and restore read); without one, both nodes (a backup finds the primary)."""
        repo = self.folder("pgbackrest", "repo")
        lines = [
            "[global]", f"repo1-path={repo}", "repo1-cipher-type=aes-256-cbc", "repo1-retention-full=2", "repo1-retention-diff=6",
            f"log-path={self.folder('pgbackrest', 'log')}", f"lock-path={self.folder('pgbackrest', 'lock')}",
            f"spool-path={self.folder('pgbackrest', 'spool')}", "log-level-console=warn", "log-level-file=info",
            "start-fast=y", "archive-timeout=60", "compress-type=lz4", "", f"[{STANZA}]",
        ]
        chosen = [node] if node else self.nodes
        for index, n in enumerate(chosen, start=1):
            lines += [f"pg{index}-path={self.path(n['name'], 'data')}", f"pg{index}-port={n['port']}",
                      f"pg{index}-socket-path={self.path(n['name'])}", f"pg{index}-user=postgres"]
        name = self.path(node["name"], "pgbackrest.conf") if node else self.path("pgbackrest", "pgbackrest.conf")
        with open(name, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.own(name)
        return name

    def pgbackrest_env(self, config):
        """The environment pgBackRest reads its configuration and the repository's key from (so
        the key is in no file but secrets.json and no command line)."""
        return {"PGBACKREST_CONFIG": config, "PGBACKREST_REPO1_CIPHER_PASS": self.secrets["repository_cipher"],
                "PGPASSWORD": self.secrets["superuser"]}

    def pgbackrest(self, *args, check=True):
        config = self.pgbackrest_config()
        return subprocess.run(self.as_postgres + ["env"] + [f"{k}={v}" for k, v in self.pgbackrest_env(config).items()] +
                              ["pgbackrest", f"--stanza={STANZA}"] + list(args),
                              check=check, capture_output=True, text=True, cwd="/")

    # Patroni

    def patroni_config(self, node, restore_to=None):
        """A node's Patroni configuration; with `restore_to` (a time), the cluster is bootstrapped
        by restoring the repository's backup before it and replaying the archive up to it."""
        folder = self.folder(node["name"])
        pitr = ""
        if restore_to:
            pitr = f"""  method: pitr
  pitr:
    command: pgbackrest --stanza={STANZA} --type=time "--target={restore_to}" --target-action=promote restore
    no_params: true
    keep_existing_recovery_conf: true
"""
        self.folder(node["name"], "data")
        config = f"""scope: {STANZA}
name: {node['name']}
restapi:
  listen: 127.0.0.1:{node['rest']}
  connect_address: 127.0.0.1:{node['rest']}
etcd3:
  hosts: {",".join(f"127.0.0.1:{m['client']}" for m in self.etcd_members)}
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 2
    retry_timeout: 4
    maximum_lag_on_failover: 0
    primary_start_timeout: 0
    synchronous_mode: true
    synchronous_mode_strict: true
    postgresql:
      use_pg_rewind: false
      remove_data_directory_on_diverged_timelines: true
      parameters:
        wal_level: replica
        hot_standby: "on"
        max_connections: 200
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 512MB
        archive_mode: "on"
        archive_command: pgbackrest --stanza={STANZA} archive-push %p
        archive_timeout: 10
        password_encryption: scram-sha-256
{pitr}  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - data-checksums
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
postgresql:
  listen: 127.0.0.1:{node['port']}
  connect_address: 127.0.0.1:{node['port']}
  data_dir: {self.path(node['name'], 'data')}
  bin_dir: {self.pg_bin}
  pgpass: {self.path(node['name'], 'pgpass')}
  authentication:
    superuser:
      username: postgres
    replication:
      username: replicator
  parameters:
    unix_socket_directories: {folder}
  create_replica_methods:
    - basebackup
  basebackup:
    - checkpoint: fast
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
"""
        name = self.path(node["name"], "patroni.yml")
        with open(name, "w") as f:
            f.write(config)
        self.own(name)
        return name

    def start_node(self, node, restore_to=None):
        config = self.patroni_config(node, restore_to)
        env = dict(self.pgbackrest_env(self.pgbackrest_config(node)),
                   PATRONI_SUPERUSER_PASSWORD=self.secrets["superuser"], PATRONI_REPLICATION_PASSWORD=self.secrets["replicator"])
        env.pop("PGPASSWORD")
        self.spawn(node["name"], ["patroni", config], env=env, as_postgres=True, cwd="/")

    def role(self, node):
        """`primary`, `replica` (streaming) or None, from Patroni's REST API."""
        base = f"http://127.0.0.1:{node['rest']}"
        if http_status(f"{base}/primary") == 200:
            return "primary"
        if http_status(f"{base}/replica") == 200:
            return "replica"
        return None

    def primary(self):
        return next((n for n in self.nodes if self.role(n) == "primary"), None)

    def synchronous(self):
        """The node Patroni names the synchronous standby (`/sync` answers 200), or None."""
        return next((n for n in self.nodes if http_status(f"http://127.0.0.1:{n['rest']}/sync") == 200), None)

    def psql(self, sql, port=None, database=DATABASE, user="postgres"):
        psql = f"{self.pg_bin}/psql" if os.path.exists(f"{self.pg_bin}/psql") else "psql"
        out = subprocess.run([psql, "-qAtX", "-h", "127.0.0.1", "-p", str(port or self.ports["haproxy_primary"]), "-U", user,
                              "-d", database, "-v", "ON_ERROR_STOP=1", "-c", sql],
                             check=True, capture_output=True, text=True, env=dict(os.environ, PGPASSWORD=self.secrets["superuser"]))
        return out.stdout.strip()

    # haproxy

    def start_haproxy(self):
        p = self.ports

        def postgres(name, port, check):
            """A PostgreSQL section: every node, in it while Patroni's `check` answers 200."""
            return f"""listen {name}
  mode tcp
  bind 127.0.0.1:{port}
  option httpchk GET {check}
  http-check expect status 200
  default-server inter 1s fall 2 rise 2 on-marked-down shutdown-sessions
""" + "\n".join(f"  server {n['name']} 127.0.0.1:{n['port']} check port {n['rest']}" for n in self.nodes)

        config = f"""global
  maxconn 2000
  pidfile {self.path('run', 'haproxy.pid')}
  stats socket {self.path('run', 'haproxy.sock')} mode 600 level admin
defaults
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  # Patroni's REST answer may take over a second (an etcd election, a busy host): a slow check is not a
  # dead primary, which answers 503 at once (fall 2 × inter 1s).
  timeout check 2s
listen stats
  mode http
  bind 127.0.0.1:{p['haproxy_stats']}
  stats enable
  stats uri /
{postgres("primary", p['haproxy_primary'], "/primary")}
{postgres("replica", p['haproxy_replica'], "/replica")}
listen api
  mode http
  bind 127.0.0.1:{p['haproxy_api']}
  option httpchk GET /readyz
  http-check expect status 200
  option redispatch
  retries 3
  retry-on conn-failure
  timeout server 60s
  default-server inter 500ms fall 1 rise 2
""" + "\n".join(f"  server {s['name']} 127.0.0.1:{s['port']} check" for s in self.serves) + "\n" + "\n".join(
            # When no serve is ready (the database failing over makes every /readyz 503), requests
            # still reach one, which answers its own 503 problem with Retry-After (never haproxy's).
            f"  server {s['name']}-unready 127.0.0.1:{s['port']} backup" for s in self.serves) + "\n"
        name = self.path("haproxy.cfg")
        with open(name, "w") as f:
            f.write(config)
        subprocess.run(["haproxy", "-c", "-q", "-f", name], check=True)
        self.spawn("haproxy", ["haproxy", "-db", "-f", name])

    # serve

    def serve_env(self, serve):
        return {
            "BACKOFFICE_DATABASE_URL": self.url("app"),
            "BACKOFFICE_READ_DATABASE_URL": self.url("app", port=self.ports["haproxy_replica"]),
            "BACKOFFICE_PAYMENTS": "simulated", "BACKOFFICE_MAIL": "log",
            "BACKOFFICE_SECOND_FACTOR_KEY": self.secrets["second_factor_key"],
            "LOG_LEVEL": os.environ.get("CLUSTER_LOG_LEVEL", "warning"),
        }

    def start_serve(self, serve):
        self.spawn(serve["name"], [self.bin, "serve", "--host", "127.0.0.1", "--port", str(serve["port"]),
                                   "--metrics-port", str(serve["metrics"]), "--policies", os.path.join(ROOT, "policies"),
                                   "--trusted-proxy", "127.0.0.1/32"], env=self.serve_env(serve), cwd=ROOT)

    def haproxy(self, command):
        """One command on haproxy's runtime API (its admin socket); its answer."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.connect(self.path("run", "haproxy.sock"))
            connection.sendall(command.encode() + b"\n")
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
        return answer.decode()

    def api_server(self, server):
        """haproxy's statistics of the API's `server` (`show stat`: `scur` its open sessions,
        `status` UP, DOWN or MAINT)."""
        lines = self.haproxy("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",")
        for line in lines[1:]:
            fields = dict(zip(header, line.split(",")))
            if fields.get("pxname") == "api" and fields.get("svname") == server:
                return fields
        return {}

    def restart_serve(self, serve):
        """A rolling restart's step: drain (haproxy sends it nothing new, including on its idle
        connections, and its open requests finish), stop (SIGTERM), start, wait until ready, and
        let haproxy send to it again."""
        names = [serve["name"], f"{serve['name']}-unready"]
        for name in names:
            self.haproxy(f"set server api/{name} state maint")
        wait_for(f"{serve['name']} to drain", lambda: all(self.api_server(name).get("scur") == "0" for name in names),
                 seconds=30, interval=0.05)
        self.stop(serve["name"])
        self.start_serve(serve)
        wait_for(f"{serve['name']} to be ready", lambda: self.ready(serve), seconds=60, interval=0.05)
        for name in names:
            self.haproxy(f"set server api/{name} state ready")
        wait_for(f"haproxy to find {serve['name']} up", lambda: self.api_server(serve["name"]).get("status") == "UP",
                 seconds=30, interval=0.05)

    def postmaster_pid(self, node):
        """The pid of the node's PostgreSQL postmaster (the first line of postmaster.pid)."""
        try:
            return int(open(self.path(node["name"], "data", "postmaster.pid")).readline())
        except (OSError, ValueError):
            return None

    def kill_all(self):
        """Every process of the topology killed at once (SIGKILL), as a lost machine would be."""
        for name in [s["name"] for s in self.serves] + ["haproxy"] + [n["name"] for n in self.nodes] + [m["process"] for m in self.etcd_members]:
            self.stop(name, sig=signal.SIGKILL, seconds=5)
        subprocess.run(["pkill", "-KILL", "-f", self.dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for node in self.nodes:
            pid = self.postmaster_pid(node)
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def ready(self, serve):
        return http_status(f"http://127.0.0.1:{serve['port']}/readyz") == 200

    # The whole topology

    def up(self):
        for part in ("logs", "run"):
            os.makedirs(self.path(part), exist_ok=True)
        self.own(self.dir)
        self.save()
        fresh = not os.path.exists(self.path("pgbackrest", "repo", "backup"))
        self.start_etcd()
        # Either node may lead (the one that did before, after a failover); a fresh one initdb's
        # and the other clones it.
        for node in self.nodes:
            self.start_node(node)
        wait_for("a primary", lambda: self.primary() is not None, seconds=90)
        self.start_front()
        if fresh:
            self.bootstrap()
        self.start_serves()

    def start_front(self):
        """Once a primary leads: waits for its synchronous standby, then starts haproxy and waits
        until it reaches the primary."""
        wait_for("the synchronous standby", lambda: self.synchronous() is not None, seconds=120)
        self.start_haproxy()
        wait_for("haproxy's primary", lambda: self.try_psql("SELECT 1", database="postgres") == "1", seconds=30)

    def start_serves(self):
        """Starts every serve and waits until each is ready and haproxy answers the API."""
        for serve in self.serves:
            self.start_serve(serve)
        wait_for("every serve to be ready", lambda: all(self.ready(s) for s in self.serves), seconds=60)
        wait_for("haproxy's API", lambda: http_status(f"{self.api}/readyz") == 200, seconds=30)

    def try_psql(self, sql, **kwargs):
        try:
            return self.psql(sql, **kwargs)
        except subprocess.CalledProcessError:
            return None

    def bootstrap(self):
        """A fresh cluster's first steps: the database, its migrations (as the owner), the app
        role's password, the repository's stanza and first full backup, the first admin."""
        self.psql(f"CREATE DATABASE {DATABASE}", database="postgres")
        env = dict(os.environ, BACKOFFICE_ADMIN_DATABASE_URL=self.url("owner"))
        subprocess.run([self.bin, "db", "migrate"], check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
        self.psql(f"ALTER ROLE backoffice_app PASSWORD '{self.secrets['app']}'")
        self.pgbackrest("stanza-create")
        self.pgbackrest("--type=full", "backup")
        out = subprocess.run([self.bin, "admin", "bootstrap", "--email", "ops@healthtrack.example"], check=True,
                             capture_output=True, text=True, env=dict(os.environ, BACKOFFICE_DATABASE_URL=self.url("app")), cwd=ROOT)
        self.secrets["admin_token"] = next(line.split(": ", 1)[1] for line in out.stdout.splitlines() if line.startswith("token: "))
        self.save()

    def restore(self, target):
        """Point-in-time recovery of the whole cluster from the pgBackRest repository: every
        process stopped, the nodes' data and the DCS removed, the first node bootstrapped from the
        backup before `target` with the archive replayed up to it (a new timeline), the second
        node cloned from it, then haproxy and the serve processes started. The repository is kept.
        `target` is a time PostgreSQL reads (`2026-11-30 03:41:00+00`)."""
        self.down()
        for part in [node["name"] for node in self.nodes] + ["etcd"]:
            shutil.rmtree(self.path(part), ignore_errors=True)
        for part in ("logs", "run"):
            os.makedirs(self.path(part), exist_ok=True)
        self.start_etcd()
        first, rest = self.nodes[0], self.nodes[1:]
        self.start_node(first, restore_to=target)
        wait_for("the restored node to lead", lambda: self.role(first) == "primary", seconds=300)
        for node in rest:
            self.start_node(node)
        self.start_front()
        # A full backup on the new timeline, so a later restore does not replay across the old one.
        self.pgbackrest("--type=full", "backup")
        self.start_serves()

    def down(self):
        for serve in self.serves:
            self.stop(serve["name"])
        self.stop("haproxy")
        for node in reversed(self.nodes):
            self.stop(node["name"], seconds=60)
        for member in self.etcd_members:
            self.stop(member["process"])

    def status(self):
        lines = [f"folder   {self.dir}", f"api      {self.api} (haproxy; stats http://127.0.0.1:{self.ports['haproxy_stats']}/)"]
        sync = self.synchronous()
        for node in self.nodes:
            role = self.role(node) if self.alive(node["name"]) else None
            tag = " (synchronous)" if sync and sync["name"] == node["name"] else ""
            lines.append(f"{node['name']:8} {role or 'down'}{tag}  port {node['port']}  patroni http://127.0.0.1:{node['rest']}/")
        lines.append(f"primary  127.0.0.1:{self.ports['haproxy_primary']}  replicas 127.0.0.1:{self.ports['haproxy_replica']}")
        for serve in self.serves:
            state = "ready" if self.ready(serve) else ("running" if self.alive(serve["name"]) else "down")
            lines.append(f"{serve['name']:8} {state}  http://127.0.0.1:{serve['port']}/")
        for member in self.etcd_members:
            state = "healthy" if self.etcd_healthy(member) else ("running" if self.alive(member["process"]) else "down")
            lines.append(f"{member['name']:8} {state}  http://127.0.0.1:{member['client']}")
        return "\n".join(lines)
