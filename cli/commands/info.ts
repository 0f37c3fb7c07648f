/**
 * `engine info`: the client's and the daemon's system-wide information in `docker info`'s
 * layout. Two lines name the product and so differ from Docker's: the client's Version is the
 * engine client's, and "Docker Root Dir" reads "Engine Root Dir" (the daemon is not Docker;
 * the API field stays DockerRootDir). Everything else is Docker's, label for label.
 */
import { ENGINE_VERSION } from "../../core/version.js";
import type { SystemInfo } from "../../core/system-info.js";
import { ExitError, type Command } from "../command.js";
import { goJson, parseTemplate, struct, TemplateError } from "../format/template.js";
import { bytesSize } from "../../core/go-units.js";

/** Fields of Docker's Info that this daemon's type does not list, and those another daemon may not send; read when present. */
interface MoreInfo extends Omit<SystemInfo, "ContainerdCommit" | "RuncCommit" | "InitCommit"> {
  SystemStatus?: [string, string][] | null;
  ContainerdCommit?: { ID: string };
  RuncCommit?: { ID: string };
  InitCommit?: { ID: string };
  DefaultAddressPools?: { Base: string; Size: number }[] | null;
  ProductLicense?: string;
}

/** Go's fmt.Println of a label and a value. */
const ln = (label: string, value: unknown) => `${label} ${value === null || value === undefined ? "" : String(value)}`;

function serverLines(i: MoreInfo, warn: (t: string) => void): string[] {
  const out: string[] = [];
  const nonEmpty = (label: string, v: string | undefined) => {
    if (v) out.push(ln(label, v));
  };
  out.push(ln(" Containers:", i.Containers), ln("  Running:", i.ContainersRunning), ln("  Paused:", i.ContainersPaused), ln("  Stopped:", i.ContainersStopped), ln(" Images:", i.Images));
  nonEmpty(" Server Version:", i.ServerVersion);
  nonEmpty(" Storage Driver:", i.Driver);
  for (const [k, v] of i.DriverStatus ?? []) out.push(`  ${k}: ${v}`);
  for (const [k, v] of i.SystemStatus ?? []) out.push(` ${k}: ${v}`);
  nonEmpty(" Logging Driver:", i.LoggingDriver);
  nonEmpty(" Cgroup Driver:", i.CgroupDriver);
  nonEmpty(" Cgroup Version:", i.CgroupVersion);
  out.push(" Plugins:", ln("  Volume:", (i.Plugins?.Volume ?? []).join(" ")), ln("  Network:", (i.Plugins?.Network ?? []).join(" ")));
  if (i.Plugins?.Authorization?.length) out.push(ln("  Authorization:", i.Plugins.Authorization.join(" ")));
  out.push(ln("  Log:", (i.Plugins?.Log ?? []).join(" ")));
  if (i.CDISpecDirs?.length) out.push(" CDI spec directories:", ...i.CDISpecDirs.map((d) => `  ${d}`));
  if (i.DiscoveredDevices?.length) out.push(" Discovered Devices:", ...i.DiscoveredDevices.map((d) => `  ${d.Source}: ${d.ID}`));
  out.push(ln(" Swarm:", i.Swarm?.LocalNodeState ?? ""));
  if (i.Swarm && i.Swarm.LocalNodeState !== "inactive" && i.Swarm.LocalNodeState !== "locked") {
    out.push(ln("  NodeID:", i.Swarm.NodeID));
    if (i.Swarm.Error) out.push(ln("  Error:", i.Swarm.Error));
    out.push(ln("  Is Manager:", i.Swarm.ControlAvailable), ln("  Node Address:", i.Swarm.NodeAddr));
  }
  const runtimes = Object.keys(i.Runtimes ?? {});
  if (runtimes.length) out.push(ln(" Runtimes:", runtimes.join(" ")), ln(" Default Runtime:", i.DefaultRuntime));
  if (i.OSType === "linux") {
    out.push(ln(" Init Binary:", i.InitBinary), ln(" containerd version:", i.ContainerdCommit?.ID ?? ""), ln(" runc version:", i.RuncCommit?.ID ?? ""), ln(" init version:", i.InitCommit?.ID ?? ""));
    if (i.SecurityOptions?.length) {
      out.push(" Security Options:");
      for (const opt of i.SecurityOptions) {
        // "name=seccomp,profile=builtin", or a bare name from old daemons
        if (!opt.includes("=")) {
          out.push(`  ${opt}`);
          continue;
        }
        const kv = opt.split(",").map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]);
        out.push(`  ${kv.find(([k]) => k === "name")?.[1] ?? ""}`);
        for (const [k, v] of kv) if (k === "profile") out.push(ln("   Profile:", v));
      }
    }
  }
  if (i.OSType === "windows") out.push(ln(" Default Isolation:", i.Isolation));
  nonEmpty(" Kernel Version:", i.KernelVersion);
  nonEmpty(" Operating System:", i.OperatingSystem);
  nonEmpty(" OSType:", i.OSType);
  nonEmpty(" Architecture:", i.Architecture);
  out.push(ln(" CPUs:", i.NCPU), ln(" Total Memory:", bytesSize(i.MemTotal ?? 0)));
  nonEmpty(" Name:", i.Name);
  nonEmpty(" ID:", i.ID);
  out.push(ln(" Engine Root Dir:", i.DockerRootDir), ln(" Debug Mode:", i.Debug));
  if (i.Debug) out.push(ln("  File Descriptors:", i.NFd), ln("  Goroutines:", i.NGoroutines), ln("  System Time:", i.SystemTime), ln("  EventsListeners:", i.NEventsListener));
  nonEmpty(" HTTP Proxy:", i.HttpProxy);
  nonEmpty(" HTTPS Proxy:", i.HttpsProxy);
  nonEmpty(" No Proxy:", i.NoProxy);
  if (i.Labels?.length) out.push(" Labels:", ...i.Labels.map((l) => `  ${l}`));
  out.push(ln(" Experimental:", i.ExperimentalBuild));
  const reg = i.RegistryConfig;
  const insecure = Object.values(reg?.IndexConfigs ?? {}).filter((c) => !c.Secure);
  if (reg && ((reg.InsecureRegistryCIDRs ?? []).length > 0 || Object.keys(reg.IndexConfigs ?? {}).length > 0)) {
    out.push(" Insecure Registries:", ...insecure.map((c) => `  ${c.Name}`).sort(), ...(reg.InsecureRegistryCIDRs ?? []).map((c) => `  ${c}`));
  }
  if (reg?.Mirrors?.length) out.push(" Registry Mirrors:", ...reg.Mirrors.map((m) => `  ${m}`));
  out.push(ln(" Live Restore Enabled:", i.LiveRestoreEnabled));
  if (i.ProductLicense) out.push(ln(" Product License:", i.ProductLicense));
  if (i.DefaultAddressPools?.length) out.push(" Default Address Pools:", ...i.DefaultAddressPools.map((p) => `   Base: ${p.Base}, Size: ${p.Size}`));
  out.push("");
  for (const w of i.Warnings ?? []) warn(`${w}\n`);
  return out;
}

