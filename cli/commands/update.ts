/**
 * `engine update`: change the resource limits and the restart policy of containers, printing
 * each name as given once updated; the daemon's warnings follow, failures make the status 1.
 * The body is every field of the Docker CLI's, unset ones as it sends them.
 */
import { ExitError, type Command } from "../command.js";
import { ConfigError, restartPolicy } from "../container/container-config.js";
import { parseBytes, parseNanoCpus, parseUint } from "../container/units.js";
import { readEach, type FlagSpec } from "../flags.js";

const FLAGS: FlagSpec[] = [
  { name: "blkio-weight", type: "string", valueName: "uint16", description: "Block IO (relative weight), between 10 and 1000, or 0 to disable (default 0)" },
  { name: "cpu-period", type: "int", description: "Limit CPU CFS (Completely Fair Scheduler) period" },
  { name: "cpu-quota", type: "int", description: "Limit CPU CFS (Completely Fair Scheduler) quota" },
  { name: "cpu-rt-period", type: "int", description: "Limit the CPU real-time period in microseconds" },
  { name: "cpu-rt-runtime", type: "int", description: "Limit the CPU real-time runtime in microseconds" },
  { name: "cpu-shares", short: "c", type: "int", description: "CPU shares (relative weight)" },
  { name: "cpus", type: "string", valueName: "decimal", description: "Number of CPUs" },
  { name: "cpuset-cpus", type: "string", description: "CPUs in which to allow execution (0-3, 0,1)" },
  { name: "cpuset-mems", type: "string", description: "MEMs in which to allow execution (0-3, 0,1)" },
  { name: "kernel-memory", type: "string", valueName: "bytes", description: "Kernel memory limit (deprecated)", hidden: true },
  { name: "memory", short: "m", type: "string", valueName: "bytes", description: "Memory limit" },
  { name: "memory-reservation", type: "string", valueName: "bytes", description: "Memory soft limit" },
  { name: "memory-swap", type: "string", valueName: "bytes", description: "Swap limit equal to memory plus swap: -1 to enable unlimited swap" },
  { name: "pids-limit", type: "int", description: "Tune container pids limit (set -1 for unlimited)" },
  { name: "restart", type: "string", description: "Restart policy to apply when a container exits" },
];

export const command: Command = {
  usage: "[OPTIONS] CONTAINER [CONTAINER...]",
  flags: FLAGS,
  args: { min: 1 },
  async run(ctx, { flags, given, args }) {
    /** A flag's value through `read` when given, else `unset`; a bad value is pflag's usage error. */
    const value = <T>(name: string, read: (v: string) => T, unset: T): T => {
      if (!given.has(name)) return unset;
      const spec = FLAGS.find((f) => f.name === name)!;
      return readEach([String(flags[name])], spec.short ? `-${spec.short}, --${name}` : `--${name}`, read)[0];
    };
    const body = {
      CpuShares: flags["cpu-shares"],
      Memory: value("memory", parseBytes, 0),
      NanoCpus: value("cpus", parseNanoCpus, 0),
      CgroupParent: "",
      BlkioWeight: value("blkio-weight", (v) => parseUint(v, 16), 0),
      BlkioWeightDevice: null,
      BlkioDeviceReadBps: null,
      BlkioDeviceWriteBps: null,
      BlkioDeviceReadIOps: null,
      BlkioDeviceWriteIOps: null,
      CpuPeriod: flags["cpu-period"],
      CpuQuota: flags["cpu-quota"],
      CpuRealtimePeriod: flags["cpu-rt-period"],
      CpuRealtimeRuntime: flags["cpu-rt-runtime"],
      CpusetCpus: flags["cpuset-cpus"],
      CpusetMems: flags["cpuset-mems"],
      Devices: null,
      DeviceCgroupRules: null,
      DeviceRequests: null,
      MemoryReservation: value("memory-reservation", parseBytes, 0),
      MemorySwap: value("memory-swap", (v) => (v === "-1" ? -1 : parseBytes(v)), 0),
      MemorySwappiness: null,
      OomKillDisable: null,
      // 0 is "not set" for the Docker CLI
      PidsLimit: flags["pids-limit"] !== 0 ? flags["pids-limit"] : null,
      Ulimits: null,
      CpuCount: 0,
      CpuPercent: 0,
      IOMaximumIOps: 0,
      IOMaximumBandwidth: 0,
      RestartPolicy: { Name: "", MaximumRetryCount: 0 },
    };
    value("kernel-memory", parseBytes, 0);
    if (given.size === 0) throw new ExitError(1, "you must provide one or more flags when using this command");
    if (flags.restart !== "") {
      try {
        body.RestartPolicy = restartPolicy(String(flags.restart));
      } catch (e) {
        if (e instanceof ConfigError) throw new ExitError(1, e.message);
        throw e;
      }
    }
    const conn = ctx.connection();
    const warnings: string[] = [];
    const errors: string[] = [];
    for (const name of args) {
      try {
        const res = await conn.json<{ Warnings?: string[] | null }>("POST", `/containers/${encodeURIComponent(name)}/update`, { json: body });
        ctx.stdout(`${name}\n`);
        warnings.push(...(res?.Warnings ?? []));
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    if (warnings.length) ctx.stdout(`${warnings.join("\n")}\n`);
    if (errors.length) throw new ExitError(1, errors.join("\n"));
    return 0;
  },
};
