#!/usr/bin/env python3
"""A private one-node Slurm cluster on localhost, in a temporary directory, for tests.

  with SlurmCluster() as cluster:              # raises SlurmUnavailable if it cannot start
      subprocess.run(["sbatch", ...], env=cluster.env)

Starts its own munged (a generated key, its socket in the directory), slurmctld and slurmd (a
generated slurm.conf with free non-default ports, state and spool directories and logs in the
directory), all in the foreground as children of this process, with a marker in their environment
(and in `env`, for what the test starts). On exit (also on an exception) it cancels the cluster's
jobs, stops the daemons and ends any process still carrying the marker (a job step's slurmstepd,
which detaches from slurmd), by pid, then removes the directory. Should this process die without
exiting (SIGKILL: a harness's timeout), a watchdog process does the same. Needs Debian's
slurm-wlm and munge (scripts/setup.sh installs them) and root (slurmd starts jobs as their users).

Run alone (`slurm_cluster.py`), it starts the cluster, runs `sinfo` and a one-task job, and stops.
"""
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

MARKER = "FABRICSIM_SLURM_TEST_CLUSTER"


def marked_pids(token):
    """Processes carrying a cluster's marker: its daemons, and everything they or the test started
    with the cluster's environment (sbatch, a sweep, job steps that detached from slurmd)."""
    pids = []
    needle = f"{MARKER}={token}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    pids.append(int(entry))
        except OSError:
            pass
    return pids