/**
 * The template's output when it runs on the client's part alone (the Docker CLI's
 * needsServerInfo), else undefined: then the daemon is asked.
 */
function runsOnClientInfo(format: string, client: object): string | undefined {
  // no field at all (`hello`, `{{json .}}`): taken to need the daemon, as Docker takes it
  if (!/\.[a-zA-Z]/.test(format)) return undefined;
  try {
    return parseTemplate(format).execute(struct("system.dockerInfo", { ClientInfo: struct("*system.clientInfo", { ...client, toJSON: () => client }), ClientErrors: null }));
  } catch {
    return undefined;
  }
}

export const command: Command = {
  usage: "[OPTIONS]",
  flags: [{ name: "format", short: "f", type: "string", description: "Format output using a custom template: 'json' or a Go template" }],
  args: { max: 0 },
  async run(ctx, { flags }) {
    const format = flags.format as string;
    const debug = false;
    const client = { Debug: debug, Version: ENGINE_VERSION, Context: "default", Plugins: [], Warnings: null };
    const clientOnly = format !== "" && format !== "json" ? runsOnClientInfo(format, client) : undefined;
    if (clientOnly !== undefined) {
      // a template that reads only .ClientInfo does not ask the daemon, as the Docker CLI does not
      ctx.stdout(`${clientOnly}\n`);
      return 0;
    }
    let info: MoreInfo | undefined;
    let failure: Error | undefined;
    try {
      info = await ctx.connection().getJson<MoreInfo>("/info");
    } catch (e) {
      failure = e as Error;
    }
    if (format !== "") {
      if (failure) ctx.stderr(`${failure.message}\n`);
      // the server's fields at the top, as Docker's JSON has them; .ClientInfo for the client
      const data = struct("system.dockerInfo", {
        ...(info ?? {}),
        ClientInfo: struct("*system.clientInfo", { ...client, toJSON: () => client }),
        ServerErrors: failure ? [failure.message] : null,
        toJSON: () => ({ ...(info ?? {}), ...(failure ? { ServerErrors: [failure.message] } : {}), ClientInfo: client }),
      });
      try {
        ctx.stdout(`${format === "json" ? goJson(data) : parseTemplate(format).execute(data)}\n`);
      } catch (e) {
        if (!(e instanceof TemplateError)) throw e;
        if (/^template: :\d+: /.test(e.message) && !/executing/.test(e.message)) throw new ExitError(64, `template parsing error: ${e.message}`);
        ctx.stdout(`${e.partial}\n`);
        // the daemon's error (already printed) is the reason when there is one, as the Docker CLI reports it
        throw new ExitError(1, failure ? "" : e.message);
      }
      if (failure) throw new ExitError(1, "");
      return 0;
    }
    const lines = ["Client:", ln(" Version:   ", ENGINE_VERSION), ln(" Context:   ", "default"), ln(" Debug Mode:", debug), "", "Server:"];
    ctx.stdout(`${lines.join("\n")}\n`);
    if (!info) {
      ctx.stderr(`ERROR: ${failure?.message}\n`);
      throw new ExitError(1, "errors pretty printing info");
    }
    ctx.stdout(`${serverLines(info, ctx.stderr).join("\n")}\n`);
    return 0;
  },
};
