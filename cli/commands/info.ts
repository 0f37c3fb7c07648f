/** `engine info`: the daemon's system-wide information, as `docker info` shows it. */
import type { SystemInfo } from "../../core/system-info.js";
import type { Command } from "../command.js";

function bytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${Math.round(v * 100) / 100}${units[i]}`;
}

export const command: Command = {
  usage: "[OPTIONS]",
  flags: [],
  args: { max: 0 },
  async run(ctx) {
    const i = await ctx.connection().getJson<SystemInfo>("/info");
    const lines = [
      "Server:",
      ` Containers: ${i.Containers}`,
      `  Running: ${i.ContainersRunning}`,
      `  Paused: ${i.ContainersPaused}`,
      `  Stopped: ${i.ContainersStopped}`,
      ` Images: ${i.Images}`,
      ` Server Version: ${i.ServerVersion}`,
      ` Storage Driver: ${i.Driver}`,
      ...i.DriverStatus.map(([k, v]) => `  ${k}: ${v}`),
      ` Logging Driver: ${i.LoggingDriver}`,
      ` Cgroup Driver: ${i.CgroupDriver}`,
      ` Cgroup Version: ${i.CgroupVersion}`,
      ` Authorization: ${(i.Plugins.Authorization ?? []).join(" ")}`,
      ` Runtimes: ${Object.keys(i.Runtimes).join(" ")}`,
      ` Default Runtime: ${i.DefaultRuntime}`,
      ` Kernel Version: ${i.KernelVersion}`,
      ` Operating System: ${i.OperatingSystem}`,
      ` OSType: ${i.OSType}`,
      ` Architecture: ${i.Architecture}`,
      ` CPUs: ${i.NCPU}`,
      ` Total Memory: ${bytes(i.MemTotal)}`,
      ` Name: ${i.Name}`,
      ` ID: ${i.ID}`,
      ` Engine Root Dir: ${i.DockerRootDir}`,
      ` Debug Mode: ${i.Debug}`,
      ...(i.Labels.length ? [" Labels:", ...i.Labels.map((l) => `  ${l}`)] : []),
      ` Experimental: ${i.ExperimentalBuild}`,
      ` Live Restore Enabled: ${i.LiveRestoreEnabled}`,
      "",
      ...i.Warnings,
    ];
    ctx.stdout(lines.join("\n") + "\n");
    return 0;
  },
};