def end_marked(token, grace=1.0):
    """SIGTERM to the marked processes, then SIGKILL to those still there after `grace` s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = marked_pids(token)
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if not pids:
            return
        if sig == signal.SIGTERM:
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and marked_pids(token):
                time.sleep(0.1)


def watchdog(parent, token, directory):
    """Run in a process of its own: once `parent` (the test) is gone without stopping the cluster
    (killed by SIGKILL, say), stops what is left of it and removes its directory."""
    while os.path.isdir(directory):
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            end_marked(token, grace=3.0)
            shutil.rmtree(directory, ignore_errors=True)
            return
        time.sleep(0.5)


def _die_with_parent():
    """In a daemon before it execs: SIGTERM when this (the test's) process dies, even by SIGKILL
    (a test harness's timeout), so that no daemon outlives the test."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class SlurmUnavailable(Exception):
    """The cluster could not be started: the message says why (and what to install)."""


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_hardware():
    """`slurmd -C`'s description of this machine (CPUs, sockets, cores, memory), so that the node
    registers without being drained for a mismatch."""
    p = subprocess.run(["slurmd", "-C"], capture_output=True, text=True)
    fields = {}
    for word in p.stdout.split():
        if "=" in word:
            k, v = word.split("=", 1)
            fields[k] = v
    keep = ["CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore"]
    hw = " ".join(f"{k}={fields[k]}" for k in keep if k in fields)
    if "CPUs" not in fields:
        raise SlurmUnavailable(f"slurmd -C did not describe this node: {p.stdout}{p.stderr}")
    return hw, int(fields["CPUs"])


class SlurmCluster:
    def __init__(self, start_timeout=30.0):
        self.start_timeout = start_timeout
        self.dir = None
        self.procs = []
        self.token = secrets.token_hex(8)
        self.env = None
        self.partition = "fabricsim"
        self.cpus = 0
        self.watchdog = None

    # --- start ----------------------------------------------------------------------------------

    def __enter__(self):
        missing = [t for t in ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel",
                               "sinfo") if shutil.which(t) is None and
                   not os.path.exists(os.path.join("/usr/sbin", t))]
        if missing:
            raise SlurmUnavailable(
                f"Slurm is not installed ({', '.join(missing)} not found): install Debian's "
                "slurm-wlm and munge (scripts/setup.sh does: apt-get install slurm-wlm munge)")
        if os.geteuid() != 0:
            raise SlurmUnavailable("the private Slurm cluster needs root (slurmd runs jobs as "
                                   "their users); run the test as root, as CI does")
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _path(self, *parts):
        return os.path.join(self.dir, *parts)

    def _spawn(self, name, cmd):
        log = open(self._path(f"{name}.stdout"), "w")
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=self.env, start_new_session=True, preexec_fn=_die_with_parent)
        log.close()
        self.procs.append((name, p))
        return p

    def _log_tail(self, name, lines=15):
        out = []
        for f in (f"{name}.stdout", f"{name}.log"):
            try:
                with open(self._path(f), errors="replace") as fh:
                    out += fh.read().splitlines()[-lines:]
            except OSError:
                pass
        return "\n".join(out)

    def _wait_for(self, what, check, name):
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if check():
                return
            for n, p in self.procs:
                if p.poll() is not None:
                    raise SlurmUnavailable(f"{n} exited with {p.returncode} while waiting for "
                                           f"{what}:\n{self._log_tail(n)}")
            time.sleep(0.2)
        raise SlurmUnavailable(f"timed out after {self.start_timeout:g} s waiting for {what}:\n"
                               f"{self._log_tail(name)}")

    def _start(self):
        self.dir = tempfile.mkdtemp(prefix="fabricsim-slurm-")
        os.chmod(self.dir, 0o700)  # munged refuses directories others can write to
        for d in ("munge", "state", "spool"):
            os.makedirs(self._path(d), mode=0o700)
        # munge: a fresh random key, readable by its owner only
        key = self._path("munge", "munge.key")
        with open(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            f.write(secrets.token_bytes(1024))
        sock = self._path("munge", "munge.socket")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        self.env["SLURM_CONF"] = self._path("slurm.conf")
        self.env["PATH"] = self.env.get("PATH", "/usr/bin:/bin") + ":/usr/sbin:/sbin"
        self.env[MARKER] = self.token
        # Should this process die without stopping the cluster (SIGKILL), the watchdog does.
        self.watchdog = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--watchdog",
                                          str(os.getpid()), self.token, self.dir],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True)
        self._spawn("munged", ["munged", "--foreground", "--force", f"--socket={sock}",
                               f"--key-file={key}", f"--pid-file={self._path('munge', 'pid')}",
                               f"--log-file={self._path('munged.log')}",
                               f"--seed-file={self._path('munge', 'seed')}"])
        self._wait_for("munged's socket", lambda: os.path.exists(sock), "munged")

        hw, self.cpus = node_hardware()
        ctld_port, slurmd_port = free_port(), free_port()
        conf = f"""# Generated by testbenches/sweep/slurm_cluster.py: a private one-node test cluster.
ClusterName=fabricsimtest{self.token[:6]}
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
StateSaveLocation={self._path('state')}
SlurmdSpoolDir={self._path('spool')}
SlurmctldPidFile={self._path('slurmctld.pid')}
SlurmdPidFile={self._path('slurmd.pid')}
SlurmctldLogFile={self._path('slurmctld.log')}
SlurmdLogFile={self._path('slurmd.log')}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=30
NodeName=localhost NodeAddr=127.0.0.1 {hw} State=UNKNOWN
PartitionName={self.partition} Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""
        with open(self._path("slurm.conf"), "w") as f:
            f.write(conf)
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", self._path("slurm.conf")])
        self._wait_for("slurmctld to answer", lambda: self._run(["sinfo", "-h"]).returncode == 0,
                       "slurmctld")
        self._spawn("slurmd", ["slurmd", "-D", "-N", "localhost", "-f", self._path("slurm.conf")])

        def node_up():
            p = self._run(["sinfo", "-h", "-N", "-o", "%T"])
            state = p.stdout.strip()
            if state.startswith(("drain", "down")) and "*" not in state:
                raise SlurmUnavailable(f"the test node is {state}:\n{self._log_tail('slurmd')}\n"
                                       f"{self._log_tail('slurmctld')}")
            return p.returncode == 0 and state in ("idle", "mixed", "allocated")
        self._wait_for("the node to be idle", node_up, "slurmd")

    def _run(self, cmd, timeout=20):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, env=self.env,
                                  stdin=subprocess.DEVNULL, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(cmd, 124, e.stdout or "", e.stderr or "")

    # --- stop -----------------------------------------------------------------------------------

    def marked_pids(self):
        return marked_pids(self.token)

    def __exit__(self, *exc):
        if self.dir is None:
            return False
        if any(n == "slurmctld" and p.poll() is None for n, p in self.procs):
            self._run(["scancel", f"--partition={self.partition}"], timeout=10)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                p = self._run(["squeue", "-h"], timeout=5)
                if p.returncode != 0 or not p.stdout.strip():
                    break
                time.sleep(0.3)
        for name, p in reversed(self.procs):  # slurmd, slurmctld, then munged
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        end_marked(self.token)  # job steps that outlived slurmd
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None
        if self.watchdog is not None:  # it sees the directory gone and ends
            try:
                self.watchdog.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.watchdog.kill()
                self.watchdog.wait()
        return False


if __name__ == "__main__":
    if sys.argv[1:2] == ["--watchdog"]:
        watchdog(int(sys.argv[2]), sys.argv[3], sys.argv[4])
        sys.exit(0)
    try:
        with SlurmCluster() as c:
            print(c._run(["sinfo"]).stdout)
            p = c._run(["sbatch", "--wait", "--parsable", f"--output={c.dir}/hello.out",
                        "--wrap", "echo hello from $SLURM_JOB_ID"], timeout=60)
            print("sbatch:", p.returncode, p.stdout.strip(), p.stderr.strip())
            with open(os.path.join(c.dir, "hello.out")) as f:
                print(f.read().strip())
    except SlurmUnavailable as e:
        print(f"slurm_cluster: {e}", file=sys.stderr)
        sys.exit(1)
