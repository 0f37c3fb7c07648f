/**
 * The engine's metrics (`--metrics-addr`, experimental), in the Prometheus text format through
 * prom-client. Every series is named `engine_...`; host/metrics/README.md lists them.
 *
 * Why a host module and not a plugin: a plugin is a driver that an operator selects by name
 * among others of its kind, and it sees only the hooks. Metrics are one part of the daemon
 * that reads the daemon's own state at scrape time (the container records, the supervisor, the
 * authorization plugins in force), which no hook hands out. What happens, though, it learns
 * only from hooks, like any plugin would: container starts and image pulls from `event`, the
 * rest from the notifications made for it (`failedContainerStart`, `receivedImageBytes`,
 * `answeredRequest`, `appliedPlugin`). So the runner, the pull and the API know nothing of
 * metrics, and a third party could count the same things from a plugin.
 *
 * The counters are tapped when the daemon is put together, before the first plugin loads
 * (`constructor`); the readers of state are handed over once the stores exist (`watch`).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ContainerStatus } from "../../core/containers/container-store.js";
import { PLUGIN_KINDS } from "../../core/contracts/plugin.js";
import type { EngineHooks } from "../../core/hooks.js";
import { API_VERSION, ENGINE_VERSION, GIT_COMMIT } from "../../core/version.js";

/** What the daemon's state is at scrape time. */
export interface ScrapeSources {
  /** The status of every container record. */
  containerStatuses(): Iterable<ContainerStatus>;
  /** Whether the supervisor answers a ping now (without starting one). */
  supervisorUp(): Promise<boolean>;
  /** The authorization plugins in force (a reload replaces them). */
  authorizationPlugins(): readonly string[];
}

const STATUSES: readonly ContainerStatus[] = ["created", "running", "paused", "restarting", "removing", "exited", "dead"];
/** Latencies from a quick inspect to a long pull; a stream (logs -f, events, attach) lands past the last. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class EngineMetrics {
  readonly registry = new Registry();
  private sources?: ScrapeSources;
  /** Plugins applied, by id, with their kind (authorization plugins are read from the chain in force). */
  private readonly applied = new Map<string, string>();

  constructor(hooks: EngineHooks) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "engine_" });
    // prom-client names three gauges with `_total`, a suffix Prometheus keeps for counters
    // (promtool's lint refuses them); the per-type gauges without the suffix say the same.
    for (const name of ["active_handles_total", "active_requests_total", "active_resources_total"]) {
      this.registry.removeSingleMetric(`engine_nodejs_${name}`);
    }

    new Gauge({
      name: "engine_build_info",
      help: "The engine's version, git commit and API version; always 1",
      labelNames: ["version", "commit", "api_version"],
      registers,
    }).set({ version: ENGINE_VERSION, commit: GIT_COMMIT, api_version: API_VERSION }, 1);

    const requests = new Counter({
      name: "engine_api_requests_total",
      help: "API requests answered, by method, route pattern and status code",
      labelNames: ["method", "route", "code"],
      registers,
    });
    const latency = new Histogram({
      name: "engine_api_request_duration_seconds",
      help: "Time from an API request's arrival to the end of its answer, by method and route pattern",
      labelNames: ["method", "route"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    hooks.answeredRequest.tap("metrics", (r) => {
      requests.inc({ method: r.method, route: r.route, code: String(r.statusCode) });
      latency.observe({ method: r.method, route: r.route }, r.seconds);
    });

    const starts = new Counter({ name: "engine_container_starts_total", help: "Containers started (by a client or a restart policy)", registers });
    const startFailures = new Counter({ name: "engine_container_start_failures_total", help: "Container starts that failed", registers });
    const pulls = new Counter({ name: "engine_image_pulls_total", help: "Image pulls that completed", registers });
    const pulledBytes = new Counter({ name: "engine_image_pull_bytes_total", help: "Bytes of image layers received from registries by pulls", registers });
    hooks.event.tap("metrics", (e) => {
      if (e.Type === "container" && e.Action === "start") starts.inc();
      else if (e.Type === "image" && e.Action === "pull") pulls.inc();
    });
    hooks.failedContainerStart.tap("metrics", () => startFailures.inc());
    hooks.receivedImageBytes.tap("metrics", (bytes) => pulledBytes.inc(bytes));
    hooks.appliedPlugin.tap("metrics", (p) => void this.applied.set(p.id, p.kind));

    // Gauges read at scrape time: `collect` runs on every scrape, before the values are written.
    const now = () => this.sources;
    const applied = this.applied;
    new Gauge({
      name: "engine_containers",
      help: "Containers by state",
      labelNames: ["state"],
      registers,
      collect() {
        const counts = new Map<string, number>(STATUSES.map((s) => [s, 0]));
        for (const status of now()?.containerStatuses() ?? []) counts.set(status, (counts.get(status) ?? 0) + 1);
        for (const [state, n] of counts) this.set({ state }, n);
      },
    });
    new Gauge({
      name: "engine_supervisor_up",
      help: "1 when the container supervisor answered a ping during this scrape, else 0 (it starts on first use)",
      registers,
      async collect() {
        this.set((await now()?.supervisorUp()) ? 1 : 0);
      },
    });
    new Gauge({
      name: "engine_plugins_loaded",
      help: "Plugins loaded and in use, by kind",
      labelNames: ["kind"],
      registers,
      collect() {
        for (const kind of PLUGIN_KINDS) {
          const n = kind === "authz" ? (now()?.authorizationPlugins().length ?? 0) : [...applied.values()].filter((k) => k === kind).length;
          this.set({ kind }, n);
        }
      },
    });
  }

  /** Hands over the readers of the daemon's state, once it has its stores. */
  watch(sources: ScrapeSources): void {
    this.sources = sources;
  }
}
