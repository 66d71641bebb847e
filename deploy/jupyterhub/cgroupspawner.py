"""Each person's server in its own Linux control group, with JupyterHub's standard limits
``Spawner.mem_limit`` and ``Spawner.cpu_limit`` enforced by the kernel.

``CgroupSpawner`` is ``LocalProcessSpawner`` (one Unix process per person, started as that
person) plus, before the server starts, a control group of its own in the cgroup v1
``memory`` and ``cpu`` hierarchies, under the hub's own group:

    /sys/fs/cgroup/memory/<the hub's group>/jupyterhub/<user>   memory.limit_in_bytes
    /sys/fs/cgroup/cpu/<the hub's group>/jupyterhub/<user>      cpu.cfs_quota_us

The server's kernels and terminals are its children, so they are in the same group: a
cell that allocates past ``mem_limit`` is killed by the kernel's OOM killer inside that
group only (the biggest process: the runaway kernel, which Jupyter then restarts), and a
busy loop gets at most ``cpu_limit`` cores. Other people's groups are not touched.
Stopping the server stops whatever is left in its group and removes the group.

This needs root and the v1 controllers (machines without systemd, containers that mount
them). Where systemd runs (cgroup v2, one writer of the tree), use
``jupyterhub-systemdspawner`` instead: it sets the same two traits as systemd's
``MemoryMax`` and ``CPUQuota``.
"""

import os
import signal
import time
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Unicode

CPU_PERIOD = 100_000  # microseconds: the quota is cpu_limit times this, per period


def own_group(controller: str) -> str:
    """The hub's own group in ``controller``'s v1 hierarchy, from /proc/self/cgroup."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    raise RuntimeError(f"this machine has no cgroup v1 '{controller}' hierarchy "
                       "(/proc/self/cgroup does not name it)")


def missing_controllers(root: str = "/sys/fs/cgroup") -> list[str]:
    """The controllers CgroupSpawner needs that this machine does not give it."""
    needed = {"memory": "memory.limit_in_bytes", "cpu": "cpu.cfs_quota_us"}
    return [name for name, probe in needed.items() if not (Path(root) / name / probe).exists()]


class CgroupSpawner(LocalProcessSpawner):
    """LocalProcessSpawner with each server in its own memory and cpu control group."""

    cgroup_root = Unicode("/sys/fs/cgroup", config=True,
                          help="Where the cgroup v1 hierarchies are mounted.")
    cgroup_parent = Unicode("jupyterhub", config=True,
                            help="The group, under the hub's own, that holds one group "
                                 "per server.")

    def cgroups(self) -> list[Path]:
        """This server's group in the memory and the cpu hierarchies."""
        name = self.user.name + (f"-{self.name}" if self.name else "")
        return [Path(self.cgroup_root, controller, own_group(controller).lstrip("/"),
                     self.cgroup_parent, name) for controller in ("memory", "cpu")]

    async def start(self):
        missing = missing_controllers(self.cgroup_root)
        if missing:
            raise RuntimeError(f"CgroupSpawner: no cgroup v1 {' or '.join(missing)} "
                               f"controller under {self.cgroup_root}; where systemd runs, "
                               "use jupyterhub-systemdspawner")
        memory, cpu = self.cgroups()
        for group in (memory, cpu):
            self._remove(group)  # left by a server that died with the hub
            group.mkdir(parents=True)
        if self.mem_limit:
            (memory / "memory.limit_in_bytes").write_text(str(self.mem_limit))
            swap = memory / "memory.memsw.limit_in_bytes"  # memory + swap, if accounted
            if swap.exists():
                swap.write_text(str(self.mem_limit))
        if self.cpu_limit:
            (cpu / "cpu.cfs_period_us").write_text(str(CPU_PERIOD))
            (cpu / "cpu.cfs_quota_us").write_text(str(int(self.cpu_limit * CPU_PERIOD)))
        self.log.info("%s's server in %s and %s (memory %s bytes, %s cores)",
                      self.user.name, memory, cpu, self.mem_limit or "unlimited",
                      self.cpu_limit or "all")
        return await super().start()

    def make_preexec_fn(self, name):
        """Join the groups (as root, in the new process), then become the user."""
        become_user = super().make_preexec_fn(name)
        joins = [str(group / "cgroup.procs") for group in self.cgroups()]

        def preexec():
            for procs in joins:
                with open(procs, "w") as handle:
                    handle.write(str(os.getpid()))
            become_user()

        return preexec

    async def stop(self, now=False):
        await super().stop(now=now)
        for group in self.cgroups():
            self._remove(group)

    def _remove(self, group: Path) -> None:
        """Stop what is left in ``group`` (a kernel the server did not shut down), then
        remove it, and its parent once no other server is in it."""
        if not group.exists():
            return
        deadline = time.monotonic() + 10
        while True:
            for pid in (group / "cgroup.procs").read_text().split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                group.rmdir()
                break
            except OSError as busy:  # until the last process has gone
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{group} still holds processes after SIGKILL") from busy
                time.sleep(0.1)
        try:
            group.parent.rmdir()
        except OSError:
            pass  # another server's group is still in it
